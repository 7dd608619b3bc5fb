"""A database at an object store's URL (``fts.connect("s3://bucket/db")``), read only: a
database directory written here and copied to the store as it is (the same layout:
``manifest.json``, ``data/``, ``index/``), searched from anywhere that reaches the store
(issue 32; docs/design.md: "Object storage").

Everything is read through the object interface (storage/objects/): the manifest once
(the database is the version it names when opened, as a Lance dataset is the version it
opened; a file the copy then no longer holds makes the query load the newer manifest),
each index segment's files whole when the segment is first searched (kept by the segment
sets, as a directory's are memory-mapped), fragments by page ranges through the page
reader (:class:`..parquet.data_files.RemoteFile`, the pages of fetches kept in the range
cache). Nothing is written: writes raise :class:`ReadOnlyError`, naming why. Its logs
must be empty (a flush, ``OPTIMIZE``, commits their rows before the copy): rows a log
holds were acknowledged, and this store would not read them.
"""

from __future__ import annotations

import threading
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import numpy as np
import pyarrow as pa

from ...errors import ReadOnlyError, StorageError
from ..files import checksums
from ..files.layout import MANIFEST
from ..files.manifest import FragmentMeta, Manifest
from ..objects import ObjectMissing, ObjectStore
from ..parquet.data_files import RangeCache, RemoteFile
from ..parquet.page_reader import (
    DecodedCache,
    PageReader,
    fetch_units,
    open_parquet,
    pages_of,
    take_rows,
)
from .store import deletes_of, file_gone, parse_manifest, segment_arrays

# Why a database at a URL may not be written (its ``read_only``).
NOT_WRITTEN_THERE = ("it is at an object store's URL, which this version reads only (write it in a local "
                     "directory, then copy the directory to the store)")


class RemoteStore:
    """The database under ``objects``' location, read only."""

    def __init__(self, objects: ObjectStore, cache: RangeCache) -> None:
        self.objects = objects
        self.root = objects.url
        self.read_only: str | None = NOT_WRITTEN_THERE
        self._ranges = cache
        self._cache = DecodedCache()
        self._readers: dict[str, PageReader] = {}
        self._footer_crcs: dict[str, int] = {}
        self._checked: set[str] = set()
        self._lock = threading.Lock()
        self._check_logs()

    def _check_logs(self) -> None:
        logged = [m.key for m in self.objects.list("wal") if m.size]
        if logged:
            raise StorageError(f"database {self.root}: its write-ahead logs hold rows no commit holds ({logged[0]}, "
                               "...), which this store does not read; flush them (OPTIMIZE) where the database "
                               "was written, then copy it again")

    # -- what a reader never needs: the writer's ----------------------------------------
    def refuse_writes(self) -> None:
        raise ReadOnlyError(self.root, NOT_WRITTEN_THERE)

    def lock_for_writes(self) -> bool:
        self.refuse_writes()
        return False

    def release_write_lock(self) -> None:
        return None

    @property
    def holds_write_lock(self) -> bool:
        return False

    @contextmanager
    def exclusive(self) -> Iterator[bool]:
        yield False

    @contextmanager
    def reading_alone(self) -> Iterator[bool]:
        yield True  # (nobody writes here)

    def announce(self) -> None:
        self.refuse_writes()

    def commit(self, manifest: Manifest) -> None:
        self.refuse_writes()

    def write_fragment(self, frag_id: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch]):  # noqa: ANN201
        self.refuse_writes()

    def write_segment(self, seg_id: str, arrays: dict[str, pa.Array]) -> int | None:
        self.refuse_writes()
        return None

    def write_deletes(self, dv_id: str, rows: np.ndarray) -> int | None:
        self.refuse_writes()
        return None

    def collect_garbage(self, keep: frozenset[str]) -> None:
        self.refuse_writes()

    # -- the manifest ---------------------------------------------------------------
    def load_manifest(self) -> Manifest:
        try:
            data = self.objects.get(MANIFEST)
        except ObjectMissing:
            raise StorageError(f"no database at {self.root}: it holds no {MANIFEST}") from None
        manifest = parse_manifest(data, f"{self.root}/{MANIFEST}")
        self.note_footers(manifest.footer_crcs())
        return manifest

    def check_manifest(self) -> None:
        if self.objects.head(MANIFEST) is None:
            raise StorageError(f"no database at {self.root}: it holds no {MANIFEST}")

    def note_footers(self, crcs: dict[str, int]) -> None:
        """Keep footer crc32s of data files (a build task's table gives them)."""
        with self._lock:
            self._footer_crcs.update(crcs)

    def changes(self) -> tuple[int, int]:
        return (0, 0)  # (the version opened: see the module docstring)

    # -- fragments ------------------------------------------------------------------
    def _key(self, frag_id: str) -> str:
        return f"data/{frag_id}.parquet"

    def _pages(self, frag_id: str) -> PageReader:
        with self._lock:
            reader = self._readers.get(frag_id)
        if reader is None:
            meta = self.objects.head(self._key(frag_id))
            if meta is None:
                raise file_gone(self.root, "data fragment", frag_id)
            file = RemoteFile(self.objects, meta.key, meta.size, meta.version, self._ranges)
            reader = PageReader(file, self._cache, self._footer_crcs.get(frag_id))
            with self._lock:
                reader = self._readers.setdefault(frag_id, reader)
        return reader

    def check_fragments(self, fragments: Iterable[FragmentMeta]) -> None:
        """Each fragment's whole object against its crc32, once per process, before
        DataFusion's Parquet reader (which checks no page CRC) scans it."""
        for frag in fragments:
            if frag.crc is None or frag.id in self._checked:
                continue
            try:
                data = self.objects.get(self._key(frag.id))
            except ObjectMissing:
                raise file_gone(self.root, "data fragment", frag.id) from None
            if zlib.crc32(data) != frag.crc:
                raise StorageError(f"damaged data file {self.root}/{self._key(frag.id)}: its crc32 is "
                                   f"{zlib.crc32(data)}, the manifest says {frag.crc}")
            with self._lock:
                self._checked.add(frag.id)

    def iter_fragment(
        self, frag_id: str, columns: list[str], batch_rows: int, local_range: tuple[int, int] | None = None
    ) -> Iterator[pa.RecordBatch]:
        pages = self._pages(frag_id)
        if pages.readable(columns):
            lo, hi = local_range if local_range is not None else (0, pages.num_rows - 1)
            yield from pages.scan(columns, batch_rows, lo, hi)
            return
        groups = pages.row_groups(*local_range) if local_range is not None else None
        yield from open_parquet(pages.file.arrow_source()).iter_batches(batch_size=batch_rows, columns=columns,
                                                                        row_groups=groups)

    def take_rows(self, parts: list[tuple[str, np.ndarray]], columns: list[str]) -> pa.Table:
        return take_rows([(self._pages(frag_id), rows) for frag_id, rows in parts], columns)

    def pages_of(self, parts: list[tuple[str, np.ndarray]], column: str) -> np.ndarray | None:
        return pages_of([(self._pages(frag_id), rows) for frag_id, rows in parts], column)

    def fetch_units(self, parts: list[tuple[str, np.ndarray]], column: str) -> Counter[str]:
        return fetch_units([(self._pages(frag_id), rows) for frag_id, rows in parts], column)

    def fragment_paths(self, frag_ids: list[str]) -> list[str]:
        """The fragments' URLs, which DataFusion scans (its session reaches the store)."""
        return [f"{self.root}/{self._key(f)}" for f in frag_ids]

    # -- segments and deletion vectors ------------------------------------------------
    def read_segment(
        self, seg_id: str, crc: int | None, lazy: frozenset[str] = frozenset()
    ) -> tuple[dict[str, pa.Array], dict[str, checksums.LazyRegions]]:
        """A segment's files, each read whole into memory, verified as a directory's are."""
        where = f"{self.root}/index/{seg_id}"
        try:
            if crc is None:
                names = sorted(m.key.rsplit("/", 1)[1][: -len(".arrow")] for m in self.objects.list(f"index/{seg_id}")
                               if m.key.endswith(".arrow"))
                sums = None
            else:
                files, region = checksums.decode(self.objects.get(f"index/{seg_id}/{checksums.CHECKSUMS}"), crc,
                                                 f"{where}/{checksums.CHECKSUMS}")
                names, sums = sorted(files), (files, region)
        except ObjectMissing:
            raise file_gone(self.root, "index segment", seg_id) from None

        def buffer_of(name: str) -> pa.Buffer:
            try:
                return pa.py_buffer(self.objects.get(f"index/{seg_id}/{name}.arrow"))
            except ObjectMissing:
                raise file_gone(self.root, "index segment", seg_id) from None

        return segment_arrays(where, names, buffer_of, sums, lazy)

    def read_deletes(self, dv_id: str, crc: int | None) -> np.ndarray:
        key = f"data/{dv_id}.arrow"
        try:
            data = self.objects.get(key)
        except ObjectMissing:
            raise file_gone(self.root, "deletion vector", dv_id) from None
        return deletes_of(data, crc, f"{self.root}/{key}")

