"""Checksums of an index segment's files, and of data fragments as wholes (docs/design.md:
"Checksums").

Beside its array files a segment keeps ``checksums.ipc``: per file its size, the crc32 of
every ``REGION_BYTES`` of it, and where its values buffer lies in it. The manifest keeps
the crc32 of that file (``SegmentMeta.checksums``), so every byte read chains back to the
manifest's own checksum.

Opening a segment verifies, before Arrow parses a file, every region of it but those
wholly inside the values buffer of a *lazy* array (the postings and positions, the bulk
of a segment, which a query reads a few terms of): those are verified the first time a
read reaches them (:class:`LazyRegions`), once per process. So opening still reads only
metadata, dictionary and lengths, and a mismatch is a StorageError naming the file and
the region, before any kernel follows a damaged byte.

A data fragment's pages carry their own CRCs, which the page reader checks. The manifest
keeps two more per fragment (``FragmentMeta``): the crc32 of its footer (:func:`footer_crc32`),
checked before pyarrow parses it, and of its whole file (:func:`file_crc32`), for
DataFusion's Parquet reader, which checks no CRC: the file is verified once before
DataFusion first scans it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np
import pyarrow as pa

from ...errors import StorageError
from .crc32 import crc32, first_bad_region

# The bytes each crc32 covers: a term's postings rarely span more than one region, and
# checking one (~20 us) is small beside reading it from disk.
REGION_BYTES = 64 << 10
CHECKSUMS = "checksums.ipc"
_READ_BYTES = 8 << 20
_SCHEMA = pa.schema([
    ("name", pa.string()), ("size", pa.int64()), ("values_start", pa.int64()), ("values_end", pa.int64()),
    ("crcs", pa.list_(pa.uint32())),
])
_REGION_KEY = b"region_bytes"


@dataclass(frozen=True)
class FileSums:
    """One array file: its size, the crc32 of each region, its values buffer [start, end)."""

    size: int
    values: tuple[int, int]
    crcs: np.ndarray


def region_crcs(data: np.ndarray, region: int) -> np.ndarray:
    """The crc32 of each ``region`` bytes of ``data`` (uint8; a region per call)."""
    n = -(-len(data) // region)
    return np.fromiter((crc32(data[i * region : (i + 1) * region]) for i in range(n)), np.uint32, n)


def file_crc32(path: str | os.PathLike[str]) -> int:
    """The crc32 of a whole file, read in pieces of ``_READ_BYTES`` (the GIL is released
    while a piece is summed)."""
    crc = 0
    with open(path, "rb", buffering=0) as f:
        while piece := f.read(_READ_BYTES):
            crc = crc32(piece, crc)
    return crc


class ParquetCrcs(NamedTuple):
    """The crc32s the manifest keeps of a data file of ours (``FragmentMeta``); None for
    fragments in memory, which hold no file to damage."""

    whole: int | None  # of the whole file
    footer: int | None  # of its footer and trailer


def parquet_crcs(path: str | os.PathLike[str]) -> ParquetCrcs:
    fd = os.open(path, os.O_RDONLY)
    try:
        return ParquetCrcs(file_crc32(path), footer_crc32(lambda n, at: os.pread(fd, n, at), os.fstat(fd).st_size))
    finally:
        os.close(fd)


def footer_crc32(read: Callable[[int, int], bytes], size: int) -> int:
    """The crc32 of a Parquet file's footer and its 8-byte trailer (its length and
    ``PAR1``), read by ``read(n, at)`` from a file of ``size`` bytes: what pyarrow parses
    on opening the file, checked before it does (a damaged footer can abort the process
    inside pyarrow). -1 if the trailer names no footer."""
    trailer = read(8, size - 8) if size >= 8 else b""
    length = int.from_bytes(trailer[:4], "little") if len(trailer) == 8 else -1
    if not 0 <= length <= size - 8:
        return -1
    return crc32(read(length + 8, size - 8 - length))


def check_footer(where: str, read: Callable[[int, int], bytes], size: int, crc: int | None) -> None:
    """Refuse the Parquet file ``where`` (read by ``read(n, at)``, ``size`` bytes) if its
    footer's crc32 is not ``crc`` (None: a file written before format 6, read unchecked)."""
    if crc is not None and (found := footer_crc32(read, size)) != crc:
        raise StorageError(f"damaged data file {where}: its footer's crc32 is {found}, the manifest says {crc}")


def file_bytes(buffer: pa.Buffer) -> np.ndarray:
    """A file's bytes as uint8 (zero copy: a memory-mapped file stays unread until used)."""
    return np.frombuffer(buffer, dtype=np.uint8)


def parse(buffer: pa.Buffer, where: str) -> pa.Array:
    """The one array of an Arrow IPC file (zero copy)."""
    try:
        column = pa.ipc.open_file(buffer).read_all().column(0)
    except (OSError, pa.ArrowInvalid, IndexError) as exc:
        raise StorageError(f"cannot read index segment file {where}: {exc}") from exc
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def values_span(array: pa.Array, base: int) -> tuple[int, int]:
    """Where the values buffer of ``array`` (parsed from a file at address ``base``) lies in it."""
    values = array.buffers()[-1]
    if values is None or not values.size:  # (an empty buffer's address is anywhere)
        return 0, 0
    start = values.address - base
    return start, start + values.size


def file_sums(buffer: pa.Buffer) -> FileSums:
    """The checksums of the array file whose bytes are ``buffer``."""
    span = values_span(parse(buffer, "being written"), buffer.address)
    return FileSums(buffer.size, span, region_crcs(file_bytes(buffer), REGION_BYTES))


def encode(files: dict[str, FileSums]) -> bytes:
    """The checksum file of a segment's ``files``."""
    names = sorted(files)
    batch = pa.record_batch([
        pa.array(names, pa.string()),
        pa.array([files[n].size for n in names], pa.int64()),
        pa.array([files[n].values[0] for n in names], pa.int64()),
        pa.array([files[n].values[1] for n in names], pa.int64()),
        pa.array([files[n].crcs for n in names], pa.list_(pa.uint32())),
    ], schema=_SCHEMA.with_metadata({_REGION_KEY: str(REGION_BYTES).encode()}))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def decode(data: bytes, expected: int, where: str) -> tuple[dict[str, FileSums], int]:
    """The file checksums and region size in checksum file ``data``, whose crc32 the
    manifest says is ``expected``."""
    found = crc32(data)
    if found != expected:
        raise StorageError(f"index segment checksum file {where} is damaged: its crc32 is {found}, "
                           f"the manifest says {expected}")
    table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
    region = int(table.schema.metadata[_REGION_KEY])
    rows = zip(*(table.column(f.name).to_pylist() for f in _SCHEMA))
    return {name: FileSums(size, (lo, hi), np.array(crcs, np.uint32)) for name, size, lo, hi, crcs in rows}, region


class LazyRegions:
    """A file's regions not verified yet (``done`` marks the others): verified the first
    time a read reaches them. Marking a region from two threads at once is harmless.

    ``fill``, when set, writes the regions it is given (indexes) into ``data`` from where
    the file came from: ``data`` is then a copy kept on local disk, fetched a region at a
    time as reads reach it (storage/stores/segment_cache.py), whose regions not fetched
    yet, or damaged, fail their check and are fetched again before a read follows them."""

    def __init__(self, where: str, data: np.ndarray, sums: FileSums, region: int, itemsize: int, done: np.ndarray) -> None:
        self.where, self.data, self.sums, self.region, self.itemsize = where, data, sums, region, itemsize
        self.done = done
        self.complete = bool(done.all())
        self.fill: Callable[[list[int]], None] | None = None

    def verify(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Verify the regions holding values [lo[i], hi[i]) of the values buffer (clipped)."""
        if self.complete:
            return
        start, end = self.sums.values
        first = (start + lo * self.itemsize) // self.region
        last = (np.minimum(start + hi * self.itemsize, end) - 1) // self.region
        for a, b in zip(first.tolist(), last.tolist()):
            if b >= a and not self.done[a : b + 1].all():
                self.check(a, b + 1)

    def check(self, a: int, b: int) -> None:
        """Verify regions [a, b) (those not verified yet)."""
        todo = a + np.flatnonzero(~self.done[a:b])
        unchecked = todo.tolist()
        if self.fill is not None:  # (each region's crc32 summed once: those that hold are verified)
            unchecked = [r for r in unchecked if not region_holds(self.data, self.sums, self.region, r)]
            if unchecked:
                self.fill(unchecked)
        _check_regions(self.where, self.data, self.sums, self.region, np.array(unchecked, dtype=np.int64))
        self.done[todo] = True
        self.complete = bool(self.done.all())


def region_holds(data: np.ndarray, sums: FileSums, region: int, r: int) -> bool:
    """Whether region ``r`` of ``data`` has its crc32."""
    return crc32(data[r * region : (r + 1) * region]) == sums.crcs[r]


def lazy_spans(sums: FileSums, region: int) -> list[tuple[int, int]]:
    """The byte spans of a lazy array's file that :func:`verify_file` verifies (all but
    the regions wholly inside its values buffer): what must be read before it is opened."""
    start, end = sums.values
    first, stop = -(-start // region), end // region
    if first >= stop:
        return [(0, sums.size)]
    return [(0, first * region), (stop * region, sums.size)]


def _check_regions(where: str, data: np.ndarray, sums: FileSums, region: int, which: np.ndarray) -> None:
    """Verify regions ``which`` of a file: a StorageError naming the first damaged one."""
    r = first_bad_region(data, sums.crcs, region, which)
    if r >= 0:
        raise StorageError(
            f"index segment file {where} is damaged: region {r} (bytes {r * region}.."
            f"{min((r + 1) * region, len(data)) - 1}) has crc32 {crc32(data[r * region : (r + 1) * region])}, "
            f"its checksum file says {int(sums.crcs[r])}"
        )


def verify_file(where: str, data: np.ndarray, sums: FileSums, region: int, lazy: bool) -> np.ndarray:
    """Verify a file before it is parsed: its size, and every region of it, but with
    ``lazy`` those wholly inside its values buffer. Returns which regions were verified."""
    if len(data) != sums.size or len(sums.crcs) != -(-sums.size // region):
        raise StorageError(f"index segment file {where} is damaged: {len(data)} bytes, its checksum file says "
                           f"{sums.size}")
    done = np.ones(len(sums.crcs), dtype=bool)
    if lazy:
        start, end = sums.values
        done[-(-start // region) : end // region] = False  # regions wholly in [start, end)
    _check_regions(where, data, sums, region, np.flatnonzero(done))
    return done


def lazy_regions(where: str, array: pa.Array, base: int, data: np.ndarray, sums: FileSums, region: int,
                 done: np.ndarray) -> LazyRegions:
    """The regions of a lazy array left to verify, once its values buffer is where the
    checksum file says (so the regions verified later are the bytes the array reads)."""
    if values_span(array, base) != sums.values or array.offset:
        raise StorageError(f"index segment file {where} is damaged: its values are not where its checksum file says")
    return LazyRegions(where, data, sums, region, array.type.bit_width // 8, done)
