"""A database's one writer (docs/design.md: "Concurrency"; "Commits, garbage collection
and recovery"; "Fresh tier and visibility"): the writer lock, recovery from a crashed
writer, commits and the garbage they retire, and every write: tables created and dropped,
rows appended, deleted or acknowledged into the fresh tier and flushed, tables indexed
in place adopting their files, and index builds and OPTIMIZE (their work in
:mod:`.index_writes`)."""

from __future__ import annotations

import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import CatalogError, FtsError, FtsNotice, InvalidArgument, StorageError
from ..index.building.build_progress import BuildReporter, Progress
from ..index.building.builder import merge_segments
from ..index.fresh.fresh_logs import FreshLogs
from ..index.fresh.fresh_runs import append_run, build_run, fresh_batches, move_run
from ..index.segment import Segment
from ..ingest import check_new_schema, conform, open_batches, stored_schema
from ..planner.segment_sets import SegmentSets
from ..settings import Settings
from ..storage.files.manifest import ROWID, IndexMeta, Manifest, SegmentMeta, TableMeta
from ..storage.sources.in_place import InPlaceTables
from ..storage.stores import append_rows
from ..storage.stores.store import Store
from . import compaction, index_writes
from .index_writes import RayBuild
from .recovery import collect_garbage, recover
from .table_state import TableState


class Writer:
    """Writes to the tables of ``state``: one writing thread in this process (a lock),
    one writing process per directory (the store's writer lock, taken on first write)."""

    def __init__(
        self,
        store: Store,
        state: TableState,
        logs: FreshLogs,
        in_place: InPlaceTables,
        segment_sets: SegmentSets,
        settings: Settings,
        counters: Counter[str],
    ) -> None:
        self.store, self.state, self.logs, self.settings = store, state, logs, settings
        self.in_place = in_place  # (storage/sources/in_place.py)
        self.segment_sets = segment_sets  # (planner/segment_sets.py)
        self.counters = counters  # rows inserts tokenized ("fresh_rows_tokenized")
        self._lock = threading.RLock()  # one writer at a time
        self._depth = 0  # (writing() blocks open in the writing thread)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Be this process's one writing thread and the directory's one writer. On
        becoming the writer, first adopt what is on disk: another Database may have
        committed, or left acknowledged rows in a log, since this one last looked. A
        database opened read-only refuses here, before anything is locked or written."""
        self.store.refuse_writes()
        with self._lock:
            if self._depth == 0 and self.store.lock_for_writes():  # (once a write: adopting mid-write would
                # change the state it builds on)
                try:
                    self.recover(self.store.load_manifest())
                    self.state.load()
                    self.store.announce()  # (readers reload what a crashed writer left)
                except BaseException:
                    self.store.release_write_lock()
                    raise
            self._depth += 1
            try:
                yield
            except BaseException:
                if self._depth == 1:  # (the write as a whole failed: its files go at once)
                    self.discard_uncommitted()
                raise
            finally:
                self._depth -= 1

    def recover(self, manifest: Manifest) -> None:
        """:func:`.recovery.recover` with this writer's store, logs and settings."""
        recover(self.store, self.logs, self.settings, manifest)

    def _collect_garbage(self, *manifests: Manifest) -> None:
        collect_garbage(self.store, self.settings, *manifests)

    def discard_uncommitted(self) -> None:
        """After a write failed: delete what it wrote and no manifest names (a disk left
        full by a failed build's files stays full), forget what it cached (the next
        write reuses its file ids). The files of a manifest committed on disk are kept
        even if this process failed before installing it; when the manifest on disk
        cannot be read, nothing is deleted (the next open collects)."""
        try:
            self._collect_garbage(self.state.manifest, self.store.load_manifest())
        except FtsError:
            pass
        self.segment_sets.retain(self.state.manifest.file_ids())

    def commit(self, manifest: Manifest, flushed: str | None = None) -> None:
        """Make ``manifest`` the database's state (atomically on disk), then re-register
        the tables it changed on the DataFusion session. ``flushed`` names a table whose
        fresh rows the manifest now holds: readers see them move in one step. The files
        it stops naming are retired: deleted once ``fts.gc_grace_seconds`` have passed
        (at a later commit, or an open), since other processes may still read them."""
        with self.writing():
            current = self.state.manifest
            if manifest.version != current.version:
                raise StorageError(
                    f"a write built on manifest version {manifest.version} cannot commit over "
                    f"version {current.version}"
                )
            now, grace = time.time(), self.settings.get("fts.gc_grace_seconds")
            manifest = replace(manifest, version=manifest.version + 1).succeeding(current, now, grace)
            self.store.commit(manifest)
            fresh = {name: () if name == flushed else self.state.runs(name) for name in manifest.tables}
            self.state.install(manifest, fresh)
            self._collect_garbage(manifest)

    # -- managed tables -----------------------------------------------------------------
    def create_table(
        self, name: str, data: Any = None, schema: pa.Schema | None = None, declared: pa.Schema | None = None,
        definition: str | None = None, replacing: bool = False,
    ) -> None:
        """A new managed table from ``data`` (rows get ``_rowid`` 0, 1, 2, ...), under a
        name the caller checked. SQL's CREATE TABLE gives the schema DataFusion made
        (``declared``: stored without view types) and its column definitions; with
        ``replacing`` it replaces a table of that name in the same commit."""
        with self.writing():
            if name in self.state.manifest.tables and not replacing:
                raise CatalogError(f"table {name!r} already exists")
            if name in self.state.manifest.tables:
                # The replaced table's fresh rows are committed first: its log can then be
                # emptied before the replacing commit (a log must never reach the new table),
                # and a failed replacement leaves the old table with every row it had.
                self.flush(name)
            if data is None:
                if schema is None and declared is None:
                    raise InvalidArgument("create_table needs data or a schema")
                source_schema, batches = schema or declared, iter(())
            else:
                source_schema, batches = open_batches(data)
            if declared is not None:
                new_schema = stored_schema(declared)
                declared = declared if declared != new_schema else None
            else:
                new_schema = check_new_schema(schema if schema is not None else source_schema)
            meta = TableMeta(name=name, schema=new_schema, declared=declared, definition=definition)
            manifest = self.state.manifest.with_table(meta)
            manifest, meta = self.append(manifest, meta, source_schema, batches)
            self.logs.empty_stale(name)
            self.commit(manifest, flushed=name if replacing else None)

    def drop_table(self, name: str) -> None:
        with self.writing():
            self.state.snapshot(name)  # (no such table: say so)
            manifest = self.state.manifest
            self.commit(replace(manifest, tables={n: t for n, t in manifest.tables.items() if n != name}))
            self._empty_log(name)
            self.logs.forget(name)

    def append(
        self, manifest: Manifest, meta: TableMeta, source_schema: pa.Schema, batches: Any
    ) -> tuple[Manifest, TableMeta]:
        """Write ``batches`` as new fragments after the table's last row id; return the
        manifest and table that name them (not yet committed; the caller is writing)."""
        self.refuse_writes(meta.name)
        try:
            return append_rows.append_fragments(self.store, manifest, meta, source_schema, batches)
        except pa.ArrowNotImplementedError as exc:  # (a type Parquet has none of: an interval)
            raise InvalidArgument(f"table {meta.name!r}: its columns cannot be stored as Parquet: {exc}") from None

    def bulk_insert(self, name: str, data: Any) -> int:
        """Append ``data`` as committed fragments in one commit (all or nothing: a source
        that fails half way leaves the table as it was); the row count. Fresh rows are
        flushed first, so row ids stay in insertion order."""
        with self.writing():
            self.flush(name)
            meta = self.state.snapshot(name).meta
            source_schema, batches = open_batches(data)
            manifest, appended = self.append(self.state.manifest, meta, source_schema, batches)
            self.commit(self._compacted(manifest, name))
            return appended.next_rowid - meta.next_rowid

    def delete_rows(self, name: str, ids: np.ndarray) -> int:
        """Mark the live rows ``ids`` (ascending, distinct) deleted in one commit; how many.
        Rows are marked in per-fragment deletion vectors (fragments and index segments are
        immutable): the fresh rows are flushed first, for vectors belong to fragments."""
        if not len(ids):
            return 0
        self.refuse_writes(name)
        with self.writing():
            self.flush(name)
            manifest = self._deleted(self.state.manifest, self.state.manifest.tables[name], ids)
            self.commit(self._compacted(manifest, name))
        return len(ids)

    def replace_rows(self, name: str, ids: np.ndarray, data: Any) -> None:
        """Delete the live rows ``ids`` and add ``data`` (their new versions, row ids after
        every other row, indexed as an insert indexes rows) in one commit: all of an UPDATE
        or nothing."""
        self.refuse_writes(name)
        with self.writing():
            self.flush(name)
            meta = self.state.snapshot(name).meta
            source_schema, batches = open_batches(data)
            table = pa.Table.from_batches([b for b in conform(batches, source_schema, meta.schema)], meta.schema)
            if not table.num_rows:
                self.delete_rows(name, np.unique(ids))
                return
            table = table.combine_chunks()
            file_schema = pa.schema([pa.field(ROWID, pa.int64(), False), *meta.schema])
            columns = [c.chunk(0) for c in table.columns]
            batch = pa.RecordBatch.from_arrays([pa.array(np.arange(table.num_rows, dtype=np.int64)), *columns],
                                               schema=file_schema)
            tally: Counter[str] = Counter()
            run = move_run(build_run(batch, meta.indexes, self.logs.new_id, tally), meta.next_rowid)
            self._commit_runs(name, [run], np.unique(ids))
            self.counters.update(tally)

    def _compacted(self, manifest: Manifest, name: str, full: bool = False) -> Manifest:
        """``manifest`` with the data fragments and index segments of ``name`` merged as a
        write (or OPTIMIZE, ``full``) merges them (:mod:`.compaction`): in the write's own
        commit, so a failed one has had no effect."""
        return compaction.compacted(self.store, manifest, name, self.settings.get("fts.max_fragments"),
                                    self.segment_sets.segment, full)

    def _deleted(self, manifest: Manifest, meta: TableMeta, ids: np.ndarray) -> Manifest:
        """``manifest`` with the rows ``ids`` of ``meta`` marked in new deletion vectors
        (written, not committed)."""
        fragments = []
        for frag in meta.fragments:
            mine = ids[(ids >= frag.row_lo) & (ids <= frag.row_hi)]
            if not len(mine):
                fragments.append(frag)
                continue
            if frag.deletes:
                mine = np.union1d(self.store.read_deletes(frag.deletes, frag.deletes_crc), mine)
            dv_id, manifest = manifest.file_id("dv")
            crc = self.store.write_deletes(dv_id, mine)
            fragments.append(replace(frag, deletes=dv_id, deleted=len(mine), deletes_crc=crc))
        return manifest.with_table(replace(meta, fragments=tuple(fragments)))

    # -- indexes (index_writes.py) ------------------------------------------------------
    def create_index(self, name: str, index: IndexMeta, progress: Progress | None, ray: RayBuild) -> None:
        """Commit ``index`` (checked, its segments not yet built) built over every committed
        row of ``name``, a table indexed in place as its files are now; the caller flushed
        the fresh rows (fresh segments are always built with the current options)."""
        with self.writing():
            self.adopt_source(name)
            index_writes.build_index(self, name, index, BuildReporter(progress, index.column), ray)

    def build_segment(
        self, name: str, index: IndexMeta, lo: int, hi: int, progress: Progress | None
    ) -> SegmentMeta:
        """Commit one more segment of ``index`` over the inclusive row range [lo, hi]."""
        with self.writing():
            return index_writes.add_segment(self, name, index, lo, hi, BuildReporter(progress, index.column))

    def optimize(self, name: str, progress: Progress | None, ray: RayBuild) -> None:
        """OPTIMIZE: flush, adopt a source's files, merge the data fragments and drop their
        deleted rows (those of an earlier layout rewritten), then bring each index up to
        date (results never change), each step its own commit."""
        with self.writing():
            self.flush(name)
            self.adopt_source(name)
            manifest = self._compacted(self.state.manifest, name, full=True)
            if manifest is not self.state.manifest:
                self.commit(manifest)
            for key, index in self.state.snapshot(name).meta.indexes.items():
                index_writes.optimize_index(self, name, key, BuildReporter(progress, index.column), ray)

    # -- the fresh tier -----------------------------------------------------------------
    def append_fresh(self, name: str, data: Any) -> int:
        """Acknowledge rows into the fresh tier: logged and fsynced, indexed in memory per
        indexed column, then visible (rows and segments in one step), all before this
        returns. Returns the number of rows.

        The rows are converted and tokenized before the writer lock is taken (with row ids
        from 0; the segments are moved to the real ids under the lock, which costs nothing:
        segments store rows relative to their base), so concurrent writers tokenize in
        parallel and serialize only on the log append and the publication."""
        self.refuse_writes(name)
        meta = self.state.snapshot(name).meta
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
            current = self.state.snapshot(name).meta
            if current.schema != meta.schema:
                raise CatalogError(f"table {name!r} was created again by another Database meanwhile; insert again")
            if current.indexes != meta.indexes:  # an index changed meanwhile: tokenize again
                run = build_run(batch, current.indexes, self.logs.new_id, tally)
            runs = self.state.runs(name)
            run = move_run(run, current.next_rowid + sum(r.rows for r in runs))
            if self.store.commits_inserts:  # (no log: the insert is acknowledged by its commit)
                self._commit_runs(name, append_run(runs, run, self.logs.new_id))
                self.counters.update(tally)
                return n
            log = self.logs.log(name)
            if log is not None:
                log.append(run.batches[0])  # durable before it is visible
                self.store.announce()
            runs = append_run(runs, run, self.logs.new_id)
            self.state.add_runs(name, runs)
            self.counters.update(tally)
            self.state.show(current)
            if sum(r.rows for r in runs) >= self.settings.get("fts.memtable_rows"):
                self._flush_acknowledged(name)
            return n

    def _flush_acknowledged(self, name: str) -> None:
        """The flush an insert triggers, after its rows were acknowledged (logged, visible):
        a failure leaves them in the fresh tier, where they stay durable and searchable,
        and is a notice, not the insert's error (a retried insert would add them twice).
        The next insert past ``fts.memtable_rows``, ``flush()`` or ``OPTIMIZE`` tries again."""
        try:
            self.flush(name)
        except FtsError as exc:
            self.discard_uncommitted()  # (this write goes on: writing() sees no failure)
            self.counters["fresh_flushes_failed"] += 1
            warnings.warn(FtsNotice(f"table {name!r}: the inserted rows are acknowledged and stay in the fresh "
                                    f"tier; flushing them failed and is tried again later: {exc}"), stacklevel=4)

    def flush(self, name: str) -> None:
        """Commit the fresh rows as a data fragment (same row ids), and their in-memory
        segments as index segments of the same rows (so flushed rows are indexed rows, not
        an unindexed tail); then empty the log (also when no fresh row is left: see
        :meth:`_empty_log`)."""
        with self.writing():
            runs = self.state.runs(name)
            if runs:
                self._commit_runs(name, runs)
            self._empty_log(name, committed=not runs)

    def _empty_log(self, name: str, committed: bool = False) -> None:
        """Empty the log of rows a commit now holds (or of a dropped table); ``committed``:
        no fresh row is left, so the log holds only rows a commit holds (a failed truncate
        left them), and it is emptied only if it holds any. The commit is the write: a log
        that cannot be emptied now is harmless (a replay skips the rows below the table's
        next row id, and a table created under a dropped one's name empties its log first)
        and is emptied by a later flush (or OPTIMIZE, or open)."""
        try:
            if committed:
                self.logs.empty_committed(name)
            else:
                self.logs.empty(name)
        except StorageError:
            self.counters["logs_left_unemptied"] += 1

    def _commit_runs(self, name: str, runs: Any, deleted: np.ndarray | None = None) -> None:
        """Commit ``runs`` (rows with their ids and in-memory segments) as a fragment and
        index segments of the table, with the rows ``deleted`` marked, in one commit."""
        meta = self.state.snapshot(name).meta
        rows = pa.Table.from_batches(fresh_batches(runs)).drop_columns([ROWID])
        persisted: dict[str, Segment] = {}
        manifest, new_meta = self.append(self.state.manifest, meta, rows.schema, iter(rows.to_batches()))
        assert new_meta.next_rowid == runs[-1].batches[-1].column(0)[-1].as_py() + 1
        for column, index in meta.indexes.items():
            seg_id, manifest = manifest.file_id("seg")
            parts = [r.segments[column] for r in runs]
            seg = merge_segments(seg_id, parts) if len(parts) > 1 else replace(
                parts[0], meta=replace(parts[0].meta, id=seg_id)
            )
            seg = seg.write_to(self.store)
            persisted[seg_id] = seg
            new_meta = new_meta.with_index(replace(index, segments=index.segments + (seg.meta,)))
        manifest = manifest.with_table(new_meta)
        if deleted is not None:
            manifest = self._deleted(manifest, new_meta, deleted)
        self.commit(self._compacted(manifest, name), flushed=name)
        self.segment_sets.add(persisted)  # (the segments just written are in memory already)

    # -- tables indexed in place (storage/sources/in_place.py) ----------------------------------
    def index_in_place(self, meta: TableMeta) -> None:
        """Commit ``meta``, a table indexed in place (its source, schema, partition and
        stored columns), as its files are now, with copies of its stored columns; on a
        table already in place on that source, replace its stored columns. Nothing when
        nothing changes."""
        name = meta.name
        with self.writing():
            known = self.state.manifest.tables.get(name)
            if known is not None and known.source != meta.source:
                raise CatalogError(f"table {name!r} already exists")
            if known is None:
                manifest = self.in_place.adopted(self.state.manifest.with_table(meta), meta)
            elif meta.stored != known.stored:
                fragments = tuple(replace(f, copy=None, copy_row=None, copy_footer_crc=None) for f in known.fragments)
                manifest = self.state.manifest.with_table(replace(known, stored=meta.stored, fragments=fragments))
            else:
                return
            self.commit(self._copy_stored(manifest, name))

    def adopt_source(self, name: str) -> None:
        """Commit a table indexed in place as its files are now (new files get ids of
        their own and copies of the stored columns, changed and removed ones leave
        holes), before OPTIMIZE or an index build indexes them. Nothing for a managed
        table."""
        with self.writing():
            meta = self.state.manifest.tables[name]
            if meta.source is None:
                return
            manifest = self.in_place.adopted(self.state.manifest, meta)
            if manifest.tables[name] != meta:
                self.commit(self._copy_stored(manifest, name))

    def _copy_stored(self, manifest: Manifest, name: str) -> Manifest:
        """``manifest`` with copies of the stored columns of the files of ``name`` that
        have none (``InPlaceTables.with_copies``), written but not committed."""
        return self.in_place.with_copies(manifest, name, append_rows.FRAGMENT_ROWS)

    def refuse_writes(self, name: str) -> None:
        """Refuse a write to the rows of table ``name`` before any work: on a database
        opened read-only (:class:`ReadOnlyError`), or to a table indexed in place (they
        are its files')."""
        self.store.refuse_writes()
        meta = self.state.manifest.tables.get(name)
        if meta is not None and meta.source is not None:
            raise InvalidArgument(
                f"table {name!r} is indexed in place: its rows are the Parquet files under {meta.source}; "
                "add, replace or remove files there (the next query sees them)"
            )

