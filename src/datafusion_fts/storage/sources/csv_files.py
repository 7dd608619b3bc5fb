"""Reading the CSV files of a table indexed in place (docs/design.md: "Tables indexed in
place"), as DataFusion's CSV reader reads them for the table's view: the same columns and
types (the table's), the same quoting (``"``, doubled inside a value; newlines allowed in
a quoted value) and an empty value read as null. A CSV file has no index to seek by: a
fetch of some of its rows parses the whole file, which is what a table's stored columns
(``WITH (store = ...)``) are for. A file is a local path or an object of an object
store (:class:`.RemoteFile`: its listed version, read through ranged requests)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pyarrow.csv as pcsv

from ...errors import StorageError
from ..files.manifest import CsvFormat
from ..parquet.data_files import RemoteFile

CsvFile = Path | RemoteFile

# Bytes a streaming read parses at a time (pyarrow's default is 1 MiB).
_BLOCK_BYTES = 1 << 22


def _parse(fmt: CsvFormat) -> pcsv.ParseOptions:
    return pcsv.ParseOptions(delimiter=fmt.delimiter, quote_char='"', double_quote=True, newlines_in_values=True)


def _options(fmt: CsvFormat, schema: pa.Schema, columns: list[str]) -> tuple:
    read = pcsv.ReadOptions(column_names=schema.names, skip_rows=1 if fmt.header else 0, block_size=_BLOCK_BYTES)
    convert = pcsv.ConvertOptions(
        column_types={f.name: f.type for f in schema}, include_columns=columns, null_values=[""],
        strings_can_be_null=True, quoted_strings_can_be_null=True,
    )
    return read, _parse(fmt), convert


def _opened(file: CsvFile) -> str | pa.NativeFile:
    """What pyarrow's CSV reader reads ``file`` from (an object: read as it goes)."""
    return file.arrow_source() if isinstance(file, RemoteFile) else str(file)


def _failed(file: CsvFile, exc: Exception) -> StorageError:
    return StorageError(f"cannot read the CSV file {file.name if isinstance(file, RemoteFile) else file}: {exc}")


def header_names(path: CsvFile, fmt: CsvFormat) -> list[str]:
    """The column names of a CSV file: its first line's, or DataFusion's ``column_1``,
    ``column_2``, ... for a file without a header."""
    read = pcsv.ReadOptions(autogenerate_column_names=not fmt.header, block_size=1 << 20)
    convert = pcsv.ConvertOptions(column_types={}, strings_can_be_null=True)
    try:
        with pcsv.open_csv(_opened(path), read_options=read, parse_options=_parse(fmt), convert_options=convert) as reader:
            names = reader.schema.names
    except (OSError, pa.ArrowException) as exc:
        raise _failed(path, exc) from exc
    return names if fmt.header else [f"column_{i + 1}" for i in range(len(names))]


def infer_schema(path: CsvFile, fmt: CsvFormat) -> pa.Schema:
    """The schema of a CSV file's columns, inferred by pyarrow from its values (an empty
    value null): the schema a table indexed in place by path takes."""
    names = header_names(path, fmt)
    read = pcsv.ReadOptions(column_names=names, skip_rows=1 if fmt.header else 0)
    convert = pcsv.ConvertOptions(null_values=[""], strings_can_be_null=True)
    try:
        table = pcsv.read_csv(_opened(path), read_options=read, parse_options=_parse(fmt), convert_options=convert)
    except (OSError, pa.ArrowException) as exc:
        raise _failed(path, exc) from exc
    return pa.schema([pa.field(f.name, pa.string() if pa.types.is_null(f.type) else f.type) for f in table.schema])


def count_rows(path: CsvFile, schema: pa.Schema, fmt: CsvFormat) -> int:
    """The rows of a CSV file, parsed whole (once per file version: see ``RowCounts``);
    a file whose values do not parse as the table's types is refused here."""
    return read_columns(path, schema, fmt, schema.names).num_rows


def read_columns(path: CsvFile, schema: pa.Schema, fmt: CsvFormat, columns: list[str]) -> pa.Table:
    """``columns`` of every row of a CSV file of the table's ``schema``."""
    read, parse, convert = _options(fmt, schema, columns)
    try:
        table = pcsv.read_csv(_opened(path), read_options=read, parse_options=parse, convert_options=convert)
    except (OSError, pa.ArrowException) as exc:
        raise _failed(path, exc) from exc
    return table.select(columns)


def iter_columns(path: CsvFile, schema: pa.Schema, fmt: CsvFormat, columns: list[str],
                 batch_rows: int, stop: int) -> Iterator[pa.RecordBatch]:
    """``columns`` of a CSV file's rows in batches of at most ``batch_rows``, streamed,
    until row ``stop`` (exclusive) is passed."""
    read, parse, convert = _options(fmt, schema, columns)
    position = 0
    try:
        with pcsv.open_csv(_opened(path), read_options=read, parse_options=parse, convert_options=convert) as reader:
            for block in reader:
                block = block.select(columns)
                for start in range(0, block.num_rows, batch_rows):
                    yield block.slice(start, batch_rows)
                position += block.num_rows
                if position >= stop:
                    return
    except (OSError, pa.ArrowException) as exc:
        raise _failed(path, exc) from exc
