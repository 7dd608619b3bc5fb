"""Byte ranges of open files, read into one buffer by one compiled loop
(``kernels/file_ranges.pyx``: ``pread(2)`` calls without the GIL), and the ranges it
could not read said in a StorageError naming their file."""

from __future__ import annotations

import os

import numpy as np

from ...errors import StorageError
from ...kernels.file_ranges import pread_ranges


def read_ranges(fds: np.ndarray, offsets: np.ndarray, sizes: np.ndarray, paths: dict[int, str]) -> np.ndarray:
    """The ranges laid end to end (``paths``: each file descriptor's file, for errors).
    A range that does not read whole is read again from Python, which retries an
    interrupted call and says what went wrong: a StorageError naming the file."""
    out = np.empty(int(sizes.sum()), dtype=np.uint8)
    if not len(sizes):
        return out
    bad = pread_ranges(fds.astype(np.int32), offsets, sizes, out)
    if bad < 0:
        return out
    starts = np.cumsum(sizes) - sizes
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
