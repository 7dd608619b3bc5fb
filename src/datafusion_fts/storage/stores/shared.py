"""Storage every node of a cluster can read: a database directory, or a ``pyarrow.fs`` URI.

Distributed workers read index segments and data fragments from here and build tasks
write new segments here; only the driver commits the manifest that makes them part of
the database. A local path (or ``file://`` URI) is a :class:`DirectoryStore` (segments
memory-mapped); any other URI (``s3://...``, ``gs://...``) goes through its
``pyarrow.fs`` filesystem, read into memory since remote files cannot be mapped.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlparse

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ...errors import StorageError
from ..files import checksums
from .store import DirectoryStore, deletes_of

if TYPE_CHECKING:
    import pyarrow.fs as pafs


class SharedStore(Protocol):
    """The part of a store that workers and build tasks use."""

    def read_segment(
        self, seg_id: str, crc: int | None, lazy: frozenset[str] = frozenset()
    ) -> tuple[dict[str, pa.Array], dict[str, checksums.LazyRegions]]: ...
    def write_segment(self, seg_id: str, arrays: dict[str, pa.Array]) -> int | None: ...
    def iter_fragment(self, frag_id: str, columns: list[str], batch_rows: int) -> Iterator[pa.RecordBatch]: ...
    def read_deletes(self, dv_id: str, crc: int | None) -> np.ndarray: ...
    def note_footers(self, crcs: dict[str, int]) -> None:
        """The footer crc32s of data files (by id), which reads of them check."""


class FileSystemStore:
    """A database directory on a ``pyarrow.fs`` filesystem (read segments and fragments,
    write segments; the layout of :class:`DirectoryStore`)."""

    def __init__(self, fs: pafs.FileSystem, root: str) -> None:
        self.fs = fs
        self.root = root.rstrip("/")
        self._footer_crcs: dict[str, int] = {}

    def note_footers(self, crcs: dict[str, int]) -> None:
        self._footer_crcs.update(crcs)

    def _read(self, path: str) -> pa.Buffer:
        with self.fs.open_input_file(path) as f:
            return f.read_buffer()

    def read_segment(
        self, seg_id: str, crc: int | None, lazy: frozenset[str] = frozenset()
    ) -> tuple[dict[str, pa.Array], dict[str, checksums.LazyRegions]]:
        """Read every array of a segment into memory, each file verified whole with ``crc``
        (the manifest's crc32 of its checksum file; ``lazy`` is moot: all is read)."""
        directory = f"{self.root}/index/{seg_id}"
        try:
            if crc is None:
                import pyarrow.fs as pafs  # (only a cluster's remote store needs it: ~19 ms, 8 MB)

                infos = self.fs.get_file_info(pafs.FileSelector(directory))
                files = None
                names = sorted(i.base_name[: -len(".arrow")] for i in infos if i.base_name.endswith(".arrow"))
            else:
                where = f"{directory}/{checksums.CHECKSUMS}"
                files, region = checksums.decode(self._read(where).to_pybytes(), crc, where)
                names = sorted(files)
            out = {}
            for name in names:
                where = f"{directory}/{name}.arrow"
                buffer = self._read(where)
                if files is not None:
                    checksums.verify_file(where, checksums.file_bytes(buffer), files[name], region, False)
                out[name] = checksums.parse(buffer, where)
        except (OSError, pa.ArrowInvalid) as exc:
            raise StorageError(f"cannot read index segment {directory}: {exc}") from exc
        return out, {}

    def write_segment(self, seg_id: str, arrays: dict[str, pa.Array]) -> int:
        """Write a segment's arrays and their checksum file; the crc32 of that file."""
        directory = f"{self.root}/index/{seg_id}"
        self.fs.create_dir(directory)
        sums = {}
        for name, array in arrays.items():
            batch = pa.record_batch([array], names=[name])
            sink = pa.BufferOutputStream()
            with pa.ipc.new_file(sink, batch.schema) as writer:
                writer.write_batch(batch)
            buffer = sink.getvalue()
            sums[name] = checksums.file_sums(buffer)
            with self.fs.open_output_stream(f"{directory}/{name}.arrow") as out:
                out.write(buffer)
        data = checksums.encode(sums)
        with self.fs.open_output_stream(f"{directory}/{checksums.CHECKSUMS}") as out:
            out.write(data)
        return zlib.crc32(data)

    def iter_fragment(self, frag_id: str, columns: list[str], batch_rows: int) -> Iterator[pa.RecordBatch]:
        """The fragment's rows, its footer checked against its crc32 (when noted) before
        pyarrow parses it and every page's CRC as pyarrow reads it."""
        where = f"{self.root}/data/{frag_id}.parquet"
        try:
            with self.fs.open_input_file(where) as f:
                checksums.check_footer(where, f.read_at, f.size(), self._footer_crcs.get(frag_id))
                parquet = pq.ParquetFile(f, pre_buffer=False, page_checksum_verification=True)
                yield from parquet.iter_batches(batch_size=batch_rows, columns=columns)
        except (OSError, pa.ArrowInvalid) as exc:
            raise StorageError(f"cannot read data file {where}: {exc}") from exc

    def read_deletes(self, dv_id: str, crc: int | None) -> np.ndarray:
        where = f"{self.root}/data/{dv_id}.arrow"
        try:
            data = self._read(where).to_pybytes()
        except OSError as exc:
            raise StorageError(f"cannot read deletion vector {where}: {exc}") from exc
        return deletes_of(data, crc, where)


def open_shared(location: str) -> SharedStore:
    """The store at ``location``: a directory path or a ``pyarrow.fs`` URI."""
    if "://" not in location:
        return DirectoryStore(location)
    try:
        import pyarrow.fs as pafs

        fs, root = pafs.FileSystem.from_uri(location)
    except (pa.ArrowInvalid, OSError) as exc:
        raise StorageError(f"cannot open shared storage {location!r}: {exc}") from exc
    if urlparse(location).scheme == "file":
        return DirectoryStore(root)
    return FileSystemStore(fs, root)
