"""Turn what users pass as data into a stream of record batches with the table's schema."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from .errors import InvalidArgument
from .storage.manifest import ROWID

READ_BATCH_ROWS = 65_536


def open_batches(data: Any) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """``(schema, batches)`` of a pyarrow Table/RecordBatch/RecordBatchReader, a Parquet
    path (streamed, so files larger than memory work), or anything exporting an Arrow
    stream (a DataFusion DataFrame)."""
    if isinstance(data, (str, os.PathLike)):
        path = Path(data)
        if not path.exists():
            raise InvalidArgument(f"no such Parquet file: {path}")
        try:
            pf = pq.ParquetFile(path)
        except (pa.ArrowInvalid, OSError) as exc:
            raise InvalidArgument(f"cannot read {path} as Parquet: {exc}") from exc
        return pf.schema_arrow, pf.iter_batches(batch_size=READ_BATCH_ROWS)
    if isinstance(data, pa.Table):
        return data.schema, iter(data.to_batches(max_chunksize=READ_BATCH_ROWS))
    if isinstance(data, pa.RecordBatch):
        return data.schema, iter([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.schema, iter(data)
    if hasattr(data, "__arrow_c_stream__"):
        reader = pa.RecordBatchReader.from_stream(data)
        return reader.schema, iter(reader)
    raise InvalidArgument(
        "data must be a pyarrow Table, RecordBatch or RecordBatchReader, a Parquet path, "
        f"or an object with __arrow_c_stream__; got {type(data).__name__}"
    )


def check_new_schema(schema: pa.Schema) -> pa.Schema:
    """A table schema users may create: named, distinct columns, ``_rowid`` reserved."""
    if ROWID in schema.names:
        raise InvalidArgument(f"{ROWID!r} is reserved: every managed table has it already")
    if len(set(schema.names)) != len(schema.names) or any(not n for n in schema.names):
        raise InvalidArgument(f"column names must be distinct and non-empty: {schema.names}")
    return pa.schema([pa.field(f.name, f.type, True) for f in schema])


def conform(batches: Iterator[pa.RecordBatch], source: pa.Schema, target: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Batches of ``source`` cast to ``target`` (same column names, any order)."""
    if set(source.names) != set(target.names):
        raise InvalidArgument(
            f"data columns {source.names} do not match the table's columns {target.names}"
        )
    for name in target.names:
        src, dst = source.field(name).type, target.field(name).type
        if src != dst and not pa.types.is_null(src):
            try:
                pa.array([], src).cast(dst)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise InvalidArgument(f"column {name!r}: cannot store {src} as {dst}") from exc
    for batch in batches:
        cols = []
        for name in target.names:
            try:
                cols.append(batch.column(name).cast(target.field(name).type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise InvalidArgument(f"column {name!r}: {exc}") from None
        yield pa.RecordBatch.from_arrays(cols, schema=target)
