"""Which files a table the user registered on the session reads, so that it can be indexed
in place (docs/design.md: "Tables indexed in place"): local files or an object store's
(S3, GCS, Azure), Parquet or CSV, under Hive partition directories or not.

DataFusion's Python API does not say where a registered table's files are; its verbose
physical plan lists every file a scan reads, by its path from the root for a local file
and by its path in the bucket for an object store's. The store is in the plan DataFusion
serializes. So a file is named here by its full path (``/data/a.parquet``) or URL
(``s3://bucket/data/a.parquet``), and the same steps find the source of both: a remote
path is never read as a local one (issue 32).
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

import datafusion
import pyarrow as pa

from ..errors import InvalidArgument, StorageError
from ..storage.files.manifest import CsvFormat
from ..storage.parquet.data_files import RemoteFile
from ..storage.sources.csv_files import count_rows, header_names
from ..storage.sources.object_sources import SourceStores
from ..storage.sources.source_files import (
    PARQUET_SUFFIX,
    list_files,
    open_source_parquet,
    partition_dirs,
    source_file,
)
from .catalog import quote

# The file groups of a scan in DataFusion's verbose physical plan, and a file listed in
# them (a path without its leading "/", and maybe the byte range a partition reads).
_FILE_GROUPS = re.compile(r"file_groups=\{(.*?)\}")
_SCANNED_FILE = re.compile(r"(?:\[|, )([^\[\],]+?)(?::\d+\.\.\d+)?(?=[,\]])")
# Name endings of compressed files: a CSV table of them is not indexed in place.
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".zstd")
# The delimiters tried for a session's CSV table (DataFusion's plan does not show its own).
CSV_DELIMITERS = (",", ";", "\t", "|")
# A URL as DataFusion's serialized physical plan holds a scan's object store
# (FileScanExecConf.object_store_url: "s3://bucket/"): a protobuf string, its length first.
_STORE_URL = re.compile(rb"[a-z][a-z0-9+.-]*://[^\x00-\x20/]*/")

SourceFileOf = Path | RemoteFile


def source_of(ctx: datafusion.SessionContext, name: str, stores: SourceStores
              ) -> tuple[str, tuple[str, ...], CsvFormat | None]:
    """The file or directory the session's table ``name`` reads (a local path, or a URL on
    an object store, whose objects ``stores`` reads: a directory with its final ``/``),
    its Hive partition columns (``table_partition_cols``: columns no file holds), and for
    CSV files their format (None: Parquet files).

    The files' common directory (the file, if there is one, unless it is alone in its
    directory; with partition columns, the directory above their ``name=value``
    directories) is the source, accepted only if listing it finds exactly the files the
    plan reads (storage/sources/source_files.py: ``list_files``), and they hold the rows
    DataFusion counts. A CSV scan shows whether its files have a header but not their
    delimiter: the one of ``CSV_DELIMITERS`` that splits the first file's first line into
    the table's columns."""
    plan = ctx.sql(f"EXPLAIN VERBOSE SELECT * FROM {quote(name)}").to_arrow_table()
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
    url = _object_store_url(ctx, name)
    prefix = url or "/"
    scanned = sorted({prefix + path for path in _SCANNED_FILE.findall(groups.group(1) if groups else "")})
    if not scanned:
        raise InvalidArgument(f"table {name!r} reads no {kind} file to index in place")
    suffix = posixpath.splitext(scanned[0])[1] if kind == "csv" else PARQUET_SUFFIX
    if suffix in _COMPRESSED or not suffix or not all(path.endswith(suffix) for path in scanned):
        raise InvalidArgument(f"table {name!r} reads files {scanned[:3]}...: tables indexed in place take "
                              f"uncompressed CSV files of one name ending, or Parquet files")
    first = _first_file(name, scanned, stores)
    schema = ctx.table(quote(name)).schema()
    columns = schema.names
    csv = None
    if kind == "csv":
        csv = _csv_format(name, first, "has_header=true" in scans[0], suffix, columns)
        held = set(header_names(first, csv))
    else:
        held = set(open_source_parquet(first).schema_arrow.names)
    partitions = tuple(n for n in columns if n not in held)
    source, base = _common_source(scanned, prefix, partitions, suffix, stores)
    files = list_files(source, partitions, suffix, stores) if source else ()
    if sorted(base + f.file for f in files) != scanned:
        raise InvalidArgument(
            f"cannot tell which files table {name!r} reads under {source or prefix}; index it in place by path: "
            "db.index_in_place(name, path)"
        )
    held_schema = pa.schema([f for f in schema if f.name not in partitions])
    rows = sum(_rows(source_file(source, f, stores), held_schema, csv) for f in files)
    counted = ctx.sql(f"SELECT count(*) FROM {quote(name)}").to_arrow_table().column(0)[0].as_py()
    if counted != rows:
        raise InvalidArgument(
            f"table {name!r} reads {counted:,} rows where the files under {source} hold {rows:,} as this database "
            + ("reaches them: check its storage_options (another endpoint?)" if url else
               "reads them: its files are not these (an object store's?); index such files in place by path: "
               "db.index_in_place(name, path)")
        )
    return source, partitions, csv


def _object_store_url(ctx: datafusion.SessionContext, name: str) -> str | None:
    """The object store the session's table ``name`` reads (``s3://bucket/``), or None for
    local files: the one URL of the serialized plan (``ExecutionPlan.to_bytes``) that is a
    whole protobuf string."""
    data = ctx.table(quote(name)).execution_plan().to_bytes()
    urls = {m.group().decode() for m in _STORE_URL.finditer(data)
            if m.start() and data[m.start() - 1] == m.end() - m.start()}
    remote = sorted(url for url in urls if not url.startswith("file://"))
    if len(remote) > 1:
        raise InvalidArgument(f"table {name!r} reads files of several object stores ({remote}); index each "
                              "in place by path: db.index_in_place(name, url)")
    return remote[0] if remote else None


def _first_file(name: str, scanned: list[str], stores: SourceStores) -> SourceFileOf:
    """The first of the files a table reads, as found now. A local path read as the plan
    names it must exist: DataFusion names an object store's file by its path in the
    bucket, which, read as local, is some other file or none (the row counts are checked
    after, for the case where it exists)."""
    if not scanned[0].startswith("/"):
        objects = stores.directory(scanned[0])
        meta = objects.head(posixpath.basename(scanned[0]))
        if meta is None:
            raise InvalidArgument(f"table {name!r} reads {scanned[0]}, which this database does not find there: "
                                  "check its storage_options (another endpoint or credentials?)")
        return stores.file(scanned[0], meta.key, meta.size, meta.version)
    missing = [path for path in scanned if not os.path.isfile(path)]
    if missing:
        raise InvalidArgument(
            f"table {name!r} reads files that are not on this machine's disk ({missing[0]!r}, as DataFusion "
            "names it: an object store's whose store this session does not show?); index them in place by "
            "URL: db.index_in_place(name, 's3://bucket/path/')"
        )
    return Path(scanned[0])


def _common_source(scanned: list[str], prefix: str, partitions: tuple[str, ...], suffix: str,
                   stores: SourceStores) -> tuple[str, str]:
    """The source of the files ``scanned`` (full paths or URLs under ``prefix``: ``/``
    or the store's URL), as a table indexed in place keeps it, and the directory its
    listed files' names are relative to ("" if the files have no common source)."""
    remote = prefix != "/"
    if partitions:
        roots = {_partition_root(path, partitions) for path in scanned}
        root = roots.pop() if len(roots) == 1 else None
        if root is None:
            return "", ""
        return (root + "/" if remote else root), root + "/"
    keys = [path[len(prefix):] for path in scanned]
    directory = posixpath.commonpath(keys) if len(keys) > 1 else posixpath.dirname(keys[0])
    folder = prefix + directory + ("/" if directory else "")
    kept = folder if remote else folder.rstrip("/") or "/"  # (a local directory without its final "/")
    if len(keys) == 1 and [f.file for f in list_files(kept, (), suffix, stores)] != [posixpath.basename(keys[0])]:
        return scanned[0], folder  # (not alone in its directory: the file itself)
    return kept, folder


def _rows(file: SourceFileOf, schema: pa.Schema, csv: CsvFormat | None) -> int:
    return count_rows(file, schema, csv) if csv is not None else open_source_parquet(file).metadata.num_rows


def _csv_format(name: str, first: SourceFileOf, header: bool, suffix: str, columns: list[str]) -> CsvFormat:
    """The format of the session's CSV table ``name`` (its ``columns``, partition columns
    last) whose first file is ``first``: the delimiter that splits the first line into
    the most of the table's columns, its names with a header (a wrong one leaves the
    line whole), else as many as DataFusion named ``column_1``, ``column_2``, ..."""
    unnamed = sum(1 for i, c in enumerate(columns) if c == f"column_{i + 1}")
    fits = []
    for delimiter in CSV_DELIMITERS:
        fmt = CsvFormat(delimiter, header, suffix)
        try:
            names = header_names(first, fmt)
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
