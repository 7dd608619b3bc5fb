"""Byte ranges of open files, read into one buffer by one compiled loop
(``kernels/file_ranges.pyx``: ``pread(2)`` calls without the GIL), and the ranges it
could not read said in a StorageError naming their file."""

from __future__ import annotations

import os

import numpy as np

from ...errors import StorageError
from ...kernels.file_ranges import pread_ranges
from .side_by_side import first_bad

# A range's weight beside its bytes (a ``pread`` call costs ~1.5 us, as ~4 KiB copied do),
# and the weight worth a part on a second core.
RANGE_WEIGHT = 4096
PART_WEIGHT = 1 << 20


def read_ranges(fds: np.ndarray, offsets: np.ndarray, sizes: np.ndarray, paths: dict[int, str]) -> np.ndarray:
    """The ranges laid end to end (``paths``: each file descriptor's file, for errors).
    A range that does not read whole is read again from Python, which retries an
    interrupted call and says what went wrong: a StorageError naming the file."""
    out = np.empty(int(sizes.sum()), dtype=np.uint8)
    if not len(sizes):
        return out
    fds = fds.astype(np.int32)
    starts = np.cumsum(sizes) - sizes

    def part(a: int, b: int) -> int:
        return pread_ranges(fds[a:b], offsets[a:b], sizes[a:b], out[int(starts[a]) : int(starts[a]) + int(sizes[a:b].sum())])

    bad = first_bad(sizes + RANGE_WEIGHT, PART_WEIGHT, part)
    if bad < 0:
        return out
    for i in range(bad, len(sizes)):  # (the merged call failed somewhere from range ``bad`` on)
        fd, offset, size = int(fds[i]), int(offsets[i]), int(sizes[i])
        try:
            data = os.pread(fd, size, offset)
        except OSError as exc:
            raise StorageError(f"cannot read data file {paths[fd]}: {exc}") from exc
        if len(data) != size:
            raise StorageError(f"damaged data file {paths[fd]}: {size} bytes wanted at {offset}, {len(data)} there")
        out[starts[i] : starts[i] + size] = np.frombuffer(data, dtype=np.uint8)
    return out
