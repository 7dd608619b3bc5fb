"""``index``, ``optimize`` and ``stats``: building and inspecting a database's indexes.

The index options are declared once (:func:`index_options`) and shared with ``import
--index``; each maps to the keyword of ``Table.create_index`` of the same name, which
validates it, so the CLI holds no second copy of the rules.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from ..analysis import NAMED_ANALYZERS
from ..database import Database
from ..storage.manifest import IndexMeta
from ..table import Table
from .common import bar, open_database, progress
from .describe import stats_view, table_tiers, tiers_line

_DEFAULTS = {f.name: f.default for f in fields(IndexMeta)}
# click option name -> create_index keyword
INDEX_OPTION_NAMES = ("positions", "analyzer", "stemmer", "stop_words", "ascii_folding",
                      "max_token_length", "k1", "b")


def index_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The ``create_index`` options as click options (None when not given, so the
    engine's defaults apply)."""
    decorators = [
        click.option("--positions/--no-positions", default=None,
                     help=f"Store positions (phrase queries need them). Default: "
                          f"{'yes' if _DEFAULTS['positions'] else 'no'}."),
        click.option("--analyzer", type=click.Choice(sorted(NAMED_ANALYZERS)), default=None,
                     help="Named analyzer (default simple); the options below override it."),
        click.option("--stemmer", default=None, help="Snowball stemmer language, e.g. english."),
        click.option("--stop-words", default=None,
                     help="Built-in stop word list (e.g. english) or 'none'."),
        click.option("--ascii-folding/--no-ascii-folding", default=None,
                     help="Fold accented letters to ASCII."),
        click.option("--max-token-length", type=int, default=None,
                     help="Drop tokens longer than this many UTF-8 bytes (default 40)."),
        click.option("--k1", type=float, default=None, help=f"BM25 k1 (default {_DEFAULTS['k1']:g})."),
        click.option("--b", type=float, default=None, help=f"BM25 b (default {_DEFAULTS['b']:g})."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def chosen_index_options(values: dict[str, Any]) -> dict[str, Any]:
    """The index options a command was given, as ``create_index`` keywords."""
    return {name: values[name] for name in INDEX_OPTION_NAMES if values.get(name) is not None}


def progress_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--progress/--no-progress``; by default bars show only when stderr is a terminal."""
    return click.option(
        "--progress/--no-progress", "show_progress", default=None,
        help="Show progress bars (default: when stderr is a terminal).",
    )(command)


def stderr_console(show_progress: bool | None) -> tuple[Console, bool]:
    """The console progress bars draw on (stderr, so stdout stays data) and whether to."""
    console = Console(stderr=True)
    return console, console.is_terminal if show_progress is None else show_progress


def build_indexes(
    table: Table, columns: list[str], options: dict[str, Any], console: Console, enabled: bool
) -> None:
    """(Re)build each column's index, with a bar per column. Every column is checked
    before the first build, so a bad column or option writes nothing."""
    for column in columns:
        table._index_meta(column, options, None)  # the engine's own validation
    with progress(console, enabled=enabled) as bars:
        rows = table.count_rows()
        for column in columns:
            task = bars.add_task(f"indexing {column}", total=rows)
            table.create_index(column, progress=bar(bars, task), **options)
            bars.update(task, completed=rows)  # an empty table never calls back


def optimize_table(table: Table, console: Console, enabled: bool) -> None:
    """``table.optimize()`` with one bar that follows each segment build it runs."""
    with progress(console, enabled=enabled) as bars:
        task = bars.add_task(f"optimizing {table.name}", total=None)
        table.optimize(progress=bar(bars, task))
        bars.update(task, total=1, completed=1)


def print_index_summary(db: Database, name: str, console: Console, seconds: float) -> None:
    """Per index: rows per tier, segments and size; what the command achieved."""
    tiers = table_tiers(db, name)
    for index in tiers.indexes:
        console.print(tiers_line(tiers, index, lead=f"{name}.{index.index.column}: "))
    console.print(Text(f"{seconds:.2f} s", style="dim"))


@click.command()
@click.argument("db_path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("table")
@click.argument("columns", nargs=-1, required=True)
@index_options
@progress_option
def index(db_path: Path, table: str, columns: tuple[str, ...], show_progress: bool | None,
          **options: Any) -> None:
    """(Re)build the full-text index of each COLUMN of TABLE over every row."""
    db = open_database(db_path)
    handle = db.table(table)
    console, enabled = stderr_console(show_progress)
    start = time.perf_counter()
    build_indexes(handle, list(columns), chosen_index_options(options), console, enabled)
    print_index_summary(db, table, Console(), time.perf_counter() - start)


@click.command()
@click.argument("db_path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("table")
@progress_option
def optimize(db_path: Path, table: str, show_progress: bool | None) -> None:
    """Flush fresh rows, index the unindexed tail and merge segments of TABLE."""
    db = open_database(db_path)
    handle = db.table(table)
    console, enabled = stderr_console(show_progress)
    start = time.perf_counter()
    optimize_table(handle, console, enabled)
    print_index_summary(db, table, Console(), time.perf_counter() - start)


@click.command()
@click.argument("db_path", type=click.Path(exists=True, file_okay=False, path_type=Path))
def stats(db_path: Path) -> None:
    """Tables, rows per tier, index segments and sizes of the database at DB_PATH."""
    console = Console()
    for renderable in stats_view(open_database(db_path)):
        console.print(renderable)
