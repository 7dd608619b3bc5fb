"""``datafusion-fts import``: a Parquet, CSV or JSON-lines file into a managed table.

The file is streamed: pyarrow reads it a block (CSV, JSON lines) or a batch (Parquet) at
a time, and the batches flow through a RecordBatchReader into ``create_table`` or
``Table.bulk_insert``, which write fragments as the batches arrive. So a file larger
than memory imports in bounded memory, and the import is one commit: a bad row in the
last block leaves the table as it was.

Types: appending to a table reads the file with the table's column types. A new table
takes the types pyarrow infers from the first block (``--block-size`` bytes), as pyarrow
itself does when streaming.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.dataset as pads
import pyarrow.json as pajson
from rich.console import Console
from rich.filesize import decimal

from ..database import Database, connect
from ..errors import InvalidArgument
from ..ingest import READ_BATCH_ROWS, check_new_schema
from .common import column_list, open_database, plural, progress, stderr_console
from .manage import build_indexes, optimize_table, print_index_summary
from .options import BLOCK_BYTES, COMPRESSIONS


@dataclass
class Source:
    """An open file: its schema, its batches, and how far reading has got (in ``unit``,
    of ``total``), for the progress bar."""

    schema: pa.Schema
    batches: Iterator[pa.RecordBatch]
    unit: Literal["rows", "bytes"]
    total: int
    done: Callable[[], int]


class _CountingFile(io.RawIOBase):
    """A binary file that counts the bytes pyarrow has read from it. pyarrow reads on its
    own threads but through Python, under the GIL, so the count is safe to poll."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._file = open(path, "rb")  # noqa: SIM115 (closed with this object)
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = self._file.readinto(buffer)
        self.bytes_read += count
        return count

    def close(self) -> None:
        self._file.close()
        super().close()


def _text_stream(path: Path) -> tuple[_CountingFile, pa.NativeFile]:
    """The file as pyarrow reads it (decompressed when its suffix says so), and the raw
    file whose bytes count toward the progress bar."""
    raw = _CountingFile(path)
    stream: pa.NativeFile = pa.PythonFile(raw, mode="r")
    codec = COMPRESSIONS.get(path.suffix.lower())
    if codec is not None:
        stream = pa.CompressedInputStream(stream, codec)
    return raw, stream


def _read_errors(path: Path, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Batches of ``batches``; a read error (a malformed row, a type that does not fit)
    becomes an InvalidArgument naming the file, raised inside the write, which then
    commits nothing."""
    try:
        yield from batches
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
        raise InvalidArgument(f"cannot import {path}: {exc}") from None


def open_source(
    path: Path, fmt: str, target: pa.Schema | None, block_size: int = BLOCK_BYTES,
    delimiter: str = ",",
) -> Source:
    """Open ``path`` for streaming. ``target`` (an existing table's schema) fixes the
    column types the file is read with."""
    try:
        if fmt == "parquet":
            dataset = pads.dataset(path, format="parquet")
            rows = [0]

            def counted() -> Iterator[pa.RecordBatch]:
                for batch in dataset.to_batches(batch_size=READ_BATCH_ROWS):
                    rows[0] += batch.num_rows
                    yield batch

            return Source(dataset.schema, _read_errors(path, counted()), "rows",
                          dataset.count_rows(), lambda: rows[0])
        raw, stream = _text_stream(path)
        total = path.stat().st_size
        reader: Any
        if fmt == "csv":
            convert = pacsv.ConvertOptions(
                column_types={f.name: f.type for f in target} if target is not None else None
            )
            reader = pacsv.open_csv(
                stream,
                read_options=pacsv.ReadOptions(block_size=block_size),
                parse_options=pacsv.ParseOptions(delimiter=delimiter),
                convert_options=convert,
            )
        else:
            parse = pajson.ParseOptions(
                explicit_schema=target, unexpected_field_behavior="error"
            ) if target is not None else pajson.ParseOptions()
            reader = pajson.open_json(
                stream, read_options=pajson.ReadOptions(block_size=block_size), parse_options=parse
            )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
        raise InvalidArgument(f"cannot read {path} as {fmt}: {exc}") from None
    return Source(reader.schema, _read_errors(path, iter(reader)), "bytes", total,
                  lambda: raw.bytes_read)


@dataclass(frozen=True)
class Imported:
    rows: int
    batches: int
    seconds: float


def check_index_request(schema: pa.Schema, columns: list[str], options: dict[str, Any]) -> None:
    """Refuse a bad ``--index`` before anything is written, with the engine's own checks
    (column exists and is text, options valid), run on an empty in-memory table of the
    file's schema."""
    if not columns:
        return
    probe = connect().create_table("probe", schema=check_new_schema(schema))
    for column in columns:
        probe.index_meta(column, options, None)


def import_file(
    db: Database, table: str, path: Path, fmt: str, on_progress: Callable[[int, int], None],
    block_size: int = BLOCK_BYTES, delimiter: str = ",",
    before_write: Callable[[pa.Schema], None] | None = None,
) -> Imported:
    """Stream ``path`` into ``table`` (created when missing); ``on_progress(done, total)``
    after each batch read, in the source's unit; ``before_write(schema)`` once the file is
    open, before anything is written (a check that may raise)."""
    exists = table in db.table_names()
    target = db.table(table).schema if exists else None
    source = open_source(path, fmt, target, block_size, delimiter)
    if before_write is not None:
        before_write(target if target is not None else source.schema)
    batches = [0]

    def reported() -> Iterator[pa.RecordBatch]:
        for batch in source.batches:
            batches[0] += 1
            on_progress(source.done(), source.total)
            yield batch

    reader = pa.RecordBatchReader.from_batches(source.schema, reported())
    start = time.perf_counter()
    if exists:
        rows = db.table(table).bulk_insert(reader)
    else:
        rows = db.create_table(table, reader).count_rows()
    return Imported(rows, batches[0], time.perf_counter() - start)


def run_import(
    db_path: Path, table: str, file: Path, fmt: str, index_columns: str | None, block_size: int,
    delimiter: str, show_progress: bool | None, index_settings: dict[str, Any],
) -> None:
    """``import``: stream the file in, then bring the table's indexes up to date and build
    the new ones asked for."""
    db = open_database(db_path, create=True)
    console, enabled = stderr_console(show_progress)
    existing_indexes = sorted(db.table(table).snapshot().meta.fulltext) if table in db.table_names() else []
    new = [c for c in column_list(index_columns) or [] if c not in existing_indexes]
    source_size = sum(p.stat().st_size for p in file.rglob("*") if p.is_file()) if file.is_dir() else file.stat().st_size
    with progress(console, "bytes" if fmt != "parquet" else "rows", enabled) as bars:
        task = bars.add_task(f"importing {file.name}", total=None)
        done = import_file(
            db, table, file, fmt, lambda now, total: bars.update(task, completed=now, total=total),
            block_size, delimiter,
            lambda schema: check_index_request(schema, new, index_settings),
        )
        bars.update(task, completed=bars.tasks[0].total or 0)
    out = Console()
    total = db.table(table).count_rows()
    out.print(
        f"imported [bold]{plural(done.rows, 'row')}[/] into [bold]{table}[/]: "
        f"{decimal(source_size)}, {plural(done.batches, 'block')}, {done.seconds:.2f} s "
        f"({done.rows / max(done.seconds, 1e-9):,.0f}"
        f" rows/s)" + (f"; {total:,} rows now" if total != done.rows else "")
    )
    start = time.perf_counter()
    handle = db.table(table)
    if existing_indexes:
        optimize_table(handle, console, enabled)
    if new:
        build_indexes(handle, new, index_settings, console, enabled)
    if existing_indexes or new:
        print_index_summary(db, table, out, time.perf_counter() - start)
