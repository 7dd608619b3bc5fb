"""The ``datafusion-fts`` command line, one module per command group.

- ``demo`` (:mod:`.demo`): the engine shown on this Python's stdlib docstrings;
- ``sql`` (:mod:`.sql_shell`): an interactive shell, or scripts with ``-c``/stdin;
- ``import`` (:mod:`.import_file`): Parquet, CSV or JSON lines, streamed into a table;
- ``index``, ``optimize``, ``stats`` (:mod:`.manage`): building and inspecting indexes;
- ``search`` (:mod:`.search`): one query string against one table.

A command's module (and with it the engine: DataFusion, pyarrow, numba) is imported only
when that command runs, so ``--help`` and ``--version`` answer at once.

Every :class:`~datafusion_fts.errors.FtsError` is a user's mistake (a bad query string, an
unknown table), so the CLI prints it in red and exits with status 1 instead of a traceback.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

import click

from .. import __version__
from ..errors import FtsError

__all__ = ["main"]

# name -> (module, command object, the one line ``--help`` lists)
COMMANDS = {
    "demo": ("demo", "demo", "Index this Python's stdlib docstrings and run example searches."),
    "import": ("import_file", "import_command", "Stream a Parquet, CSV or JSON lines file into a table."),
    "index": ("manage", "index", "(Re)build the full-text index of columns of a table."),
    "optimize": ("manage", "optimize", "Flush fresh rows, index the unindexed tail, merge segments."),
    "repair": ("repair", "repair", "Keep every intact record of a damaged log; move the damaged log aside."),
    "search": ("search", "search", "Search a table with a query string."),
    "sql": ("sql_shell", "sql", "SQL on a database: an interactive shell, or scripts."),
    "stats": ("manage", "stats", "Tables, rows per tier, index segments and sizes."),
}


class FtsGroup(click.Group):
    """The command group: commands loaded when they run, and :class:`FtsError` (and
    DataFusion's errors) reported in red with exit status 1: these are errors in what the
    user asked (a query string, a table name), and a traceback would hide the message,
    which already points at the problem."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        found = COMMANDS.get(name)
        if found is None:
            return None
        return getattr(import_module(f".{found[0]}", __name__), found[1])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, help) for name, (_, _, help) in sorted(COMMANDS.items())])

    def invoke(self, ctx: click.Context) -> Any:
        from rich.console import Console

        from .common import compile_notice, fts_notices

        try:
            with compile_notice(Console(stderr=True)), fts_notices(Console(stderr=True)):
                return super().invoke(ctx)
        except Exception as exc:
            from .common import error_text, is_engine_error

            if not isinstance(exc, FtsError) and not is_engine_error(exc):
                raise
            Console(stderr=True).print(error_text(exc))
            ctx.exit(1)


@click.group(cls=FtsGroup)
@click.version_option(__version__, prog_name="datafusion-fts")
def main() -> None:
    """Exact BM25 full-text search on DataFusion."""
