"""The session's default schema as a DataFusion ``SchemaProvider`` of ours, so a managed
table is resolved when a statement is planned (docs/design.md: "Managed tables in
DataFusion").

Re-registering a managed table after each write (deregister, then register) left a
moment when the name resolved to nothing: SQL in another thread failed with "table not
found". Here a write swaps one entry of a dict, and a statement planned at any moment
finds either the previous or the new version. The user's own tables (``register_*``,
``CREATE TABLE``/``VIEW``) are kept as DataFusion hands them over, beside the managed ones.

DataFusion calls :meth:`SessionSchema.table` from inside its runtime, where nothing may
block on it (building a DataFrame there panics): what it returns is built beforehand, at
the write.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import datafusion
from datafusion.catalog import CatalogProvider, SchemaProvider

from ..errors import CatalogError

DEFAULT_CATALOG = "datafusion"
DEFAULT_SCHEMA = "public"
# The prefix of the tables the engine registers itself (a managed table's parts, db.sql's
# temporary results): refused for users' tables.
RESERVED_PREFIX = "__fts_"


def rows_name(table: str) -> str:
    """The name under which a managed table's rows resolve with their ``_rowid``, for the
    engine's own statements (prefilters, joins back to a search, deletes, updates): the
    table's own name resolves to them without it (DESIGN §3.1: ``_rowid`` is hidden)."""
    return f"{RESERVED_PREFIX}rows_{table}"


def fresh_name() -> str:
    """A name no other result the engine registers has (a search's, a table's candidate
    rows: registered while a statement runs, on a session other threads may share):
    random, so no counter is shared."""
    return f"{RESERVED_PREFIX}result_{uuid.uuid4().hex[:16]}"


def quote(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def string_literal(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


@dataclass
class Recorded:
    """What DataFusion did to the schema under the name ``name`` while one statement that
    creates that table ran (:meth:`SessionSchema.recording`)."""

    name: str
    created: Any = None  # the table DataFusion registered (its CREATE TABLE's MemTable)
    replaced: tuple[Any, Any] | None = None  # the managed entries it deregistered to replace


class Names(list):
    """Names as DataFusion reads them and as its Python API hands them out. DataFusion's
    Rust side (datafusion 55) reads a provider's ``table_names`` as an attribute holding a
    sequence, without calling it: a method there made ``SHOW TABLES`` and
    ``information_schema.tables`` list none of the session's tables and printed "Unable to
    get table_names" on stderr. Python code calls it, for a set."""

    def __call__(self) -> set[str]:
        return set(self)


class SessionSchema(SchemaProvider):
    """The default schema: the user's tables, and each managed table's current version."""

    @property
    def owner_name(self) -> str:
        """None, as DataFusion's own schemas have: it reads this attribute (for
        information_schema.schemata's schema_owner) and takes a missing one as none; the
        base class's method showed as "<bound method ...>", a None as 'None'."""
        raise AttributeError("owner_name")

    def __init__(self, tables: dict[str, Any]) -> None:
        self._tables = dict(tables)  # the user's (and db.sql's temporary results)
        # Per managed table: its current version, and what to check before DataFusion
        # reads it (in one entry, swapped with one assignment).
        self._managed: dict[str, tuple[Any, Callable[[], None] | None]] = {}
        self._lock = threading.Lock()  # (registering checks, then adds)
        self._recording: Recorded | None = None
        self._creating = threading.Lock()  # (one recorded statement at a time)
        # Per thread, what its running statement pinned (catalog/table_state.py sets it):
        # ``entries``, what the managed tables it reads resolve to (as :meth:`entries`
        # gives them), whatever is swapped in meanwhile; DataFusion resolves a name on the
        # thread that plans the statement.
        self.pins = threading.local()

    @property
    def table_names(self) -> "Names":
        """The users' and the managed tables (not the engine's own ``__fts_`` ones)."""
        return Names(sorted(n for n in (*self._tables, *self._managed) if not n.startswith(RESERVED_PREFIX)))

    def names(self) -> set[str]:
        """(What ``ctx.catalog().schema().names()`` answers for DataFusion's own schemas.)"""
        return self.table_names()

    def table(self, name: str) -> Any:
        """What ``name`` resolves to (a managed table: as the thread's statement pinned it,
        else its current version); a managed table's files checked first (a damaged one
        raises a StorageError, which DataFusion hands back to the statement's caller)."""
        pinned = getattr(self.pins, "entries", None)
        found = pinned.get(name) if pinned else None
        if found is None:
            found = self._managed.get(name)
        if found is None:
            return self._tables.get(name)
        table, check = found
        if check is not None:
            check()
        return table

    def table_exist(self, name: str) -> bool:
        return name in self._managed or name in self._tables

    def register_table(self, name: str, table: Any) -> None:
        with self._lock:
            if self.table_exist(name):
                raise CatalogError(f"a table named {name!r} already exists")
            self._tables[name] = table
            self._unpin(name)
            if self._recording is not None and name == self._recording.name:
                self._recording.created = table

    def deregister_table(self, name: str, cascade: bool = True) -> None:
        """Forget the user's table ``name``. A managed table leaves only when the statement
        being recorded replaces it (CREATE OR REPLACE TABLE): a DROP VIEW, which DataFusion
        would run on the view a managed table is to it, is refused."""
        with self._lock:
            if name not in self._managed:
                self._tables.pop(name, None)
                return
            recording = self._recording
            if recording is None or name != recording.name:
                raise CatalogError(f"{name!r} is a table of the database: DROP TABLE {name} drops it")
            recording.replaced = (self._managed.pop(name), self._managed.pop(rows_name(name), None))
            self._unpin(name, rows_name(name))

    @contextmanager
    def recording(self, name: str) -> Iterator[Recorded]:
        """Note what a statement creating table ``name`` registers (and the managed table it
        replaces) while it runs; undone if the statement raises."""
        with self._creating:
            self._recording = recorded = Recorded(name)
            try:
                yield recorded
            except BaseException:
                self.undo(recorded)
                raise
            finally:
                self._recording = None

    def undo(self, recorded: Recorded) -> None:
        """Put back what a recorded statement changed."""
        with self._lock:
            if recorded.created is not None and self._tables.get(recorded.name) is recorded.created:
                del self._tables[recorded.name]
            if recorded.replaced is not None:
                table, rows = recorded.replaced
                self._managed[recorded.name] = table
                if rows is not None:
                    self._managed[rows_name(recorded.name)] = rows

    def take_created(self, recorded: Recorded) -> None:
        """The table a recorded statement created becomes a managed one: DataFusion's own
        leaves (its rows were read; the managed table's views take the name)."""
        with self._lock:
            if self._tables.get(recorded.name) is recorded.created:
                del self._tables[recorded.name]

    def set_managed(self, name: str, table: Any, check: Callable[[], None] | None = None) -> None:
        """Make ``table`` what ``name`` resolves to (one assignment: no moment without it),
        ``check`` run each time a statement names it (storage/stores/store.py: ``check_fragments``)."""
        self._managed[name] = (table, check)

    @contextmanager
    def standing_in(self, name: str, table: Any) -> Iterator[None]:
        """The managed table ``name`` resolving to ``table`` in this thread while the block
        runs (a copy of its rows, for DataFusion to plan a write of it by its own name:
        sql/managed_dml.py ``explain_write``), over whatever the thread's statement pinned;
        other threads keep resolving it to its version."""
        pinned = getattr(self.pins, "entries", None)
        self.pins.entries = {**(pinned or {}), name: (table, None)}
        try:
            yield
        finally:
            self.pins.entries = pinned

    def drop_managed(self, name: str) -> None:
        self._managed.pop(name, None)

    def entries(self, name: str) -> dict[str, Any]:
        """What the managed table ``name`` and its rows name (:func:`rows_name`) resolve to."""
        return {n: self._managed[n] for n in (name, rows_name(name)) if n in self._managed}

    def _unpin(self, *names: str) -> None:
        """Resolve ``names`` as registered from now on in this thread: the statement
        itself replaced them (CREATE OR REPLACE)."""
        pinned = getattr(self.pins, "entries", None)
        if pinned:
            self.pins.entries = {n: e for n, e in pinned.items() if n not in names}


class _SessionCatalog(CatalogProvider):
    """The default catalog: the session schema, and the others (``CREATE SCHEMA`` adds them)."""

    def __init__(self, schemas: dict[str, Any]) -> None:
        self._schemas = schemas

    def schema_names(self) -> set[str]:
        return set(self._schemas)

    def schema(self, name: str) -> Any:
        return self._schemas.get(name)

    def register_schema(self, name: str, schema: Any) -> None:
        self._schemas[name] = schema

    def deregister_schema(self, name: str, cascade: bool = True) -> Any:
        """The schema ``DROP SCHEMA`` removes (DataFusion reads None as "no such schema");
        one holding tables only with CASCADE, as DataFusion's own catalog does."""
        schema = self._schemas.get(name)
        if schema is None or name == DEFAULT_SCHEMA:
            return None
        tables = sorted(schema.table_names)  # (a RawSchema: a property; our own: a Names list)
        if tables and not cascade:
            raise CatalogError(f"Cannot drop schema {name} because other tables depend on it: {', '.join(tables)}")
        return self._schemas.pop(name)


def attach(ctx: datafusion.SessionContext) -> SessionSchema:
    """Put a :class:`SessionSchema` in place of ``ctx``'s default schema, holding the
    tables it had; the catalog's other schemas are kept as they are: DataFusion's own
    providers (``RawSchema``, as ``CREATE SCHEMA`` hands them over), not Python's wrappers
    of them, whose ``table``, called by DataFusion while it plans, blocks on its runtime
    from inside it (a panic: any statement naming such a schema's table failed)."""
    catalog = ctx.catalog(DEFAULT_CATALOG)
    schemas: dict[str, Any] = {name: catalog.schema(name)._raw_schema for name in catalog.schema_names()}
    existing = schemas.get(DEFAULT_SCHEMA)
    tables = {name: existing.table(name) for name in existing.table_names} if existing is not None else {}
    schema = SessionSchema(tables)
    schemas[DEFAULT_SCHEMA] = schema
    ctx.register_catalog_provider(DEFAULT_CATALOG, _SessionCatalog(schemas))
    return schema
