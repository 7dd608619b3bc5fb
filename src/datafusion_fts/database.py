"""``fts.connect``: a database of managed tables, extending a DataFusion session (docs/design.md:
"The Python API"). ``Database`` wires the parts it is made of and holds none of their
work: the state readers see (catalog/table_state.py), the one writer (catalog/writer.py),
the fresh tier's logs (index/fresh/fresh_logs.py), tables indexed in place (storage/sources/in_place.py),
segments and tail indexes (planner/segment_sets.py), DataFusion's views
(session/table_views.py) and the SQL statement cache (sql/text/shapes.py)."""

from __future__ import annotations

import functools
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlparse

import datafusion
import pyarrow as pa

from .catalog.recovery import recover
from .catalog.table_state import TableState
from .errors import CatalogError, InvalidArgument, StorageError
from .index.building.build_progress import Progress
from .index.fresh.fresh_logs import FreshLogs
from .index.segment import Segment
from .index.segment_set import SegmentSet
from .operators.hybrid_residual_search import TailInfo
from .planner.segment_sets import SegmentSets
from .query.tree import Query
from .session.catalog import RESERVED_PREFIX, attach
from .session.sources import source_of
from .session.stores import reach_bucket
from .session.table_views import TableViews
from .settings import MAX_NAME_CHARS, Settings
from .sql.statements import run_sql
from .sql.text.shapes import StatementCache
from .storage.files.layout import is_remote, local_path
from .storage.files.manifest import (
    CsvFormat,
    Manifest,
    SegmentMeta,
    TableMeta,
    valid_table_name,
)
from .storage.objects import open_objects
from .storage.snapshot import TableSnapshot
from .storage.sources.in_place import (
    InPlaceTables,
    csv_format,
    source_schema,
    stored_columns,
    with_partitions,
)
from .storage.sources.object_sources import SourceStores, normal_source
from .storage.sources.source_files import source_paths
from .storage.stores.remote_store import RemoteStore
from .storage.stores.segment_cache import SegmentCache
from .storage.stores.store import DirectoryStore, MemoryStore, Store
from .udfs.error_bridge import ErrorBridge

if TYPE_CHECKING:
    from .catalog.writer import Writer
    from .table import Table

T = TypeVar("T")


class Database:
    """Managed tables in one store, and tables indexed in place, resolved on ``ctx`` so
    plain SQL sees them."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        ctx: datafusion.SessionContext | None = None,
        config: dict[str, Any] | None = None,
        read_only: bool = False,
        storage_options: dict[str, str] | None = None,
    ) -> None:
        if read_only and path is None:
            raise InvalidArgument("read_only=True needs a database directory: an in-memory database starts empty")
        self.settings = Settings.from_mapping(config or {})
        # The object stores of tables indexed in place on S3, GCS or Azure, and of a
        # database at an object store's URL (storage/stores/remote_store.py).
        self.sources = SourceStores(storage_options, functools.partial(self.settings.get, "fts.object_cache_bytes"))
        remote = path is not None and is_remote(path)
        if path is not None and not remote:
            try:
                path = local_path(path, "database")
            except ValueError as exc:
                raise StorageError(str(exc)) from None
        self.path = path
        self.ctx = ctx if ctx is not None else datafusion.SessionContext()
        self.store: Store
        if remote:
            self.store = RemoteStore(
                open_objects(os.fspath(path), storage_options), self.sources.cache, read_only,
                functools.partial(self.settings.get, "fts.store_refresh_seconds"),
                functools.partial(self.settings.get, "fts.gc_grace_seconds"),
                SegmentCache(functools.partial(self.settings.get, "fts.segment_cache_dir"),
                             functools.partial(self.settings.get, "fts.segment_cache_bytes")),
                functools.partial(self.settings.get, "fts.text_codec"))
        else:
            self.store = (DirectoryStore(path, read_only, functools.partial(self.settings.get, "fts.text_codec"))
                          if path is not None else MemoryStore())
        self.ray_init: dict[str, Any] = {}  # ray.init arguments for fts.executor = 'ray'
        # Told the phases of index builds not given a callback of their own: SQL's
        # CREATE FULLTEXT INDEX and OPTIMIZE (index/building/build_progress.py).
        self.progress: Progress | None = None
        # Rows tokenized, by why: "fresh_rows_tokenized" (inserts, per indexed column) and
        # "tail_rows_tokenized" (queries indexing an unindexed tail in memory).
        self.counters: Counter[str] = Counter()
        self.logs = FreshLogs(None if path is None or remote else Path(path) / "wal", self.counters)
        self.segment_sets = SegmentSets(self.store, self.settings, self.counters)
        self.statements = StatementCache()  # SQL search statements by shape
        self.errors = ErrorBridge()  # our errors raised inside DataFusion, for db.sql (udfs/error_bridge.py)
        # Managed tables resolve through a schema provider of ours (session/catalog.py);
        # the parts their views are made of live in a session of their own.
        self.session = attach(self.ctx)
        views = TableViews(self.session, self.store, self.ctx.copied_config,
                           functools.partial(self.settings.get, "fts.memory_table_bytes"))
        self._buckets: set[tuple[str, str]] = set()  # (scheme, bucket) the session reaches
        in_place = InPlaceTables(self.store, self.sources)
        where = "in memory" if path is None else os.fspath(path)
        self.state = TableState(self.store, self.logs, views, in_place, self.segment_sets, self.settings, where)
        self._in_place = in_place
        self._writer: Writer | None = None  # made at the first write (:attr:`writer`)
        self._writer_lock = threading.Lock()
        if self.store.read_only is not None:
            # Read-only: no recovery (cutting a torn log tail, deleting garbage is the
            # writer's); a torn tail is where replay stops. Only refuse files without
            # a manifest, unless a writer may be making its first commit.
            with self.store.reading_alone() as alone:
                if alone:
                    self.store.check_manifest()
        else:
            with self.store.exclusive() as alone:
                if alone:  # nobody writes: recover from a crash (and delete files past their grace)
                    recover(self.store, self.logs, self.settings, self.store.load_manifest())
        self.state.load()
        probe = ctx is not None  # (a session made here reaches no bucket yet: nothing to ask)
        if remote:  # (its tables' files are the session's to scan, those of later writes too)
            self._reach(f"{os.fspath(path).rstrip('/')}/data/", probe)
        self._reach_buckets(self.state.manifest.tables.values(), probe)
        from .udfs import install

        install(self.ctx, self, self.errors)

    def __repr__(self) -> str:
        where = "in memory" if self.path is None else repr(os.fspath(self.path))
        mode = "" if self.read_only is None else ", read-only"
        return f"Database({where}{mode}, tables={self.table_names()})"

    @property
    def writer(self) -> Writer:
        """The database's one writer (catalog/writer.py), made at the first write: the
        write path's modules (index builds, ingest, appends) are imported then, so a
        process that only searches never loads them."""
        found = self._writer
        if found is None:
            with self._writer_lock:  # (one writer: its lock is what orders writes)
                if self._writer is None:
                    from .catalog.writer import Writer  # (the write path's boundary, see above)

                    self._writer = Writer(self.store, self.state, self.logs, self._in_place, self.segment_sets,
                                          self.settings, self.counters)
                found = self._writer
        return found

    @property
    def read_only(self) -> str | None:
        """Why this database refuses writes (``read_only=True`` was asked, or its storage
        could not be written when opened), or None when it may be written."""
        return self.store.read_only

    # -- SQL ----------------------------------------------------------------------------
    def sql(self, text: str) -> datafusion.DataFrame:
        """Run SQL (docs/design.md: "SQL"): search predicates, DDL and DML on managed tables, and
        anything else DataFusion understands; returns the last statement's DataFrame. Each
        statement sees what other processes did before it (its classification reads
        :attr:`manifest`, and :meth:`pinned` refreshes)."""
        return run_sql(self, text)

    def list_sources(self, text: str) -> None:
        self.state.list_sources(text)

    # -- catalog ------------------------------------------------------------------------
    def refresh(self) -> None:
        self.state.refresh()

    @property
    def manifest(self) -> Manifest:
        self.refresh()
        return self.state.manifest

    def table_names(self) -> list[str]:
        return sorted(self.manifest.tables)

    def table(self, name: str) -> Table:
        from .table import Table

        if name not in self.manifest.tables:
            raise CatalogError(f"no table named {name!r}; tables: {self.table_names()}")
        return Table(self, name)

    def snapshot(self, name: str) -> TableSnapshot:
        """The table as a read sees it: as its SQL statement pinned it, else as it is now."""
        return self.state.read_snapshot(name)

    def pinned(self, text: str) -> AbstractContextManager[None]:
        """Run the statement ``text`` on one version of each table it names
        (``TableState.pinned``)."""
        return self.state.pinned(text)

    def retrying(self, read: Callable[[], T]) -> T:
        return self.state.retrying(read)

    def create_table(self, name: str, data: Any = None, schema: pa.Schema | None = None) -> Table:
        """A new managed table from ``data`` (rows get ``_rowid`` 0, 1, 2, ...)."""
        check_new_name(name)
        self.writer.create_table(name, data, schema)
        return self.table(name)

    def create_sql_table(self, name: str, rows: pa.Table, declared: pa.Schema, definition: str | None,
                         replacing: bool) -> None:
        """The managed table SQL's CREATE TABLE made (sql/managed_dml.py): DataFusion's rows
        and schema, and the column definitions it was given; replacing one of that name."""
        check_new_name(name)
        self.writer.create_table(name, rows, declared=declared, definition=definition, replacing=replacing)

    def table_meta(self, name: str) -> TableMeta:
        """The committed definition of table ``name``."""
        meta = self.manifest.tables.get(name)
        if meta is None:
            raise CatalogError(f"no table named {name!r}; tables: {self.table_names()}")
        return meta

    def drop_table(self, name: str) -> None:
        self.writer.drop_table(name)

    def index_in_place(
        self,
        name: str,
        source: str | os.PathLike[str] | None = None,
        store: Sequence[str] | None = None,
        csv: CsvFormat | bool | None = None,
    ) -> Table:
        """Make ``name`` a table indexed in place: its rows are the Parquet files of
        ``source`` (a file or a directory), read where they are, or, without ``source``,
        of the table ``name`` registered on the session (``ctx.register_parquet``, or
        ``register_csv``). ``csv`` (a :class:`CsvFormat`, or True for commas and a header)
        makes them CSV files (``*.csv`` in a directory); by default a source that is a
        ``.csv`` file, or a directory holding ``.csv`` files and no Parquet file, is. The
        database keeps the list of files, never their rows, but for a copy of the
        ``store`` columns (fetched from there: for files whose row groups are large, a
        fetch from the user's files decodes a whole row group). Indexes are then built as
        on any table (:meth:`Table.create_index`). Files added later are searched at once
        as the unindexed tail, and indexed by ``OPTIMIZE``; see docs/design.md: "Tables
        indexed in place". Returns the table; on a table already in place on that
        source, ``store`` (when given) replaces its stored columns."""
        check_new_name(name)
        known = self.state.manifest.tables.get(name)
        if source is None and known is not None and known.source is not None:
            # (the name resolves to our view of its files now)
            path, schema, partitions, fmt = known.source, known.schema, known.partitions, known.csv
        else:
            partitions: tuple[str, ...] = ()
            session: pa.Schema | None = None
            if source is None:
                if not self.ctx.table_exist(name):
                    raise CatalogError(f"no table named {name!r} on the session to index in place")
                source, partitions, fmt = source_of(self.ctx, name, self.sources)
                session = self.ctx.table(name).schema()
            if is_remote(source):
                path = normal_source(os.fspath(source), self.sources)
            else:
                try:
                    path = os.path.abspath(local_path(source, "source"))
                except ValueError as exc:
                    raise InvalidArgument(str(exc)) from None
            if session is None:
                fmt = csv_format(path, csv, self.sources)
            # (a session's CSV table keeps DataFusion's types, so its view and ours agree)
            schema = source_schema(path, partitions, fmt, session if fmt is not None else None, self.sources)
            if partitions:  # (Hive partition columns: the session's, held by no file)
                schema = with_partitions(name, schema, self.ctx.table(name).schema(), partitions)
        stored = stored_columns(store, schema, partitions)
        if stored is None:  # (not given: a table's own, or none)
            stored = known.stored if known is not None and known.source == path else ()
        self.writer.index_in_place(
            TableMeta(name=name, schema=schema, source=path, stored=stored, partitions=partitions, csv=fmt)
        )
        self._reach_buckets([self.state.manifest.tables[name]])
        return self.table(name)

    def _reach_buckets(self, tables: Iterable[TableMeta], probe: bool = True) -> None:
        """Make the session reach the bucket of each table on an object store, indexed in
        place there or in a database there (DataFusion scans its view in the session:
        session/stores.py), once a bucket."""
        for meta in tables:
            if not meta.fragments:
                continue
            if meta.source is not None:
                url = source_paths(meta)[0] if is_remote(meta.source) else None
            else:
                paths = self.store.fragment_paths([meta.fragments[0].id])
                url = paths[0] if paths and is_remote(paths[0]) else None
            if url is not None:
                self._reach(url, probe)

    def _reach(self, url: str, probe: bool = True) -> None:
        """Make the session reach the bucket of the object ``url``, once a bucket (without
        ``probe``, a session known to reach none yet: see ``reach_bucket``)."""
        if (bucket := urlparse(url)[:2]) not in self._buckets:
            reach_bucket(self.ctx, url, self.sources.options, probe)
            self._buckets.add(bucket)

    # -- index access -------------------------------------------------------------------
    def distributed_executor(self) -> Any:
        """The Ray executor for the current settings (``fts.executor = 'ray'``)."""
        from .distributed import executor_for

        return executor_for(self)

    def segment(self, meta: SegmentMeta) -> Segment:
        return self.segment_sets.segment(meta)

    def caches_tails(self) -> bool:
        return self.segment_sets.caches_tails()

    def hybrid_segment_set(
        self, snapshot: TableSnapshot, column: str, query: Query | None = None
    ) -> tuple[SegmentSet, TailInfo]:
        return self.segment_sets.hybrid_segment_set(snapshot, column, query)

    def segment_set(self, snapshot: TableSnapshot, column: str) -> SegmentSet:
        return self.segment_sets.segment_set(snapshot, column)


def check_new_name(name: str) -> None:
    """A name a new table may take (see ``storage/files/manifest.py`` ``TABLE_NAME``), not one of
    the engine's own on the session (``session/catalog.py`` ``RESERVED_PREFIX``)."""
    if not valid_table_name(name):
        raise InvalidArgument(f"table name must be 1 to {MAX_NAME_CHARS} characters without control characters, got {name!r}")
    if name.lower().startswith(RESERVED_PREFIX):
        raise InvalidArgument(f"table name {name!r} starts with {RESERVED_PREFIX!r}, which names the engine's own tables")


def connect(
    path: str | os.PathLike[str] | None = None,
    ctx: datafusion.SessionContext | None = None,
    config: dict[str, Any] | None = None,
    executor: str | None = None,
    ray_init: dict[str, Any] | None = None,
    progress: Progress | None = None,
    read_only: bool = False,
    storage_options: dict[str, str] | None = None,
) -> Database:
    """Open (or create) the database in directory ``path``; in memory when ``path`` is None.

    ``ctx`` is the DataFusion session to extend (a new one by default); ``config`` holds
    initial ``fts.*`` settings. ``executor="ray"`` (the setting ``fts.executor``) searches
    and builds indexes on Ray, started with ``ray_init`` (``ray.init`` arguments) unless
    it is running already. ``progress`` follows the index builds given no callback of
    their own, as SQL's ``CREATE FULLTEXT INDEX`` and ``OPTIMIZE`` (see
    :class:`~datafusion_fts.index.building.build_progress.BuildProgress`).

    ``read_only=True`` opens an existing directory for reading only: nothing in it is
    created or changed (no ``LOCK``, no recovery), every write raises
    :class:`~datafusion_fts.errors.ReadOnlyError`, and rows acknowledged into the logs
    are read. A directory whose storage cannot be written (a read-only mount, no write
    permission) is opened so without asking; ``db.read_only`` says why.

    ``storage_options`` reach the object stores of tables indexed in place on S3, GCS or
    Azure (``endpoint``, ``region``, ``access_key_id``, ``secret_access_key``,
    ``allow_http``, ...: the options of Rust's ``object_store``, which DataFusion reads
    them with); without them each store's standard environment variables apply
    (``AWS_ENDPOINT_URL``, ``AWS_REGION``, ``AWS_ACCESS_KEY_ID``, ...).
    """
    if executor is not None:
        config = {**(config or {}), "fts.executor": executor}
    db = Database(path, ctx, config, read_only, storage_options)
    db.ray_init = dict(ray_init or {})
    db.progress = progress
    if db.settings.get("fts.executor") == "ray":
        # (no ray installed or no directory: said now; Ray and its actors start meanwhile)
        db.distributed_executor().start_in_background()
    return db

