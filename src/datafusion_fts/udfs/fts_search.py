"""``fts_search(table, column, query, k)``: full-text search as a DataFusion table function
(docs/design.md: "fts_search and the text functions"), for sessions that never call ``db.sql``.

Managed tables are searched by the planner of their database (indexes, exact statistics);
any other table registered on the session is searched by scanning it, rows identified by
scan position. The result is ``_rowid`` and ``_score`` in the total order of §5.2.
"""

from __future__ import annotations

import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Protocol, TypeVar

import datafusion
import pyarrow as pa
from datafusion import Table as DataFusionTable
from datafusion import udtf
from datafusion.expr import Expr

from ..errors import CatalogError, InvalidArgument
from ..planner.answer_search import Answer, Search, answer
from ..query.parser import parse
from ..settings import Settings
from ..storage.sources.foreign import ForeignTable
from .error_bridge import ErrorBridge

T = TypeVar("T")


class _Searchable(Protocol):
    def run(self, search: Search) -> Answer: ...


class ManagedTables(Protocol):
    """What ``fts_search`` needs of a database: its managed tables, each searchable, and its
    planner settings."""

    settings: Settings

    def table_names(self) -> list[str]: ...

    def table(self, name: str) -> _Searchable: ...

    def retrying(self, read: Callable[[], T]) -> T: ...


def _value(raw: Any, name: str, kind: type) -> Any:
    try:
        value = Expr(raw).python_value().as_py()
    except Exception:  # not a literal
        raise InvalidArgument(f"fts_search: {name} must be a literal") from None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InvalidArgument(f"fts_search: {name} must be a {kind.__name__}, got {value!r}")
    return value


def search_any(ctx: datafusion.SessionContext, db: ManagedTables | None, table: str, column: str, query: str, k: int | None) -> pa.Table:
    """``_rowid``, ``_score`` of the top ``k`` rows of ``table`` for the query string."""
    asked = Search(parse(query, [column]), limit=k)
    if db is not None and table in db.table_names():
        return db.retrying(lambda: db.table(table).run(asked)).rows
    if not ctx.table_exist(table):
        raise CatalogError(f"fts_search: no table named {table!r}")
    return answer(asked, ForeignTable(ctx, table), None, db.settings if db is not None else Settings()).rows


def register_fts_search(ctx: datafusion.SessionContext, db: ManagedTables | None, errors: ErrorBridge) -> None:
    """Register ``fts_search`` on ``ctx`` (searching ``db``'s managed tables first),
    raising through ``errors``."""
    # The session keeps the function alive from Rust, out of reach of Python's cycle
    # collector: hold the database weakly so dropping it still frees it.
    db_ref = weakref.ref(db) if db is not None else None

    def fts_search(*arguments: Any, session: datafusion.SessionContext) -> DataFusionTable:
        if len(arguments) != 4:  # (DataFusion passes as many as the SQL wrote)
            raise InvalidArgument(f"fts_search takes 4 arguments (table, column, query, k), got {len(arguments)}")
        table, column, query, k = arguments
        limit = _value(k, "k", int)
        if limit <= 0:
            raise InvalidArgument(f"fts_search: k must be positive, got {limit}")
        args = (session, db_ref() if db_ref else None, _value(table, "table", str), _value(column, "column", str), _value(query, "query", str), limit)
        # DataFusion calls this while planning, inside its async runtime; scanning a session
        # table from here would re-enter that runtime, so the search runs on its own thread.
        with ThreadPoolExecutor(max_workers=1) as pool:
            result = pool.submit(search_any, *args).result()
        import pyarrow.dataset as ds  # (here: importing it costs 70 ms and 24 MB a process)

        return DataFusionTable(ds.dataset(result))

    ctx.register_udtf(udtf(errors.raising(fts_search), "fts_search", with_session=True))
