"""Stored values as the types SQL declared (``TableMeta.declared``): the inverse of
``ingest.stored_type``, on the read path (a search's returned columns, a managed table's
rows shown to DataFusion), apart from the write path that stores them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..storage.files.manifest import STORED_AS_BYTES


def as_declared(values: pa.Array | pa.ChunkedArray, declared: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """``values`` as ``declared``: a dictionary or run-end-encoded column is encoded and a
    list view made (Arrow's cast makes none of them of plain values), any other type cast,
    and nested fields named as declared (a list read from Parquet names its items
    ``element``, DataFusion's ``item``)."""
    if pa.types.is_dictionary(declared) and not pa.types.is_dictionary(values.type):
        values = pc.dictionary_encode(values.cast(declared.value_type))
    if pa.types.is_run_end_encoded(declared) and not pa.types.is_run_end_encoded(values.type):
        values = pc.run_end_encode(as_declared(values, declared.value_type), run_end_type=declared.run_end_type)
    if _is_view_of_lists(declared) and not _is_view_of_lists(values.type):
        values = _as_list_view(values, declared)
    if STORED_AS_BYTES.get(declared) == values.type:
        values = _viewed(values, declared)  # (stored as its bytes: manifest.STORED_AS_BYTES)
    if values.type != declared:  # (a cast to its own type loses a list of nulls' items: ingest._stored_as)
        values = values.cast(declared)
    if not same_type(values.type, declared):
        values = _viewed(values, declared)
    return values


def _is_view_of_lists(t: pa.DataType) -> bool:
    return pa.types.is_list_view(t) or pa.types.is_large_list_view(t)


def _as_list_view(values: pa.Array | pa.ChunkedArray, declared: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """Lists (stored, ``ingest.stored_type``) as the list view ``declared``."""
    if isinstance(values, pa.ChunkedArray):
        return pa.chunked_array([_as_list_view(chunk, declared) for chunk in values.chunks], declared)
    index = pa.int64() if pa.types.is_large_list_view(declared) else pa.int32()
    sizes = pc.fill_null(pc.list_value_length(values), 0).cast(index)
    offsets = pa.array(np.concatenate([[0], np.cumsum(sizes.to_numpy())[:-1]]), index)
    items = as_declared(pc.list_flatten(values), declared.value_type)
    made = pa.LargeListViewArray if index == pa.int64() else pa.ListViewArray
    return made.from_arrays(offsets, sizes, items, type=declared, mask=values.is_null())


def _viewed(values: pa.Array | pa.ChunkedArray, declared: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """``values``' buffers as ``declared`` (a type of the same layout). Where a nested
    field is of the null type, whose array has no buffer, Arrow's view takes its length
    from the buffers (a list of nulls then spans more items than it has): such values,
    nulls all through, are made again as ``declared``."""
    if _has_null_field(declared):
        return pa.array(values.to_pylist(), declared)
    if isinstance(values, pa.ChunkedArray):
        return pa.chunked_array([chunk.view(declared) for chunk in values.chunks], declared)
    return values.view(declared)


def _has_null_field(t: pa.DataType) -> bool:
    return any(pa.types.is_null(f.type) or _has_null_field(f.type) for f in (t.field(i) for i in range(t.num_fields)))


def same_type(a: pa.DataType, b: pa.DataType) -> bool:
    """Whether ``a`` and ``b`` are one type to DataFusion: pyarrow's ``==`` ignores the
    names of nested fields (a list's item field), DataFusion does not."""
    return a == b and str(a) == str(b)


def empty_batch(schema: pa.Schema) -> pa.RecordBatch:
    """A batch of no rows of ``schema`` (a table DataFusion is shown needs one batch to
    have columns): made of empty arrays, for pyarrow converts no Python values to some
    types (a dictionary of dictionaries, which DataFusion's ``arrow_cast`` makes)."""
    return pa.RecordBatch.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)
