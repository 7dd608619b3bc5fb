"""What DataFusion's own sqllogictest runner registers for some of its files before their
records run (``datafusion/sqllogictest/src/test_context.rs``: tables of types SQL cannot
make, a catalog, a function), made here with DataFusion's Python API, so those files run
through ``db.sql`` too (tests/sql/datafusion_parity.py). Each setup takes the session
before ``connect`` and gives the session to run the file on. The files whose setups Python
cannot make are listed, with the reason, in datafusion_parity.LEFT_OUT."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Callable

import datafusion
import pyarrow as pa
import pyarrow.compute as pc
from datafusion.catalog import Catalog, Schema

Setup = Callable[[datafusion.SessionContext], datafusion.SessionContext]


def _memory_table(batch: pa.RecordBatch) -> datafusion.Table:
    """DataFusion's in-memory table of ``batch``, registered nowhere (made in a session of
    its own, which it outlives)."""
    own = datafusion.SessionContext()
    own.register_record_batches("t", [[batch]])
    return own.catalog().schema().table("t")


def _many_types(ctx: datafusion.SessionContext) -> datafusion.SessionContext:
    """``my_catalog.my_schema.table_with_many_types``: one row of seven types."""
    schema = pa.schema([
        pa.field("int32_col", pa.int32(), False), ("float64_col", pa.float64()), ("utf8_col", pa.string()),
        pa.field("large_utf8_col", pa.large_string(), False), pa.field("binary_col", pa.binary(), False),
        pa.field("large_binary_col", pa.large_binary(), False), pa.field("timestamp_nanos", pa.timestamp("ns"), False),
    ])
    batch = pa.record_batch([[1], [1.0], ["foo"], ["bar"], [b"foo"], [b"foo"], [123]], schema=schema)
    inner = Schema.memory_schema()
    inner.register_table("table_with_many_types", _memory_table(batch))
    catalog = Catalog.memory_catalog()
    catalog.register_schema("my_schema", inner)
    ctx.register_catalog_provider("my_catalog", catalog)
    return ctx


def _joins(ctx: datafusion.SessionContext) -> datafusion.SessionContext:
    """The function ``example`` (the sum of two doubles), ``test_partition_table`` (a CSV
    directory of one file of rows ``0, i, i is even``) and the table of many types."""
    ctx.register_udf(datafusion.udf(lambda a, b: pc.add(a, b), [pa.float64(), pa.float64()], pa.float64(),
                                    "immutable", "example"))
    directory = Path(tempfile.mkdtemp(prefix="slt_partitions_"))
    (directory / "partition-0.csv").write_text("".join(f"0,{i},{str(i % 2 == 0).lower()}\n" for i in range(11)))
    schema = pa.schema([pa.field("c1", pa.uint32(), False), pa.field("c2", pa.uint64(), False),
                        pa.field("c3", pa.bool_(), False)])
    ctx.register_csv("test_partition_table", str(directory), schema=schema, has_header=False)
    return _many_types(ctx)


def _avro(ctx: datafusion.SessionContext) -> datafusion.SessionContext:
    """``alltypes_plain_multi_files``: a directory of two copies of arrow-testing's
    ``alltypes_plain.avro`` (read from where the runner starts, as the file's records are)."""
    directory = Path(tempfile.mkdtemp(prefix="slt_avro_"))
    for copy in ("alltypes_plain1.avro", "alltypes_plain2.avro"):
        shutil.copy("../../testing/data/avro/alltypes_plain.avro", directory / copy)
    ctx.register_avro("alltypes_plain_multi_files", str(directory))
    return ctx


def _map(ctx: datafusion.SessionContext) -> datafusion.SessionContext:
    """``table_with_map``: empty, an Int64 and a map of Int64 to Int64."""
    entries = pa.map_(pa.field("key", pa.int64(), False), pa.field("value", pa.int64()))
    schema = pa.schema([("int_field", pa.int64()), ("map_field", entries)])
    ctx.register_record_batches("table_with_map", [[pa.RecordBatch.from_pylist([], schema=schema)]])
    return ctx


def _metadata(ctx: datafusion.SessionContext) -> datafusion.SessionContext:
    """``table_with_metadata``: metadata on each field and on the schema."""
    def field(name: str, kind: pa.DataType, about: str, nullable: bool = True) -> pa.Field:
        return pa.field(name, kind, nullable, metadata={"metadata_key": about})

    schema = pa.schema([
        field("id", pa.int32(), "the id field"), field("name", pa.string(), "the name field"),
        field("l_name", pa.string(), "the l_name field"),
        field("ts", pa.timestamp("ns"), "ts non-nullable field", False),
        field("nonnull_name", pa.string(), "the nonnull_name field", False),
    ], metadata={"metadata_key": "the entire schema"})
    batch = pa.record_batch([[1, None, 3], [None, "bar", "baz"], [None, "l_bar", "l_baz"],
                             [1599572549190855123] * 3, ["no_foo", "no_bar", "no_baz"]], schema=schema)
    ctx.register_record_batches("table_with_metadata", [[batch]])
    return ctx


def _union(ctx: datafusion.SessionContext) -> datafusion.SessionContext:
    """``union_table``: a sparse union of an Int32 (type id 3) and a string (1)."""
    union = pa.UnionArray.from_sparse(pa.array([3, 1, 3], pa.int8()),
                                      [pa.array([1, 2, 3], pa.int32()), pa.array(["foo", "bar", "baz"])],
                                      ["int", "string"], [3, 1])
    kind = pa.sparse_union([pa.field("int", pa.int32(), False), pa.field("string", pa.string(), False)], [3, 1])
    schema = pa.schema([pa.field("union_column", kind, False)])
    ctx.register_record_batches("union_table", [[pa.record_batch([union.view(kind)], schema=schema)]])
    return ctx


def _dictionary_struct(ctx: datafusion.SessionContext) -> datafusion.SessionContext:
    """``dict_struct_table`` (a dictionary of structs beside the same structs) and
    ``dict_struct_nullable`` (one with null keys)."""
    fields = [pa.field("name", pa.string(), False), pa.field("id", pa.int32(), False)]

    def structs(names: list[str], ids: list[int]) -> pa.StructArray:
        return pa.StructArray.from_arrays([pa.array(names), pa.array(ids, pa.int32())], fields=fields)

    dictionary = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 0, 1], pa.uint32()),
                                                structs(["Alice", "Bob", "Carol"], [1, 2, 3]))
    plain = structs(["Alice", "Bob", "Carol", "Alice", "Bob"], [1, 2, 3, 1, 2])
    schema = pa.schema([pa.field("dict_struct", dictionary.type, False), pa.field("plain_struct", plain.type, False)])
    ctx.register_record_batches("dict_struct_table", [[pa.record_batch([dictionary, plain], schema=schema)]])
    nullable = pa.DictionaryArray.from_arrays(pa.array([0, None, 1, None], pa.uint32()), structs(["X", "Y"], [10, 20]))
    ctx.register_record_batches("dict_struct_nullable", [[pa.record_batch([nullable], names=["ds"])]])
    return ctx


def _strict_schema(ctx: datafusion.SessionContext) -> datafusion.SessionContext:
    """``strict_schema.orders`` (the Rust runner's schema also fails on any other name it
    is asked for: a check on DataFusion's planner, not on its answers)."""
    schema = pa.schema([pa.field("order_id", pa.int32(), False)])
    inner = Schema.memory_schema()
    inner.register_table("orders", _memory_table(pa.record_batch([[1, 2]], schema=schema)))
    ctx.catalog().register_schema("strict_schema", inner)
    return ctx


# By the file's path under test_files, without .slt.
FILE_SETUPS: dict[str, Setup] = {
    "information_schema_columns": _many_types,
    "joins": _joins,
    "avro": _avro,
    "map": _map,
    "metadata": _metadata,
    "arrow_field": _metadata,
    "union_function": _union,
    "dictionary_struct": _dictionary_struct,
    "cte": _strict_schema,
    "dynamic_file": lambda ctx: ctx.enable_url_table(),
}
