"""``fts.connect``: a database of managed tables, extending a DataFusion session (docs/design.md:
"The Python API")."""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TypeVar

import datafusion
import numpy as np
import pyarrow as pa

from .errors import CatalogError, InvalidArgument, StaleSnapshotError, StorageError
from .index.build_progress import Progress
from .index.builder import merge_segments
from .index.fresh_runs import (
    FreshRun,
    append_run,
    build_run,
    fresh_batches,
    fresh_segments,
    move_run,
)
from .index.fresh_logs import FreshLogs
from .index.segment import Segment
from .index.segment_set import SegmentSet
from .operators.hybrid_residual_search import TailInfo
from .planner.segment_sets import SegmentSets
from .query.tree import Query
from .ingest import check_new_schema, conform, open_batches
from .settings import Settings
from .storage.manifest import (
    MAX_NAME_CHARS,
    ROWID,
    Manifest,
    SegmentMeta,
    TableMeta,
    valid_table_name,
)
from .sql.session_catalog import RESERVED_PREFIX, attach, parquet_source_of
from .sql.table_views import TableViews
from .sql.statement_cache import StatementCache
from .udfs.error_bridge import ErrorBridge
from .storage import append_rows
from .storage.snapshot import TableSnapshot
from .storage.in_place import InPlaceTables, source_schema, stored_columns, with_partitions
from .storage.store import DirectoryStore, MemoryStore, Store

if TYPE_CHECKING:
    from .table import Table

# Times a reader reads the manifest and the logs again when a commit lands meanwhile (or
# runs a search again when a file of its snapshot was deleted meanwhile).
READ_ATTEMPTS = 8
T = TypeVar("T")


class Database:
    """Managed tables in one store, registered on ``ctx`` so plain SQL sees them."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        ctx: datafusion.SessionContext | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        self.path = path
        self.ctx = ctx if ctx is not None else datafusion.SessionContext()
        # Managed tables resolve through a schema provider of ours (sql/session_catalog.py);
        # the parts their views are made of live in a session of their own.
        self.store: Store = DirectoryStore(path) if path is not None else MemoryStore()
        self._views = TableViews(attach(self.ctx), self.store)  # (sql/table_views.py)
        self._in_place = InPlaceTables(self.store)  # (storage/in_place.py)
        self.settings = Settings.from_mapping(config or {})
        self.ray_init: dict[str, Any] = {}  # ray.init arguments for fts.executor = 'ray'
        # Told the phases of index builds not given a callback of their own: SQL's
        # CREATE FULLTEXT INDEX and OPTIMIZE (index/build_progress.py).
        self.progress: Progress | None = None
        self._write_lock = threading.RLock()  # one writer at a time
        self._state_lock = threading.Lock()  # (manifest, fresh rows) change together
        self._load_lock = threading.Lock()  # one load of the directory's state at a time
        self._manifest = Manifest()
        self._seen = (-1, -1)  # the store's change counters when the state was last loaded
        # The fresh tier: per table, runs of rows acknowledged but not flushed (each with
        # its in-memory segments), and their log.
        self._fresh: dict[str, tuple[FreshRun, ...]] = {}
        # Rows tokenized, by why: "fresh_rows_tokenized" (inserts, per indexed column) and
        # "tail_rows_tokenized" (queries indexing an unindexed tail in memory).
        self.counters: Counter[str] = Counter()
        self.logs = FreshLogs(None if path is None else Path(path) / "wal", self.counters)  # (index/fresh_logs.py)
        self.segment_sets = SegmentSets(self.store, self.settings, self.counters)  # (planner/segment_sets.py)
        self.statements = StatementCache()  # SQL search statements by shape (sql/statement_cache.py)
        self.errors = ErrorBridge()  # our errors raised inside DataFusion, for db.sql (udfs/error_bridge.py)
        # Per table: the last snapshot handed out, with the (immutable) state it was made
        # of; the next query on an unchanged table gets the same one, and with it the
        # memos kept on it (coverage, segment sets).
        self._snapshots: dict[str, tuple[TableMeta, tuple[FreshRun, ...], TableSnapshot]] = {}
        with self.store.exclusive() as alone:
            if alone:  # nobody writes: recover from a crash (and delete files past their grace)
                self._recover(self.store.load_manifest())
        with self._load_lock:
            self._load()
        from .udfs import install

        install(self.ctx, self, self.errors)

    def __repr__(self) -> str:
        where = "in memory" if self.path is None else repr(os.fspath(self.path))
        return f"Database({where}, tables={self.table_names()})"

    # -- SQL ----------------------------------------------------------------------------
    def sql(self, text: str) -> datafusion.DataFrame:
        """Run SQL (docs/design.md: "SQL"): search predicates, DDL and DML on managed tables, and
        anything else DataFusion understands; returns the last statement's DataFrame."""
        from .sql.execute import SqlSession

        self.refresh()
        return SqlSession(self).sql(text)

    def list_sources(self, text: str) -> None:
        """List the files of each table indexed in place that ``text`` may name, so SQL
        reading its DataFusion view (not a search, which lists them itself) sees the files
        as they are now: a file added was missing from ``SELECT count(*)`` until a search.
        A statement answered by its search alone (a cached direct shape) skips this."""
        lowered = text.lower()
        for name, meta in self._manifest.tables.items():
            if meta.source is not None and name.lower() in lowered:
                self._reconciled(meta)

    # -- catalog ------------------------------------------------------------------------
    @property
    def manifest(self) -> Manifest:
        self.refresh()
        return self._manifest

    def table_names(self) -> list[str]:
        self.refresh()
        return sorted(self._manifest.tables)

    def table(self, name: str) -> Table:
        from .table import Table

        self.refresh()
        if name not in self._manifest.tables:
            raise CatalogError(f"no table named {name!r}; tables: {self.table_names()}")
        return Table(self, name)

    def snapshot(self, name: str) -> TableSnapshot:
        """The table as a query sees it: committed rows plus the fresh rows so far (taken
        under a short lock of its own, so readers never wait for a writer's fsync); for a
        table indexed in place, its source's files as they are now."""
        self.refresh()
        with self._state_lock:
            meta = self._manifest.tables.get(name)
        if meta is None:
            raise CatalogError(f"no table named {name!r}; tables: {self.table_names()}")
        if meta.source is not None:
            meta = self._reconciled(meta)
        with self._state_lock:
            runs = self._fresh.get(name, ())
            last = self._snapshots.get(name)
            if last is not None and last[0] is meta and last[1] is runs:
                return last[2]
            files = self._in_place.files(meta) if meta.source is not None else None
            snap = TableSnapshot(meta, self.store, fresh_batches(runs), fresh_segments(runs), files)
            self._snapshots[name] = (meta, runs, snap)
        return snap

    # -- tables indexed in place (storage/in_place.py) ----------------------------------
    def _reconciled(self, meta: TableMeta) -> TableMeta:
        """``meta`` as its source's files are now; a changed listing is shown to DataFusion
        at once."""
        current = self._in_place.reconciled(meta, self.settings.get("fts.source_refresh_seconds"))
        if self._views.registered(meta.name) != current:
            self._show(current)
        return current

    def index_in_place(
        self, name: str, source: str | os.PathLike[str] | None = None, store: Sequence[str] | None = None
    ) -> Table:
        """Make ``name`` a table indexed in place: its rows are the Parquet files of
        ``source`` (a file or a directory), read where they are, or, without ``source``,
        of the table ``name`` registered on the session (``ctx.register_parquet``). The
        database keeps the list of files, never their rows, but for a copy of the
        ``store`` columns (fetched from there: for files whose row groups are large, a
        fetch from the user's files decodes a whole row group). Indexes are then built as
        on any table (:meth:`Table.create_index`). Files added later are searched at once
        as the unindexed tail, and indexed by ``OPTIMIZE``; see docs/design.md: "Tables
        indexed in place". Returns the table; on a table already in place on that
        source, ``store`` (when given) replaces its stored columns."""
        _check_new_name(name)
        known = self._manifest.tables.get(name)
        if source is None and known is not None and known.source is not None:
            # (the name resolves to our view of its files now)
            path, schema, partitions = known.source, known.schema, known.partitions
        else:
            partitions = ()
            if source is None:
                if not self.ctx.table_exist(name):
                    raise CatalogError(f"no table named {name!r} on the session to index in place")
                source, partitions = parquet_source_of(self.ctx, name)
            path = os.path.abspath(os.fspath(source))
            schema = source_schema(path, partitions)
            if partitions:  # (Hive partition columns: the session's, held by no file)
                schema = with_partitions(name, schema, self.ctx.table(name).schema(), partitions)
        stored = stored_columns(store, schema, partitions)
        with self.writing():
            meta = self._manifest.tables.get(name)
            if meta is not None and meta.source != path:
                raise CatalogError(f"table {name!r} already exists")
            if meta is None:
                meta = TableMeta(name=name, schema=schema, source=path, stored=stored or (), partitions=partitions)
                manifest = self._in_place.adopted(self._manifest.with_table(meta), meta)
            elif stored is not None and stored != meta.stored:
                fragments = tuple(replace(f, copy=None, copy_row=None, copy_footer_crc=None) for f in meta.fragments)
                manifest = self._manifest.with_table(replace(meta, stored=stored, fragments=fragments))
            else:
                return self.table(name)
            self.commit(self._copy_stored(manifest, name))
        return self.table(name)

    def adopt_source(self, name: str) -> None:
        """Commit a table indexed in place as its files are now (new files get ids of
        their own and copies of the stored columns, changed and removed ones leave
        holes), before OPTIMIZE or an index build indexes them. Nothing for a managed
        table."""
        with self.writing():
            meta = self._manifest.tables[name]
            if meta.source is None:
                return
            manifest = self._in_place.adopted(self._manifest, meta)
            if manifest.tables[name] != meta:
                self.commit(self._copy_stored(manifest, name))

    def _copy_stored(self, manifest: Manifest, name: str) -> Manifest:
        """``manifest`` with copies of the stored columns of the files of ``name`` that
        have none (``InPlaceTables.with_copies``), written but not committed."""
        try:
            return self._in_place.with_copies(manifest, name, append_rows.FRAGMENT_ROWS)
        except BaseException:
            self.discard_uncommitted()
            raise

    def refuse_writes(self, name: str) -> None:
        """Refuse a write to the rows of a table indexed in place: they are its files'."""
        meta = self._manifest.tables.get(name)
        if meta is not None and meta.source is not None:
            raise InvalidArgument(
                f"table {name!r} is indexed in place: its rows are the Parquet files under {meta.source}; "
                "add, replace or remove files there (the next query sees them)"
            )

    # -- the fresh tier (docs/design.md: "Fresh tier and visibility") ----------------------
    # -- the directory's state, shared with other processes (docs/design.md: "Concurrency") --
    def refresh(self) -> None:
        """See what other processes did since this Database last looked: their commits,
        and the rows their inserts left in the logs. Every query and statement does this
        first; when nothing changed it costs one read of the directory's shared counters.
        The writer never needs to: it made every change since it took the writer lock."""
        if self.store.holds_write_lock or self.store.changes() == self._seen:
            return
        with self._load_lock:
            if not self.store.holds_write_lock and self.store.changes() != self._seen:
                self._load()

    def _load(self) -> None:
        """Make the directory's current state this Database's (under ``_load_lock``): its
        manifest, and per table the rows its log holds past it (what a reopen would
        recover), indexed in memory as an insert indexes them.

        A reader reads the manifest, then the logs: a commit in between (a flush empties
        a log once its rows are in the manifest) makes it read both again. If commits keep
        landing it keeps the state it had (older, but whole) and tries at the next query."""
        for _ in range(READ_ATTEMPTS):
            seen = self.store.changes()
            manifest = self.store.load_manifest()
            reads = {name: self.logs.read(name, meta, self._fresh.get(name, ())) for name, meta in manifest.tables.items()}
            if self.store.changes()[0] == seen[0]:  # (always true for the writer)
                break
        else:
            return
        tables = {
            name: old if (old := self._manifest.tables.get(name)) == meta else meta  # keep registrations
            for name, meta in manifest.tables.items()
        }
        manifest = replace(manifest, tables=tables)
        replayed = self.logs.replay(reads, tables)
        fresh = {name: replayed.get(name, self._fresh.get(name, ())) for name in tables}
        self._install(manifest, fresh)
        self._seen = seen

    def _install(self, manifest: Manifest, fresh: dict[str, tuple[FreshRun, ...]]) -> None:
        """Make ``manifest`` and ``fresh`` the state queries see, re-register the tables
        that changed on the DataFusion session, and forget cached views of files the
        manifest no longer names (file ids are never reused: they stay valid otherwise)."""
        old, old_fresh = self._manifest, self._fresh
        fresh = {name: runs for name, runs in fresh.items() if runs and name in manifest.tables}
        with self._state_lock:
            self._manifest, self._fresh = manifest, fresh
            self._snapshots = {
                name: last for name, last in self._snapshots.items() if manifest.tables.get(name) is last[0]
            }
        for name in set(old.tables) - set(manifest.tables):
            self._in_place.forget(name)
            self._views.deregister(name)
        for name, meta in manifest.tables.items():  # (against what is registered: a failed
            # registration, a file deleted meanwhile, is made again at the next load)
            if meta.source is not None:
                self._reconciled(meta)  # (registers the table as its files are)
                continue
            if self._views.registered(name) is not meta or old_fresh.get(name, ()) is not fresh.get(name, ()):
                self._show(meta)
        self.segment_sets.retain(manifest.file_ids())

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Be this Database's one writing thread and the directory's one writer. On
        becoming the writer, first adopt what is on disk: another Database may have
        committed, or left acknowledged rows in a log, since this one last looked."""
        with self._write_lock:
            if self.store.lock_for_writes():
                try:
                    self._recover(self.store.load_manifest())
                    with self._load_lock:
                        self._load()
                    self.store.announce()  # (readers reload what a crashed writer left)
                except BaseException:
                    self.store.release_write_lock()
                    raise
            yield

    def _recover(self, manifest: Manifest) -> None:
        """With the writer lock held, undo what a crashed writer left half done: cut torn
        log tails (a damaged log is refused), delete files that never committed (docs/design.md: "Commits, garbage collection
        and recovery"). A directory with files but no manifest is refused first (they are not
        leftovers)."""
        self.store.check_manifest()
        self.logs.cut_torn_tails(list(manifest.tables))
        self._collect_garbage(manifest)

    def _collect_garbage(self, manifest: Manifest) -> None:
        """Delete the files no one may read: those ``manifest`` does not name, but the
        ones retired within the grace period (leftovers of writes that never committed
        among them). Only with the writer lock held."""
        grace = self.settings.get("fts.gc_grace_seconds")
        self.store.collect_garbage(manifest.kept_files(time.time(), grace))

    def discard_uncommitted(self) -> None:
        """After a write failed before its commit: delete what it wrote, forget what it
        cached (the next write reuses its file ids)."""
        self._collect_garbage(self._manifest)
        self.segment_sets.retain(self._manifest.file_ids())

    def retrying(self, read: Callable[[], T]) -> T:
        """Run ``read``; while a file of its snapshot is gone (deleted after a later commit
        retired it, see :class:`StaleSnapshotError`), load the current version and run it
        again. Only for reads: running them twice changes nothing."""
        for _ in range(READ_ATTEMPTS - 1):
            try:
                return read()
            except StaleSnapshotError as gone:
                self._in_place.forget()  # (a source file changed under its listing: list again)
                if gone.file_id in self.store.load_manifest().file_ids():
                    raise StorageError(
                        f"database {self.path} is missing {gone.file_id}, which its manifest names"
                    ) from None
                with self._load_lock:
                    if not self.store.holds_write_lock:
                        self._load()
        return read()

    def append_fresh(self, name: str, data: Any) -> int:
        """Acknowledge rows into the fresh tier: logged and fsynced, indexed in memory per
        indexed column, then visible (rows and segments in one step), all before this
        returns. Returns the number of rows.

        The rows are converted and tokenized before the writer lock is taken (with row ids
        from 0; the segments are moved to the real ids under the lock, which costs nothing:
        segments store rows relative to their base), so concurrent writers tokenize in
        parallel and serialize only on the log append and the publication."""
        self.refuse_writes(name)
        meta = self.snapshot(name).meta
        source_schema, batches = open_batches(data)
        incoming = [b for b in conform(batches, source_schema, meta.schema) if b.num_rows]
        if not incoming:
            return 0
        table = pa.Table.from_batches(incoming).combine_chunks()
        n = table.num_rows
        file_schema = pa.schema([pa.field(ROWID, pa.int64(), False), *meta.schema])
        columns = [c.chunk(0) if c.num_chunks == 1 else c.combine_chunks() for c in table.columns]
        batch = pa.RecordBatch.from_arrays([pa.array(np.arange(n, dtype=np.int64)), *columns], schema=file_schema)
        tally: Counter[str] = Counter()
        run = build_run(batch, meta.indexes, self.logs.new_id, tally)
        with self.writing():
            current = self.snapshot(name).meta
            if current.schema != meta.schema:
                raise CatalogError(f"table {name!r} was created again by another Database meanwhile; insert again")
            if current.indexes != meta.indexes:  # an index changed meanwhile: tokenize again
                run = build_run(batch, current.indexes, self.logs.new_id, tally)
            runs = self._fresh.get(name, ())
            first = current.next_rowid + sum(r.rows for r in runs)
            run = move_run(run, first)
            log = self.logs.log(name)
            if log is not None:
                log.append(run.batches[0])  # durable before it is visible
                self.store.announce()
            runs = append_run(runs, run, self.logs.new_id)
            with self._state_lock:
                self._fresh[name] = runs
            self.counters.update(tally)
            self._show(current)
            if sum(r.rows for r in runs) >= self.settings.get("fts.memtable_rows"):
                self.flush(name)
            return n

    def flush(self, name: str) -> None:
        """Commit the fresh rows as a data fragment (same row ids), and their in-memory
        segments as index segments of the same rows (so flushed rows are indexed rows, not
        an unindexed tail); then empty the log."""
        with self.writing():
            runs = self._fresh.get(name, ())
            if not runs:
                return
            meta = self.snapshot(name).meta
            rows = pa.Table.from_batches(fresh_batches(runs)).drop_columns([ROWID])
            manifest, new_meta = self.append(self._manifest, meta, rows.schema, iter(rows.to_batches()))
            assert new_meta.next_rowid == runs[-1].batches[-1].column(0)[-1].as_py() + 1
            persisted: dict[str, Segment] = {}
            try:
                for column, index in meta.indexes.items():
                    seg_id, manifest = manifest.file_id("seg")
                    parts = [r.segments[column] for r in runs]
                    seg = merge_segments(seg_id, parts) if len(parts) > 1 else replace(
                        parts[0], meta=replace(parts[0].meta, id=seg_id)
                    )
                    seg = seg.written(self.store.write_segment(seg_id, seg.to_arrays()))
                    persisted[seg_id] = seg
                    new_meta = new_meta.with_index(replace(index, segments=index.segments + (seg.meta,)))
            except BaseException:
                self.discard_uncommitted()
                raise
            self.commit(manifest.with_table(new_meta), flushed=name)
            self.segment_sets.add(persisted)  # (the segments just written are in memory already)
            self.logs.empty(name)

    def create_table(self, name: str, data: Any = None, schema: pa.Schema | None = None) -> Table:
        """A new managed table from ``data`` (rows get ``_rowid`` 0, 1, 2, ...)."""
        _check_new_name(name)
        with self.writing():
            if name in self._manifest.tables:
                raise CatalogError(f"table {name!r} already exists")
            if data is None:
                if schema is None:
                    raise InvalidArgument("create_table needs data or a schema")
                source_schema, batches = schema, iter(())
            else:
                source_schema, batches = open_batches(data)
            new_schema = check_new_schema(schema if schema is not None else source_schema)
            meta = TableMeta(name=name, schema=new_schema)
            manifest = self._manifest.with_table(meta)
            manifest, meta = self.append(manifest, meta, source_schema, batches)
            self.logs.empty_stale(name)
            self.commit(manifest)
        return self.table(name)

    def drop_table(self, name: str) -> None:
        with self.writing():
            self.snapshot(name)
            tables = dict(self._manifest.tables)
            del tables[name]
            self.commit(replace(self._manifest, tables=tables))
            self._fresh.pop(name, None)
            self.logs.drop(name)

    # -- writes -------------------------------------------------------------------------
    def append(
        self, manifest: Manifest, meta: TableMeta, source_schema: pa.Schema, batches: Any
    ) -> tuple[Manifest, TableMeta]:
        """Write ``batches`` as new fragments after the table's last row id; return the
        manifest and table that name them (not yet committed; the caller is writing)."""
        self.refuse_writes(meta.name)
        try:
            return append_rows.append_fragments(self.store, manifest, meta, source_schema, batches)
        except BaseException:
            self.discard_uncommitted()  # nothing was committed: remove what this call wrote
            raise

    def commit(self, manifest: Manifest, flushed: str | None = None) -> None:
        """Make ``manifest`` the database's state (atomically on disk), then re-register
        the tables it changed on the DataFusion session. ``flushed`` names a table whose
        fresh rows the manifest now holds: readers see them move in one step. The files
        it stops naming are retired: deleted once ``fts.gc_grace_seconds`` have passed
        (at a later commit, or an open), since other processes may still read them."""
        with self.writing():
            if manifest.version != self._manifest.version:
                raise StorageError(
                    f"a write built on manifest version {manifest.version} cannot commit over "
                    f"version {self._manifest.version}"
                )
            now, grace = time.time(), self.settings.get("fts.gc_grace_seconds")
            manifest = replace(manifest, version=manifest.version + 1).succeeding(self._manifest, now, grace)
            self.store.commit(manifest)
            fresh = dict(self._fresh)
            if flushed is not None:
                fresh[flushed] = ()
            self._install(manifest, fresh)
            self._collect_garbage(manifest)

    def _show(self, meta: TableMeta) -> None:
        """Make DataFusion's view of the table ``meta`` (and its fresh rows) current."""
        self._views.register(meta, list(fresh_batches(self._fresh.get(meta.name, ()))))

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


def _check_new_name(name: str) -> None:
    """A name a new table may take (see ``storage/manifest.py`` ``TABLE_NAME``), not one of
    the engine's own."""
    if not valid_table_name(name):
        raise InvalidArgument(f"table name must be an identifier of at most {MAX_NAME_CHARS} characters, got {name!r}")
    if name.lower().startswith(RESERVED_PREFIX):
        raise InvalidArgument(f"table name {name!r} starts with {RESERVED_PREFIX!r}, which names the engine's own tables")


def connect(
    path: str | os.PathLike[str] | None = None,
    ctx: datafusion.SessionContext | None = None,
    config: dict[str, Any] | None = None,
    executor: str | None = None,
    ray_init: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> Database:
    """Open (or create) the database in directory ``path``; in memory when ``path`` is None.

    ``ctx`` is the DataFusion session to extend (a new one by default); ``config`` holds
    initial ``fts.*`` settings. ``executor="ray"`` (the setting ``fts.executor``) searches
    and builds indexes on Ray, started with ``ray_init`` (``ray.init`` arguments) unless
    it is running already. ``progress`` follows the index builds given no callback of
    their own, as SQL's ``CREATE FULLTEXT INDEX`` and ``OPTIMIZE`` (see
    :class:`~datafusion_fts.index.build_progress.BuildProgress`).
    """
    if executor is not None:
        config = {**(config or {}), "fts.executor": executor}
    db = Database(path, ctx, config)
    db.ray_init = dict(ray_init or {})
    db.progress = progress
    if db.settings.get("fts.executor") == "ray":
        db.distributed_executor()  # no ray installed or no directory: say so now
    return db

