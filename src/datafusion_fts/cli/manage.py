"""``index``, ``optimize`` and ``stats``: building and inspecting a database's indexes
(their arguments are declared in :mod:`.commands`; the builds here are shared with
``import --index``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ..database import Database
from ..table import Table
from .common import BuildBars, open_database, progress, stderr_console
from .describe import stats_view, table_tiers, tiers_line


def build_indexes(
    table: Table, columns: list[str], options: dict[str, Any], console: Console, enabled: bool
) -> None:
    """(Re)build each column's index, with a bar per column following its phases. Every
    column is checked before the first build, so a bad column or option writes nothing."""
    for column in columns:
        table.index_meta(column, options, None)  # the engine's own validation
    with progress(console, enabled=enabled) as bars, BuildBars(bars, "indexing ") as builds:
        for column in columns:
            table.create_index(column, progress=builds, **options)


def optimize_table(table: Table, console: Console, enabled: bool) -> None:
    """``table.optimize()`` with a bar per index following the phases of its update."""
    with progress(console, enabled=enabled) as bars, BuildBars(bars, f"optimizing {table.name}.") as builds:
        table.optimize(progress=builds)


def print_index_summary(db: Database, name: str, console: Console, seconds: float) -> None:
    """Per index: rows per tier, segments and size; what the command achieved."""
    tiers = table_tiers(db, name)
    for index in tiers.indexes:
        console.print(tiers_line(tiers, index, lead=f"{name}.{index.index.column}: "))
    console.print(Text(f"{seconds:.2f} s", style="dim"))


def run_index(db_path: Path, table: str, columns: list[str], show_progress: bool | None,
              options: dict[str, Any]) -> None:
    """``index``: build each column's index, then what the table's indexes hold."""
    db = open_database(db_path)
    handle = db.table(table)
    console, enabled = stderr_console(show_progress)
    start = time.perf_counter()
    build_indexes(handle, columns, options, console, enabled)
    print_index_summary(db, table, Console(), time.perf_counter() - start)


def run_optimize(db_path: Path, table: str, show_progress: bool | None) -> None:
    """``optimize``: flush, index the tail, merge; then what the table's indexes hold."""
    db = open_database(db_path)
    handle = db.table(table)
    console, enabled = stderr_console(show_progress)
    start = time.perf_counter()
    optimize_table(handle, console, enabled)
    print_index_summary(db, table, Console(), time.perf_counter() - start)


def run_stats(db_path: Path) -> None:
    """``stats``: every table's tiers, segments and sizes."""
    console = Console()
    for renderable in stats_view(open_database(db_path)):
        console.print(renderable)
