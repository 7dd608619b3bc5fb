"""``datafusion-fts demo``: the engine shown in one command, on data every Python has.

It exists so that someone who just installed the package sees, without any data of their
own, what the engine does: it indexes the docstrings of the running Python's standard
library and runs a handful of queries that each exercise one feature.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from ..database import Database, connect
from ..demo_corpus import DOCSTRING_SCHEMA, iter_stdlib_docstring_batches
from ..table import Table
from .common import BuildBars, progress
from .options import check_database_path
from .search import results_table, timed

DEMO_TABLE = "docs"
DEMO_COLUMNS = ["module", "name", "title"]
# Small corpus batches only so the loading bar moves; they are regrouped before writing.
DEMO_READ_ROWS = 512


@dataclass(frozen=True)
class Showcase:
    """One demo query and the feature it shows (printed under its result table)."""

    query: str
    feature: str


SHOWCASE: tuple[Showcase, ...] = (
    Showcase("json decode", "plain terms: either may match, BM25 over body and title"),
    # Qualified: an unqualified phrase also targets title, whose index has no positions,
    # so the planner would (correctly, and saying why) fall back to a flat scan.
    Showcase('body:"regular expression"', "phrase: both words, adjacent and in order"),
    Showcase("+socket -ssl", "must contain 'socket', must not contain 'ssl'"),
    Showcase("compress*", "prefix: compress, compressed, compression, ..."),
    Showcase("dictionry~1", "fuzzy: terms within one edit of the misspelling"),
    Showcase("title:thread lock", "field: 'thread' in title, 'lock' in any column"),
)
PAGING_QUERY = "file"
PAGE_SIZE = 5


def plan_note(table: Table, query: str) -> str:
    """Which operator the planner picks for ``query`` and, unless it is the index, why:
    the demo should show how a query runs, not only what it returns."""
    _, request = table.plan(query, limit=PAGE_SIZE)
    if request.choice == "indexed":
        return "plan: indexed"
    return f"plan: {request.choice} ({'; '.join(request.reasons)})"


# -- demo ----------------------------------------------------------------------------------
def _counted(
    batches: Iterable[pa.RecordBatch], advance: Callable[[int], None]
) -> Iterator[pa.RecordBatch]:
    """Pass ``batches`` through, reporting each one's row count (the loading bar)."""
    for batch in batches:
        advance(batch.num_rows)
        yield batch


def load_demo_table(db: Database, console: Console) -> Table:
    """(Re)create the ``docs`` table from the stdlib docstrings, with a loading bar.

    The corpus size is unknown until every stdlib file is parsed, so the bar counts rows
    without a total.
    """
    if DEMO_TABLE in db.table_names():
        db.drop_table(DEMO_TABLE)
    with progress(console) as bars:
        task = bars.add_task("loading docstrings", total=None)
        batches = _counted(
            iter_stdlib_docstring_batches(DEMO_READ_ROWS),
            lambda rows: bars.advance(task, rows),
        )
        reader = pa.RecordBatchReader.from_batches(DOCSTRING_SCHEMA, batches)
        table: Table = db.create_table(DEMO_TABLE, reader)
        rows = table.count_rows()
        bars.update(task, total=rows, completed=rows)
    return table


def index_demo_table(table: Table, console: Console) -> None:
    """Index ``body`` with positions (phrases need them) and ``title``, with progress bars."""
    with progress(console) as bars, BuildBars(bars, "indexing ") as builds:
        for column, options in (("body", {"positions": True}), ("title", {})):
            table.create_index(column, progress=builds, **options)


def print_summary(
    console: Console, rows: int, load_s: float, index_s: float, warm_ms: float
) -> None:
    """Rows, load and index times and throughput: what it cost to get here."""
    grid = RichTable.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    grid.add_row("rows", f"{rows:,}")
    grid.add_row(
        "load (parse + write)", f"{load_s:.2f} s  ({rows / max(load_s, 1e-9):,.0f} docs/s)"
    )
    grid.add_row(
        "index body + title", f"{index_s:.2f} s  ({rows / max(index_s, 1e-9):,.0f} docs/s)"
    )
    grid.add_row("first search", f"{warm_ms:.1f} ms  (opens the segments)")
    console.print(grid)
    console.print()


def show_queries(table: Table, console: Console) -> None:
    """One result table per showcase query, titled with the query and its time."""
    for case in SHOWCASE:
        result, ms = timed(table.search, case.query, limit=PAGE_SIZE, columns=DEMO_COLUMNS)
        caption = f"{case.feature}  ·  {plan_note(table, case.query)}"
        console.print(
            results_table(result, f"{case.query}  ·  {ms:.1f} ms", DEMO_COLUMNS, caption=caption)
        )
        console.print()


def show_paging(table: Table, console: Console) -> None:
    """Pages 1 and 2 of one query, and a check (not a claim) that they do not overlap and
    together equal the top ``2 * PAGE_SIZE``: the ranking is a total order (ties broken by
    the lower ``_rowid``), so ``offset`` is stable."""
    pages = []
    for page in (0, 1):
        offset = page * PAGE_SIZE
        result, ms = timed(
            table.search, PAGING_QUERY, limit=PAGE_SIZE, offset=offset, columns=DEMO_COLUMNS
        )
        where = f"page {page + 1} (limit {PAGE_SIZE}, offset {offset})"
        title = f"{PAGING_QUERY}  ·  {where}  ·  {ms:.1f} ms"
        console.print(results_table(result, title, DEMO_COLUMNS, first_rank=offset + 1))
        pages.append(result.column("_rowid").to_pylist())
    top = table.search(PAGING_QUERY, limit=2 * PAGE_SIZE, columns=[]).column("_rowid").to_pylist()
    overlap = set(pages[0]) & set(pages[1])
    if not overlap and pages[0] + pages[1] == top:
        console.print(
            f"[green]✓[/] pages share no _rowid, and page 1 + page 2 == the top {2 * PAGE_SIZE}"
        )
    else:
        console.print(f"[red]✗ paging is inconsistent: overlap {sorted(overlap)}, top {top}[/]")
    console.print()


def show_sql(db: Database, console: Console) -> None:
    """The table is an ordinary DataFusion table too: run plain SQL on ``db.ctx``."""
    sql = f"SELECT count(*) AS n FROM {DEMO_TABLE}"
    count = db.ctx.sql(sql).to_pylist()[0]["n"]
    console.print(Text.assemble("The table is plain DataFusion too, on ", ("db.ctx", "bold"), ":"))
    console.print(
        Text.assemble(
            "  ", (f'db.ctx.sql("{sql}")', "bold cyan"), " → ", (f"{count:,}", "bold green")
        )
    )


@contextmanager
def _demo_directory(path: Path | None, keep: bool, console: Console) -> Iterator[Path]:
    """``path``, or a fresh temporary directory that is removed afterwards unless ``keep``."""
    if path is not None:
        check_database_path(path)
        yield path
        return
    tmp = Path(tempfile.mkdtemp(prefix="datafusion-fts-demo-"))
    try:
        yield tmp
    finally:
        if keep:
            console.print(f"database kept at [bold]{tmp}[/]")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def run_demo(path: Path | None, keep: bool, console: Console) -> None:
    """Build the stdlib-docstring database, then search it every way the engine can."""
    with _demo_directory(path, keep, console) as directory:
        console.rule("[bold]datafusion-fts demo[/]: the docstrings of this Python's stdlib")
        console.print(f"database: {directory}")
        db = connect(directory)
        start = time.perf_counter()
        table = load_demo_table(db, console)
        load_s = time.perf_counter() - start
        start = time.perf_counter()
        index_demo_table(table, console)
        index_s = time.perf_counter() - start
        _, warm_ms = timed(table.search, SHOWCASE[0].query, limit=PAGE_SIZE, columns=DEMO_COLUMNS)
        print_summary(console, table.count_rows(), load_s, index_s, warm_ms)
        show_queries(table, console)
        show_paging(table, console)
        show_sql(db, console)
