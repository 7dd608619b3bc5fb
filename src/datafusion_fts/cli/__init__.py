"""The ``datafusion-fts`` command line, one module per command group.

- ``demo`` (:mod:`.demo`): the engine shown on this Python's stdlib docstrings;
- ``sql`` (:mod:`.sql_shell`): an interactive shell, or scripts with ``-c``/stdin;
- ``import`` (:mod:`.import_file`): Parquet, CSV or JSON lines, streamed into a table;
- ``index``, ``optimize``, ``stats`` (:mod:`.manage`): building and inspecting indexes;
- ``search`` (:mod:`.search`): one query string against one table.

Every command's arguments are declared in :mod:`.commands`, which loads nothing of the
engine; a command's module (and with it DataFusion and pyarrow) is imported only when
the command runs, so ``--help``, ``--version`` and argument errors answer at once.

Every :class:`~datafusion_fts.errors.FtsError` is a user's mistake (a bad query string, an
unknown table), so the CLI prints it in red and exits with status 1 instead of a traceback.
"""

from __future__ import annotations

from typing import Any

import click

from .. import __version__
from ..errors import FtsError
from .commands import COMMANDS

__all__ = ["main"]


class FtsGroup(click.Group):
    """The command group: :class:`FtsError` (and DataFusion's errors) reported in red with
    exit status 1: these are errors in what the user asked (a query string, a table name),
    and a traceback would hide the message, which already points at the problem."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # (click's own: usage errors, --help; reported by click)
        except Exception as exc:
            from rich.console import Console

            from .common import error_text, is_engine_error

            if not isinstance(exc, FtsError) and not is_engine_error(exc):
                raise
            Console(stderr=True).print(error_text(exc))
            ctx.exit(1)


@click.group(cls=FtsGroup)
@click.version_option(__version__, prog_name="datafusion-fts")
def main() -> None:
    """Exact BM25 full-text search on DataFusion."""


for _command in COMMANDS:
    main.add_command(_command)
