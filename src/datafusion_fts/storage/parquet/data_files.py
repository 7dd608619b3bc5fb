"""The bytes of a Parquet file wherever it lies: a local file, read by ``pread``, or an
object of an object store (S3, GCS, Azure), read by ranged GETs through the object
interface (storage/objects/). :class:`.page_reader.PageReader` reads pages, footers and
offset indexes through these, so a user's files on an object store are read page by page
as local ones are (issue 32).

:func:`read_file_ranges` reads the pages of one fetch from several files at once: local
files by one compiled loop (:mod:`.file_ranges`), each object by one request of
coalesced ranges, objects of several files side by side (a round trip each, overlapped).
"""

from __future__ import annotations

import io
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

import numpy as np
import pyarrow as pa

from ...errors import StaleSnapshotError, StorageError
from ..objects.interface import ObjectChanged, ObjectStore
from .file_ranges import read_ranges


class DataFile(Protocol):
    """A Parquet file read by ranges: its name (for errors), its size, and what this
    version of it is (``version``: a new one for a file rewritten under the same name)."""

    name: str
    size: int
    version: tuple
    fd: int | None  # (a local file's descriptor: None for an object)

    def read(self, size: int, offset: int) -> bytes:
        """``size`` bytes at ``offset``, whole. Raises StorageError."""

    def arrow_source(self) -> str | pa.NativeFile:
        """What pyarrow opens the file from (``pq.ParquetFile``), for what it reads itself."""


class LocalFile:
    """A local file, open for reading until this object is collected."""

    fd: int

    def __init__(self, path: Path | str) -> None:
        self.name = str(path)
        self.fd = os.open(path, os.O_RDONLY)  # (FileNotFoundError and OSError to the caller)
        weakref.finalize(self, os.close, self.fd)
        st = os.fstat(self.fd)
        self.size = st.st_size
        self.version = (st.st_size, st.st_mtime_ns)

    def read(self, size: int, offset: int) -> bytes:
        data = os.pread(self.fd, size, offset)
        if len(data) != size:
            raise StorageError(f"damaged data file {self.name}: {size} bytes wanted at {offset}, {len(data)} there")
        return data

    def arrow_source(self) -> str:
        return self.name


class RangeCache:
    """Byte ranges of objects read before, least recently used evicted past ``limit()``
    bytes (a setting, read at each insertion): warm queries make no request for them.
    Keyed by the object's version too, so a rewritten object's ranges are never served."""

    def __init__(self, limit: Callable[[], int]) -> None:
        self._limit = limit
        self._items: OrderedDict[tuple, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def lookup(self, keys: list[tuple]) -> list[bytes | None]:
        limit = self._limit()
        with self._lock:
            self._evict(limit)  # (the setting may have been lowered)
            found = [self._items.get(key) for key in keys]
            for key, data in zip(keys, found):
                if data is not None:
                    self._items.move_to_end(key)
            missed = found.count(None)
            self.hits += len(found) - missed
            self.misses += missed
        return found

    def holds(self, keys: list[tuple]) -> bool:
        with self._lock:
            return all(key in self._items for key in keys)

    def insert(self, items: list[tuple[tuple, bytes]]) -> None:
        limit = self._limit()
        with self._lock:
            for key, data in items:
                if key not in self._items and len(data) <= limit:
                    self._items[key] = data
                    self._bytes += len(data)
            self._evict(limit)

    def _evict(self, limit: int) -> None:
        while self._bytes > limit:
            self._bytes -= len(self._items.popitem(last=False)[1])


class RemoteFile:
    """An object of an object store, of the size and version its listing gave. Each
    request reads that version only (``If-Match``): a read that finds the object
    rewritten or deleted raises StaleSnapshotError (the query runs again on a new
    listing), never decodes another version's bytes. Ranges read are kept in ``cache``."""

    fd = None

    def __init__(self, objects: ObjectStore, key: str, size: int, version: str, cache: RangeCache | None = None
                 ) -> None:
        self.objects, self.key = objects, key
        self.name = f"{objects.url}/{key}"
        self.size = size
        self._etag = version
        self.version = (size, version)
        self._cache = cache

    def read(self, size: int, offset: int) -> bytes:
        return bytes(self.read_many([offset], [size])[0])

    def cached(self, offsets: Sequence[int], sizes: Sequence[int]) -> bool:
        """Whether every one of the ranges is in the cache (reading them makes no request)."""
        return self._cache is not None and self._cache.holds(
            [(self.name, self._etag, o, s) for o, s in zip(offsets, sizes)])

    def read_many(self, offsets: Sequence[int], sizes: Sequence[int], keep: bool = False) -> list[memoryview]:
        """The ranges, from the cache or, near ones by one request (the object interface
        coalesces them), from the store; kept in the cache if ``keep`` (the pages of a
        fetch; not footers and indexes, parsed once per reader, nor what scans and pyarrow
        read once)."""
        ends = [o + s for o, s in zip(offsets, sizes)]
        if ends and max(ends) > self.size:
            raise StorageError(f"damaged data file {self.name}: bytes up to {max(ends):,} wanted of its {self.size:,}")
        keys = [(self.name, self._etag, o, s) for o, s in zip(offsets, sizes)]
        found: list = self._cache.lookup(keys) if self._cache is not None else [None] * len(keys)
        missing = [i for i, data in enumerate(found) if data is None]
        if missing:
            try:
                got = self.objects.get_ranges(self.key, [offsets[i] for i in missing], [ends[i] for i in missing],
                                              self._etag)
            except ObjectChanged as exc:
                raise StaleSnapshotError(f"source file {self.name} changed after this query listed it: {exc}",
                                         "") from None
            fetched = [bytes(b) for b in got]
            for i, data in zip(missing, fetched):
                found[i] = data
            if self._cache is not None and keep:
                self._cache.insert([(keys[i], data) for i, data in zip(missing, fetched)])
        return [memoryview(data) for data in found]

    def arrow_source(self) -> pa.NativeFile:
        return pa.PythonFile(_ObjectReader(self), mode="r")


class _ObjectReader(io.RawIOBase):
    """A read-only file over an object's ranges, for pyarrow (its footer, the row groups
    of columns read by row group): each read is one ranged GET."""

    def __init__(self, file: RemoteFile) -> None:
        super().__init__()
        self._file = file
        self._at = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._at, io.SEEK_END: self._file.size}[whence]
        self._at = max(0, base + offset)
        return self._at

    def tell(self) -> int:
        return self._at

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = max(0, min(len(buffer), self._file.size - self._at))
        if n:
            memoryview(buffer).cast("B")[:n] = self._file.read(n, self._at)
            self._at += n
        return n


def read_file_ranges(files: Sequence[DataFile], which: np.ndarray, offsets: np.ndarray, sizes: np.ndarray,
                     keep: bool = True) -> np.ndarray:
    """Range i (``sizes[i]`` bytes at ``offsets[i]`` of ``files[which[i]]``) after ranges
    0..i-1, in one array; objects' ranges kept in their cache if ``keep``."""
    if all(f.fd is not None for f in files):  # (local files: one compiled loop)
        fds = np.array([f.fd for f in files], dtype=np.int64)[which]
        return read_ranges(fds, offsets, sizes, {f.fd: f.name for f in files})
    out = np.empty(int(sizes.sum()), dtype=np.uint8)
    starts = np.cumsum(sizes) - sizes
    local = np.array([f.fd is not None for f in files], dtype=np.bool_)[which]
    if local.any():
        fds = np.array([f.fd if f.fd is not None else -1 for f in files], dtype=np.int64)[which[local]]
        got = read_ranges(fds, offsets[local], sizes[local], {f.fd: f.name for f in files if f.fd is not None})
        ends = np.cumsum(sizes[local])
        for start, lo, hi in zip(starts[local].tolist(), (ends - sizes[local]).tolist(), ends.tolist()):
            out[start : start + hi - lo] = got[lo:hi]
    remote = sorted(set(which[~local].tolist()))
    ranges = {i: np.flatnonzero(which == i) for i in remote}

    def fetch(i: int) -> None:
        mine = ranges[i]
        buffers = files[i].read_many(offsets[mine].tolist(), sizes[mine].tolist(), keep)  # type: ignore[attr-defined]
        for at, buffer in zip(starts[mine].tolist(), buffers):
            out[at : at + len(buffer)] = np.frombuffer(buffer, dtype=np.uint8)

    # Objects whose ranges are all cached are copied here; the others' requests go side by
    # side (each a round trip: they release the GIL), on threads kept for it.
    cold = [i for i in remote if not files[i].cached(offsets[ranges[i]].tolist(), sizes[ranges[i]].tolist())]  # type: ignore[attr-defined]
    for i in remote:
        if i not in cold:
            fetch(i)
    if len(cold) == 1:
        fetch(cold[0])
    elif cold:
        list(_requests_pool().map(fetch, cold))
    return out


_POOL: list[ThreadPoolExecutor] = []
_POOL_LOCK = threading.Lock()


def _requests_pool() -> ThreadPoolExecutor:
    """The threads that wait on the requests of several objects at once (one per process,
    made at its first remote fetch: a pool made per fetch cost ~1-2 ms of thread starts)."""
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(_REQUESTS, thread_name_prefix="fts-object-requests"))
        return _POOL[0]


# Objects read side by side in one fetch (a top-10 touches up to ten files).
_REQUESTS = 16
