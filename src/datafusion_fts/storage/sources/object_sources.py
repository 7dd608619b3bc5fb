"""Sources on an object store (S3, GCS, Azure, S3-compatible servers): a user's Parquet
files indexed in place where they lie (issue 32; docs/design.md: "Tables indexed in
place").

A remote source is a URL: a directory (``s3://bucket/data/``, written with its final
``/``) or one object (``s3://bucket/data/part-0.parquet``). Its files are listed with
the object interface (storage/objects/), each known by its key under the directory,
its size and its ETag (the ``version`` of :class:`.source_files.SourceFile`): an object
rewritten is another file, as a local file of another size or modification time is. The
stores are opened once per directory, with the database's storage options
(``connect(..., storage_options=)``), else the store's standard environment variables.
"""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Callable, Mapping

from ...errors import StorageError
from ..objects import ObjectStore, open_objects
from ..parquet.data_files import RangeCache, RemoteFile


def remote_root(source: str) -> str:
    """The directory URL a remote source's file keys are relative to (with its final ``/``)."""
    return source if source.endswith("/") else posixpath.dirname(source) + "/"


class SourceStores:
    """The object stores of one database's remote sources, and the ranges read of their
    files (``cache_bytes()``: the setting ``fts.object_cache_bytes``)."""

    def __init__(self, options: Mapping[str, str] | None = None, cache_bytes: Callable[[], int] = lambda: 0) -> None:
        self.options = dict(options or {})
        self.cache = RangeCache(cache_bytes)
        self._stores: dict[str, ObjectStore] = {}
        self._lock = threading.Lock()

    def directory(self, source: str) -> ObjectStore:
        """The objects under a remote source's directory (:func:`remote_root`)."""
        root = remote_root(source)
        with self._lock:
            found = self._stores.get(root)
            if found is None:
                found = self._stores[root] = open_objects(root.rstrip("/"), self.options)
        return found

    def file(self, source: str, key: str, size: int, version: str) -> RemoteFile:
        """The object ``key`` under the source's directory, of the size and ETag listed."""
        return RemoteFile(self.directory(source), key, size, version, self.cache)

    def listing(self, source: str) -> list[tuple[str, int, str]]:
        """(key, size, ETag) of every object of the source, keys relative to its directory:
        all under a directory, the object itself for a source naming one (none if it
        does not exist)."""
        objects = self.directory(source)
        if source.endswith("/"):
            found = objects.list()
        else:
            meta = objects.head(posixpath.basename(source))
            found = [meta] if meta is not None else []
        return [(m.key, m.size, m.version) for m in found]


def normal_source(source: str, stores: SourceStores) -> str:
    """A remote source as it is kept: a directory with its final ``/``, an object without.
    A URL with no final ``/`` is the object if one exists at that key, else the directory.
    Raises StorageError if the store cannot be read."""
    if source.endswith("/"):
        return source
    try:
        objects = stores.directory(source)
        if objects.head(posixpath.basename(source)) is not None:
            return source
    except StorageError as exc:
        raise StorageError(f"cannot read the source {source}: {exc}; give the store's options to "
                           "connect(..., storage_options={...}) or set its environment variables "
                           "(AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, ...)") from exc
    return source + "/"
