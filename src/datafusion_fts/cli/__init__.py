"""The ``datafusion-fts`` command line, one module per command group.

- ``demo`` (:mod:`.demo`): the engine shown on this Python's stdlib docstrings;
- ``sql`` (:mod:`.sql_shell`): an interactive shell, or scripts with ``-c``/stdin;
- ``import`` (:mod:`.import_file`): Parquet, CSV or JSON lines, streamed into a table;
- ``index``, ``optimize``, ``stats`` (:mod:`.manage`): building and inspecting indexes;
- ``search`` (:mod:`.search`): one query string against one table.

Every :class:`~datafusion_fts.errors.FtsError` is a user's mistake (a bad query string, an
unknown table), so the CLI prints it in red and exits with status 1 instead of a traceback.
"""

from __future__ import annotations

import click

from .common import FtsGroup
from .demo import demo
from .import_file import import_command
from .manage import index, optimize, stats
from .search import search
from .sql_shell import sql

__all__ = ["main"]


@click.group(cls=FtsGroup)
def main() -> None:
    """Exact BM25 full-text search on DataFusion."""


for _command in (demo, sql, import_command, index, optimize, stats, search):
    main.add_command(_command)
