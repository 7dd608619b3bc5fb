"""What the SQL layer asks of the database above it (docs/design.md: "Import direction"):
protocols :class:`..database.Database` and :class:`..table.Table` meet, declared here so
that nothing in ``sql/`` imports them."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Callable, Protocol, TypeVar

import datafusion
import pyarrow as pa

from ..planner.answer_search import Answer, Search
from ..settings import Settings
from ..udfs.error_bridge import ErrorBridge
from .managed_dml import DmlHost, DmlTable
from .tables import Tables, TableVersion

if TYPE_CHECKING:  # (it loads sqlglot; plain statements never need it)
    from .text.shapes import StatementCache

T = TypeVar("T")


class SqlTable(DmlTable, Protocol):
    """What SQL asks of a managed table (``table.Table`` is one): SQL is handed the
    database's tables, it does not make them."""

    name: str

    @property
    def schema(self) -> pa.Schema: ...

    def index_meta(self, column: str, options: dict[str, Any], existing: Any) -> Any: ...

    def create_index(self, column: str, progress: Any = None, **options: Any) -> None: ...

    def substring_plan(self, needs: Any) -> tuple[list[Any], TableVersion]: ...

    def insert(self, data: Any) -> int: ...

    def run(self, search: Search) -> Answer:
        """One search's answer (planner/answer_search.py), on the table's current snapshot."""


class SqlHost(DmlHost, Protocol):
    """What SQL needs of a database (:class:`..database.Database`): its session, its
    managed tables and settings, and the cache of statement shapes."""

    ctx: datafusion.SessionContext
    settings: Settings
    statements: StatementCache
    errors: ErrorBridge  # (its functions' errors, raised inside DataFusion, found again)

    def table_names(self) -> list[str]: ...

    def table(self, name: str) -> SqlTable: ...

    def snapshot(self, name: str) -> TableVersion: ...

    @property
    def manifest(self) -> Tables: ...

    def index_in_place(self, name: str, source: Any = None, store: Any = None) -> SqlTable: ...

    def retrying(self, read: Callable[[], T]) -> T: ...

    def list_sources(self, text: str) -> None:
        """List the files of the tables indexed in place ``text`` may name, before
        DataFusion reads their views."""

    def pinned(self, text: str) -> AbstractContextManager[None]:
        """Run the statement ``text`` on one version of each table it names: every part of
        it reads that version."""
