"""Arrow helpers shared by the text functions: argument buffers, grouping rows by their
(nearly always literal) query arguments, and putting per-group results back in row order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..analysis.analyzer import _string_buffers
from ..errors import InvalidArgument


def string_buffers(values: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(utf8 bytes, int64 offsets[n+1], valid bool[n]) of a string argument."""
    return _string_buffers(values)


def string_array(data: np.ndarray, offsets: np.ndarray, valid: np.ndarray) -> pa.Array:
    """A utf8 array from bytes, int64 offsets and a validity mask (False: null)."""
    n = len(offsets) - 1
    validity = None if valid.all() else pa.array(valid, pa.bool_()).buffers()[1]
    out = pa.Array.from_buffers(
        pa.large_string(), n, [validity, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    return out.cast(pa.string())


def validity(*arrays: pa.Array) -> np.ndarray:
    """True where every argument is non-null (SQL: a NULL argument gives a NULL result)."""
    valid = np.ones(len(arrays[0]), dtype=np.bool_)
    for array in arrays:
        if array.null_count:
            valid &= array.is_valid().to_numpy(zero_copy_only=False)
    return valid


def groups(*arrays: pa.Array) -> list[tuple[tuple[Any, ...], np.ndarray | None]]:
    """Rows grouped by the values of ``arrays`` (arguments DataFusion passes per row, almost
    always one literal repeated): ``[(values, positions, or None for every row), ...]``."""
    if not len(arrays[0]):  # (a search that matched nothing hands its result as an empty batch)
        return [((None,) * len(arrays), None)]
    uniques = [a.unique() for a in arrays]
    if all(len(u) == 1 for u in uniques):
        return [(tuple(u[0].as_py() for u in uniques), None)]
    codes = np.zeros(len(arrays[0]), dtype=np.int64)
    for array in arrays:
        encoded = array.dictionary_encode()
        idx = encoded.indices.fill_null(len(encoded.dictionary)).to_numpy(zero_copy_only=False)
        codes = codes * (len(encoded.dictionary) + 1) + idx
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    return [
        (tuple(a[row].as_py() for a in arrays), np.flatnonzero(inverse == g))
        for g, row in enumerate(first.tolist())
    ]


def per_group(
    n_rows: int,
    keys: list[pa.Array],
    compute: Callable[[tuple[Any, ...], np.ndarray | None], pa.Array],
) -> pa.Array:
    """``compute(values, positions)`` for each group of rows with equal ``keys``, the
    results put back in row order."""
    parts = groups(*keys)
    if len(parts) == 1:
        return compute(*parts[0])
    results = [compute(values, rows) for values, rows in parts]
    order = np.concatenate([rows for _, rows in parts if rows is not None])
    inverse = np.empty(n_rows, dtype=np.int64)
    inverse[order] = np.arange(n_rows)
    return pa.concat_arrays(results).take(pa.array(inverse))


def take(array: pa.Array, rows: np.ndarray | None) -> pa.Array:
    return array if rows is None else array.take(pa.array(rows))


def positive_ints(values: pa.Array, function: str, name: str) -> np.ndarray:
    """An integer argument that must be >= 1 where it is not null (nulls read as 1)."""
    ints = pc.fill_null(values.cast(pa.int64()), 1).to_numpy(zero_copy_only=False)
    bad = ints < 1
    if bad.any():
        raise InvalidArgument(f"{function}: argument '{name}' must be a positive integer, got {int(ints[bad][0])}")
    return ints
