"""The session's default schema as a DataFusion ``SchemaProvider`` of ours, so a managed
table is resolved when a statement is planned (docs/design.md: "Managed tables in
DataFusion").

Re-registering a managed table after each write (deregister, then register) left a
moment when the name resolved to nothing: SQL in another thread failed with "table not
found". Here a write swaps one entry of a dict, and a statement planned at any moment
finds either the previous or the new version. The user's own tables (``register_*``,
``CREATE TABLE``/``VIEW``) are kept as DataFusion hands them over, beside the managed ones.

DataFusion calls :meth:`SessionSchema.table` from inside its runtime, where nothing may
block on it (building a DataFrame there panics): what it returns is built beforehand, at
the write.
"""

from __future__ import annotations

import os
import posixpath
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datafusion
import pyarrow as pa
import pyarrow.parquet as pq
from datafusion.catalog import CatalogProvider, SchemaProvider

from ..errors import CatalogError, InvalidArgument, StorageError
from ..storage.files.manifest import CsvFormat
from ..storage.parquet.page_reader import open_parquet
from ..storage.sources.csv_files import count_rows, header_names
from ..storage.sources.object_sources import SourceStores, remote_root
from ..storage.sources.source_files import PARQUET_SUFFIX, list_files, partition_dirs

DEFAULT_CATALOG = "datafusion"
DEFAULT_SCHEMA = "public"
# The prefix of the tables the engine registers itself (a managed table's parts, db.sql's
# temporary results): refused for users' tables.
RESERVED_PREFIX = "__fts_"


def rows_name(table: str) -> str:
    """The name under which a managed table's rows resolve with their ``_rowid``, for the
    engine's own statements (prefilters, joins back to a search, deletes, updates): the
    table's own name resolves to them without it (DESIGN §3.1: ``_rowid`` is hidden)."""
    return f"{RESERVED_PREFIX}rows_{table}"


def quote(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


@dataclass
class Recorded:
    """What DataFusion did to the schema under the name ``name`` while one statement that
    creates that table ran (:meth:`SessionSchema.recording`)."""

    name: str
    created: Any = None  # the table DataFusion registered (its CREATE TABLE's MemTable)
    replaced: tuple[Any, Any] | None = None  # the managed entries it deregistered to replace


class Names(list):
    """Names as DataFusion reads them and as its Python API hands them out. DataFusion's
    Rust side (datafusion 55) reads a provider's ``table_names`` as an attribute holding a
    sequence, without calling it: a method there made ``SHOW TABLES`` and
    ``information_schema.tables`` list none of the session's tables and printed "Unable to
    get table_names" on stderr. Python code calls it, for a set."""

    def __call__(self) -> set[str]:
        return set(self)


class SessionSchema(SchemaProvider):
    """The default schema: the user's tables, and each managed table's current version."""

    @property
    def owner_name(self) -> str:
        """None, as DataFusion's own schemas have: it reads this attribute (for
        information_schema.schemata's schema_owner) and takes a missing one as none; the
        base class's method showed as "<bound method ...>", a None as 'None'."""
        raise AttributeError("owner_name")

    def __init__(self, tables: dict[str, Any]) -> None:
        self._tables = dict(tables)  # the user's (and db.sql's temporary results)
        # Per managed table: its current version, and what to check before DataFusion
        # reads it (in one entry, swapped with one assignment).
        self._managed: dict[str, tuple[Any, Callable[[], None] | None]] = {}
        self._lock = threading.Lock()  # (registering checks, then adds)
        self._recording: Recorded | None = None
        self._creating = threading.Lock()  # (one recorded statement at a time)

    @property
    def table_names(self) -> "Names":
        """The users' and the managed tables (not the engine's own ``__fts_`` ones)."""
        return Names(sorted(n for n in (*self._tables, *self._managed) if not n.startswith(RESERVED_PREFIX)))

    def names(self) -> set[str]:
        """(What ``ctx.catalog().schema().names()`` answers for DataFusion's own schemas.)"""
        return self.table_names()

    def table(self, name: str) -> Any:
        """What ``name`` resolves to; a managed table's files checked first (a damaged
        one raises a StorageError, which DataFusion hands back to the statement's caller)."""
        found = self._managed.get(name)
        if found is None:
            return self._tables.get(name)
        table, check = found
        if check is not None:
            check()
        return table

    def table_exist(self, name: str) -> bool:
        return name in self._managed or name in self._tables

    def register_table(self, name: str, table: Any) -> None:
        with self._lock:
            if self.table_exist(name):
                raise CatalogError(f"a table named {name!r} already exists")
            self._tables[name] = table
            if self._recording is not None and name == self._recording.name:
                self._recording.created = table

    def deregister_table(self, name: str, cascade: bool = True) -> None:
        """Forget the user's table ``name``. A managed table leaves only when the statement
        being recorded replaces it (CREATE OR REPLACE TABLE): a DROP VIEW, which DataFusion
        would run on the view a managed table is to it, is refused."""
        with self._lock:
            if name not in self._managed:
                self._tables.pop(name, None)
                return
            recording = self._recording
            if recording is None or name != recording.name:
                raise CatalogError(f"{name!r} is a table of the database: DROP TABLE {name} drops it")
            recording.replaced = (self._managed.pop(name), self._managed.pop(rows_name(name), None))

    @contextmanager
    def recording(self, name: str) -> Iterator[Recorded]:
        """Note what a statement creating table ``name`` registers (and the managed table it
        replaces) while it runs; undone if the statement raises."""
        with self._creating:
            self._recording = recorded = Recorded(name)
            try:
                yield recorded
            except BaseException:
                self.undo(recorded)
                raise
            finally:
                self._recording = None

    def undo(self, recorded: Recorded) -> None:
        """Put back what a recorded statement changed."""
        with self._lock:
            if recorded.created is not None and self._tables.get(recorded.name) is recorded.created:
                del self._tables[recorded.name]
            if recorded.replaced is not None:
                table, rows = recorded.replaced
                self._managed[recorded.name] = table
                if rows is not None:
                    self._managed[rows_name(recorded.name)] = rows

    def take_created(self, recorded: Recorded) -> None:
        """The table a recorded statement created becomes a managed one: DataFusion's own
        leaves (its rows were read; the managed table's views take the name)."""
        with self._lock:
            if self._tables.get(recorded.name) is recorded.created:
                del self._tables[recorded.name]

    def set_managed(self, name: str, table: Any, check: Callable[[], None] | None = None) -> None:
        """Make ``table`` what ``name`` resolves to (one assignment: no moment without it),
        ``check`` run each time a statement names it (storage/stores/store.py: ``check_fragments``)."""
        self._managed[name] = (table, check)

    def drop_managed(self, name: str) -> None:
        self._managed.pop(name, None)


class _SessionCatalog(CatalogProvider):
    """The default catalog: the session schema, and the others (``CREATE SCHEMA`` adds them)."""

    def __init__(self, schemas: dict[str, Any]) -> None:
        self._schemas = schemas

    def schema_names(self) -> set[str]:
        return set(self._schemas)

    def schema(self, name: str) -> Any:
        return self._schemas.get(name)

    def register_schema(self, name: str, schema: Any) -> None:
        self._schemas[name] = schema

    def deregister_schema(self, name: str, cascade: bool = True) -> Any:
        """The schema ``DROP SCHEMA`` removes (DataFusion reads None as "no such schema");
        one holding tables only with CASCADE, as DataFusion's own catalog does."""
        schema = self._schemas.get(name)
        if schema is None or name == DEFAULT_SCHEMA:
            return None
        tables = sorted(schema.table_names)  # (a RawSchema: a property; our own: a Names list)
        if tables and not cascade:
            raise CatalogError(f"Cannot drop schema {name} because other tables depend on it: {', '.join(tables)}")
        return self._schemas.pop(name)


def attach(ctx: datafusion.SessionContext) -> SessionSchema:
    """Put a :class:`SessionSchema` in place of ``ctx``'s default schema, holding the
    tables it had; the catalog's other schemas are kept as they are."""
    catalog = ctx.catalog(DEFAULT_CATALOG)
    schemas: dict[str, Any] = {name: catalog.schema(name) for name in catalog.schema_names()}
    existing = schemas.get(DEFAULT_SCHEMA)
    tables = {name: existing.table(name) for name in existing.names()} if existing is not None else {}
    schema = SessionSchema(tables)
    schemas[DEFAULT_SCHEMA] = schema
    ctx.register_catalog_provider(DEFAULT_CATALOG, _SessionCatalog(schemas))
    return schema


# The file groups of a scan in DataFusion's verbose physical plan, and a file listed in
# them (a path without its leading "/", and maybe the byte range a partition reads).
_FILE_GROUPS = re.compile(r"file_groups=\{(.*?)\}")
_SCANNED_FILE = re.compile(r"(?:\[|, )([^\[\],]+?)(?::\d+\.\.\d+)?(?=[,\]])")
# Name endings of compressed files: a CSV table of them is not indexed in place.
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".zstd")
# The delimiters tried for a session's CSV table (DataFusion's plan does not show its own).
CSV_DELIMITERS = (",", ";", "\t", "|")


def source_of(ctx: datafusion.SessionContext, name: str, stores: SourceStores
              ) -> tuple[str, tuple[str, ...], CsvFormat | None]:
    """The file or directory the session's table ``name`` reads, for indexing it in place
    (a URL on an object store, whose objects ``stores`` reads), its Hive partition columns
    (``table_partition_cols``: columns no file holds), and for CSV files their format
    (None: Parquet files).

    DataFusion's Python API does not say where a registered table's files are; its
    verbose physical plan lists every file a scan reads. Their common directory (the file,
    if there is one, unless it is alone in its directory; with partition columns, the
    directory above their ``name=value`` directories) is the source, accepted only if
    listing it finds exactly those files (storage/sources/source_files.py: ``list_files``). A CSV
    scan shows whether its files have a header but not their delimiter: the one of
    ``CSV_DELIMITERS`` that splits the first file's first line into the table's columns."""
    plan = ctx.sql(f'EXPLAIN VERBOSE SELECT * FROM "{name}"').to_arrow_table()
    texts = [p for p, kind in zip(plan.column("plan").to_pylist(), plan.column("plan_type").to_pylist())
             if kind == "physical_plan" or kind.startswith("physical_plan")]
    scans = [line for text in texts[-1:] for line in text.splitlines() if re.search(r"file_type=(parquet|csv)\b", line)]
    if len(scans) != 1:
        raise InvalidArgument(
            f"table {name!r} is not one Parquet or CSV file or directory; index it in place by path: "
            "db.index_in_place(name, path)"
        )
    kind = "csv" if "file_type=csv" in scans[0] else "parquet"
    groups = _FILE_GROUPS.search(scans[0])
    scanned = sorted({"/" + path for path in _SCANNED_FILE.findall(groups.group(1) if groups else "")})
    if not scanned:
        raise InvalidArgument(f"table {name!r} reads no {kind} file to index in place")
    store_url = _object_store_url(ctx, name)
    if store_url is not None:
        if kind == "csv":
            raise InvalidArgument(f"table {name!r} reads CSV files on an object store ({store_url}): those cannot "
                                  "be indexed in place; Parquet files can")
        return _remote_source(ctx, name, store_url, [path[1:] for path in scanned], stores), (), None
    missing = [path for path in scanned if not os.path.isfile(path)]
    if missing:  # (an object store's file: DataFusion's plan shows its path in the bucket)
        raise InvalidArgument(
            f"table {name!r} reads files that are not on this machine's disk ({missing[0]!r}, as DataFusion "
            "names it: an object store's?); tables indexed in place are local files for now"
        )
    suffix = os.path.splitext(scanned[0])[1] if kind == "csv" else PARQUET_SUFFIX
    if suffix in _COMPRESSED or not suffix or not all(path.endswith(suffix) for path in scanned):
        raise InvalidArgument(f"table {name!r} reads files {scanned[:3]}...: tables indexed in place take "
                              f"uncompressed CSV files of one name ending, or Parquet files")
    columns = ctx.table(name).schema().names
    csv = None
    if kind == "csv":
        csv = _csv_format(name, scanned[0], "has_header=true" in scans[0], suffix, columns)
        held = set(header_names(Path(scanned[0]), csv))
    else:
        held = set(pq.read_schema(scanned[0]).names)
    partitions = tuple(n for n in columns if n not in held)
    if partitions:
        roots = {_partition_root(path, partitions) for path in scanned}
        root = roots.pop() if len(roots) == 1 else None
    else:
        root = os.path.commonpath(scanned)
        alone = {f.file for f in list_files(os.path.dirname(root), (), suffix)} == {os.path.basename(root)}
        if len(scanned) == 1 and alone:
            root = os.path.dirname(root)
    listed = [] if root is None else [
        os.path.join(root if os.path.isdir(root) else os.path.dirname(root), f.file)
        for f in list_files(root, partitions, suffix)]
    if sorted(listed) != scanned:
        raise InvalidArgument(
            f"cannot tell which files table {name!r} reads (local Parquet or CSV files only); index it in place "
            "by path: db.index_in_place(name, path)"
        )
    _check_local(ctx, name, scanned, csv, partitions)
    return root or "", partitions, csv


# A URL as DataFusion's serialized physical plan holds a scan's object store
# (FileScanExecConf.object_store_url: "s3://bucket/"): a protobuf string, its length first.
_STORE_URL = re.compile(rb"[a-z][a-z0-9+.-]*://[^\x00-\x20/]*/")


def _object_store_url(ctx: datafusion.SessionContext, name: str) -> str | None:
    """The object store the session's table ``name`` reads (``s3://bucket/``), or None for
    local files. DataFusion's plan shows a file by its path in the store only; the store
    is in the plan DataFusion serializes (``ExecutionPlan.to_bytes``): the one URL there
    that is a whole protobuf string."""
    data = ctx.table(quote(name)).execution_plan().to_bytes()
    urls = {m.group().decode() for m in _STORE_URL.finditer(data)
            if m.start() and data[m.start() - 1] == m.end() - m.start()}
    remote = sorted(url for url in urls if not url.startswith("file://"))
    if len(remote) > 1:
        raise InvalidArgument(f"table {name!r} reads files of several object stores ({remote}); index each "
                              "in place by path: db.index_in_place(name, url)")
    return remote[0] if remote else None


def _remote_source(ctx: datafusion.SessionContext, name: str, url: str, keys: list[str], stores: SourceStores) -> str:
    """The source URL of the session's table ``name`` of the object store ``url``, whose
    plan reads the objects ``keys``: their common directory (or the one object, unless it
    is alone in its directory), accepted only if listing it finds exactly those objects,
    which hold the rows DataFusion counts. Tables on object stores take no partition
    columns yet."""
    if any(f.name not in _held(name, url, keys[0], stores) for f in ctx.table(quote(name)).schema()):
        raise InvalidArgument(f"table {name!r} has partition columns (values in its files' paths): tables "
                              "on object stores are indexed in place without them for now")
    root = posixpath.commonpath(keys) if len(keys) > 1 else posixpath.dirname(keys[0])
    source = url + (root + "/" if root else "")
    if len(keys) == 1 and [f.file for f in list_files(source, (), PARQUET_SUFFIX, stores)] != [posixpath.basename(keys[0])]:
        source = url + keys[0]  # (not alone in its directory: the object itself)
    files = list_files(source, (), PARQUET_SUFFIX, stores)
    base = remote_root(source)[len(url):]
    if sorted(base + f.file for f in files) != sorted(keys):
        raise InvalidArgument(f"cannot tell which objects table {name!r} reads under {source}; index it in place "
                              "by path: db.index_in_place(name, url)")
    held = sum(open_parquet(stores.file(source, f.file, f.size, f.version or "").arrow_source()).metadata.num_rows
               for f in files)
    counted = ctx.sql(f"SELECT count(*) FROM {quote(name)}").to_arrow_table().column(0)[0].as_py()
    if counted != held:
        raise InvalidArgument(f"table {name!r} reads {counted:,} rows where the objects under {source} hold {held:,} "
                              "as this database reaches them: check its storage_options (another endpoint?)")
    return source


def _held(name: str, url: str, key: str, stores: SourceStores) -> set[str]:
    """The columns the object ``key`` of the store ``url`` holds."""
    objects = stores.directory(url)
    meta = objects.head(key)
    if meta is None:
        raise InvalidArgument(f"table {name!r} reads {url}{key}, which this database does not find there: check its "
                              "storage_options (another endpoint or credentials?)")
    return set(open_parquet(stores.file(url, key, meta.size, meta.version).arrow_source()).schema_arrow.names)


def _check_local(ctx: datafusion.SessionContext, name: str, paths: list[str], csv: CsvFormat | None,
                 partitions: tuple[str, ...]) -> None:
    """Refuse unless the local files ``paths`` hold the rows DataFusion reads for ``name``.
    DataFusion's plan names a file of an object store (S3, GCS, Azure) by its path in the
    bucket, as it names a local file by its path from the root; the session says no more.
    Read as local, ``s3://bucket/data/part-0.parquet`` is ``/data/part-0.parquet``: missing
    (then listing failed above), or some other file, whose rows would be indexed instead
    (a silent wrong answer, issue 32). So the row counts must agree."""
    if csv is None:
        local = sum(pq.read_metadata(path).num_rows for path in paths)
    else:
        held = pa.schema([f for f in ctx.table(quote(name)).schema() if f.name not in partitions])
        local = sum(count_rows(Path(path), held, csv) for path in paths)
    counted = ctx.sql(f"SELECT count(*) FROM {quote(name)}").to_arrow_table().column(0)[0].as_py()
    if counted != local:
        raise InvalidArgument(
            f"table {name!r} reads {counted:,} rows where the local files {paths[:3]}... hold {local:,}: its files "
            "are not these (an object store's?); tables indexed in place are local files for now; index such "
            "files in place by path: db.index_in_place(name, path)"
        )


def _csv_format(name: str, path: str, header: bool, suffix: str, columns: list[str]) -> CsvFormat:
    """The format of the session's CSV table ``name`` (its ``columns``, partition columns
    last) whose first file is ``path``: the delimiter that splits the first line into
    the most of the table's columns, its names with a header (a wrong one leaves the
    line whole), else as many as DataFusion named ``column_1``, ``column_2``, ..."""
    unnamed = sum(1 for i, c in enumerate(columns) if c == f"column_{i + 1}")
    fits = []
    for delimiter in CSV_DELIMITERS:
        fmt = CsvFormat(delimiter, header, suffix)
        try:
            names = header_names(Path(path), fmt)
        except StorageError:
            continue
        if names == columns[: len(names)] if header else len(names) == unnamed:
            fits.append((len(names), fmt))
    if not fits:
        raise InvalidArgument(
            f"cannot tell the delimiter of table {name!r}'s CSV files (tried {list(CSV_DELIMITERS)}); index it in "
            "place by path: db.index_in_place(name, path, csv=CsvFormat(delimiter=...))"
        )
    return max(fits, key=lambda fit: fit[0])[1]  # (the first of the most)


def _partition_root(path: str, partitions: tuple[str, ...]) -> str | None:
    """The directory of ``path`` above its ``name=value`` directories of ``partitions``."""
    dirs = path.split("/")[:-1]
    for i in range(len(dirs) - len(partitions) + 1):
        if partition_dirs(dirs[i:], partitions) is not None:
            return "/".join(dirs[:i])
    return None
