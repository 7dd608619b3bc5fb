"""The manifest: the one file that says what a database holds (docs/design.md: "Manifest and format
versions").

Everything else in a database directory (Parquet fragments, index segments) is immutable
once written and becomes part of the database only when a new manifest naming it is
committed by an atomic rename. Readers take one manifest version and see a consistent
snapshot; a crash before the rename leaves the previous version intact.

A file a commit stops naming is not deleted at once: another process's snapshot of an
older version may still be reading it. The manifest lists it as retired, with the time of
that commit, and it is deleted once it has been retired for the grace period (as Delta
and Lance keep old versions until a vacuum).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import pyarrow as pa

from ...analysis import AnalyzerConfig
from ...defaults import K1, POSITIONS, B
from ...settings import MAX_NAME_CHARS
from .layout import is_remote

# The manifest's format, and what each one changed (a database of an earlier format
# opens; a newer one is refused, see store.DirectoryStore.load_manifest):
# 1 - data fragments of 16,384-row row groups, read whole to fetch a row.
# 2 - data fragments with small pages and an offset index (FragmentMeta.layout 2),
#     fetched page by page; OPTIMIZE rewrites fragments of layout 1.
# 3 - index segments keep several (tf, dl) impact points per block for block-max pruning
#     (kernels/invert.pyx block_metadata), in block_max_tf and block_min_dl (16 bits
#     each, saturated; segments written earlier in format 3 have 32-bit points and are read
#     as they are); segments of format 2 keep one point (the block's max tf and min dl).
#     The manifest carries the crc32 of its content (CHECKSUM).
# 4 - index segments keep a checksum file (storage/files/checksums.py) whose crc32 is
#     SegmentMeta.checksums, deletion vectors their crc32 (FragmentMeta.deletes_crc);
#     both are None for files written earlier, which are read unverified.
# 5 - tables indexed in place (TableMeta.source): their fragments are the user's Parquet
#     files (FragmentMeta.file, size, mtime_ns; ids ``src-``), holding no copy of the data.
# 6 - data fragments carry the crc32 of their whole file (FragmentMeta.crc), checked
#     before DataFusion's Parquet reader first scans them, and of their footer
#     (footer_crc, copy_footer_crc), checked before pyarrow parses it; None for files
#     written earlier. A copy of stored columns holds the rows of consecutive files of a
#     table indexed in place (FragmentMeta.copy_row), not of one (a fetch of rows of
#     several files read as many copies); such a table may have Hive partition columns
#     (TableMeta.partitions), whose values are in its files' paths.
# 7 - a table indexed in place may be CSV files (TableMeta.csv: their delimiter,
#     whether they have a header, how their names end), not Parquet.
# 8 - a managed table made by SQL keeps the schema DataFusion gave it (TableMeta.declared:
#     its types as declared, Utf8View or Int32, and NOT NULL), which its data files store
#     without view types, and the column definitions of its CREATE TABLE
#     (TableMeta.definition), whose DEFAULT values and constraints DataFusion applies to
#     every INSERT.
# 9 - a table indexed in place may be files of an object store (TableMeta.source a URL,
#     s3://bucket/data/), each known by its size and ETag (FragmentMeta.version; its
#     mtime_ns 0): an older version would read the URL as a local path.
# 10 - data fragments merged by compaction (catalog/compaction.py) hold only the rows live
#     when they were written: the row ids of their range that their file lacks are listed
#     in a deletion vector of their own (FragmentMeta.gaps), which finds a row's place in
#     the file; ranges no fragment holds (TableMeta.holes) are rows dropped whole. An older
#     version would read a row's place as its offset from row_lo. Deletion vectors are
#     written compressed (ZSTD buffers of the Arrow IPC file).
# 11 - an index segment whose row ids are mostly deleted (OPTIMIZE after a long history)
#     packs its postings' rows as ordinals among its rows holding text (codec
#     "bp128-ordinals"): gaps of the live rows, not of row ids. An older version would
#     refuse the codec. Deletion vectors hold the steps between their ids (uint32), which
#     an older version would read as ids.
# 12 - a table may hold n-gram indexes (IndexMeta.kind "ngram", keyed by ngram_key of
#     their column beside the column's full-text index): an older version would read one
#     as a full-text index of a column the table lacks.
FORMAT_VERSION = 12
ROWID = "_rowid"
# Declared types a table stores as their values' bytes, which Parquet's own type for them
# cannot hold: an interval of months, days and nanoseconds (Parquet's keeps milliseconds).
# Written by ingest.py, read back by session/declared_types.py; DataFusion's Parquet reader
# cannot read such a file as the table, so the table is held in memory (session/table_views.py).
STORED_AS_BYTES = {pa.month_day_nano_interval(): pa.binary(16)}
# The manifest's field holding the crc32 of the rest of it (format 3 on).
CHECKSUM = "checksum"
# A table name: any name DataFusion takes ("foo.bar", "Ünïcode", "values") of at most
# MAX_NAME_CHARS characters, without control characters. Only a name of IDENTIFIER's form
# names its log file itself (wal/<name>.log); any other one's log is named by its hash
# (log_file_name), so no name reaches outside the directory.
TABLE_NAME = re.compile(r"^[^\x00-\x1f\x7f]+$")
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# The ids of the files a manifest names, by kind (file_id makes them): a manifest naming
# anything else (``../../file``) is refused, so nothing outside the directory is read.
_FILE_IDS = {"fragment": re.compile(r"^frag-\d{8}$"), "deletion vector": re.compile(r"^dv-\d{8}$"),
             "segment": re.compile(r"^seg-\d{8}$"), "source file": re.compile(r"^src-\d{8}$")}
_ANY_FILE_ID = re.compile(r"^(frag|dv|seg)-\d{8}$")
# FragmentMeta.layout of the files written now (earlier: 1, see FORMAT_VERSION).
PAGED_LAYOUT = 2
# FragmentMeta.layout of a user's file an in-place table reads (laid out as its writer chose).
SOURCE_LAYOUT = 0


@dataclass(frozen=True)
class FragmentMeta:
    """A Parquet file of rows ``row_lo .. row_lo + rows - 1`` (dense row ids).

    ``deletes`` names the fragment's deletion vector (the sorted ids of its deleted rows,
    ``deleted`` of them, the crc32 of its file ``deletes_crc``); fragments are never
    rewritten to delete a row. ``layout`` says how the file is laid out (see
    FORMAT_VERSION): 1 in a database of format 1.

    A fragment of a table indexed in place (``TableMeta.source``) is a user's file:
    ``file`` is its path under the source, ``size`` and ``mtime_ns`` (on an object
    store: ``version``, its ETag) what it was when its rows were given their ids (a file
    that differs is not the file indexed);
    ``copy`` names a fragment of ours holding its rows' stored columns
    (``TableMeta.stored``), from its row ``copy_row`` on (a copy holds the rows of
    consecutive files), fetched from there rather than from the user's file.

    ``crc`` is the crc32 of a fragment's whole file (storage/files/checksums.py: ``file_crc32``),
    checked before DataFusion's Parquet reader, which checks no page CRC, scans it;
    ``footer_crc`` (``copy_footer_crc``: its copy's) the crc32 of its Parquet footer,
    checked before pyarrow parses it (``footer_crc32``).

    A fragment written by compaction (format 10) holds only the rows of its range that
    were live then: ``gaps`` names a deletion vector of the ``gap_rows`` ids of the range
    its file lacks (crc32 ``gaps_crc``), every one of them also in ``deletes``; a row's
    place in the file is its offset from ``row_lo`` less the gaps before it.
    """

    id: str
    row_lo: int
    rows: int
    deletes: str | None = None
    deleted: int = 0
    layout: int = 1
    deletes_crc: int | None = None
    file: str | None = None
    size: int | None = None
    mtime_ns: int | None = None
    copy: str | None = None
    crc: int | None = None
    footer_crc: int | None = None
    copy_row: int | None = None
    copy_footer_crc: int | None = None
    version: str | None = None
    gaps: str | None = None
    gaps_crc: int | None = None
    gap_rows: int = 0

    @property
    def row_hi(self) -> int:
        return self.row_lo + self.rows - 1

    @property
    def stored_rows(self) -> int:
        """The rows its file holds (live or deleted since)."""
        return self.rows - self.gap_rows


# How a segment's postings are laid out in its files: "u32", one uint32 per row id, term
# frequency and position (the first layout; a manifest without a codec means it),
# "bp128", blocks of 128 postings bit-packed (see kernels/postings_codec.pyx), or
# "bp128-ordinals" (format 11), as "bp128" but the rows packed as their ordinals among the
# segment's rows holding text: a segment whose row ids are mostly deleted.
CODEC_U32 = "u32"
CODEC_BP128 = "bp128"
CODEC_ORDINALS = "bp128-ordinals"


@dataclass(frozen=True)
class SegmentMeta:
    """An immutable index segment over the inclusive row-id range [``lo``, ``hi``].

    It holds the rows that existed in that range when it was built: row ids ``base ..
    base + count - 1`` (``count`` may be 0 for a range beyond the last row). ``codec``
    names the layout of its postings on disk, ``checksums`` the crc32 of its checksum
    file (None: written before format 4, or held in memory).
    """

    id: str
    lo: int
    hi: int
    base: int
    count: int
    n_docs: int
    total_tokens: int
    n_terms: int
    n_postings: int
    codec: str = CODEC_U32
    checksums: int | None = None


# IndexMeta.kind: a full-text index (MATCH), or an n-gram index (LIKE, regular expressions).
FULLTEXT, NGRAM = "fulltext", "ngram"


def text_columns(schema: pa.Schema) -> list[str]:
    """The columns of ``schema`` holding text: what a query string naming no column searches
    where no index says otherwise."""
    return [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]


def ngram_key(column: str) -> str:
    """The key of ``column``'s n-gram index among a table's indexes, which key its
    full-text index by the column's name: no column name holds a NUL."""
    return f"\x00ngram {column}"


@dataclass(frozen=True)
class IndexMeta:
    """A column's inverted index: how it analyzes and scores, and its segments. A table
    keys its indexes by :attr:`key`: the column of a full-text index, :func:`ngram_key` of
    an n-gram index's, so a column may have one of each; everything that maintains
    indexes (fresh runs, flushes, OPTIMIZE, compaction) reads ``column`` and keeps both."""

    column: str
    analyzer: AnalyzerConfig
    k1: float = K1
    b: float = B
    positions: bool = POSITIONS
    segments: tuple[SegmentMeta, ...] = ()
    kind: str = FULLTEXT

    @property
    def key(self) -> str:
        return self.column if self.kind == FULLTEXT else ngram_key(self.column)

    @cached_property
    def covered_until(self) -> int:
        """The highest row id r such that every row 0..r is in some segment (-1 if none)."""
        covered = -1
        for seg in sorted(self.segments, key=lambda s: (s.base, s.base + s.count)):
            if seg.count == 0:
                continue
            if seg.base > covered + 1:
                break
            covered = max(covered, seg.base + seg.count - 1)
        return covered


@dataclass(frozen=True)
class CsvFormat:
    """How the CSV files of a table indexed in place are written: the one-character
    ``delimiter``, whether each file's first line names the columns (``header``), and
    how the names of the files end (``suffix``: ``.tsv``, say). Quotes are ``"`` (doubled
    inside a value), a value may hold newlines, and an empty value is null, as
    DataFusion's CSV reader takes them."""

    delimiter: str = ","
    header: bool = True
    suffix: str = ".csv"


@dataclass(frozen=True)
class TableMeta:
    """A table: its fragments (ascending, disjoint row-id ranges) and indexes. ``source``
    (an absolute path) makes it a table indexed in place: its rows are the Parquet files
    under that path, read where they are (docs/design.md: "Tables indexed in place"),
    but for the ``stored`` columns, of which the database keeps a copy. Its
    ``partitions`` are Hive partition columns (in ``schema``, last): no file holds them,
    each file's values are in its path (``year=2024/part-0.parquet``). With ``csv`` the
    files are CSV files of that format, not Parquet."""

    name: str
    schema: pa.Schema  # user columns, without _rowid
    next_rowid: int = 0
    fragments: tuple[FragmentMeta, ...] = ()
    indexes: dict[str, IndexMeta] = field(default_factory=dict)
    source: str | None = None
    stored: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()
    csv: CsvFormat | None = None
    declared: pa.Schema | None = None  # the schema SQL shows, when not ``schema`` itself
    definition: str | None = None  # "(a INT NOT NULL, b VARCHAR DEFAULT 'x')", as written

    @property
    def sql_schema(self) -> pa.Schema:
        """The columns as DataFusion shows them (docs/design.md: "Managed tables in
        DataFusion"): as their CREATE TABLE declared them, else as stored."""
        return self.declared if self.declared is not None else self.schema

    @cached_property
    def holes(self) -> tuple[tuple[int, int], ...]:
        """Inclusive row-id ranges below ``next_rowid`` that no fragment holds: the rows of
        a source's files that changed or went away since they were given ids (a managed
        table's fragments leave none). Such rows are gone as deleted rows are."""
        holes, start = [], 0
        for frag in self.fragments:
            if frag.row_lo > start:
                holes.append((start, frag.row_lo - 1))
            start = frag.row_lo + frag.rows
        if start < self.next_rowid:
            holes.append((start, self.next_rowid - 1))
        return tuple(holes)

    @property
    def committed_rows(self) -> int:
        """Row ids handed out to committed rows (live or deleted): a managed table's next
        row id (compaction may have dropped its last rows whole), a source's files' rows."""
        return sum(f.rows for f in self.fragments) if self.source is not None else self.next_rowid

    @property
    def live_rows(self) -> int:
        return sum(f.rows - f.deleted for f in self.fragments)

    def footer_crcs(self) -> dict[str, int]:
        """The crc32 of the footer of each of this table's data files of ours that has
        one, by file id (fragments and copies of stored columns)."""
        crcs = {f.id: f.footer_crc for f in self.fragments if f.footer_crc is not None}
        crcs.update((f.copy, f.copy_footer_crc) for f in self.fragments if f.copy and f.copy_footer_crc is not None)
        return crcs

    def with_index(self, index: IndexMeta) -> "TableMeta":
        return replace(self, indexes={**self.indexes, index.key: index})

    @property
    def fulltext(self) -> dict[str, "IndexMeta"]:
        """The full-text indexes, by column: what MATCH searches."""
        return {k: ix for k, ix in self.indexes.items() if ix.kind == FULLTEXT}

    def ngram(self, column: str) -> "IndexMeta | None":
        return self.indexes.get(ngram_key(column))

    @property
    def ngram_columns(self) -> frozenset[str]:
        """The columns with an n-gram index: what SQL's substring predicates may read."""
        return frozenset(ix.column for ix in self.indexes.values() if ix.kind == NGRAM)


@dataclass(frozen=True)
class RetiredFile:
    """A file an earlier version named and this one does not, since ``at`` (Unix time)."""

    id: str
    at: float


@dataclass(frozen=True)
class Manifest:
    version: int = 0
    tables: dict[str, TableMeta] = field(default_factory=dict)
    next_file_id: int = 1
    retired: tuple[RetiredFile, ...] = ()

    def file_ids(self) -> frozenset[str]:
        """Every file this version reads: fragments, deletion vectors, index segments."""
        ids = set()
        for t in self.tables.values():
            ids.update(f.id for f in t.fragments if f.file is None)  # (a source's files are not ours)
            ids.update(f.copy for f in t.fragments if f.copy)
            ids.update(f.deletes for f in t.fragments if f.deletes)
            ids.update(f.gaps for f in t.fragments if f.gaps)
            ids.update(s.id for ix in t.indexes.values() for s in ix.segments)
        return frozenset(ids)

    def footer_crcs(self) -> dict[str, int]:
        """The crc32 of the footer of each data file of ours that has one, by file id
        (fragments and copies of stored columns)."""
        return {k: v for t in self.tables.values() for k, v in t.footer_crcs().items()}

    def succeeding(self, old: "Manifest", now: float, grace: float) -> "Manifest":
        """This manifest as the successor of ``old``: the files ``old`` read and this one
        does not are retired at ``now``; files retired ``grace`` seconds ago or more are
        forgotten (and may be deleted)."""
        live = self.file_ids()
        kept = [r for r in old.retired if now - r.at < grace]
        gone = sorted(old.file_ids() - live)
        return replace(self, retired=tuple(kept) + tuple(RetiredFile(f, now) for f in gone))

    def kept_files(self, now: float, grace: float) -> frozenset[str]:
        """The files to keep at ``now``: those this version reads, and those retired less
        than ``grace`` seconds ago (an older snapshot may be reading them)."""
        return self.file_ids() | {r.id for r in self.retired if now - r.at < grace}

    def with_table(self, table: TableMeta) -> "Manifest":
        return replace(self, tables={**self.tables, table.name: table})

    def file_id(self, prefix: str) -> tuple[str, "Manifest"]:
        """A fresh file id, and the manifest that reserves it."""
        return f"{prefix}-{self.next_file_id:08d}", replace(self, next_file_id=self.next_file_id + 1)

    # -- JSON ------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The manifest as JSON data, with the crc32 of the rest of it (``checksum``)."""
        body = {
            "format": FORMAT_VERSION,
            "version": self.version,
            "next_file_id": self.next_file_id,
            "tables": {name: _table_to_json(t) for name, t in self.tables.items()},
            "retired": [vars(r) for r in self.retired],
        }
        return {**body, CHECKSUM: checksum(body)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Manifest":
        """The manifest ``data`` holds; ValueError when a name or file id in it is not one
        this system makes."""
        if data.get("format") not in range(1, FORMAT_VERSION + 1):
            raise ValueError(f"unsupported manifest format {data.get('format')!r}")
        if data["format"] >= 3:  # (earlier formats had no checksum)
            body = {key: value for key, value in data.items() if key != CHECKSUM}
            if data.get(CHECKSUM) != checksum(body):
                raise ValueError(f"checksum mismatch (stored {data.get(CHECKSUM)!r}, computed {checksum(body)})")
        manifest = cls(
            version=int(data["version"]),
            next_file_id=int(data["next_file_id"]),
            tables={name: _table_from_json(name, t) for name, t in data["tables"].items()},
            retired=tuple(RetiredFile(str(r["id"]), float(r["at"])) for r in data.get("retired", ())),
        )
        for name, table in manifest.tables.items():
            if not valid_table_name(name):
                raise ValueError(f"table name {name!r} is empty, longer than {MAX_NAME_CHARS} characters or holds a control character")
            for frag in table.fragments:
                if table.source is not None:
                    _check_id("source file", frag.id)
                    _check_source_file(frag)
                    if frag.copy is not None:
                        _check_id("fragment", frag.copy)
                    continue
                _check_id("fragment", frag.id)
                for vector in (frag.deletes, frag.gaps):
                    if vector is not None:
                        _check_id("deletion vector", vector)
            for index in table.indexes.values():
                for seg in index.segments:
                    _check_id("segment", seg.id)
        for retired in manifest.retired:
            if not _ANY_FILE_ID.match(retired.id):
                raise ValueError(f"retired file id {retired.id!r} is not one this system makes")
        return manifest


def checksum(body: dict[str, Any]) -> int:
    """The crc32 of a manifest's JSON data in canonical form (keys sorted, no spaces): a
    damaged manifest that still parses, with a changed count or id, is refused, not read."""
    return zlib.crc32(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8"))


def valid_table_name(name: object) -> bool:
    """Whether ``name`` may name a table (see TABLE_NAME)."""
    return isinstance(name, str) and len(name) <= MAX_NAME_CHARS and TABLE_NAME.match(name) is not None


def log_file_name(name: str) -> str:
    """The name of table ``name``'s write-ahead log file: ``<name>.log`` for an identifier
    (as every format wrote it), else ``~<sha256 of the name>.log``."""
    if IDENTIFIER.match(name):
        return f"{name}.log"
    return "~" + hashlib.sha256(name.encode("utf-8")).hexdigest() + ".log"


def _check_source_file(frag: FragmentMeta) -> None:
    """A source file's path must stay under its source (no ``..``, not absolute)."""
    path = frag.file
    if not isinstance(path, str) or not path or "\0" in path or path.startswith("/") or ".." in path.split("/"):
        raise ValueError(f"source file {path!r} is not a path under the table's source")
    if not isinstance(frag.size, int) or not isinstance(frag.mtime_ns, int):
        raise ValueError(f"source file {path!r} has no size or modification time")


def _check_id(kind: str, file_id: object) -> None:
    if not isinstance(file_id, str) or not _FILE_IDS[kind].match(file_id):
        raise ValueError(f"{kind} id {file_id!r} is not one this system makes")


def _schema_to_b64(schema: pa.Schema) -> str:
    return base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")


def _schema_from_b64(text: str) -> pa.Schema:
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text)))


def _table_to_json(t: TableMeta) -> dict[str, Any]:
    source = {"source": t.source, "stored": list(t.stored)} if t.source is not None else {}
    if t.partitions:
        source["partitions"] = list(t.partitions)
    if t.csv is not None:
        source["csv"] = {"delimiter": t.csv.delimiter, "header": t.csv.header, "suffix": t.csv.suffix}
    if t.declared is not None:
        source["declared"] = _schema_to_b64(t.declared)
    if t.definition is not None:
        source["definition"] = t.definition
    return {
        **source,
        "schema": _schema_to_b64(t.schema),
        "next_rowid": t.next_rowid,
        "fragments": [{k: v for k, v in vars(f).items() if k not in _OPTIONAL_FIELDS or v != _OPTIONAL_FIELDS[k]}
                      for f in t.fragments],
        "indexes": {
            key: {
                "analyzer": ix.analyzer.to_json(),
                "k1": ix.k1,
                "b": ix.b,
                "positions": ix.positions,
                "segments": [vars(s) for s in ix.segments],
                **({"column": ix.column, "kind": ix.kind} if ix.kind != FULLTEXT else {}),
            }
            for key, ix in t.indexes.items()
        },
    }


# FragmentMeta's fields left out of the JSON when they hold this value: those only a
# source's files have, the crc32s of a file written before format 6, and the gaps of a
# fragment compaction wrote.
_OPTIONAL_FIELDS = {**dict.fromkeys(("file", "size", "mtime_ns", "copy", "crc", "footer_crc", "copy_row",
                                     "copy_footer_crc", "version", "gaps", "gaps_crc")), "gap_rows": 0}


def _csv_from_json(name: str, d: Any) -> CsvFormat:
    if not (isinstance(d, dict) and isinstance(d.get("delimiter"), str) and len(d["delimiter"]) == 1
            and isinstance(d.get("header"), bool) and isinstance(d.get("suffix"), str)):
        raise ValueError(f"table {name!r} has CSV format {d!r}, not a delimiter, a header flag and a suffix")
    return CsvFormat(d["delimiter"], d["header"], d["suffix"])


def _table_from_json(name: str, d: dict[str, Any]) -> TableMeta:
    source = d.get("source")
    if source is not None and not (isinstance(source, str) and (source.startswith("/") or is_remote(source))
                                   and "\0" not in source):
        raise ValueError(f"table {name!r} has source {source!r}, not an absolute path or an object store's URL")
    return TableMeta(
        name=name,
        source=source,
        stored=tuple(str(c) for c in d.get("stored", ())),
        partitions=tuple(str(c) for c in d.get("partitions", ())),
        csv=_csv_from_json(name, d["csv"]) if "csv" in d else None,
        declared=_schema_from_b64(d["declared"]) if "declared" in d else None,
        definition=str(d["definition"]) if "definition" in d else None,
        schema=_schema_from_b64(d["schema"]),
        next_rowid=int(d["next_rowid"]),
        fragments=tuple(FragmentMeta(**f) for f in d["fragments"]),
        indexes={index.key: index for index in map(_index_from_json, d["indexes"].items())},
    )


def _index_from_json(item: tuple[str, dict[str, Any]]) -> IndexMeta:
    key, ix = item
    kind = str(ix.get("kind", FULLTEXT))
    index = IndexMeta(
        column=str(ix.get("column", key)),
        analyzer=AnalyzerConfig.from_json(ix["analyzer"]),
        k1=float(ix["k1"]),
        b=float(ix["b"]),
        positions=bool(ix["positions"]),
        segments=tuple(SegmentMeta(**s) for s in ix["segments"]),
        kind=kind,
    )
    if kind not in (FULLTEXT, NGRAM) or index.key != key:
        raise ValueError(f"index {key!r} of kind {kind!r} over column {index.column!r} is not one this system makes")
    return index
