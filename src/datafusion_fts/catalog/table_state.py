"""What a database's readers see (docs/design.md: "Concurrency"; "Fresh tier and
visibility"): the committed manifest and each table's fresh rows, swapped together as one
version; the snapshots made of it; DataFusion's view of each table, kept current; and the
versions a SQL statement pinned at its start, which every part of it reads."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, Callable, Protocol, TypeVar

import pyarrow as pa

from ..errors import CatalogError, StaleSnapshotError, StorageError
from ..index.fresh.fresh_logs import FreshLogs, Runs
from ..index.fresh.fresh_runs import fresh_batches, fresh_segments
from ..planner.segment_sets import SegmentSets
from ..settings import Settings
from ..storage.files.layout import is_remote
from ..storage.files.manifest import Manifest, TableMeta
from ..storage.snapshot import TableSnapshot
from ..storage.sources.in_place import InPlaceTables
from ..storage.stores.store import Store

# Times a reader reads the manifest and the logs again when a commit lands meanwhile (or
# runs a search again when a file of its snapshot was deleted meanwhile).
READ_ATTEMPTS = 8
T = TypeVar("T")


class Views(Protocol):
    """DataFusion's views of the tables (``session/table_views.py`` ``TableViews``), which
    the state keeps current as it changes."""

    def registered(self, name: str) -> TableMeta | None: ...

    def register(self, meta: TableMeta, fresh: list[pa.RecordBatch]) -> Mapping[str, Any]:
        """Show ``meta`` and its ``fresh`` rows; what the table's names now resolve to."""

    def deregister(self, name: str) -> None: ...

    def forget_sizes(self) -> None: ...

    # Per thread, what its running statement pinned: ``entries``, what the names of the
    # tables it reads resolve to (those ``register`` returned), and here ``snapshots``.
    pins: threading.local


class TableState:
    """The version of the directory's state this process serves queries from, loaded
    from ``store`` (and the logs) when another process changed it, installed directly by
    this process's writer (:mod:`.writer`) when it commits."""

    def __init__(
        self,
        store: Store,
        logs: FreshLogs,
        views: Views,
        in_place: InPlaceTables,
        segment_sets: SegmentSets,
        settings: Settings,
        where: str,
    ) -> None:
        self.store, self.logs, self.settings, self.where = store, logs, settings, where
        self.in_place = in_place  # (storage/sources/in_place.py)
        self.segment_sets = segment_sets  # (planner/segment_sets.py)
        self._views = views  # (session/table_views.py)
        settings.watch("fts.memory_table_bytes", self.show_all)
        self._state_lock = threading.Lock()  # (manifest, fresh rows) change together
        self._load_lock = threading.Lock()  # one load of the directory's state at a time
        self._manifest = Manifest()
        self._seen = (-1, -1)  # the store's change counters when the state was last loaded
        # The fresh tier: per table, runs of rows acknowledged but not flushed, each with
        # its in-memory segments (index/fresh/fresh_runs.py).
        self._fresh: dict[str, Runs] = {}
        # Per table: the last snapshot handed out, with the (immutable) state it was made
        # of; the next query on an unchanged table gets the same one, and with it the
        # memos kept on it (coverage, segment sets).
        self._snapshots: dict[str, tuple[TableMeta, Runs, TableSnapshot]] = {}
        # Per table: the version its DataFusion views show, and what its names resolve to
        # there (set after each registration, under _show_lock: the two always agree).
        self._shown: dict[str, tuple[TableMeta, Runs, Mapping[str, Any]]] = {}
        self._show_lock = threading.Lock()
        # Per thread: the snapshots and views its running statement pinned (see pinned).
        self._pins = views.pins

    @property
    def manifest(self) -> Manifest:
        """The manifest as installed (call :meth:`refresh` first to see other processes')."""
        return self._manifest

    def runs(self, name: str) -> Runs:
        return self._fresh.get(name, ())

    # -- the directory's state, shared with other processes -----------------------------
    def refresh(self) -> None:
        """See what other processes did since this one last looked: their commits, and
        the rows their inserts left in the logs. Every query and statement does this
        first; when nothing changed it costs one read of the directory's shared counters.
        The writer never needs to: it made every change since it took the writer lock."""
        if self.store.holds_write_lock or self.store.changes() == self._seen:
            return
        with self._load_lock:
            if not self.store.holds_write_lock and self.store.changes() != self._seen:
                self._load()

    def load(self) -> None:
        """Load the directory's current state (at open, and on becoming the writer)."""
        with self._load_lock:
            self._load()

    def _load(self) -> None:
        """Make the directory's current state this process's (under ``_load_lock``): its
        manifest, and per table the rows its log holds past it (what a reopen would
        recover), indexed in memory as an insert indexes them.

        A reader reads the manifest, then the logs: a commit in between (a flush empties
        a log once its rows are in the manifest) makes it read both again. If commits keep
        landing it keeps the state it had (older, but whole) and tries at the next query."""
        for _ in range(READ_ATTEMPTS):
            seen = self.store.changes()
            manifest = self.store.load_manifest()
            reads = {name: self.logs.read(name, meta, self.runs(name)) for name, meta in manifest.tables.items()}
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
        self.install(manifest, {name: replayed.get(name, self.runs(name)) for name in tables})
        self._seen = seen

    def install(self, manifest: Manifest, fresh: dict[str, Runs]) -> None:
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
            self.in_place.forget(name)
            with self._show_lock:
                self._views.deregister(name)
                self._shown.pop(name, None)
        for name, meta in manifest.tables.items():  # (against what is registered: a failed
            # registration, a file deleted meanwhile, is made again at the next load)
            if meta.source is not None:
                try:
                    self.reconciled(meta)  # (registers the table as its files are)
                except StorageError:
                    # (its source cannot be listed now, an object store down: the database
                    # still opens; the table shows its files as committed, and each query
                    # of it lists them again, failing with this error until they are back)
                    if self._views.registered(name) is None:
                        self.show(meta)
                continue
            if self._views.registered(name) is not meta or old_fresh.get(name, ()) is not fresh.get(name, ()):
                self.show(meta)
        self.segment_sets.retain(manifest.file_ids())

    def add_runs(self, name: str, runs: Runs) -> None:
        """Make ``runs`` the fresh rows of ``name`` (the writer's insert), visible at once."""
        with self._state_lock:
            self._fresh[name] = runs

    def show(self, meta: TableMeta) -> None:
        """Make DataFusion's view of the table ``meta`` (and its fresh rows) current."""
        with self._show_lock:
            runs = self.runs(meta.name)
            entries = self._views.register(meta, list(fresh_batches(runs)))
            self._shown[meta.name] = (meta, runs, entries)

    def show_all(self) -> None:
        """Show every managed table again: which are held in memory changes with
        ``fts.memory_table_bytes``, at once (session/table_views.py)."""
        self._views.forget_sizes()
        with self._state_lock:
            tables = [meta for meta in self._manifest.tables.values() if meta.source is None]
        for meta in tables:
            self.show(meta)

    # -- reads --------------------------------------------------------------------------
    def snapshot(self, name: str) -> TableSnapshot:
        """The table as a query sees it: committed rows plus the fresh rows so far (taken
        under a short lock of its own, so readers never wait for a writer's fsync); for a
        table indexed in place, its source's files as they are now."""
        self.refresh()
        with self._state_lock:
            meta = self._manifest.tables.get(name)
        if meta is None:
            raise CatalogError(f"no table named {name!r}; tables: {sorted(self._manifest.tables)}")
        if meta.source is not None:
            meta = self.reconciled(meta)
        with self._state_lock:
            return self._snapshot_of(meta, self.runs(name))

    def _snapshot_of(self, meta: TableMeta, runs: Runs) -> TableSnapshot:
        """The snapshot of ``meta`` and ``runs`` (under ``_state_lock``): the last one handed
        out when they are its."""
        last = self._snapshots.get(meta.name)
        if last is not None and last[0] is meta and last[1] is runs:
            return last[2]
        files = self.in_place.files(meta) if meta.source is not None else None
        snap = TableSnapshot(meta, self.store, fresh_batches(runs), fresh_segments(runs), files)
        self._snapshots[meta.name] = (meta, runs, snap)
        return snap

    # -- one version per statement --------------------------------------------------------
    def pinned(self, text: str) -> "_Pinned":
        """Run the statement ``text`` on one version of each table it names (its name
        appears in the text), taken now, at its start (docs/design.md: "One visibility
        cut"): in this thread, DataFusion resolves their names to the views of that version
        (its prefilters, the tables it reads, its subqueries) and searches read its
        snapshot (:meth:`read_snapshot`). A statement a statement runs keeps the outer
        one's. Writes never read pins: they read :meth:`snapshot`."""
        return _Pinned(self, text)

    def _pin(self, names: Iterable[str]) -> None:
        """Pin, for this thread, the version of each table of ``names`` its views show:
        the views and the snapshot of the same rows (a writer shows its change right after
        it makes it: a statement between the two reads the version before, whole)."""
        self.refresh()
        snapshots: dict[str, TableSnapshot] = {}
        entries: Mapping[str, Any] | None = None
        for name in names:
            meta = self._manifest.tables.get(name)
            if meta is not None and meta.source is not None:
                self.snapshot(name)  # (its source's files listed now: its views show them)
            shown = self._shown.get(name)
            if shown is None:
                continue
            meta, runs, views = shown
            with self._state_lock:
                snapshots[name] = self._snapshot_of(meta, runs)
            entries = views if entries is None else {**entries, **views}
        self._pins.snapshots, self._pins.entries = snapshots, entries

    def _unpin(self) -> None:
        self._pins.snapshots = self._pins.entries = None

    def read_snapshot(self, name: str) -> TableSnapshot:
        """For a read: the snapshot of ``name`` this thread's statement pinned, else the
        current one (:meth:`snapshot`)."""
        pinned = getattr(self._pins, "snapshots", None)
        found = pinned.get(name) if pinned else None
        return found if found is not None else self.snapshot(name)

    def retrying(self, read: Callable[[], T]) -> T:
        """Run ``read``; while a file of its snapshot is gone (deleted after a later commit
        retired it, see :class:`StaleSnapshotError`), load the current version (pinned in
        its stead, in a statement) and run it again. Only for reads: running them twice
        changes nothing."""
        for _ in range(READ_ATTEMPTS - 1):
            try:
                return read()
            except StaleSnapshotError as gone:
                self.in_place.forget()  # (a source file changed under its listing: list again)
                if gone.file_id in self.store.load_manifest().file_ids():
                    raise StorageError(
                        f"database {self.where} is missing {gone.file_id}, which its manifest names"
                    ) from None
                with self._load_lock:
                    if not self.store.holds_write_lock:
                        self._load()
                pinned = getattr(self._pins, "snapshots", None)
                if pinned is not None:  # (the statement's version lost a file: it reads the current one)
                    self._pin(list(pinned))
        return read()

    # -- tables indexed in place (storage/sources/in_place.py) ----------------------------------
    def reconciled(self, meta: TableMeta) -> TableMeta:
        """``meta`` as its source's files are now; a changed listing is shown to DataFusion
        at once."""
        reuse = "fts.remote_source_refresh_seconds" if is_remote(meta.source or "") else "fts.source_refresh_seconds"
        current = self.in_place.reconciled(meta, self.settings.get(reuse))
        if self._views.registered(meta.name) != current:
            self.show(current)
        return current

    def list_sources(self, text: str) -> None:
        """List the files of each table indexed in place that ``text`` may name, so SQL
        reading its DataFusion view (not a search, which lists them itself) sees the files
        as they are now: a file added was missing from ``SELECT count(*)`` until a search.
        A statement answered by its search alone (a cached direct shape) skips this."""
        lowered = text.lower()
        for name, meta in self._manifest.tables.items():
            if meta.source is not None and name.lower() in lowered:
                self.reconciled(meta)


class _Pinned:
    """:meth:`TableState.pinned` as a context manager (a class: a statement's whole cost is
    a few microseconds, and a generator's would be one of them)."""

    __slots__ = ("_state", "_text", "_outer")

    def __init__(self, state: TableState, text: str) -> None:
        self._state, self._text, self._outer = state, text, False

    def __enter__(self) -> None:
        state = self._state
        self._outer = getattr(state._pins, "snapshots", None) is not None
        if not self._outer:
            lowered = self._text.lower()
            state._pin([name for name in state._manifest.tables if name.lower() in lowered])

    def __exit__(self, *exc: object) -> None:
        if not self._outer:
            self._state._unpin()

