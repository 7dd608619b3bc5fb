"""Stored values as the types SQL declared (``TableMeta.declared``): the inverse of
``ingest.stored_type``, on the read path (a search's returned columns, a managed table's
rows shown to DataFusion), apart from the write path that stores them."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def as_declared(values: pa.Array | pa.ChunkedArray, declared: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """``values`` as ``declared``: a dictionary is encoded (Arrow's cast makes no
    dictionary of plain values), any other type cast."""
    if pa.types.is_dictionary(declared) and not pa.types.is_dictionary(values.type):
        values = pc.dictionary_encode(values.cast(declared.value_type))
    return values.cast(declared)
