"""The object interface on a local directory: an object is a file under the root.

A write goes to a temporary file in the object's directory, is fsynced, then renamed
into place (or hard-linked, for a create that must fail if the key exists), and the
directory is fsynced: a power loss keeps the old object or the new one. A conditional
replace holds an exclusive ``flock`` on the root's lock file from reading the version to
the rename, so two processes comparing and replacing at once do it one after the other.
A version is the file's inode, size and modification time in nanoseconds; a replaced
object's new file gets a modification time past the old one's (set under the lock), so a
version never comes back, even where an inode number is reused and the clock is coarse.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ...errors import ConflictError, StorageError
from ..files.os_files import describe_os_error, fsync_path, make_dirs
from .interface import ObjectChanged, ObjectMeta, ObjectMissing, check_key, check_ranges

_LOCK = ".objects.lock"
_TMP = ".tmp-"  # (a temporary file's prefix: never listed, never a key's last part)


class LocalObjects:
    """The objects of the directory ``root`` (made, with its parents, on the first write)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).absolute()
        self.url = self.root.as_uri()
        self._thread_lock = threading.Lock()  # (flock does not exclude the threads of one process)

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    def _error(self, doing: str, key: str, exc: OSError) -> StorageError:
        if isinstance(exc, FileNotFoundError) and doing == "reading":  # (writing: a missing bucket or directory)
            return ObjectMissing(f"{self.url}/{key}: no such object")
        return StorageError(f"{doing} {self.url}/{key} failed: {describe_os_error(exc)}")

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except OSError as exc:
            raise self._error("reading", key, exc) from exc

    def get_ranges(self, key: str, starts: Sequence[int], ends: Sequence[int], version: str | None = None
                   ) -> list[memoryview]:
        try:
            fd = os.open(self._path(key), os.O_RDONLY)
        except FileNotFoundError as exc:
            if version is not None:
                raise ObjectChanged(f"{self.url}/{key} was deleted since it was listed") from exc
            raise self._error("reading", key, exc) from exc
        except OSError as exc:
            raise self._error("reading", key, exc) from exc
        try:
            stat = os.fstat(fd)
            if version is not None and _version(stat) != version:
                raise ObjectChanged(f"{self.url}/{key} was rewritten since it was listed")
            check_ranges(self.url, key, stat.st_size, starts, ends)
            out = []
            for start, end in zip(starts, ends):
                data = os.pread(fd, end - start, start)
                if len(data) != end - start:  # (the file shrank since: not an object's whole version)
                    raise StorageError(f"{self.url}/{key} changed while it was read")
                out.append(memoryview(data))
            return out
        except OSError as exc:
            raise self._error("reading", key, exc) from exc
        finally:
            os.close(fd)

    def head(self, key: str) -> ObjectMeta | None:
        try:
            stat = self._path(key).stat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._error("reading", key, exc) from exc
        return ObjectMeta(key, stat.st_size, _version(stat), stat.st_mtime)

    def list(self, prefix: str = "") -> list[ObjectMeta]:
        top = self._path(prefix) if prefix else self.root
        found = []
        try:
            for directory, dirs, files in os.walk(top, onerror=_raise):
                dirs.sort()
                for name in files:
                    if name.startswith(_TMP) or name == _LOCK:
                        continue
                    path = Path(directory, name)
                    try:
                        stat = path.stat()
                    except FileNotFoundError:  # (deleted while listed)
                        continue
                    found.append(ObjectMeta(path.relative_to(self.root).as_posix(), stat.st_size, _version(stat),
                                            stat.st_mtime))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise self._error("listing", prefix, exc) from exc
        return sorted(found, key=lambda m: m.key)

    def put(self, key: str, data: bytes | memoryview) -> str:
        path = self._path(key)
        with self._exclusive(), self._staged(key, path, data, replacing=True) as tmp:
            os.replace(tmp, path)
            fsync_path(path.parent)
            return _version(path.stat())

    def put_if_absent(self, key: str, data: bytes | memoryview) -> str:
        path = self._path(key)
        with self._staged(key, path, data) as tmp:
            try:
                os.link(tmp, path)  # (fails if the name exists: no window between check and write)
            except FileExistsError:
                raise ConflictError(f"{self.url}/{key} exists already: another writer created it first") from None
            fsync_path(path.parent)
            return _version(path.stat())

    def put_if_version(self, key: str, data: bytes | memoryview, version: str) -> str:
        path = self._path(key)
        with self._exclusive(), self._staged(key, path, data, replacing=True) as tmp:
            current = self.head(key)
            if current is None or current.version != version:
                raise ConflictError(f"{self.url}/{key} changed since version {version} was read: "
                                    "another writer committed first")
            os.replace(tmp, path)
            fsync_path(path.parent)
            return _version(path.stat())

    def delete(self, key: str) -> None:
        path = self._path(key)
        try:
            path.unlink()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise self._error("deleting", key, exc) from exc
        fsync_path(path.parent)

    @contextmanager
    def _staged(self, key: str, path: Path, data: bytes | memoryview, replacing: bool = False) -> Iterator[Path]:
        """A fsynced temporary file of ``data`` beside ``path``, removed on the way out
        (renamed or linked into place by then, or not: either way no partial object).
        ``replacing`` (under the lock): its modification time is past ``path``'s."""
        tmp = path.with_name(f"{_TMP}{uuid.uuid4().hex}")
        try:
            make_dirs(path.parent)
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                if replacing:
                    try:
                        after = path.stat().st_mtime_ns + 1
                    except FileNotFoundError:
                        after = 0
                    stamp = max(time.time_ns(), after)
                    os.utime(f.fileno(), ns=(stamp, stamp))
                os.fsync(f.fileno())
            yield tmp
        except OSError as exc:
            raise self._error("writing", key, exc) from exc
        finally:
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                if exc.errno not in (errno.EROFS, errno.EACCES):  # (nothing was made then)
                    raise self._error("writing", key, exc) from exc

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        """This store's lock, across the threads and processes that write it."""
        with self._thread_lock:
            try:
                make_dirs(self.root)
                fd = os.open(self.root / _LOCK, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise self._error("locking", _LOCK, exc) from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # (releases the flock)


def _version(stat: os.stat_result) -> str:
    return f"{stat.st_ino}-{stat.st_size}-{stat.st_mtime_ns}"


def _raise(exc: OSError) -> None:
    raise exc
