"""What a database keeps for its tables indexed in place (docs/design.md: "Tables indexed
in place"): each source as last listed and reconciled with its committed table, readers
of its files, the row counts of files it has read, and the copies of stored columns.

:mod:`.source_files` says what a listing makes of a table (``reconcile``, ``adopt``) and
reads the files; this holds that state per database, and writes the copies. The
database's writer (catalog/writer.py) commits what it returns, its table state shows the
tables to DataFusion.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Sequence

import pyarrow as pa

from ...errors import InvalidArgument
from ..files.layout import is_remote
from ..files.manifest import ROWID, CsvFormat, Manifest, TableMeta
from ..stores.store import SCAN_BATCH_ROWS, Store
from .csv_files import infer_schema
from .object_sources import SourceStores
from .source_files import (
    PARQUET_SUFFIX,
    RowCounts,
    SourceFile,
    SourceFiles,
    SourceReaders,
    adopt,
    list_files,
    open_source_parquet,
    reconcile,
    source_file,
    suffix_of,
    table_schema,
)


class InPlaceTables:
    """The tables indexed in place of one database, as their sources are now."""

    def __init__(self, store: Store, stores: SourceStores) -> None:
        self._store = store
        self.stores = stores  # (the object stores of remote sources)
        self._readers = SourceReaders(stores)
        self._row_counts = RowCounts(stores)
        # Per table: the committed table, its source as last listed, the table as the
        # source is (reconcile), and when it was listed (time.monotonic()).
        self._listed: dict[str, tuple[TableMeta, tuple[SourceFile, ...], TableMeta, float]] = {}

    def files(self, meta: TableMeta) -> SourceFiles:
        """The rows of ``meta``'s files, and of its copies of stored columns."""
        return SourceFiles(meta, self._readers, self._store)

    def reconciled(self, meta: TableMeta, reuse_seconds: float = 0.0) -> TableMeta:
        """``meta`` as its source's files are now, listed again unless the last listing
        is less than ``reuse_seconds`` old (``fts.source_refresh_seconds``): the same
        object while neither the committed table nor the listing changed, so are the
        snapshot made of it and its memos."""
        assert meta.source is not None
        now = time.monotonic()
        last = self._listed.get(meta.name)
        if last is not None and last[0] is meta and now - last[3] < reuse_seconds:
            return last[2]
        files = list_files(meta.source, meta.partitions, suffix_of(meta), self.stores)
        if last is not None and last[0] is meta and last[1] == files:
            self._listed[meta.name] = (*last[:3], now)
            return last[2]
        current = reconcile(meta, files, self._row_counts)
        self._listed[meta.name] = (meta, files, current, now)
        return current

    def forget(self, name: str | None = None) -> None:
        """Drop the listing of table ``name`` (of every table: None), so the next query
        lists its files again: the table is no more, or a file changed under a listing."""
        if name is None:
            self._listed.clear()
        else:
            self._listed.pop(name, None)

    def adopted(self, manifest: Manifest, meta: TableMeta) -> Manifest:
        """``manifest`` with ``meta`` committed as its source is listed now (``adopt``)."""
        return adopt(manifest, meta, list_files(meta.source or "", meta.partitions, suffix_of(meta), self.stores),
                     self._row_counts)

    def with_copies(self, manifest: Manifest, name: str, max_rows: int) -> Manifest:
        """``manifest`` with a copy of the stored columns of each file of the table
        ``name`` that has none, written but not committed: fragments of ours, each holding
        consecutive files' rows with their ids (up to ``max_rows``, or one larger file),
        so a fetch reads about as many files as a managed table's would (with a copy per
        file, top-10 rows of 8 files took 1.15-1.37x a managed table's)."""
        meta = manifest.tables[name]
        if not meta.stored:
            return manifest
        files = self.files(meta)
        file_schema = pa.schema([pa.field(ROWID, pa.int64(), False), *[meta.schema.field(c) for c in meta.stored]])
        runs: list[list[int]] = []  # runs of the fragments without a copy, one copy each
        run_rows = 0
        for i, frag in enumerate(meta.fragments):
            if frag.copy is not None:
                continue
            if not runs or runs[-1][-1] != i - 1 or run_rows + frag.rows > max_rows:
                runs.append([i])
                run_rows = 0
            else:
                runs[-1].append(i)
            run_rows += frag.rows
        fragments = list(meta.fragments)
        for run in runs:
            copy_id, manifest = manifest.file_id("frag")
            batches = (b for i in run for b in files.iter_fragment(fragments[i].id, file_schema.names, SCAN_BATCH_ROWS))
            _, crcs = self._store.write_fragment(copy_id, file_schema, batches)
            at = 0
            for i in run:
                fragments[i] = replace(fragments[i], copy=copy_id, copy_row=at, copy_footer_crc=crcs.footer)
                at += fragments[i].rows
        return manifest.with_table(replace(meta, fragments=tuple(fragments)))


def source_schema(path: str, partitions: tuple[str, ...] = (), csv: CsvFormat | None = None,
                  known: pa.Schema | None = None, stores: SourceStores | None = None) -> pa.Schema:
    """The table schema of the Parquet files under ``path`` (its first file's, of those
    under its ``partitions``' directories; ``stores`` reads a remote source's), which a
    table indexed in place takes; of CSV files with ``csv``: ``known`` (a session table's
    columns, its partition columns dropped) or as pyarrow infers it from the first file's
    values."""
    suffix = PARQUET_SUFFIX if csv is None else csv.suffix
    files = list_files(path, partitions, suffix, stores)
    if not files:
        kind = "Parquet" if csv is None else "CSV"
        raise InvalidArgument(f"no {kind} files (*{suffix}) under {path!r} to index in place")
    if known is not None:
        schema = pa.schema([f for f in known if f.name not in partitions])
    else:
        first = source_file(path, files[0], stores)
        if csv is not None:
            schema = infer_schema(first, csv)
        else:
            schema = table_schema(open_source_parquet(first).schema_arrow)
    if ROWID in schema.names:
        raise InvalidArgument(f"{ROWID!r} is reserved for row ids; the files under {path!r} have such a column")
    return schema


def csv_format(path: str, csv: CsvFormat | bool | None, stores: SourceStores | None = None) -> CsvFormat | None:
    """The CSV format of the files of ``path`` (None: Parquet files; ``stores`` lists a
    remote source's): ``csv`` as given (True: commas and a header), or, when not said,
    commas and a header if ``path`` is a ``.csv`` file or a directory with ``.csv`` files
    and no Parquet file (tabs likewise for ``.tsv``)."""
    if csv is None:
        directory = path.endswith("/") if is_remote(path) else os.path.isdir(path)
        found = [fmt for fmt in _KNOWN_CSV if (list_files(path, (), fmt.suffix, stores) if directory
                                               else path.endswith(fmt.suffix))]
        csv = found[0] if found and not (directory and list_files(path, (), PARQUET_SUFFIX, stores)) else False
    if csv is True:
        return CsvFormat()
    if csv is False:
        return None
    if not isinstance(csv, CsvFormat):
        raise InvalidArgument(f"csv must be a CsvFormat or a bool, got {csv!r}")
    if not (isinstance(csv.delimiter, str) and len(csv.delimiter) == 1 and csv.delimiter not in '"\r\n'):
        raise InvalidArgument(f"a CSV delimiter is one character, not a quote or a line break; got {csv.delimiter!r}")
    if not isinstance(csv.header, bool):
        raise InvalidArgument(f"a CSV format's header is True or False, got {csv.header!r}")
    if not (isinstance(csv.suffix, str) and csv.suffix and "/" not in csv.suffix):
        raise InvalidArgument(f"a CSV format's suffix ends file names (such as '.tsv'), got {csv.suffix!r}")
    return csv


# The CSV formats a source is taken for by its files' names, when not said.
_KNOWN_CSV = (CsvFormat(), CsvFormat("\t", True, ".tsv"))


def with_partitions(name: str, schema: pa.Schema, session: pa.Schema, partitions: tuple[str, ...]) -> pa.Schema:
    """The schema of the session table ``name``, whose files hold ``schema``, with its
    Hive ``partitions`` (``table_partition_cols``: each file's values in its path) last."""
    for column in partitions:
        ftype = session.field(column).type
        if not (pa.types.is_string(ftype) or pa.types.is_large_string(ftype) or pa.types.is_integer(ftype)
                or pa.types.is_date32(ftype)):
            raise InvalidArgument(f"table {name!r}: partition column {column!r} is {ftype}; tables indexed in place "
                                  "take partition columns of strings, integers and dates")
    return pa.schema([*schema, *(session.field(c) for c in partitions)])


def stored_columns(store: Sequence[str] | None, meta_schema: pa.Schema,
                   partitions: tuple[str, ...] = ()) -> tuple[str, ...] | None:
    """The columns a table indexed in place keeps a copy of (None: not said)."""
    if store is None:
        return None
    if isinstance(store, str) or not all(isinstance(c, str) for c in store):
        raise InvalidArgument(f"store must be a list of column names, got {store!r}")
    missing = [c for c in store if c not in meta_schema.names]
    if missing:
        raise InvalidArgument(f"store names columns {missing} the files do not have; columns: {meta_schema.names}")
    if any(c in partitions for c in store):
        raise InvalidArgument(f"store names partition columns {[c for c in store if c in partitions]}: their "
                              "values are in the files' paths, read without a copy")
    return tuple(dict.fromkeys(store))

