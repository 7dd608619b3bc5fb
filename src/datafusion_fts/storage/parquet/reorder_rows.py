"""Fetched rows put back in the order asked for, without Arrow's take over many chunks.

A fetch reads rows in row-id order, in pieces (one chunk per piece of pages), and the
caller wants them in its own order (a search's: by score). For a large fetch, Arrow's
``take`` over a column of many chunks allocated about twice its output on top of the
input: the 93,213 bodies (64 MB) of an unbounded search in 881 chunks grew the process
by 131 MB and took 2.3 s of a 4.1 s query on this project's test machine, where touching
fresh memory is slow. Here a text or binary column of many chunks is copied straight into
its final order by one compiled loop per chunk (the output, on huge pages where it is
large: :mod:`.huge_pages`, is the only new memory); other columns, and columns of a few
chunks (a top-k fetch), are left to Arrow.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...kernels.parquet_values import place_bytes
from .huge_pages import empty_bytes
from .parquet_values import bytes_array, numeric_array

# Chunks past which a text column is reordered here rather than by Arrow (a fetch reads
# pieces of at most 64 pages, page_reader.CHUNK_PAGES: this is a fetch of over 1,000 pages).
MANY_CHUNKS = 16
_NO_ROWS = np.zeros(0, dtype=np.int64)


def reorder_rows(table: pa.Table, order: np.ndarray) -> pa.Table:
    """``table.take(order)``: row ``i`` of the result is row ``order[i]`` of ``table``
    (repeats allowed)."""
    if not any(_ours(c) for c in table.columns):
        return table.take(numeric_array(order))
    indices = numeric_array(order)
    return pa.table([_reorder_bytes(c, order) if _ours(c) else c.take(indices) for c in table.columns],
                    schema=table.schema)


def _ours(column: pa.ChunkedArray) -> bool:
    """Whether ``column`` is reordered here: text or binary in more than ``MANY_CHUNKS``
    chunks. A top-k fetch's few chunks are Arrow's: here they cost ~0.2 ms a column more
    (100 rows of the benchmark's title and body in 2 chunks: 7.1-7.5 ms against 5.9-6.9)."""
    return column.num_chunks > MANY_CHUNKS and is_bytes(column.type)


def is_bytes(t: pa.DataType) -> bool:
    """Whether ``t`` is a string or binary type (values laid end to end, with offsets)."""
    return pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t)


def _chunks(column: pa.ChunkedArray) -> list[tuple[pa.Array, np.ndarray]]:
    """Each chunk of a string or binary column with its offsets (``len + 1``, as stored)."""
    large = pa.types.is_large_string(column.type) or pa.types.is_large_binary(column.type)
    offset_type = np.int64 if large else np.int32
    return [(c, np.frombuffer(c.buffers()[1], offset_type)[c.offset : c.offset + len(c) + 1]) for c in column.chunks]


def byte_lengths(column: pa.ChunkedArray) -> np.ndarray:
    """The byte length of each value of a string or binary column (0 for a null)."""
    return np.concatenate([np.diff(offsets).astype(np.int64) for _, offsets in _chunks(column)] or [_NO_ROWS])


def copy_values(column: pa.ChunkedArray, sources: np.ndarray, targets: np.ndarray, out_offsets: np.ndarray,
                out: np.ndarray) -> None:
    """Copy value ``sources[i]`` of a string or binary column (``sources`` ascending,
    repeats allowed) to ``out[out_offsets[targets[i]]:]``, by one compiled loop per chunk."""
    first = 0
    for chunk, offsets in _chunks(column):
        lo, hi = np.searchsorted(sources, [first, first + len(chunk)])
        if hi > lo:
            data = chunk.buffers()[2]
            place_bytes(np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8),
                        offsets.astype(np.int64), sources[lo:hi] - first, targets[lo:hi], out_offsets, out)
        first += len(chunk)


def _reorder_bytes(column: pa.ChunkedArray, order: np.ndarray) -> pa.Array:
    """A string or binary column of several chunks, reordered (see :func:`reorder_rows`)."""
    valid = np.concatenate([c.is_valid().to_numpy(zero_copy_only=False) for c in column.chunks])
    out_offsets = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(byte_lengths(column)[order], out=out_offsets[1:])
    out = empty_bytes(int(out_offsets[-1]))
    by_source = np.argsort(order, kind="stable")  # the outputs, grouped by the row they copy
    copy_values(column, order[by_source], by_source, out_offsets, out)
    return bytes_array(column.type, valid[order], out_offsets, out)

