"""Turn what users pass as data into a stream of record batches with the table's schema."""

from __future__ import annotations

import os
import queue
import threading
from pathlib import Path
from typing import Any, Iterator, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import InvalidArgument
from .storage.files.manifest import ROWID, STORED_AS_BYTES
from .storage.parquet.page_reader import open_parquet

READ_BATCH_ROWS = 65_536
# Batches a load reads ahead of the writer (see prefetched).
READ_AHEAD = 2
T = TypeVar("T")


def open_batches(data: Any) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """``(schema, batches)`` of a pyarrow Table/RecordBatch/RecordBatchReader, a Parquet
    path (streamed, so files larger than memory work), or anything exporting an Arrow
    stream (a DataFusion DataFrame)."""
    if isinstance(data, (str, os.PathLike)):
        path = Path(data)
        if not path.exists():
            raise InvalidArgument(f"no such Parquet file: {path}")
        try:
            pf = open_parquet(path)
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
    if len(set(schema.names)) != len(schema.names) or any(not n or "\x00" in n for n in schema.names):
        raise InvalidArgument(f"column names must be distinct, non-empty and without NUL: {schema.names}")
    return pa.schema([pa.field(f.name, f.type, True) for f in schema])


def stored_type(t: pa.DataType) -> pa.DataType:
    """The type a column SQL declared as ``t`` is stored as: a view type as its plain form
    (Parquet has no view types; DataFusion reads the plain ones back as the views), a
    dictionary as its values (Arrow's Parquet writer refuses a dictionary holding a null;
    DataFusion reads the values back as the dictionary declared), a run-end-encoded
    column as its values (Parquet has no such type; they are encoded again when read,
    session/declared_types.py)."""
    if pa.types.is_dictionary(t):
        return stored_type(t.value_type)
    if pa.types.is_run_end_encoded(t):
        return stored_type(t.value_type)
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_list_view(t) or pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(stored_type(t.value_type)))
    if pa.types.is_large_list_view(t) or pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(stored_type(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(stored_type(t.value_type)), t.list_size)
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(stored_type(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(stored_type(t.key_type)), t.item_field.with_type(stored_type(t.item_type)),
                       t.keys_sorted)
    return t


def stored_schema(declared: pa.Schema) -> pa.Schema:
    """The stored schema of a table whose columns SQL declared as ``declared``: each
    column of its :func:`stored_type`, or of its values' bytes where Parquet cannot hold
    them (``manifest.STORED_AS_BYTES``: intervals; the table is then held in memory)."""
    return check_new_schema(pa.schema([
        pa.field(f.name, STORED_AS_BYTES.get(f.type) or stored_type(f.type)) for f in declared]))


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
                # (pa.array([], src) has no converter for some types: a dictionary of dictionaries)
                _stored_as(pa.nulls(0, src), dst)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise InvalidArgument(f"column {name!r}: cannot store {src} as {dst}") from exc
    rows = 0
    for batch in batches:
        cols = []
        for name in target.names:
            try:
                column = _stored_as(batch.column(name), target.field(name).type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise InvalidArgument(f"column {name!r}: {exc}") from None
            _check_text(column, name, rows)
            cols.append(column)
        rows += batch.num_rows
        yield pa.RecordBatch.from_arrays(cols, schema=target)


def _stored_as(column: pa.Array, stored: pa.DataType) -> pa.Array:
    """``column`` as the type it is stored as (:func:`stored_type`): cast, or an
    interval's bytes as they are."""
    if column.type == stored:  # (a cast to its own type is not a no-op: it loses a list of nulls' items)
        return column
    if STORED_AS_BYTES.get(column.type) == stored:
        return column.view(stored)
    if pa.types.is_run_end_encoded(column.type):  # (Arrow's cast has no kernel from one)
        column = pc.run_end_decode(column)
    if pa.types.is_list_view(column.type) or pa.types.is_large_list_view(column.type):
        column = _as_list(column)
    return column.cast(stored)


def _as_list(column: pa.Array) -> pa.Array:
    """A list view as the list of the same values. (Arrow's cast took the offsets of
    DataFusion's list views, one per row, as a list's, which need one more.)"""
    large = pa.types.is_large_list_view(column.type)
    sizes = pc.fill_null(pc.list_value_length(column), 0).to_numpy()
    offsets = pa.array(np.concatenate([[0], np.cumsum(sizes)]), pa.int64() if large else pa.int32())
    made = pa.large_list(column.type.value_field) if large else pa.list_(column.type.value_field)
    return (pa.LargeListArray if large else pa.ListArray).from_arrays(
        offsets, pc.list_flatten(column), type=made, mask=column.is_null())


def _check_text(column: pa.Array, name: str, first_row: int) -> None:
    """Refuse a text column that is not valid UTF-8 (pyarrow's full validation), naming the
    first bad row (counted from ``first_row``): stored, its bytes read as damaged data to
    DataFusion, and the tokenizer lost the words after them (issue 34)."""
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return
    try:
        column.validate(full=True)
    except pa.ArrowInvalid as exc:
        lo, hi = 0, len(column)  # (the first bad row, by halving: only on the way to an error)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            try:
                column.slice(lo, mid - lo).validate(full=True)
                lo = mid
            except pa.ArrowInvalid:
                hi = mid
        raise InvalidArgument(f"column {name!r}: row {first_row + lo} is not valid UTF-8 text ({exc})") from None


def prefetched(items: Iterator[T], depth: int = READ_AHEAD) -> Iterator[T]:
    """``items``, produced by a thread of its own up to ``depth`` ahead: a load reads and
    decodes its source while the previous batches are compressed and written (both
    release the GIL), so it takes about the longer of the two, not their sum. An error
    of the source is raised here, where the item would have come; a consumer that stops
    early stops the producer."""
    box: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        box.put((True, item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            box.put((True, done))
        except BaseException as exc:  # (raised in the consumer's thread instead)
            box.put((False, exc))

    thread = threading.Thread(target=produce, name="fts-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            ok, item = box.get()
            if not ok:
                raise item
            if item is done:
                return
            yield item
    finally:
        stop.set()
