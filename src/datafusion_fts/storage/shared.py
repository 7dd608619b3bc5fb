"""Storage every node of a cluster can read: a database directory, or a ``pyarrow.fs`` URI.

Distributed workers read index segments and data fragments from here and build tasks
write new segments here; only the driver commits the manifest that makes them part of
the database. A local path (or ``file://`` URI) is a :class:`DirectoryStore` (segments
memory-mapped); any other URI (``s3://...``, ``gs://...``) goes through its
``pyarrow.fs`` filesystem, read into memory since remote files cannot be mapped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol
from urllib.parse import urlparse

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

from ..errors import StorageError
from .page_reader import open_parquet
from .store import DirectoryStore


class SharedStore(Protocol):
    """The part of a store that workers and build tasks use."""

    def read_segment(self, seg_id: str) -> dict[str, pa.Array]: ...
    def write_segment(self, seg_id: str, arrays: dict[str, pa.Array]) -> None: ...
    def iter_fragment(self, frag_id: str, columns: list[str], batch_rows: int) -> Iterator[pa.RecordBatch]: ...
    def read_deletes(self, dv_id: str) -> np.ndarray: ...


class FileSystemStore:
    """A database directory on a ``pyarrow.fs`` filesystem (read segments and fragments,
    write segments; the layout of :class:`DirectoryStore`)."""

    def __init__(self, fs: pafs.FileSystem, root: str) -> None:
        self.fs = fs
        self.root = root.rstrip("/")

    def _read_ipc(self, path: str) -> pa.ChunkedArray:
        with self.fs.open_input_file(path) as f:
            return pa.ipc.open_file(f).read_all().column(0)

    def read_segment(self, seg_id: str) -> dict[str, pa.Array]:
        directory = f"{self.root}/index/{seg_id}"
        try:
            infos = self.fs.get_file_info(pafs.FileSelector(directory))
            out = {}
            for info in sorted(infos, key=lambda i: i.path):
                if info.path.endswith(".arrow"):
                    column = self._read_ipc(info.path)
                    out[info.base_name[: -len(".arrow")]] = column.combine_chunks()
        except (OSError, pa.ArrowInvalid) as exc:
            raise StorageError(f"cannot read index segment {directory}: {exc}") from exc
        return out

    def write_segment(self, seg_id: str, arrays: dict[str, pa.Array]) -> None:
        directory = f"{self.root}/index/{seg_id}"
        self.fs.create_dir(directory)
        for name, array in arrays.items():
            batch = pa.record_batch([array], names=[name])
            with self.fs.open_output_stream(f"{directory}/{name}.arrow") as sink:
                with pa.ipc.new_file(sink, batch.schema) as writer:
                    writer.write_batch(batch)

    def iter_fragment(self, frag_id: str, columns: list[str], batch_rows: int) -> Iterator[pa.RecordBatch]:
        with self.fs.open_input_file(f"{self.root}/data/{frag_id}.parquet") as f:
            yield from open_parquet(f).iter_batches(batch_size=batch_rows, columns=columns)

    def read_deletes(self, dv_id: str) -> np.ndarray:
        return self._read_ipc(f"{self.root}/data/{dv_id}.arrow").to_numpy()


def open_shared(location: str) -> SharedStore:
    """The store at ``location``: a directory path or a ``pyarrow.fs`` URI."""
    if "://" not in location:
        return DirectoryStore(location)
    try:
        fs, root = pafs.FileSystem.from_uri(location)
    except (pa.ArrowInvalid, OSError) as exc:
        raise StorageError(f"cannot open shared storage {location!r}: {exc}") from exc
    if urlparse(location).scheme == "file":
        return DirectoryStore(root)
    return FileSystemStore(fs, root)
