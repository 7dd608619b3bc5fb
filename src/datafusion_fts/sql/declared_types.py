"""Stored values as the types SQL declared (``TableMeta.declared``): the inverse of
``ingest.stored_type``, on the read path (a search's returned columns, a managed table's
rows shown to DataFusion), apart from the write path that stores them."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..storage.files.manifest import STORED_AS_BYTES


def as_declared(values: pa.Array | pa.ChunkedArray, declared: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """``values`` as ``declared``: a dictionary or run-end-encoded column is encoded
    (Arrow's cast makes neither of plain values), any other type cast, and nested fields named as declared
    (a list read from Parquet names its items ``element``, DataFusion's ``item``)."""
    if pa.types.is_dictionary(declared) and not pa.types.is_dictionary(values.type):
        values = pc.dictionary_encode(values.cast(declared.value_type))
    if pa.types.is_run_end_encoded(declared) and not pa.types.is_run_end_encoded(values.type):
        values = pc.run_end_encode(as_declared(values, declared.value_type), run_end_type=declared.run_end_type)
    if STORED_AS_BYTES.get(declared) == values.type:
        values = _viewed(values, declared)  # (stored as its bytes: manifest.STORED_AS_BYTES)
    values = values.cast(declared)
    if not same_type(values.type, declared):
        values = _viewed(values, declared)
    return values


def _viewed(values: pa.Array | pa.ChunkedArray, declared: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """``values``' buffers as ``declared`` (a type of the same layout)."""
    if isinstance(values, pa.ChunkedArray):
        return pa.chunked_array([chunk.view(declared) for chunk in values.chunks], declared)
    return values.view(declared)


def same_type(a: pa.DataType, b: pa.DataType) -> bool:
    """Whether ``a`` and ``b`` are one type to DataFusion: pyarrow's ``==`` ignores the
    names of nested fields (a list's item field), DataFusion does not."""
    return a == b and str(a) == str(b)


def empty_batch(schema: pa.Schema) -> pa.RecordBatch:
    """A batch of no rows of ``schema`` (a table DataFusion is shown needs one batch to
    have columns): made of empty arrays, for pyarrow converts no Python values to some
    types (a dictionary of dictionaries, which DataFusion's ``arrow_cast`` makes)."""
    return pa.RecordBatch.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)
