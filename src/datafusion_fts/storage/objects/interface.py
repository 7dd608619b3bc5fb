"""The one interface every backend of :mod:`..objects` implements, and what its calls promise.

Keys are ``/``-separated paths relative to the store's location (``segments/s1/rows``);
a store never reads or writes outside its location. Every write is atomic (a reader sees
the whole old object or the whole new one, never a part) and durable when the call
returns. The two conditional writes are what a commit needs when two processes may
commit at once: ``put_if_absent`` creates a key only if no one has, ``put_if_version``
replaces an object only if it is still the version the writer read. The loser gets a
:class:`~datafusion_fts.errors.ConflictError` and its object is not written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ...errors import InvalidArgument, StorageError


@dataclass(frozen=True)
class ObjectMeta:
    """One object: its key, its size in bytes, its version (an opaque string that
    changes whenever the object is written: an ETag on an object store), and when it was
    last written (seconds since the epoch: garbage collection spares younger objects,
    which a writer may be about to commit)."""

    key: str
    size: int
    version: str
    modified: float = 0.0


class ObjectMissing(StorageError):
    """An object read by key does not exist (never written, or deleted)."""


class ObjectChanged(StorageError):
    """An object read as one version is another now (rewritten, or deleted, since)."""


class ObjectStore(Protocol):
    """Objects under one location (a local directory or an object store's prefix)."""

    url: str  # (the location, as errors name it)

    def get(self, key: str) -> bytes:
        """The whole object. Raises ObjectMissing."""

    def get_ranges(self, key: str, starts: Sequence[int], ends: Sequence[int], version: str | None = None
                   ) -> list[memoryview]:
        """The bytes ``[starts[i], ends[i])`` of the object, one buffer per range (near ranges
        are read by one request). A range past the object's end is a StorageError. With
        ``version``, only of that version of the object: ObjectChanged if it is another."""

    def head(self, key: str) -> ObjectMeta | None:
        """The object's size and version; None if it does not exist."""

    def list(self, prefix: str = "") -> list[ObjectMeta]:
        """Every object whose key is under the directory ``prefix`` (``""``: all), by key."""

    def put(self, key: str, data: bytes | memoryview) -> str:
        """Write the object whole, replacing any; its new version."""

    def put_if_absent(self, key: str, data: bytes | memoryview) -> str:
        """Write the object if the key does not exist; its version. Raises ConflictError."""

    def put_if_version(self, key: str, data: bytes | memoryview, version: str) -> str:
        """Replace the object if its version is still ``version``; its new version.
        Raises ConflictError (changed or deleted since)."""

    def delete(self, key: str) -> None:
        """Remove the object (nothing if it does not exist)."""


def check_key(key: str) -> str:
    """``key`` if it names an object inside a store's location: relative, ``/``-separated,
    no empty, ``.`` or ``..`` part. Raises InvalidArgument (nothing is read or written)."""
    parts = key.split("/")
    if not key or any(p in ("", ".", "..") for p in parts) or "\\" in key or "\0" in key:
        raise InvalidArgument(f"object key {key!r} is not a relative path inside the store "
                              "(no leading '/', no empty, '.' or '..' part)")
    return key


def check_ranges(url: str, key: str, size: int, starts: Sequence[int], ends: Sequence[int]) -> None:
    """Refuse ranges that are not inside an object of ``size`` bytes (StorageError)."""
    if len(starts) != len(ends):
        raise InvalidArgument(f"{len(starts)} range starts but {len(ends)} ends")
    for start, end in zip(starts, ends):
        if not 0 <= start <= end <= size:
            raise StorageError(f"{url}/{key}: bytes [{start}, {end}) are outside the object's {size:,} bytes")
