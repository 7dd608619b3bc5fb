"""Picked Parquet values made Arrow arrays: validity bitmaps and string or binary arrays
from the offsets and bytes the compiled kernels gather (``kernels/parquet_values.pyx``),
and numeric numpy arrays viewed as Arrow."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...errors import StorageError


def validity(valid: np.ndarray) -> tuple[pa.Buffer | None, int]:
    """An Arrow validity bitmap of ``valid`` (None when nothing is null) and the null count."""
    nulls = int(len(valid) - np.count_nonzero(valid))
    return (pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None), nulls


def bytes_array(arrow_type: pa.DataType, valid: np.ndarray, offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """A string or binary array of ``arrow_type`` from int64 ``offsets`` (``n + 1``) into
    ``data``; more than 2 GiB refused where the type's offsets are 32-bit."""
    large = pa.types.is_large_string(arrow_type) or pa.types.is_large_binary(arrow_type)
    if not large and offsets[-1] >= 2**31:
        raise StorageError("a fetch of more than 2 GiB of one string column: fetch fewer rows at a time")
    mask, nulls = validity(valid)
    buffers = [mask, pa.py_buffer(offsets if large else offsets.astype(np.int32)), pa.py_buffer(data)]
    return pa.Array.from_buffers(arrow_type, len(valid), buffers, null_count=nulls)


def numeric_array(values: np.ndarray, dtype: type[np.generic] = np.int64) -> pa.Array:
    """``values`` (cast to ``dtype`` only when lossless) as an Arrow array without nulls,
    sharing their buffer as ``pa.array`` does; not ``pa.array`` itself, which imports
    ``numpy.ma`` (~10 ms of a fresh process's first search) to ask whether an ndarray is
    masked."""
    data = np.ascontiguousarray(values.astype(dtype, casting="safe", copy=False))
    return pa.Array.from_buffers(pa.from_numpy_dtype(data.dtype), len(data), [None, pa.py_buffer(data)])
