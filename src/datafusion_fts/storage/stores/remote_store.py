"""A database at an object store's URL (``fts.connect("s3://bucket/db")``): the layout of a
database directory (``manifest.json``, ``data/``, ``index/``) as objects, read and written
through the object interface (storage/objects/; issue 32; docs/design.md: "Object storage").

- **Commits** replace ``manifest.json`` only if it is still the version this store last
  read (``put_if_version``; the first commit ``put_if_absent``): of two processes
  committing at once exactly one wins, the other gets a :class:`ConflictError` and its
  write is not visible (no lock to hold or lose). Every new file is created with
  ``put_if_absent``, so two writers that took the same file id from one version can never
  overwrite each other's file.
- **No write-ahead log:** an acknowledged insert is a commit (a fragment, its segments,
  the manifest), durable on the store when it returns (``commits_inserts``).
- **Readers** see other processes' commits at their next query once
  ``refresh_seconds()`` (``fts.store_refresh_seconds``) have passed since they last asked
  (a HEAD of the manifest).
- **File ids** are handed out past every file of ours the store holds (found by the
  garbage collector's listing, or by a create that conflicted): a write that failed may
  leave a file the server took late, and its id is not taken again.
- **Garbage** (``collect_garbage``): files no kept manifest names are deleted if this
  store wrote them and the write failed, or if older than ``grace_seconds()``
  (``fts.gc_grace_seconds``): a younger one may be another writer's, about to commit.
  Listing the store for them happens at most once a minute.
- **Segments** are written as one object each, their bundle (files/segment_bundle.py);
  a directory's layout (a file per array, a copied directory's) is read too.
- **Reads**: each index segment fetched whole when it is first searched, kept on local
  disk and memory-mapped (segment_cache.py); fragments by page ranges through the page
  reader (:class:`..parquet.data_files.RemoteFile`, fetched pages kept in the range cache).

A directory written locally and copied to the store is such a database too (copy
``manifest.json`` last). Rows its write-ahead logs hold were acknowledged but are not
in a commit: such a copy is refused at open, saying to flush first.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import numpy as np
import pyarrow as pa

from ...errors import ConflictError, ReadOnlyError, StaleSnapshotError, StorageError
from ..files import checksums
from ..files.crc32 import crc32
from ..files.layout import MANIFEST
from ..files.manifest import Manifest
from ..files.segment_bundle import BUNDLE, file_spans, pack
from ..objects import ObjectChanged, ObjectMissing, ObjectStore
from ..parquet.data_files import RangeCache, RemoteFile
from .segment_cache import KeptFile, SegmentCache
from .store import (
    READ_ONLY_ASKED,
    TEXT_CODECS,
    PagedFragments,
    bundle_arrays,
    deletes_file,
    deletes_of,
    file_gone,
    parse_manifest,
    segment_arrays,
    write_array_file,
    write_fragment_file,
)

# A file of ours under data/ or index/<segment>/, by its file id.
_OUR_FILE = re.compile(r"^(?:data/((?:frag|dv)-\d{8})\.(?:parquet|arrow)|index/(seg-\d{8})/[^/]+)$")
# Seconds between two listings of the store for garbage.
_LISTING_GC_SECONDS = 60.0
# Bytes first read of a bundle for its header (a segment's dozen files take ~500).
_BUNDLE_HEAD = 4096
_MANIFEST_READS = 5  # (a manifest replaced while it is read is read again)
T = TypeVar("T")


class RemoteStore(PagedFragments):
    """The database under ``objects``' location."""

    commits_inserts = True

    def __init__(self, objects: ObjectStore, cache: RangeCache, read_only: bool = False,
                 refresh_seconds: Callable[[], float] = lambda: 0.0,
                 grace_seconds: Callable[[], float] = lambda: 600.0,
                 segments: SegmentCache | None = None,
                 text_codec: Callable[[], str] = lambda: TEXT_CODECS[0]) -> None:
        self.objects = objects
        self._text_codec = text_codec  # (fts.text_codec now)
        self.root = objects.url
        self.read_only: str | None = READ_ONLY_ASKED if read_only else None
        self._ranges = cache
        self._segments = segments  # (on local disk: segment_cache.py; None: in memory)
        self._refresh = refresh_seconds
        self._grace = grace_seconds
        # The ETag of each manifest version this store read or wrote ("": none yet): a
        # commit of version v replaces v - 1 only if it is still that object.
        self._etags: dict[int, str] = {}
        self._based: str | None = None  # the ETag of the version the writer last adopted or committed
        self._loaded: str | None = None  # the ETag of the last manifest read or written
        self._generation = 0  # bumped when another process's commit is seen
        self._asked_at = float("-inf")
        self._mine: set[str] = set()  # keys this store wrote that no commit names yet
        # The least file id to hand out: past every file found in the store (files of
        # writes that failed, or another writer's about to commit, hold theirs).
        self._id_floor = 0
        self._listed_at = float("-inf")
        self._init_fragments()
        self._check_logs()

    def _check_logs(self) -> None:
        logged = [m.key for m in self.objects.list("wal") if m.size]
        if logged:
            raise StorageError(f"database {self.root}: its write-ahead logs hold rows no commit holds ({logged[0]}, "
                               "...), which this store does not read; flush them (OPTIMIZE) where the database "
                               "was written, then copy it again")

    # -- writers: no lock, conditional commits -----------------------------------------
    def refuse_writes(self) -> None:
        if self.read_only is not None:
            raise ReadOnlyError(self.root, self.read_only)

    def lock_for_writes(self) -> bool:
        """Nothing to lock: a write is checked at its commit. True when the manifest is
        not the version the writer last adopted or committed (it adopts it now)."""
        self.refuse_writes()
        meta = self.objects.head(MANIFEST)
        etag = meta.version if meta is not None else ""
        changed, self._based = etag != self._based, etag
        return changed

    def release_write_lock(self) -> None:
        return None

    @property
    def holds_write_lock(self) -> bool:
        return False  # (readers of this process ask the store: changes())

    @contextmanager
    def exclusive(self) -> Iterator[bool]:
        yield self.read_only is None  # (garbage collection spares what another writer may commit)

    @contextmanager
    def reading_alone(self) -> Iterator[bool]:
        yield True

    def announce(self) -> None:
        return None  # (no logs: every acknowledged write is a commit)

    def commit(self, manifest: Manifest) -> None:
        """Replace the manifest if it is still the version this store read; else a
        ConflictError, and nothing of this write is visible."""
        self.refuse_writes()
        data = json.dumps(manifest.to_json(), separators=(",", ":")).encode("utf-8")
        base = self._etags.get(manifest.version - 1)
        try:
            if base is None:  # (a version this store never read: another writer's, surely)
                raise ConflictError("")
            etag = (self.objects.put_if_version(MANIFEST, data, base) if base
                    else self.objects.put_if_absent(MANIFEST, data))
        except ConflictError:
            etag = self._landed(data)
            if etag is None:
                raise ConflictError(f"database {self.root}: another writer committed first; nothing of this write "
                                    "is visible (write again: it starts from what that writer committed)") from None
        except StorageError as exc:
            # A request that failed may still land (a timed-out PUT the server takes later):
            # this write's files may be named by then, so none is deleted now; those no
            # commit names go by age (collect_garbage).
            with self._lock:
                self._mine.clear()
            raise StorageError(f"database {self.root}: the commit may or may not have landed ({exc}); open the "
                               "database again to see which") from exc
        self.note_footers(manifest.footer_crcs())
        with self._lock:
            self._etags[manifest.version] = self._based = self._loaded = etag
            self._mine.clear()  # (named now, or garbage of this write: collected by age)

    def _landed(self, data: bytes) -> str | None:
        """The manifest's ETag if it holds ``data`` (a conditional PUT that landed and was
        sent again by the client's retry, which the precondition then refused), else None."""
        meta = self.objects.head(MANIFEST)
        if meta is None or meta.size != len(data):
            return None
        try:
            found = self.objects.get_ranges(MANIFEST, [0], [meta.size], meta.version)[0]
        except ObjectChanged:
            return None
        return meta.version if bytes(found) == data else None

    def _create(self, key: str, data: bytes | memoryview) -> None:
        """A new file of ours, never over another writer's of the same id. A conflict
        raises the id floor past it (see ``load_manifest``): a file left by a write that
        failed (a timed-out request the server took late) holds its id no longer than
        that write."""
        with self._lock:
            self._mine.add(key)
        try:
            self.objects.put_if_absent(key, data)
        except ConflictError:
            with self._lock:
                self._mine.discard(key)
            self._note_id(key)
            raise ConflictError(f"database {self.root}: {key} exists already: another writer took the same file id "
                                "from the same version, or a write that failed left it; write again") from None

    def _note_id(self, key: str) -> None:
        """Hand out file ids past the one of ``key`` from now on."""
        file_id = _file_id(key)
        if file_id is not None:
            with self._lock:
                self._id_floor = max(self._id_floor, int(file_id.rsplit("-", 1)[1]) + 1)

    def write_fragment(self, frag_id: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch]
                       ) -> tuple[int, checksums.ParquetCrcs]:
        """The fragment written locally (as a directory writes it) and sent whole."""
        self.refuse_writes()
        with tempfile.TemporaryDirectory(prefix="fts-fragment-") as tmp:
            path = Path(tmp) / f"{frag_id}.parquet"
            rows, crcs = write_fragment_file(path, schema, batches, self._text_codec())
            self._create(self._key(frag_id), path.read_bytes())
        with self._lock:
            self._footer_crcs[frag_id] = crcs.footer
        return rows, crcs

    def write_segment(self, seg_id: str, arrays: dict[str, pa.Array], compressed: frozenset[str] = frozenset()
                      ) -> int:
        """A segment's files (a directory's, byte for byte) as one object, its bundle:
        one request, not a dozen (files/segment_bundle.py)."""
        self.refuse_writes()
        files: dict[str, bytes | memoryview] = {}
        sums = {}
        for name, array in arrays.items():
            sink = pa.BufferOutputStream()
            write_array_file(sink, name, array, "zstd" if name in compressed else None)
            buffer = sink.getvalue()
            sums[name] = checksums.file_sums(buffer)
            files[f"{name}.arrow"] = memoryview(buffer)
        data = checksums.encode(sums)
        files[checksums.CHECKSUMS] = data
        self._create(f"index/{seg_id}/{BUNDLE}", pack(files))
        return crc32(data)

    def write_deletes(self, dv_id: str, rows: np.ndarray) -> int:
        self.refuse_writes()
        data = deletes_file(rows)
        self._create(f"data/{dv_id}.arrow", data)
        return crc32(data)

    def delete_segments(self, seg_ids: Iterable[str]) -> None:
        """Delete the files of segments no commit names (a failed build's, whose tasks
        wrote them in other processes: not this store's own files)."""
        self.refuse_writes()
        for seg_id in seg_ids:
            for meta in self.objects.list(f"index/{seg_id}"):
                self.objects.delete(meta.key)

    def collect_garbage(self, keep: frozenset[str]) -> None:
        """Delete files of ours no kept manifest names: at once those this store wrote
        (a write that failed), from a listing (at most once a minute) those older than
        the grace period."""
        if self.read_only is not None:
            return
        with self._lock:
            mine = [key for key in self._mine if _file_id(key) not in keep]
        for key in mine:
            self._readers.discard((_file_id(key),))  # (its id is handed out again: a reader of it is of this file)
            self.objects.delete(key)
            with self._lock:
                self._mine.discard(key)
        now = time.monotonic()
        if now - self._listed_at < _LISTING_GC_SECONDS:
            return
        self._listed_at = now
        oldest = time.time() - self._grace()
        for meta in [*self.objects.list("data"), *self.objects.list("index")]:
            file_id = _file_id(meta.key)
            if file_id is not None:
                self._note_id(meta.key)
            if file_id is not None and file_id not in keep and meta.modified < oldest:
                self._readers.discard((file_id,))
                self.objects.delete(meta.key)

    # -- the manifest ---------------------------------------------------------------
    def load_manifest(self) -> Manifest:
        """The committed manifest, read as one version of it (an empty one where none is
        yet, unless opened read only: then there is no database here)."""
        for _ in range(_MANIFEST_READS):
            meta = self.objects.head(MANIFEST)
            if meta is None:
                if self.read_only is not None:
                    raise StorageError(f"no database at {self.root}: it holds no {MANIFEST}")
                empty = Manifest()
                self._etags[empty.version] = self._loaded = ""
                return empty
            try:
                data = bytes(self.objects.get_ranges(MANIFEST, [0], [meta.size], meta.version)[0])
            except ObjectChanged:
                continue  # (a commit replaced it meanwhile)
            manifest = parse_manifest(data, f"{self.root}/{MANIFEST}")
            self.note_footers(manifest.footer_crcs())
            with self._lock:
                self._etags[manifest.version] = self._loaded = meta.version
                floor = self._id_floor
            return replace(manifest, next_file_id=floor) if floor > manifest.next_file_id else manifest
        raise StorageError(f"database {self.root}: its manifest kept changing while it was read; try again")

    def check_manifest(self) -> None:
        """Refuse a location holding files of ours but no manifest (lost, or a first
        commit that never finished: they are not garbage to collect)."""
        if self.objects.head(MANIFEST) is not None:
            return
        ours = [m.key for m in self.objects.list("data") + self.objects.list("index") if _file_id(m.key)]
        if ours or self.read_only is not None:
            raise StorageError(f"no database at {self.root}: it holds no {MANIFEST}"
                               + (f" but {len(ours)} data and index files (such as {ours[0]}); restore {MANIFEST} "
                                  "or remove them to start over" if ours else ""))

    def changes(self) -> tuple[int, int]:
        """(a count of other processes' commits seen, 0): the manifest asked for at most
        every ``refresh_seconds()``."""
        now = time.monotonic()
        if now - self._asked_at >= self._refresh():
            self._asked_at = now
            meta = self.objects.head(MANIFEST)
            etag = meta.version if meta is not None else ""
            with self._lock:
                if etag != self._loaded:
                    self._generation += 1
                    self._loaded = etag  # (the reload this makes reads it, or a newer one)
        return (self._generation, 0)

    # -- fragments ------------------------------------------------------------------
    def _key(self, frag_id: str) -> str:
        return f"data/{frag_id}.parquet"

    def _fragment_file(self, frag_id: str) -> RemoteFile:
        meta = self.objects.head(self._key(frag_id))
        if meta is None:
            raise file_gone(self.root, "data fragment", frag_id)
        return RemoteFile(self.objects, meta.key, meta.size, meta.version, self._ranges)

    def _fragment_name(self, frag_id: str) -> str:
        return f"{self.root}/{self._key(frag_id)}"

    def _fragment_crc(self, frag_id: str) -> int:
        try:
            return crc32(self.objects.get(self._key(frag_id)))
        except ObjectMissing:
            raise file_gone(self.root, "data fragment", frag_id) from None

    def fragment_bytes(self, frag_ids: list[str]) -> None:
        """None: not known without a request per fragment for its footer, which every
        commit (an insert, here) would pay; such a database's tables are views."""
        return None

    def fragment_paths(self, frag_ids: list[str]) -> list[str]:
        """The fragments' URLs, which DataFusion scans (its session reaches the store)."""
        return [f"{self.root}/{self._key(f)}" for f in frag_ids]

    # -- segments and deletion vectors ------------------------------------------------
    def read_segment(
        self, seg_id: str, crc: int | None, lazy: frozenset[str] = frozenset()
    ) -> tuple[dict[str, pa.Array], dict[str, checksums.LazyRegions]]:
        """A segment's files, verified as a directory's are: its bundle (in a directory's
        layout, each of its files) fetched whole once, kept on local disk and
        memory-mapped (segment_cache.py), else held in memory."""
        where = f"{self.root}/index/{seg_id}"
        try:
            if not self._kept_as_files(seg_id, crc):  # (else no request for a bundle that is not there)
                sparse = self._sparse_bundle(seg_id, crc, lazy) if crc is not None and lazy else None
                if sparse is not None:
                    return sparse
                return self._kept_read(seg_id, crc, lambda get: bundle_arrays(where, get(BUNDLE), crc, lazy))
        except ObjectMissing:
            pass  # (a directory's layout: a database written there and copied here)
        try:
            if crc is None:  # (written before checksums: listed and read as they are, not kept)
                names = sorted(m.key.rsplit("/", 1)[1][: -len(".arrow")] for m in self.objects.list(f"index/{seg_id}")
                               if m.key.endswith(".arrow"))
                return segment_arrays(where, names, lambda n: pa.py_buffer(self.objects.get(f"index/{seg_id}/{n}.arrow")),
                                      None, lazy)

            def read(get: Callable[[str], pa.Buffer]) -> tuple[dict[str, pa.Array], dict[str, checksums.LazyRegions]]:
                files, region = checksums.decode(get(checksums.CHECKSUMS).to_pybytes(), crc,
                                                 f"{where}/{checksums.CHECKSUMS}")
                arrays = functools.partial(self._directory_arrays, seg_id, crc, files, region, lazy, get)
                try:
                    return arrays(fresh=False)
                except StorageError:  # (a damaged sparse copy: fetched again, once)
                    return arrays(fresh=True)

            return self._kept_read(seg_id, crc, read)
        except ObjectMissing:
            raise file_gone(self.root, "index segment", seg_id) from None

    def _sparse_bundle(
        self, seg_id: str, crc: int, lazy: frozenset[str]
    ) -> tuple[dict[str, pa.Array], dict[str, checksums.LazyRegions]] | None:
        """The segment's bundle kept on local disk as a sparse file: at first what opening
        it reads (its header, checksums, the arrays verified whole and the Arrow framing
        of the ``lazy`` ones), the regions of the lazy arrays fetched as queries reach
        them (``LazyRegions.fill``). A cold query reads the terms it searches, not the
        whole segment (98.6 MB for a 1M-row table). None where nothing is kept on disk."""
        path = self._segments.path(self.root, seg_id, crc, BUNDLE, sparse=True) if self._segments is not None else None
        if path is None:
            return None
        key, where = f"index/{seg_id}/{BUNDLE}", f"{self.root}/index/{seg_id}"
        kept = self._segments.kept(path)  # type: ignore[union-attr]
        if kept is not None:
            try:
                arrays, regions = bundle_arrays(where, kept.buffer, crc, lazy)
            except StorageError:  # (a damaged copy: fetched again)
                kept = None
        if kept is None:
            kept = self._fetch_sparse(key, path, where, crc, lazy)
            if kept is None:
                return None
            arrays, regions = bundle_arrays(where, kept.buffer, crc, lazy)
        spans = file_spans(kept.buffer, kept.buffer.size, where) or {}
        for name, found in regions.items():
            found.fill = functools.partial(self._fill, key, kept, spans[f"{name}.arrow"], found)
        return arrays, regions

    def _directory_arrays(
        self, seg_id: str, crc: int, files: dict[str, checksums.FileSums], region: int, lazy: frozenset[str],
        get: Callable[[str], pa.Buffer], fresh: bool,
    ) -> tuple[dict[str, pa.Array], dict[str, checksums.LazyRegions]]:
        """A segment in a directory's layout: its lazy arrays' files kept on local disk as
        sparse files as a bundle is (only their Arrow framing fetched first; ``fresh``:
        fetched again), the others by ``get``."""
        held = {}
        for name in sorted(lazy & files.keys()):
            sums = files[name]
            path = (self._segments.path(self.root, seg_id, crc, f"{name}.arrow", sparse=True)
                    if self._segments is not None else None)
            if path is None:
                continue
            kept = None if fresh else self._segments.kept(path)  # type: ignore[union-attr]
            if kept is None:
                key, spans = f"index/{seg_id}/{name}.arrow", checksums.lazy_spans(sums, region)
                got = self.objects.get_ranges(key, [a for a, _ in spans], [b for _, b in spans])
                kept = self._segments.keep_sparse(path, sums.size, [(a, g) for (a, _), g in zip(spans, got)])  # type: ignore[union-attr]
            if kept is not None:
                held[name] = kept
        arrays, regions = segment_arrays(f"{self.root}/index/{seg_id}", sorted(files),
                                         lambda n: held[n].buffer if n in held else get(f"{n}.arrow"),
                                         (files, region), lazy)
        for name, kept in held.items():
            regions[name].fill = functools.partial(self._fill, f"index/{seg_id}/{name}.arrow", kept,
                                                   (0, files[name].size), regions[name])
        return arrays, regions

    def _fetch_sparse(self, key: str, path: Path, where: str, crc: int, lazy: frozenset[str]) -> KeptFile | None:
        """Fetch what opening the bundle ``key`` reads and keep it at ``path`` (sparse)."""
        meta = self.objects.head(key)
        if meta is None:
            raise ObjectMissing(f"{self.root}/{key}")
        head = self.objects.get_ranges(key, [0], [min(meta.size, _BUNDLE_HEAD)])[0]
        spans = file_spans(head, meta.size, where)
        if spans is None:  # (a header past the first bytes: read it whole)
            head = self.objects.get_ranges(key, [0], [meta.size])[0]
            spans = file_spans(head, meta.size, where) or {}
        if checksums.CHECKSUMS not in spans:
            raise StorageError(f"index segment {where} holds no {checksums.CHECKSUMS}")
        at, length = spans[checksums.CHECKSUMS]
        data = self.objects.get_ranges(key, [at], [at + length])[0]
        files, region = checksums.decode(bytes(data), crc, f"{where}/{checksums.CHECKSUMS}")
        wanted = []
        for name, (at, length) in spans.items():
            stem = name[: -len(".arrow")]
            if name.endswith(".arrow") and stem in lazy and stem in files:
                wanted += [(at + a, at + b) for a, b in checksums.lazy_spans(files[stem], region) if b > a]
            elif name != checksums.CHECKSUMS:
                wanted.append((at, at + length))
        got = self.objects.get_ranges(key, [a for a, _ in wanted], [b for _, b in wanted])
        pieces = [(0, head), (spans[checksums.CHECKSUMS][0], data), *((a, g) for (a, _), g in zip(wanted, got))]
        return self._segments.keep_sparse(path, meta.size, pieces)  # type: ignore[union-attr]

    def _fill(self, key: str, kept: KeptFile, span: tuple[int, int], regions: checksums.LazyRegions,
              wanted: list[int]) -> None:
        """Fetch regions ``wanted`` of a lazy array's file (at ``span`` in the bundle
        ``key``) into the kept copy: near ones by one request."""
        at, length = span
        starts = [at + r * regions.region for r in wanted]
        ends = [at + min((r + 1) * regions.region, length) for r in wanted]
        for start, data in zip(starts, self.objects.get_ranges(key, starts, ends)):
            try:
                kept.write(start, data)
            except OSError as exc:
                raise StorageError(f"cannot keep index segment {self.root}/{key} in {kept.path.parent}: {exc}; "
                                   "SET fts.segment_cache_dir to another place, or fts.segment_cache_bytes = 0 "
                                   "to hold segments in memory") from exc

    def _kept_as_files(self, seg_id: str, crc: int | None) -> bool:
        """Whether the segment's files, in a directory's layout, are kept on local disk."""
        path = self._segments.path(self.root, seg_id, crc, checksums.CHECKSUMS) if self._segments is not None else None
        return path is not None and path.exists()

    def _kept_read(self, seg_id: str, crc: int | None, read: Callable[[Callable[[str], pa.Buffer]], T]) -> T:
        """``read(get)``, ``get(name)`` the segment's file ``name`` from the local disk,
        fetched and kept there first (segment_cache.py); a check failing on kept files
        (a damaged copy) drops them and reads once more from the store."""
        kept: list[Path] = []

        def get(name: str) -> pa.Buffer:
            fetch = functools.partial(self.objects.get, f"index/{seg_id}/{name}")
            if self._segments is None:
                return pa.py_buffer(fetch())
            path = self._segments.path(self.root, seg_id, crc, name)
            if path is not None:
                kept.append(path)
            return self._segments.get(path, fetch)

        try:
            return read(get)
        except (StaleSnapshotError, ObjectMissing):
            raise
        except StorageError:
            if not kept:
                raise
            for path in kept:
                self._segments.drop(path)  # type: ignore[union-attr]
            return read(get)

    def read_deletes(self, dv_id: str, crc: int | None) -> np.ndarray:
        key = f"data/{dv_id}.arrow"
        try:
            data = self.objects.get(key)
        except ObjectMissing:
            raise file_gone(self.root, "deletion vector", dv_id) from None
        return deletes_of(data, crc, f"{self.root}/{key}")


def _file_id(key: str) -> str | None:
    """The file id of one of our files' keys (``frag-``, ``dv-``, ``seg-``), else None."""
    found = _OUR_FILE.match(key)
    return None if found is None else found.group(1) or found.group(2)
