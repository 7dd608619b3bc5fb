"""Statement results as a terminal table, CSV, JSON or JSON lines, and EXPLAIN as a tree.

Results are read as an Arrow stream and written batch by batch: CSV and JSON never hold a
whole result, and the table format keeps only the rows it shows (``max_rows``) while it
counts the rest, so ``SELECT * FROM big`` neither floods the terminal nor memory.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
from collections.abc import Callable, Iterable
from typing import IO, Any

import pyarrow as pa
import pyarrow.csv as pacsv
from rich import box
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text
from rich.tree import Tree

from .common import plural, shorten

EXPLAIN_COLUMNS = ["plan_type", "plan"]


# -- the terminal table --------------------------------------------------------------------
def _cell(value: Any) -> Text:
    """One value on one line: NULL dimmed, floats exact (shortest round-trip repr), long
    text cut with an ellipsis."""
    if value is None:
        return Text("NULL", style="dim")
    if isinstance(value, float):
        return Text(repr(value))
    if isinstance(value, bool):
        return Text("true" if value else "false")
    if isinstance(value, (bytes, bytearray)):
        return Text(shorten("\\x" + bytes(value).hex()))
    return Text(shorten(value), no_wrap=True, overflow="ellipsis")


def _numeric(dtype: pa.DataType) -> bool:
    return pa.types.is_integer(dtype) or pa.types.is_floating(dtype) or pa.types.is_decimal(dtype)


def write_table(console: Console, batches: Iterable[pa.RecordBatch], schema: pa.Schema,
                max_rows: int) -> int:
    """A rich table of the first ``max_rows`` rows (0: all): a header of names and Arrow
    types, a row count; returns the row count."""
    table = RichTable(box=box.SIMPLE_HEAD, header_style="bold")
    for field in schema:
        header = Text.assemble((field.name, "bold"), "\n", (str(field.type), "dim"))
        table.add_column(header, justify="right" if _numeric(field.type) else "left")
    rows = 0
    for batch in batches:
        room = batch.num_rows if not max_rows else max(0, min(batch.num_rows, max_rows - rows))
        for row in batch.slice(0, room).to_pylist():
            table.add_row(*(_cell(row[name]) for name in schema.names))
        rows += batch.num_rows
    count = plural(rows, "row")
    if max_rows and rows > max_rows:
        count += f", first {max_rows:,} shown (--max-rows)"
    console.print(table)
    # Under the table, not its caption: a caption wraps at the table's width.
    console.print(Text(count, style="dim"))
    return rows


# -- CSV -----------------------------------------------------------------------------------
def _json_text(value: Any) -> Any:
    """A value JSON can hold: dates and times in ISO 8601, decimals as strings (exact),
    bytes in base64, non-finite floats as strings (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, (dt.date, dt.time, dt.datetime)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {k: _json_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_text(v) for v in value]
    return value


def _dumps(value: Any) -> str:
    return json.dumps(_json_text(value), ensure_ascii=False, allow_nan=False)


def _csv_ready(batch: pa.RecordBatch) -> pa.RecordBatch:
    """The batch in types Arrow's CSV writer takes: views as plain strings and binaries,
    nested values (lists, structs, maps) as JSON text."""
    columns = []
    for column in batch.columns:
        dtype = column.type
        if pa.types.is_string_view(dtype):
            column = column.cast(pa.string())
        elif pa.types.is_binary_view(dtype):
            column = column.cast(pa.binary())
        elif pa.types.is_nested(dtype):
            column = pa.array([None if v is None else _dumps(v) for v in column.to_pylist()],
                              pa.string())
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)


def write_csv(stream: IO[bytes], batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> int:
    """CSV with a header line (also for no rows), written batch by batch; returns the
    row count."""
    rows = 0
    writer = None
    for batch in batches:
        ready = _csv_ready(batch)
        if writer is None:
            writer = pacsv.CSVWriter(stream, ready.schema)
        writer.write_batch(ready)
        rows += batch.num_rows
    if writer is None and len(schema):
        empty = pa.record_batch([pa.array([], f.type) for f in schema], schema=schema)
        writer = pacsv.CSVWriter(stream, _csv_ready(empty).schema)
    if writer is not None:
        writer.close()
    stream.flush()
    return rows


# -- JSON ----------------------------------------------------------------------------------
def write_json(stream: IO[bytes], batches: Iterable[pa.RecordBatch], lines: bool) -> int:
    """A JSON array of row objects (or, with ``lines``, one object per line), written batch
    by batch; returns the row count."""
    rows = 0
    if not lines:
        stream.write(b"[")
    for batch in batches:
        for row in batch.to_pylist():
            text = _dumps(row)
            if lines:
                stream.write(text.encode() + b"\n")
            else:
                stream.write((",\n " if rows else "").encode() + text.encode())
            rows += 1
    if not lines:
        stream.write(b"]\n")
    stream.flush()
    return rows


Writer = Callable[[IO[bytes], Iterable[pa.RecordBatch], pa.Schema], int]
STREAM_WRITERS: dict[str, Writer] = {
    "csv": write_csv,
    "json": lambda stream, batches, schema: write_json(stream, batches, lines=False),
    "jsonl": lambda stream, batches, schema: write_json(stream, batches, lines=True),
}


# -- EXPLAIN -------------------------------------------------------------------------------
def _operator(line: str) -> Text:
    """``Name: details`` with the operator's name stressed."""
    name, sep, details = line.partition(": ")
    if not sep or " " in name:
        return Text(line, style="bold cyan")
    return Text.assemble((name, "bold cyan"), (": " + details, ""))


def _add_indented(parent: Tree, text: str) -> None:
    """Add a plan printed as indented lines (two spaces a level, as both this package and
    DataFusion print plans) under ``parent``, each line a child of the last line above it
    with less indentation."""
    stack: list[tuple[int, Tree]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        node = (stack[-1][1] if stack else parent).add(_operator(line.strip()))
        stack.append((indent, node))


def explain_tree(result: pa.Table, title: str = "EXPLAIN") -> Tree:
    """EXPLAIN's ``(plan_type, plan)`` rows as one tree: a branch per plan (the logical
    search, the search operators, DataFusion's logical and physical plans), operators
    nested as they run."""
    tree = Tree(Text(title, style="bold"), guide_style="dim")
    for kind, plan in zip(result.column(0).to_pylist(), result.column(1).to_pylist()):
        branch = tree.add(Text(str(kind).replace("_", " "), style="bold magenta"))
        _add_indented(branch, plan or "")
    return tree
