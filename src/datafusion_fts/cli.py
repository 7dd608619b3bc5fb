"""The ``datafusion-fts`` command line: a self-contained demo, and search/stats on a database.

``demo`` exists so that someone who just installed the package sees, in one command and
without any data of their own, what the engine does: it indexes the docstrings of the
running Python's standard library and runs a handful of queries that each exercise one
feature. ``search`` and ``stats`` work on any database directory made with
``fts.connect(path)``.

Every :class:`~datafusion_fts.errors.FtsError` is a user's mistake (a bad query string, an
unknown table), so the CLI prints it in red and exits with status 1 instead of a traceback.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pyarrow as pa
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table as RichTable
from rich.text import Text

from .database import Database, connect
from .demo_corpus import DOCSTRING_SCHEMA, iter_stdlib_docstring_batches
from .errors import FtsError
from .storage.manifest import IndexMeta, TableMeta
from .storage.store import MANIFEST
from .table import Table

__all__ = ["main"]

DEMO_TABLE = "docs"
DEMO_COLUMNS = ["module", "name", "title"]
# Small corpus batches only so the loading bar moves; they are regrouped before writing.
DEMO_READ_ROWS = 512
TITLE_CHARS = 60


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


# -- output helpers ------------------------------------------------------------------------
def _shorten(value: Any, width: int = TITLE_CHARS) -> str:
    """A cell's text on one line and at most ``width`` characters, so tables stay readable
    in an 80-column terminal whatever the docstrings contain."""
    text = "" if value is None else " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


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
        cells = [Text(_shorten(row[name]), no_wrap=True, overflow="ellipsis") for name in columns]
        table.add_row(str(rank), str(row["_rowid"]), f"{row['_score']:.4f}", *cells)
    if not rows:
        table.caption = " · ".join(filter(None, ["no matches", caption]))
    return table


def plan_note(table: Table, query: str) -> str:
    """Which operator the planner picks for ``query`` and, unless it is the index, why:
    the demo should show how a query runs, not only what it returns."""
    _, request = table.plan(query, limit=PAGE_SIZE)
    if request.choice == "indexed":
        return "plan: indexed"
    return f"plan: {request.choice} ({'; '.join(request.reasons)})"


def timed_search(table: Table, query: str, **kwargs: Any) -> tuple[pa.Table, float]:
    """``table.search(query, ...)`` and its wall time in milliseconds."""
    start = time.perf_counter()
    result = table.search(query, **kwargs)
    return result, (time.perf_counter() - start) * 1000.0


def _progress(console: Console) -> Progress:
    """One progress display layout for loading and indexing."""
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description:<22}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )


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
    with _progress(console) as progress:
        task = progress.add_task("loading docstrings", total=None)
        batches = _counted(
            iter_stdlib_docstring_batches(DEMO_READ_ROWS),
            lambda rows: progress.advance(task, rows),
        )
        reader = pa.RecordBatchReader.from_batches(DOCSTRING_SCHEMA, batches)
        table: Table = db.create_table(DEMO_TABLE, reader)
        rows = table.count_rows()
        progress.update(task, total=rows, completed=rows)
    return table


def _bar(progress: Progress, task: TaskID) -> Callable[[int, int], None]:
    """An index-build progress callback ``(done_rows, total_rows)`` that moves ``task``."""

    def report(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    return report


def index_demo_table(table: Table, console: Console) -> None:
    """Index ``body`` with positions (phrases need them) and ``title``, with progress bars."""
    with _progress(console) as progress:
        rows = table.count_rows()
        for column, options in (("body", {"positions": True}), ("title", {})):
            task = progress.add_task(f"indexing {column}", total=rows)
            table.create_index(column, progress=_bar(progress, task), **options)
            # An empty table never calls back; the bar still ends full.
            progress.update(task, completed=rows)


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
    grid.add_row("first search (warm-up)", f"{warm_ms:.1f} ms  (maps segments, compiles kernels)")
    console.print(grid)
    console.print()


def show_queries(table: Table, console: Console) -> None:
    """One result table per showcase query, titled with the query and its time."""
    for case in SHOWCASE:
        result, ms = timed_search(table, case.query, limit=PAGE_SIZE, columns=DEMO_COLUMNS)
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
        result, ms = timed_search(
            table, PAGING_QUERY, limit=PAGE_SIZE, offset=offset, columns=DEMO_COLUMNS
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


def _check_demo_path(path: Path) -> None:
    """Refuse a ``--path`` that holds anything but a database.

    Why: opening a directory as a database garbage-collects every file in its ``data/``
    and ``index/`` subdirectories that its manifest does not name, so
    ``demo --path ~`` would delete ``~/data/*``.
    """
    if path.exists() and any(path.iterdir()) and not (path / MANIFEST).is_file():
        raise click.UsageError(
            f"{path} is neither empty nor a datafusion-fts database (no {MANIFEST}); "
            "choose a new or empty directory"
        )


@contextmanager
def _demo_directory(path: Path | None, keep: bool, console: Console) -> Iterator[Path]:
    """``path``, or a fresh temporary directory that is removed afterwards unless ``keep``."""
    if path is not None:
        _check_demo_path(path)
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
        _, warm_ms = timed_search(table, SHOWCASE[0].query, limit=PAGE_SIZE, columns=DEMO_COLUMNS)
        print_summary(console, table.count_rows(), load_s, index_s, warm_ms)
        show_queries(table, console)
        show_paging(table, console)
        show_sql(db, console)


# -- search / stats ------------------------------------------------------------------------
def open_database(path: Path) -> Database:
    """An existing database directory; refusing a directory without a manifest, because
    ``connect`` would otherwise quietly turn a mistyped path into an empty database."""
    if not (path / MANIFEST).is_file():
        raise click.UsageError(f"{path} is not a datafusion-fts database (no {MANIFEST})")
    return connect(path)


def _column_list(text: str | None) -> list[str] | None:
    """``--columns a,b`` as a list; None (every column) when not given."""
    if text is None:
        return None
    return [name.strip() for name in text.split(",") if name.strip()]


def index_table(meta: TableMeta, index: IndexMeta) -> RichTable:
    """One index's settings and segments (row-id range, rows, terms, postings)."""
    analyzer = index.analyzer
    details = [analyzer.name]
    if analyzer.stemmer:
        details.append(f"stemmer={analyzer.stemmer}")
    if analyzer.stop_words:
        details.append(f"{len(analyzer.stop_words)} stop words")
    if analyzer.ascii_folding:
        details.append("ascii folding")
    title = (
        f"{meta.name}.{index.column}  ·  analyzer {', '.join(details)}  ·  "
        f"positions {'yes' if index.positions else 'no'}  ·  k1={index.k1:g} b={index.b:g}"
    )
    table = RichTable(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    for name in ("segment", "row-id range", "rows", "docs", "n_terms", "n_postings"):
        table.add_column(name, justify="left" if name in ("segment", "row-id range") else "right")
    for seg in index.segments:
        rows = f"{seg.base}..{seg.base + seg.count - 1}" if seg.count else "-"
        table.add_row(
            seg.id,
            f"{seg.lo}..{seg.hi}",
            rows,
            f"{seg.n_docs:,}",
            f"{seg.n_terms:,}",
            f"{seg.n_postings:,}",
        )
    return table


def print_stats(db: Database, console: Console) -> None:
    """Tables, rows, fragments and indexes, as recorded in the manifest."""
    manifest = db.manifest
    console.print(f"[bold]{db.path}[/]  ·  manifest version {manifest.version}")
    overview = RichTable(title="tables", title_justify="left", box=box.SIMPLE_HEAD)
    for name in ("table", "rows", "next _rowid", "fragments", "columns", "indexes"):
        overview.add_column(
            name, justify="right" if name in ("rows", "next _rowid", "fragments") else "left"
        )
    for name in db.table_names():
        meta = manifest.tables[name]
        overview.add_row(
            name,
            f"{meta.committed_rows:,}",
            f"{meta.next_rowid:,}",
            str(len(meta.fragments)),
            ", ".join(meta.schema.names),
            ", ".join(sorted(meta.indexes)) or "-",
        )
    console.print(overview)
    for name in db.table_names():
        meta = manifest.tables[name]
        for column in sorted(meta.indexes):
            console.print(index_table(meta, meta.indexes[column]))


# -- click wiring --------------------------------------------------------------------------
class _FtsGroup(click.Group):
    """A click group that reports :class:`FtsError` in red with exit status 1: these are
    errors in what the user asked (a query string, a table name), and a traceback would
    hide the message, which already points at the problem."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FtsError as exc:
            Console(stderr=True).print(Text(f"error: {exc}", style="bold red"))
            ctx.exit(1)


@click.group(cls=_FtsGroup)
def main() -> None:
    """Exact BM25 full-text search on DataFusion."""


@main.command()
@click.option(
    "--path",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Build the database here (its 'docs' table is replaced) instead of a temporary directory.",
)
@click.option(
    "--keep", is_flag=True, help="Keep the temporary database directory and print its path."
)
def demo(path: Path | None, keep: bool) -> None:
    """Index this Python's stdlib docstrings and run example searches."""
    run_demo(path, keep, Console())


@main.command()
@click.argument("db_path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("table")
@click.argument("query")
@click.option(
    "--limit", type=click.IntRange(min=1), default=10, show_default=True, help="Rows to return."
)
@click.option(
    "--offset", type=click.IntRange(min=0), default=0, show_default=True, help="Rows to skip first."
)
@click.option("--columns", default=None, help="Comma-separated columns to show (default: all).")
def search(
    db_path: Path, table: str, query: str, limit: int, offset: int, columns: str | None
) -> None:
    """Search TABLE of the database at DB_PATH with a query string."""
    handle = open_database(db_path).table(table)
    result, ms = timed_search(
        handle, query, limit=limit, offset=offset, columns=_column_list(columns)
    )
    shown = [name for name in result.column_names if name not in ("_rowid", "_score")]
    Console().print(results_table(result, f"{query}  ·  {ms:.1f} ms", shown, first_rank=offset + 1))


@main.command()
@click.argument("db_path", type=click.Path(exists=True, file_okay=False, path_type=Path))
def stats(db_path: Path) -> None:
    """Tables, fragments and index segments of the database at DB_PATH."""
    print_stats(open_database(db_path), Console())
