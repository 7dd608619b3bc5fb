"""``datafusion-fts search``: one query string against one table, as a ranked table, with
the number of its matches."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
from rich import box
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from .common import column_list, open_database, shorten
from .render import STREAM_WRITERS

T = TypeVar("T")


def results_table(
    result: pa.Table, title: str, columns: Sequence[str], first_rank: int = 1, caption: str = ""
) -> RichTable:
    """A search result as a rich table: rank, ``_rowid``, score (4 decimals), ``columns``.

    ``first_rank`` is ``offset + 1``, so a second page is numbered where the first ended.
    """
    table = RichTable(
        title=title,
        caption=caption,
        title_justify="left",
        caption_justify="left",
        box=box.SIMPLE_HEAD,
    )
    # In a narrow terminal rich shrinks only columns that may wrap: the numbers must not
    # (so they stay readable), the text columns may, and each text cell is one line cut
    # with an ellipsis, so a row stays one line at any width.
    table.add_column("#", justify="right", style="dim", no_wrap=True)
    table.add_column("_rowid", justify="right", no_wrap=True)
    table.add_column("score", justify="right", style="green", no_wrap=True)
    for name in columns:
        table.add_column(name, style="cyan" if name == "module" else None)
    rows = result.to_pylist()
    for rank, row in enumerate(rows, start=first_rank):
        cells = [Text(shorten(row[name]), no_wrap=True, overflow="ellipsis") for name in columns]
        table.add_row(str(rank), str(row["_rowid"]), f"{row['_score']:.4f}", *cells)
    if not rows:
        table.caption = " · ".join(filter(None, ["no matches", caption]))
    return table


def timed(call: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[T, float]:
    """``call(*args, **kwargs)`` (a search) and its wall time in milliseconds."""
    start = time.perf_counter()
    result = call(*args, **kwargs)
    return result, (time.perf_counter() - start) * 1000.0


def run_search(
    db_path: Path, table: str, query: str, limit: int, offset: int, columns: str | None, fmt: str
) -> None:
    """``search``: the ranked rows, as a table for reading (with how many rows match, as a
    search page shows it: one search, ``Table.search_page``) or in ``fmt`` for programs."""
    handle = open_database(db_path).table(table)
    if fmt != "table":
        result = handle.search(query, limit=limit, offset=offset, columns=column_list(columns))
        STREAM_WRITERS[fmt](sys.stdout.buffer, result.to_batches(), result.schema)
        return
    page, ms = timed(handle.search_page, query, limit=limit, offset=offset, columns=column_list(columns))
    shown = [name for name in page.rows.column_names if name not in ("_rowid", "_score")]
    title = f"{query}  ·  {page.total:,} {'match' if page.total == 1 else 'matches'}  ·  {ms:.1f} ms"
    Console().print(results_table(page.rows, title, shown, first_rank=offset + 1))
