"""Every command's arguments and options, declared without loading the engine.

click parses and checks a command's arguments before the command runs, so a typo, a
missing argument or ``COMMAND --help`` costs only this module, click and :mod:`.options`
(about 0.15 s from a cold start instead of ~1.1 s with DataFusion and pyarrow).
Each command's body then imports its implementation, which imports the engine:

- ``demo`` (:mod:`.demo`), ``sql`` (:mod:`.sql_shell`), ``import`` (:mod:`.import_file`),
  ``index``, ``optimize``, ``stats`` (:mod:`.manage`), ``repair`` (:mod:`.repair`) and
  ``search`` (:mod:`.search`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from .options import (
    BLOCK_BYTES,
    FILE_FORMATS,
    HISTORY_FILE,
    MAX_ROWS,
    OUTPUT_FORMATS,
    chosen_index_options,
    existing_database,
    file_format,
    index_options,
    new_or_existing_database,
    progress_option,
)

_DATABASE = {"type": click.Path(exists=True, file_okay=False, path_type=Path), "callback": existing_database}
_NEW_OR_DATABASE = {"type": click.Path(file_okay=False, path_type=Path), "callback": new_or_existing_database}


@contextmanager
def _engine_messages() -> Iterator[None]:
    """Around a command's run (its arguments already checked): print the engine's notices
    (:mod:`.common`)."""
    from rich.console import Console

    from .common import fts_notices

    with fts_notices(Console(stderr=True)):
        yield


@click.command()
@click.option("--path", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Build the database here (its 'docs' table is replaced) instead of a temporary directory.")
@click.option("--keep", is_flag=True, help="Keep the temporary database directory and print its path.")
def demo(path: Path | None, keep: bool) -> None:
    """Index this Python's stdlib docstrings and run example searches."""
    from rich.console import Console

    from .demo import run_demo

    with _engine_messages():
        run_demo(path, keep, Console())


@click.command(name="import")
@click.argument("db_path", **_NEW_OR_DATABASE)
@click.argument("table")
@click.argument("file", type=click.Path(exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FILE_FORMATS), default=None,
              help="The file's format (default: from its suffix; .gz/.bz2/.zst/.lz4 are "
                   "decompressed).")
@click.option("--index", "index_columns", default=None,
              help="Comma-separated columns to index after the import.")
@index_options
@click.option("--block-size", type=click.IntRange(min=4096), default=BLOCK_BYTES,
              show_default=True,
              help="Bytes per CSV/JSON block read (a new table's types come from the first).")
@click.option("--delimiter", default=",", show_default=True, help="CSV field delimiter.")
@progress_option
def import_command(
    db_path: Path, table: str, file: Path, fmt: str | None, index_columns: str | None,
    block_size: int, delimiter: str, show_progress: bool | None, **options: Any,
) -> None:
    """Stream FILE (Parquet, CSV or JSON lines) into TABLE, creating it or appending.

    Existing indexes of TABLE are brought up to date afterwards (as OPTIMIZE does);
    --index builds new ones. DB_PATH is created when it does not exist.
    """
    fmt = file_format(file, fmt)
    if len(delimiter) != 1:
        raise click.BadParameter("must be one character", param_hint="--delimiter")
    from .import_file import run_import

    with _engine_messages():
        run_import(db_path, table, file, fmt, index_columns, block_size, delimiter, show_progress,
                   chosen_index_options(options))


@click.command()
@click.argument("db_path", **_DATABASE)
@click.argument("table")
@click.argument("columns", nargs=-1, required=True)
@index_options
@progress_option
def index(db_path: Path, table: str, columns: tuple[str, ...], show_progress: bool | None,
          **options: Any) -> None:
    """(Re)build the full-text index of each COLUMN of TABLE over every row."""
    from .manage import run_index

    with _engine_messages():
        run_index(db_path, table, list(columns), show_progress, chosen_index_options(options))


@click.command()
@click.argument("db_path", **_DATABASE)
@click.argument("table")
@progress_option
def optimize(db_path: Path, table: str, show_progress: bool | None) -> None:
    """Flush fresh rows, index the unindexed tail and merge segments of TABLE."""
    from .manage import run_optimize

    with _engine_messages():
        run_optimize(db_path, table, show_progress)


@click.command()
@click.argument("db_path", **_DATABASE)
def repair(db_path: Path) -> None:
    """Keep every intact record of DB's damaged logs; move the damaged logs aside."""
    from .repair import run_repair

    with _engine_messages():
        run_repair(db_path)


@click.command()
@click.argument("db_path", **_DATABASE)
@click.argument("table")
@click.argument("query")
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True, help="Rows to return.")
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True, help="Rows to skip first.")
@click.option("--columns", default=None, help="Comma-separated columns to show (default: all).")
@click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="table", show_default=True,
              help="table: ranked for reading; csv, json, jsonl: every column, full scores, for programs.")
def search(db_path: Path, table: str, query: str, limit: int, offset: int, columns: str | None, fmt: str) -> None:
    """Search TABLE of the database at DB_PATH with a query string."""
    from .search import run_search

    with _engine_messages():
        run_search(db_path, table, query, limit, offset, columns, fmt)


@click.command()
@click.argument("db_path", **_NEW_OR_DATABASE)
@click.option("-c", "--command", "commands", multiple=True,
              help="Run these statements (';'-separated; repeatable) and exit.")
@click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="table", show_default=True,
              help="How results print.")
@click.option("--max-rows", type=click.IntRange(min=0), default=MAX_ROWS, show_default=True,
              help="Rows a table shows (the count is always exact); 0 shows every row.")
@click.option("--timing/--no-timing", default=False, help="Print each statement's time.")
@click.option("--history", default=HISTORY_FILE, show_default=True,
              envvar="DATAFUSION_FTS_HISTORY", help="The shell's history file ('' keeps none).")
@progress_option
def sql(db_path: Path, commands: tuple[str, ...], fmt: str, max_rows: int, timing: bool, history: str,
        show_progress: bool | None) -> None:
    """SQL on the database at DB_PATH (created by its first write): an interactive shell, or,
    with -c or a script on standard input, run and exit (status 1 at the first error)."""
    from .sql_shell import run_sql

    with _engine_messages():
        run_sql(db_path, commands, fmt, max_rows, timing, history, show_progress)


@click.command()
@click.argument("db_path", **_DATABASE)
def stats(db_path: Path) -> None:
    """Tables, rows per tier, index segments and sizes of the database at DB_PATH."""
    from .manage import run_stats

    with _engine_messages():
        run_stats(db_path)


COMMANDS = (demo, import_command, index, optimize, repair, search, sql, stats)
