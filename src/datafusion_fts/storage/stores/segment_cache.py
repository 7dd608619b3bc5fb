"""Index segments of databases on object stores, kept on local disk (docs/design.md:
"Object storage"): a segment is one object (its bundle, storage/files/segment_bundle.py),
written here and memory-mapped, so its pages are the operating system's file cache
(which it can reclaim), not memory of the process's own, as a directory's segment files
are, and the next process on the machine (a notebook restarted, a Ray worker) fetches
nothing again. A bundle is kept as a sparse file (:class:`KeptFile`): what opening it
reads is fetched first, its postings a region at a time as queries reach them.

The files are bounded by ``fts.segment_cache_bytes``: past it, the least recently used
are deleted (a process that mapped one keeps its pages). A file is named by its
database's URL, its segment id and its crc32; segment ids are never reused, so a name
always holds the same bytes, and a damaged file fails the crc check of the reader and is
fetched again. Where the directory cannot be written, segments are held in memory.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Callable

import pyarrow as pa

SUFFIX = ".bundle"


def default_directory() -> str:
    """``$XDG_CACHE_HOME/datafusion-fts/segments``, else under ``~/.cache``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "datafusion-fts", "segments")


class SegmentCache:
    """Segment bundles of the databases at object stores' URLs, on local disk."""

    def __init__(self, directory: Callable[[], str], limit: Callable[[], int]) -> None:
        self._directory = directory  # (the setting fts.segment_cache_dir now; "": the default)
        self._limit = limit  # (fts.segment_cache_bytes now; 0: keep none on disk)
        self._lock = threading.Lock()

    def path(self, root: str, seg_id: str, crc: int | None, name: str, sparse: bool = False) -> Path | None:
        """Where the file ``name`` of segment ``seg_id`` of the database at ``root`` (its
        bundle, or a file of a directory's layout) is kept (None: nothing is kept on disk);
        ``sparse``: kept as a :class:`KeptFile`, under a name of its own, so a reader of
        whole copies (:meth:`get`) never takes one for whole."""
        if self._limit() <= 0:
            return None
        folder = hashlib.sha256(root.encode("utf-8")).hexdigest()[:24]
        kind = ".sparse" if sparse else ""
        return Path(self._directory() or default_directory()) / folder / f"{seg_id}-{crc or 0}-{name}{kind}{SUFFIX}"

    def get(self, path: Path | None, fetch: Callable[[], bytes]) -> pa.Buffer:
        """The file at ``path``, memory-mapped; fetched (``fetch``) and kept there first
        when it is not. In memory when ``path`` is None or cannot be written."""
        if path is None:
            return pa.py_buffer(fetch())
        try:
            buffer = pa.memory_map(str(path), "r").read_buffer()
        except OSError:
            pass  # (not kept yet, or its directory cannot be: fetched)
        else:
            with contextlib.suppress(OSError):  # (a cache on a read-only disk is still read)
                os.utime(path)  # (recently used: evicted last)
            return buffer
        data = fetch()
        try:
            _write_new(path, len(data), [(0, data)])
            buffer = pa.memory_map(str(path), "r").read_buffer()
        except OSError:
            return pa.py_buffer(data)  # (a read-only or full disk: held in memory)
        self._evict(path)
        return buffer

    def kept(self, path: Path) -> "KeptFile | None":
        """The sparse file kept at ``path``, open to be read and filled; None if there is
        none, or it cannot be written (then it is read whole, as :meth:`get` reads)."""
        try:
            found = KeptFile(path)
        except OSError:
            return None
        with contextlib.suppress(OSError):
            os.utime(path)
        return found

    def keep_sparse(self, path: Path, size: int, spans: list[tuple[int, memoryview]]) -> "KeptFile | None":
        """A new sparse file of ``size`` bytes at ``path`` holding ``spans`` (offset,
        bytes), the rest to be filled as it is read; None where the disk cannot hold it."""
        try:
            _write_new(path, size, spans)
            found = KeptFile(path)
        except OSError:
            return None
        self._evict(path)
        return found

    def drop(self, path: Path | None) -> None:
        """Delete a kept bundle found damaged (it is fetched again)."""
        if path is not None:
            try:
                path.unlink()
            except FileNotFoundError:
                pass

    def _evict(self, keep: Path) -> None:
        """Delete the least recently used bundles while their bytes pass the limit."""
        with self._lock:
            root = keep.parent.parent
            found = []
            for entry in root.glob(f"*/*{SUFFIX}"):
                try:
                    stat = entry.stat()
                except FileNotFoundError:
                    continue
                found.append((stat.st_mtime, min(stat.st_size, stat.st_blocks * 512), entry))  # (a sparse file: held)
            total, limit = sum(size for _, size, _ in found), self._limit()
            for _, size, entry in sorted(found, key=lambda f: f[0]):
                if total <= limit:
                    break
                if entry == keep:
                    continue
                try:
                    entry.unlink()
                except FileNotFoundError:
                    pass
                total -= size
            # (temporary files of writers that died: gone after a day)
            for tmp in root.glob(f"*/*{SUFFIX}.*.tmp"):
                try:
                    if time.time() - tmp.stat().st_mtime > 86_400:
                        tmp.unlink()
                except FileNotFoundError:
                    pass


def _write_new(path: Path, size: int, spans: list[tuple[int, bytes | memoryview]]) -> None:
    """Put at ``path`` a file of ``size`` bytes holding ``spans`` (offset, bytes; the rest a
    hole), written aside and renamed into place: a reader never finds it half written,
    and another process writing the same name writes the same bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as f:
        f.truncate(size)
        for offset, data in spans:
            f.seek(offset)
            f.write(data)
    os.replace(tmp, path)


class KeptFile:
    """A kept file memory-mapped, and open for its regions to be written in place as they
    are fetched (the map shows them: one file, one page cache). A region is written whole
    or not at all as far as a reader can tell: a reader verifies a region's crc32 before
    it follows its bytes, and two writers of one region write the same bytes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDWR)
        try:
            self.buffer = pa.memory_map(str(path), "r").read_buffer()
        except BaseException:
            os.close(self._fd)
            raise

    def write(self, offset: int, data: memoryview | bytes) -> None:
        """Write ``data`` at ``offset``; a disk that fails it raises OSError."""
        view = memoryview(data)
        while len(view):
            written = os.pwrite(self._fd, view, offset)
            view, offset = view[written:], offset + written

    def __del__(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.close(self._fd)
