"""Storage every node of a cluster can read: a database directory, or a database at an
object store's URL.

Distributed workers read index segments and data fragments from here and build tasks
write new segments here; only the driver commits the manifest that makes them part of
the database. A local path (or ``file://`` URI) is a :class:`DirectoryStore` (segments
memory-mapped); an object store's URL (``s3://...``, ``gs://...``) is read through the
object interface (storage/objects/, the same reads as ``fts.connect(url)``): segments
fetched whole and kept on the node's disk (segment_cache.py), pages by ranges; build
tasks create their segments there, and
the driver deletes them if the build fails (issue 32, item 4).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa

from ...errors import StorageError
from ..files import checksums
from ..files.layout import is_remote, local_path
from ..objects import open_objects
from ..parquet.data_files import RangeCache
from .remote_store import RemoteStore
from .segment_cache import SegmentCache
from .store import DirectoryStore

# The range cache of a worker's store on an object store (fts.object_cache_bytes' default),
# and the bytes of segments its node keeps on disk (fts.segment_cache_bytes' default).
WORKER_CACHE_BYTES = 256 << 20
WORKER_SEGMENT_BYTES = 4 << 30


class SharedStore(Protocol):
    """The part of a store that workers and build tasks use."""

    def read_segment(
        self, seg_id: str, crc: int | None, lazy: frozenset[str] = frozenset()
    ) -> tuple[dict[str, pa.Array], dict[str, checksums.LazyRegions]]: ...
    def write_segment(self, seg_id: str, arrays: dict[str, pa.Array], compressed: frozenset[str] = frozenset()
                      ) -> int | None: ...
    def iter_fragment(self, frag_id: str, columns: list[str], batch_rows: int) -> Iterator[pa.RecordBatch]: ...
    def read_deletes(self, dv_id: str, crc: int | None) -> np.ndarray: ...
    def delete_segments(self, seg_ids: Iterable[str]) -> None:
        """Delete segments no commit names (a failed build's)."""
    def note_footers(self, crcs: dict[str, int]) -> None:
        """The footer crc32s of data files (by id), which reads of them check."""


@dataclass(frozen=True)
class SharedLocation:
    """Where a cluster's workers read a database: a directory every node mounts, or an
    object store's URL with the options that reach it (``connect(storage_options=)``)."""

    url: str
    options: tuple[tuple[str, str], ...] = ()

    def __repr__(self) -> str:  # (options hold credentials: never in a repr or a log)
        return f"SharedLocation({self.url!r})"


def open_shared(location: SharedLocation, for_writes: bool = False) -> SharedStore:
    """The store at ``location``: a directory (a path or ``file://`` URI), or a database
    at an object store's URL read through the object interface
    (:class:`.remote_store.RemoteStore`, its pages kept in a cache of ``WORKER_CACHE_BYTES``,
    its segments on the node's disk in the default place, up to ``WORKER_SEGMENT_BYTES``;
    written only ``for_writes``: a build task's segments)."""
    if not is_remote(location.url):
        try:
            return DirectoryStore(local_path(location.url, "shared storage"))
        except ValueError as exc:
            raise StorageError(str(exc)) from None
    objects = open_objects(location.url, dict(location.options))
    return RemoteStore(objects, RangeCache(lambda: WORKER_CACHE_BYTES), read_only=not for_writes,
                       segments=SegmentCache(lambda: "", lambda: WORKER_SEGMENT_BYTES))
