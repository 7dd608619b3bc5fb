"""Tables indexed in place: a user's Parquet (or CSV) files, read where they are
(docs/design.md: "Tables indexed in place").

The database holds the index and a list of the files it covers (``FragmentMeta.file``,
with the size and modification time each had), never a copy of the rows. A row's id is
its file's first id plus its position in the file, so ids stay put while the files do.

Each query lists the source again (:func:`list_files`, a ``stat`` per file) and
reconciles the list with the committed one (:func:`reconcile`):

- a file listed and unchanged keeps its ids, and its rows stay indexed;
- a file that is new, or whose size or modification time differs, is read as new rows
  after every id given so far: the unindexed tail, which searches read with exact
  statistics until ``OPTIMIZE`` indexes it;
- a file changed or gone leaves its old ids to no fragment: a *hole*
  (``TableMeta.holes``), whose rows every plan treats as deleted.

No plan reads a row the index cannot vouch for: an answer is that of the files as they
are at the query's listing.
"""

from __future__ import annotations

import os
import stat
import urllib.parse
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Iterator, NamedTuple, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ...errors import StaleSnapshotError, StorageError
from ..coded_rows import CodedRows
from ..files.layout import is_remote
from ..files.manifest import ROWID, SOURCE_LAYOUT, CsvFormat, FragmentMeta, Manifest, TableMeta
from ..parquet.data_files import RemoteFile
from ..parquet.page_reader import (
    DecodedCache,
    OpenReaders,
    PageReader,
    fetch_units,
    open_parquet,
    pages_of,
    take_rows,
)
from ..parquet.reorder_rows import reorder_rows
from ..stores.store import Store
from .csv_files import count_rows, header_names, iter_columns, read_columns
from .object_sources import SourceStores, remote_root

# Files of a source directory: what DataFusion's listing table reads of it.
PARQUET_SUFFIX = ".parquet"
_ROWID_FIELD = pa.field(ROWID, pa.int64(), False)
# The ids of the fragments of files listed but not committed (the tail), until a commit.
TAIL_ID_PREFIX = "src-tail-"


class SourceFile(NamedTuple):
    """A file under a source: its path relative to the source, size and mtime (a tuple:
    every query makes one per file); an object store's: its key, size and ETag
    (``version``; its mtime 0)."""

    file: str
    size: int
    mtime_ns: int
    version: str | None = None


def list_files(source: str, partitions: tuple[str, ...] = (), suffix: str = PARQUET_SUFFIX,
               stores: SourceStores | None = None) -> tuple[SourceFile, ...]:
    """The files of ``source`` (:func:`list_local`), of a remote source with ``stores``
    (:mod:`.object_sources`: listed by the object store, skipped and filtered alike)."""
    if not is_remote(source):
        return list_local(source, partitions, suffix)
    if stores is None:
        raise StorageError(f"the source {source} is on an object store, which this reader was not given")
    found = [SourceFile(key, size, 0, version) for key, size, version in stores.listing(source)
             if size and key.endswith(suffix) and not any(p.startswith((".", "_")) for p in key.split("/"))]
    return _in_partitions(found, partitions)


def list_local(source: str, partitions: tuple[str, ...] = (), suffix: str = PARQUET_SUFFIX) -> tuple[SourceFile, ...]:
    """The files of ``source`` (a file, or the files named ``*suffix`` in a directory
    walked recursively, names starting with ``.`` or ``_`` skipped as Hive and Spark
    skip them, and empty files as DataFusion skips them), sorted by path;
    with ``partitions`` (Hive partition columns) only those under ``name=value``
    directories for each, in order, as DataFusion lists them. Every query lists its
    table's source: ``os.scandir`` and a ``stat`` per file (about 27 us for a directory
    of four files, 35 for eight; ``os.walk`` took 52 for four)."""
    try:
        st = os.stat(source)
        if stat.S_ISREG(st.st_mode):
            return (SourceFile(os.path.basename(source), st.st_size, st.st_mtime_ns),)
        found: list[SourceFile] = []
        _walk(source, "", suffix, found)
    except FileNotFoundError:
        return ()
    except OSError as exc:
        raise StorageError(f"cannot list the source {source}: {exc}") from exc
    return _in_partitions(found, partitions)


def _in_partitions(found: list[SourceFile], partitions: tuple[str, ...]) -> tuple[SourceFile, ...]:
    """``found`` sorted by path; with ``partitions``, only the files under ``name=value``
    directories for each, in order."""
    if partitions:
        found = [f for f in found if partition_dirs(f.file.split("/")[:-1], partitions) is not None]
    found.sort()
    return tuple(found)


def partition_dirs(dirs: Sequence[str], partitions: tuple[str, ...]) -> list[str] | None:
    """The values (as written) of ``partitions`` if ``dirs`` begin with a ``name=value``
    directory for each, in order (Hive's layout, as DataFusion lists it); else None."""
    if len(dirs) < len(partitions):
        return None
    values = []
    for directory, name in zip(dirs, partitions):
        key, eq, value = directory.partition("=")
        if key != name or not eq:
            return None
        values.append(value)
    return values


def suffix_of(meta: TableMeta) -> str:
    """The name ending of the files of ``meta``'s source."""
    return meta.csv.suffix if meta.csv is not None else PARQUET_SUFFIX


def _walk(directory: str, prefix: str, suffix: str, found: list[SourceFile]) -> None:
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith((".", "_")):
                continue
            if entry.is_dir():
                _walk(entry.path, prefix + entry.name + "/", suffix, found)
            elif entry.name.endswith(suffix):
                st = entry.stat()
                if st.st_size:  # (an empty file holds no rows: DataFusion's listing skips it too)
                    found.append(SourceFile(prefix + entry.name, st.st_size, st.st_mtime_ns))


def file_root(source: str) -> Path:
    """The directory a local source's ``FragmentMeta.file`` paths are relative to."""
    root = Path(source)
    return root.parent if root.is_file() else root


def source_file(source: str, f: SourceFile | FragmentMeta, stores: SourceStores | None) -> Path | RemoteFile:
    """A listed file of ``source``: its local path, or the object of the size and ETag
    listed (:func:`remote_file`)."""
    return file_root(source) / (f.file or "") if not is_remote(source) else remote_file(stores, source, f)


def source_paths(meta: TableMeta) -> list[str]:
    """The paths of a table indexed in place's files (URLs, on an object store), in row-id order."""
    if is_remote(meta.source or ""):
        root = remote_root(meta.source or "")
        return [root + (f.file or "") for f in meta.fragments]
    local = file_root(meta.source or "")
    return [str(local / (f.file or "")) for f in meta.fragments]


def reconcile(meta: TableMeta, files: tuple[SourceFile, ...], rows_of: "RowCounts") -> TableMeta:
    """``meta`` as the source is now (see the module docstring): the committed fragments
    whose file is listed unchanged, then one fragment per other listed file, with ids
    after ``meta.next_rowid`` in path order (ids ``src-tail-N``, until a commit)."""
    listed = {f.file: f for f in files}
    kept = tuple(
        frag for frag in meta.fragments
        if (f := listed.get(frag.file)) is not None and (f.size, f.mtime_ns, f.version) == (frag.size, frag.mtime_ns, frag.version)
    )
    known = {frag.file for frag in kept}
    next_rowid = meta.next_rowid
    tail = []
    for f in files:
        if f.file in known:
            continue
        rows = rows_of(meta, f)
        tail.append(FragmentMeta(f"{TAIL_ID_PREFIX}{len(tail)}", next_rowid, rows, layout=SOURCE_LAYOUT,
                                 file=f.file, size=f.size, mtime_ns=f.mtime_ns, version=f.version))
        next_rowid += rows
    if not tail and len(kept) == len(meta.fragments):
        return meta
    return replace(meta, fragments=kept + tuple(tail), next_rowid=next_rowid)


def adopt(manifest: Manifest, meta: TableMeta, files: tuple[SourceFile, ...], rows_of: "RowCounts") -> Manifest:
    """``manifest`` with ``meta`` as its source is listed (:func:`reconcile`), each new
    file's fragment given an id of its own: what a commit makes of a listing."""
    current = reconcile(meta, files, rows_of)
    fragments = []
    for frag in current.fragments:
        if frag.id.startswith(TAIL_ID_PREFIX):
            frag_id, manifest = manifest.file_id("src")
            frag = replace(frag, id=frag_id)
        fragments.append(frag)
    return manifest.with_table(replace(current, fragments=tuple(fragments)))


class RowCounts:
    """Rows per source file, read from its footer once per (path, size, mtime or ETag);
    a file whose columns differ from the table's is refused (its rows could not be
    searched like the others')."""

    def __init__(self, stores: SourceStores | None = None) -> None:
        self._stores = stores
        self._rows: dict[tuple[str, str, int, int, str | None], int] = {}

    def __call__(self, meta: TableMeta, f: SourceFile) -> int:
        key = (meta.source or "", f.file, f.size, f.mtime_ns, f.version)
        rows = self._rows.get(key)
        if rows is None:
            file = source_file(meta.source or "", f, self._stores)
            if isinstance(file, Path) and not file.exists():  # (an object's read checks its ETag)
                raise StaleSnapshotError(f"source file {file} went away while it was listed", "")
            partition_values(meta, f.file)  # (a file whose path gives none is refused here)
            rows = self._rows[key] = _csv_rows(meta, meta.csv, file) if meta.csv else _parquet_rows(meta, file)
        return rows


def remote_file(stores: SourceStores | None, source: str, f: SourceFile | FragmentMeta) -> RemoteFile:
    """The object of a remote source's file, of the size and ETag listed."""
    if stores is None:
        raise StorageError(f"the source {source} is on an object store, which this reader was not given")
    return stores.file(source, f.file or "", f.size or 0, f.version or "")


def open_source_parquet(file: Path | RemoteFile) -> pq.ParquetFile:
    """A source's Parquet file, local or an object (read through ranged requests)."""
    return open_parquet(file.arrow_source() if isinstance(file, RemoteFile) else file)


def _parquet_rows(meta: TableMeta, path: Path | RemoteFile) -> int:
    try:
        pf = open_source_parquet(path)
    except FileNotFoundError:
        raise StaleSnapshotError(f"source file {path} went away while it was listed", "") from None
    except (OSError, pa.ArrowException) as exc:
        raise StorageError(f"table {meta.name!r}: cannot read source file {_name(path)}: {exc}") from exc
    check_schema(meta, pf.schema_arrow, _name(path))
    return pf.metadata.num_rows


def _csv_rows(meta: TableMeta, fmt: CsvFormat, path: Path | RemoteFile) -> int:
    """A CSV file's rows, parsed whole; its columns must be the table's, in order."""
    names, schema = header_names(path, fmt), files_schema(meta)
    if names != schema.names:
        raise StorageError(f"table {meta.name!r}: source file {_name(path)} has columns {names}, not the table's "
                           f"{schema.names}; move it out of {meta.source} or index the source again")
    try:
        return count_rows(path, schema, fmt)
    except StorageError as exc:
        raise StorageError(f"table {meta.name!r}: {exc} (as the table's columns {schema})") from None


def table_schema(schema: pa.Schema) -> pa.Schema:
    """The table's schema of a source file's Arrow schema (its metadata dropped)."""
    return pa.schema([f.remove_metadata() for f in schema])


def files_schema(meta: TableMeta) -> pa.Schema:
    """The columns ``meta``'s files hold: its schema but for its partition columns."""
    if not meta.partitions:
        return meta.schema
    return pa.schema([f for f in meta.schema if f.name not in meta.partitions])


def _name(path: Path | RemoteFile) -> str:
    return path.name if isinstance(path, RemoteFile) else str(path)


def check_schema(meta: TableMeta, schema: pa.Schema, path: Path | str) -> None:
    if not table_schema(schema).equals(files_schema(meta)):
        raise StorageError(
            f"table {meta.name!r}: source file {path} has columns {table_schema(schema)}, "
            f"not the table's {files_schema(meta)}; move it out of {meta.source} or index the source again"
        )


# A partition column's value in a path that stands for null (Hive's and DataFusion's).
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def partition_values(meta: TableMeta, file: str) -> dict[str, pa.Scalar]:
    """The values of ``meta``'s partition columns for the rows of ``file`` (its path under
    the source), from its ``name=value`` directories (percent-decoded, as Hive writes them)."""
    if not meta.partitions:
        return {}
    found = partition_dirs(file.split("/")[:-1], meta.partitions)
    if found is None:
        raise StorageError(f"table {meta.name!r}: source file {file} is not under name=value directories for "
                           f"its partition columns {list(meta.partitions)}; move it out of {meta.source}")
    values = {}
    for name, written in zip(meta.partitions, found):
        raw = urllib.parse.unquote(written)
        try:
            values[name] = pa.scalar(None if raw == HIVE_NULL else raw, pa.string()).cast(meta.schema.field(name).type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise StorageError(f"table {meta.name!r}: source file {file} gives partition column {name!r} "
                               f"the value {raw!r}, not a {meta.schema.field(name).type}: {exc}") from None
    return values


class SourceFiles:
    """Reads an in-place table's rows from its files, as a store reads its fragments
    (``iter_fragment``, ``take_rows``, ``pages_of``, by fragment id): page by page where
    a file has an offset index, else by row group (see :mod:`.page_reader`). Fetches of
    stored columns read the database's copies (``FragmentMeta.copy``) instead."""

    def __init__(self, meta: TableMeta, readers: "SourceReaders", store: Store) -> None:
        self._remote = is_remote(meta.source or "")
        self._root = file_root(meta.source or "") if not self._remote else Path()
        self._meta = meta
        self._fragments = {f.id: f for f in meta.fragments}
        self._stored = frozenset(meta.stored)
        self._readers = readers
        self._store = store

    def _path(self, frag_id: str) -> tuple[Path, FragmentMeta]:
        """A file's path, and what the listing found it to be."""
        frag = self._fragments[frag_id]
        return self._root / (frag.file or ""), frag

    def _reader(self, frag_id: str) -> tuple[PageReader, FragmentMeta]:
        if self._remote:
            frag = self._fragments[frag_id]
            return self._readers.remote(remote_file(self._readers.stores, self._meta.source or "", frag)), frag
        path, frag = self._path(frag_id)
        return self._readers.reader(path, frag), frag

    def _csv_file(self, frag_id: str) -> Path | RemoteFile:
        """A CSV file, still the one listed (an object's version is checked by each read)."""
        if self._remote:
            return remote_file(self._readers.stores, self._meta.source or "", self._fragments[frag_id])
        path, frag = self._path(frag_id)
        self._readers.check(path, frag)
        return path

    def _listed(self, frag_id: str) -> tuple:
        frag = self._fragments[frag_id]
        return frag.size, frag.mtime_ns, frag.version

    def iter_fragment(
        self, frag_id: str, columns: list[str], batch_rows: int, local_range: tuple[int, int] | None = None
    ) -> Iterator[pa.RecordBatch]:
        """The file's rows in batches, ``_rowid`` (its first id plus the position) first
        where asked; with ``local_range`` (inclusive) only the pages, or row groups, that
        overlap it. Partition columns hold their file's values (from its path)."""
        frag = self._fragments[frag_id]
        partitions = self._meta.partitions
        names = [c for c in columns if c != ROWID and c not in partitions]
        if partitions and any(c in partitions for c in columns):
            values = partition_values(self._meta, frag.file or "")
            for batch in self.iter_fragment(frag_id, [ROWID, *names], batch_rows, local_range):
                yield _with_partitions(batch, columns, values)
            return
        lo, hi = local_range if local_range is not None else (0, frag.rows - 1)
        if not names:  # (ids alone: nothing to read, once the file is still the one listed)
            if not self._remote:  # (an object's version is checked by each read of it)
                self._readers.check(*self._path(frag_id))
            for start in range(lo, hi + 1, batch_rows):
                ids = np.arange(frag.row_lo + start, frag.row_lo + min(start + batch_rows, hi + 1), dtype=np.int64)
                yield pa.RecordBatch.from_arrays([pa.array(ids)], schema=pa.schema([_ROWID_FIELD]))
            return
        csv = self._meta.csv
        if csv is not None:  # (no index to seek by: from the first row until past hi)
            file = self._csv_file(frag_id)
            batches, position = iter_columns(file, files_schema(self._meta), csv, names, batch_rows, hi + 1), 0
        elif (reader := self._reader(frag_id)[0]).readable(names):
            batches, position = reader.scan(names, batch_rows, lo, hi), lo
        else:
            groups = reader.row_groups(lo, hi)
            batches = open_parquet(reader.file.arrow_source()).iter_batches(batch_size=batch_rows, columns=names,
                                                                             row_groups=groups)
            position = int(reader.group_starts[groups[0]]) if groups else lo  # (an empty file: none)
        for batch in batches:
            if ROWID in columns:
                ids = pa.array(np.arange(frag.row_lo + position, frag.row_lo + position + batch.num_rows, dtype=np.int64))
                batch = pa.RecordBatch.from_arrays([ids, *batch.columns], schema=pa.schema([_ROWID_FIELD, *batch.schema]))
            position += batch.num_rows
            yield batch

    def take_rows(self, parts: list[tuple[str, np.ndarray]], columns: list[str], order: np.ndarray | None = None
                  ) -> pa.Table:
        """As a store's ``take_rows``: the stored columns from the copies of the files
        that have one (the committed ones: those not yet committed follow them in row-id
        order), every other column and file from the files; reordered by ``order``."""
        copied = self._copied(parts)
        kept = [c for c in columns if c in self._stored] if copied else []
        read = [c for c in columns if c not in kept]
        found: dict[str, pa.ChunkedArray] = {}
        if kept:
            copies = self._store.take_rows(self._in_copies(parts[:copied]), kept)
            if copied < len(parts):
                copies = pa.concat_tables([copies, self._from_files(parts[copied:], kept)])
            found.update(zip(kept, copies.columns))
        from_paths = [c for c in read if c in self._meta.partitions]
        read = [c for c in read if c not in from_paths]
        if read:
            found.update(zip(read, self._from_files(parts, read).columns))
        for name in from_paths:  # (a file's value, once per row of it)
            found[name] = pa.chunked_array(
                [pa.repeat(partition_values(self._meta, self._fragments[f].file or "")[name], len(rows))
                 for f, rows in parts], self._meta.schema.field(name).type)
        table = pa.table({c: found[c] for c in columns})
        return table if order is None else reorder_rows(table, order)

    def take_codes(self, parts: list[tuple[str, np.ndarray]], column: str) -> list[CodedRows]:
        """As a store's ``take_codes``: :meth:`take_rows`'s values coded."""
        return [CodedRows.of(self.take_rows(parts, [column]).column(0))]

    def whole_codes(self, frag_id: str, column: str, n: int, gaps: np.ndarray | None = None) -> None:
        """None: the source's files are read as they are, nothing kept coded."""
        return None

    def fetch_units(self, parts: list[tuple[str, np.ndarray]], column: str) -> Counter[str]:
        """What :meth:`take_rows` reads of ``column``: pages or row groups of the files,
        or pages of the stored copies (nothing for a partition column: its values are in
        the files' paths)."""
        if column in self._meta.partitions:
            return Counter()
        copied = self._copied(parts) if column in self._stored else 0
        units: Counter[str] = Counter()
        if copied:
            copies = self._in_copies(parts[:copied])
            units.update({f"{unit} of stored copies": n for unit, n in self._store.fetch_units(copies, column).items()})
        if self._meta.csv is not None:  # (each file parsed whole)
            units.update(+Counter({"CSV files parsed whole": len(parts) - copied}))
        else:
            files = fetch_units([(self._reader(f)[0], rows) for f, rows in parts[copied:]], column)
            units.update({f"{unit} of source files": n for unit, n in files.items()})
        return units

    def _copied(self, parts: list[tuple[str, np.ndarray]]) -> int:
        """How many of ``parts``, from the first, are files with a copy of the stored
        columns (the committed ones: those not yet committed follow them)."""
        copied = 0
        while copied < len(parts) and self._fragments[parts[copied][0]].copy:
            copied += 1
        return copied

    def _in_copies(self, parts: list[tuple[str, np.ndarray]]) -> list[tuple[str, np.ndarray]]:
        """``parts`` of files with a copy as parts of their copies: a copy holds the rows
        of consecutive files (from ``FragmentMeta.copy_row`` on), so the rows of files
        sharing one are one part, read as a managed fragment's are."""
        merged: list[tuple[str, list[np.ndarray]]] = []
        for frag_id, rows in parts:
            frag = self._fragments[frag_id]
            shifted = rows + (frag.copy_row or 0)
            if merged and merged[-1][0] == frag.copy:
                merged[-1][1].append(shifted)
            else:
                merged.append((frag.copy or "", [shifted]))
        return [(copy, rows[0] if len(rows) == 1 else np.concatenate(rows)) for copy, rows in merged]

    def _from_files(self, parts: list[tuple[str, np.ndarray]], columns: list[str]) -> pa.Table:
        csv = self._meta.csv
        if csv is None:
            return take_rows([(self._reader(frag_id)[0], rows) for frag_id, rows in parts], columns)
        schema = files_schema(self._meta)
        return pa.concat_tables(
            [self._readers.csv_columns(self._csv_file(frag_id), self._listed(frag_id), schema, csv, columns)
             .take(pa.array(rows))
             for frag_id, rows in parts]
            or [schema.empty_table().select(columns)]
        )

    def pages_of(self, parts: list[tuple[str, np.ndarray]], column: str) -> np.ndarray | None:
        if column in self._meta.partitions or self._meta.csv is not None:
            return None
        return pages_of([(self._reader(frag_id)[0], rows) for frag_id, rows in parts], column)


class SourceReaders:
    """Page readers of source files, one per path and (size, mtime): a file rewritten gets
    a new reader, never the old one's offset index. A file must still be what the snapshot
    listed when it is opened, and when a query reads it (``os.stat``, a microsecond):
    otherwise the query runs again on a new listing (:class:`StaleSnapshotError`)."""

    def __init__(self, stores: SourceStores | None = None) -> None:
        self.stores = stores  # (of remote sources)
        self._readers = OpenReaders()  # (by path or URL and version)
        self._cache = DecodedCache()

    @staticmethod
    def check(path: Path, frag: FragmentMeta) -> os.stat_result:
        """The file's ``stat``, if it is still the one listed (else the query runs again)."""
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        if st is None or (st.st_size, st.st_mtime_ns) != (frag.size, frag.mtime_ns):
            raise StaleSnapshotError(f"source file {path} changed after this query listed it", "")
        return st

    def csv_columns(self, file: Path | RemoteFile, listed: tuple, schema: pa.Schema, fmt: CsvFormat,
                    columns: list[str]) -> pa.Table:
        """``columns`` of every row of a CSV file (checked to be the one ``listed``: its
        size, mtime and ETag), parsed once per file version and kept in the cache, as the
        row groups of Parquet files without a page index are."""
        key = ("csv", _name(file), *listed, tuple(columns))
        return self._cache.get(key, lambda: read_columns(file, schema, fmt, columns), lambda t: t.nbytes)

    def remote(self, file: RemoteFile) -> PageReader:
        """The reader of an object of a remote source, one per key and (size, ETag): no
        check here, each read of the object checks its version."""
        return self._readers.get((file.name, *file.version), lambda: PageReader(file, self._cache))

    def reader(self, path: Path, frag: FragmentMeta) -> PageReader:
        st = self.check(path, frag)
        return self._readers.get((str(path), st.st_size, st.st_mtime_ns), lambda: PageReader(path, self._cache))


def _with_partitions(batch: pa.RecordBatch, columns: list[str], values: dict[str, pa.Scalar]) -> pa.RecordBatch:
    """``batch`` (``_rowid`` first, then file columns) as ``columns``, the partition
    columns among them holding ``values``."""
    arrays, fields = [], []
    for name in columns:
        if name in values:
            arrays.append(pa.repeat(values[name], batch.num_rows))
            fields.append(pa.field(name, values[name].type))
        else:
            arrays.append(batch.column(name))
            fields.append(batch.schema.field(name))
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
