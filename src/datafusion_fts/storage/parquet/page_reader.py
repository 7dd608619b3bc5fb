"""Rows of a Parquet file by position, reading only the pages they sit in.

A search returns k row ids; their columns must come back in time proportional to k.
pyarrow reads whole row groups, so a fetch of 10 rows would decode 10 row groups of
every column (milliseconds each). This reader uses the file's offset index (written
with ``write_page_index=True``: each data page's offset and first row) to read, per
wanted column, only the pages holding the wanted rows (:mod:`.data_files`: ``pread``
calls from a compiled loop, or ranged GETs of an object store's object; no memory map,
so pages read for one query are not kept in this process's memory), decompresses them and picks the values out with compiled loops
(``kernels/parquet_values.pyx``: PLAIN, RLE and dictionary encodings, and DELTA_BINARY_PACKED
integers). A page's CRC, where the writer stored one, is checked first.

Data files written by :class:`.store.DirectoryStore` have small pages (a few kilobytes
of values, see ``store.PAGE_BYTES``), so a row costs one small page per column. Other
Parquet files work too, at the cost of their page size. :func:`take_rows` fetches the
rows of several files as one piece of work per column. Columns this reader cannot
decode page by page (nested or unusual types, encodings other than PLAIN / RLE /
dictionary, files without an offset index) are read by row group through pyarrow.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from collections import Counter, OrderedDict
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from ...errors import StorageError
from ...kernels.lz4_block import decompress_blocks
from ...kernels.parquet_thrift import (
    BAD_HEADER,
    DICTIONARY_PAGE,
    H_CRC,
    H_CSIZE,
    H_ENCODING,
    H_FIELDS,
    H_HAS_CRC,
    H_LEN,
    H_TYPE,
    H_USIZE,
    H_VALUES,
    LEVELS_NOT_RLE,
    NOT_DATA,
    S_CRC,
    S_CRC_HI,
    S_CRC_LO,
    S_ENCODING,
    S_FIELDS,
    S_HAS_CRC,
    S_LEV_HI,
    S_LEV_LO,
    S_PACKED,
    S_USIZE,
    S_VAL_HI,
    S_VAL_LO,
    offset_index_locations,
    page_headers,
    page_locations,
    page_spans,
)
from ...kernels.parquet_values import (
    BOOLEAN,
    BYTES,
    FIXED,
    PLAIN,
    PLAIN_DICTIONARY,
    RLE_DICTIONARY,
    gather_bytes,
    locate_rows,
    plain_entries,
    select_values,
)
from ..coded_rows import CodedRows, codes_of
from ..files import checksums
from ..files.crc32 import crc32
from . import c_page_codecs
from .data_files import DataFile, LocalFile, read_file_ranges
from .parquet_values import bytes_array, numeric_array, validity
from .reorder_rows import reorder_rows
from .side_by_side import one_part

# Pages of one column a fetch decodes at once (a few MiB of small pages: enough for its
# loops to be worth cutting in parts, see side_by_side), and a scan (batches of about 16k
# rows of the benchmark corpus).
CHUNK_PAGES = 512
SCAN_CHUNK_PAGES = 1024
# When a fetch reads a narrow column whole (PageReader._reads_whole): at most this many
# stored bytes a row; from this many rows, at least one row per this many of its pages in
# the file (or any rows once the column is kept whole).
NARROW_BYTES = 16
WHOLE_MIN_ROWS = 64
WHOLE_DENSITY = 1

_DECODABLE = frozenset({"PLAIN", "RLE", "RLE_DICTIONARY", "PLAIN_DICTIONARY"})
_DECODABLE_INTEGERS = _DECODABLE | {"DELTA_BINARY_PACKED"}
# Codecs as pyarrow names them (its "LZ4" is Parquet's LZ4_RAW), and pyarrow's codec for each
# (ZSTD goes through zstandard instead: pyarrow makes a decompression context per call).
_CODECS = {"ZSTD": "zstd", "UNCOMPRESSED": None, "SNAPPY": "snappy", "GZIP": "gzip", "BROTLI": "brotli",
           "LZ4": "lz4_raw"}
_CRC_FIELDS = [S_HAS_CRC, S_CRC_LO, S_CRC_HI, S_CRC]
_UNITS = {"milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}
_NONE = np.zeros(0, dtype=np.int64)
T = TypeVar("T")
_WHY = {BAD_HEADER: "has a header that does not parse", NOT_DATA: "is not a flat data page",
        LEVELS_NOT_RLE: "has definition levels encoded otherwise than RLE"}


def open_parquet(source: Any, metadata: pq.FileMetaData | None = None,
                 read_dictionary: list[str] | None = None) -> pq.ParquetFile:
    """A Parquet file opened without pre-buffering: with it, pyarrow keeps every column
    chunk it pre-read until the file is closed, so iterating a file's batches held the
    whole file in memory by its end (a 2.4 GB load peaked at 2.8 GB; without, reading is
    also faster: 10 s instead of 18 s for that file). ``metadata``: its footer, parsed
    before (not read again); ``read_dictionary``: columns read as dictionaries."""
    return pq.ParquetFile(source, metadata=metadata, pre_buffer=False, read_dictionary=read_dictionary)


@dataclass(frozen=True)
class _Column:
    """How one flat column decodes: its leaf index in the file, physical kind and width,
    whether it has definition levels, and how its physical values become its Arrow type."""

    name: str
    leaf: int
    kind: int
    width: int
    max_def: int
    arrow_type: pa.DataType
    physical: pa.DataType  # what the decoded bytes are, before ``arrow_type``
    codecs: np.ndarray  # per row group, as pyarrow names them
    compressed: np.ndarray  # per row group: whether its codec compresses
    mixed: bool  # whether row groups differ in codec
    narrow: bool  # at most NARROW_BYTES a row as stored, in every row group (PageReader._reads_whole)


@dataclass(frozen=True)
class _Pages:
    """A column's data pages over the whole file, in row order."""

    offsets: np.ndarray
    sizes: np.ndarray  # header included
    first_rows: np.ndarray  # file-local
    groups: np.ndarray  # each page's row group


@dataclass(frozen=True)
class _Dictionary:
    """A row group's dictionary page of one column, decompressed: its PLAIN values and,
    for byte arrays, where each entry starts and how long it is."""

    data: bytes
    n: int
    starts: np.ndarray
    lens: np.ndarray


def _physical(field: pa.Field, column: pq.ColumnSchema) -> tuple[int, int, pa.DataType] | None:
    """(kind, width, decoded type) of a flat column whose stored values read back as
    ``field.type`` bit for bit (or by a lossless cast), else None."""
    t, ptype = field.type, column.physical_type
    if ptype == "BOOLEAN" and pa.types.is_boolean(t):
        return BOOLEAN, 0, pa.bool_()
    if ptype == "BYTE_ARRAY" and (pa.types.is_string(t) or pa.types.is_large_string(t)
                                  or pa.types.is_binary(t) or pa.types.is_large_binary(t)):
        return BYTES, 0, t
    if ptype == "INT32" and (pa.types.is_integer(t) and t.bit_width <= 32 or pa.types.is_date32(t)):
        return FIXED, 4, pa.uint32() if t == pa.uint32() else (t if t.bit_width == 32 else pa.int32())
    if ptype == "INT64" and t in (pa.int64(), pa.uint64()):
        return FIXED, 8, t
    if ptype == "INT64" and pa.types.is_timestamp(t):
        logical = json.loads(column.logical_type.to_json() or "{}")
        if _UNITS.get(logical.get("timeUnit")) == t.unit:
            return FIXED, 8, t
    if ptype == "FLOAT" and t == pa.float32():
        return FIXED, 4, t
    if ptype == "DOUBLE" and t == pa.float64():
        return FIXED, 8, t
    return None


# Page readers kept open at most by a store's fragments or a table's source files
# (:class:`OpenReaders`): each holds a descriptor of its local file, so a process's open
# files stay bounded however many files its tables have; one dropped is opened again (its
# footer and offset indexes read again) when a query reaches its file.
OPEN_READERS = 32


class DecodedCache:
    """What readers decoded and may need again, least recently used evicted past
    ``max_bytes``: the row groups' columns a :class:`PageReader` reads whole (columns it
    cannot read page by page: a database of format 1, a user's file without an offset
    index; narrow columns fetched for many rows) and the dictionary
    pages of dictionary-encoded columns. One per store, shared by its files' readers. Also
    the readers themselves, counted one each (:class:`OpenReaders`)."""

    def __init__(self, max_bytes: int = 256 << 20) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: tuple, load: Callable[[], T], size: Callable[[T], int]) -> T:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit[0]
        value = load()
        with self._lock:
            if key not in self._items:
                self._items[key] = (value, size(value))
                self._bytes += size(value)
                while self._bytes > self.max_bytes and len(self._items) > 1:
                    _, (_, old) = self._items.popitem(last=False)
                    self._bytes -= old
        return value

    def holds(self, key: tuple) -> bool:
        """Whether ``key``'s value is kept (a reader may choose its way by it)."""
        with self._lock:
            return key in self._items

    def discard(self, key: tuple) -> None:
        with self._lock:
            found = self._items.pop(key, None)
            if found is not None:
                self._bytes -= found[1]


class OpenReaders:
    """Page readers by file, at most ``OPEN_READERS`` of them, the least recently used
    forgotten: a reader forgotten closes its file once no query holds it."""

    def __init__(self) -> None:
        self._readers = DecodedCache(OPEN_READERS)

    def get(self, key: tuple, opened: Callable[[], PageReader]) -> PageReader:
        """The reader of ``key``, ``opened()`` if it has none."""
        return self._readers.get(key, opened, _one)

    def discard(self, key: tuple) -> None:
        self._readers.discard(key)


def _one(_: object) -> int:
    """A reader's weight in :class:`OpenReaders`' cache."""
    return 1


class PageReader:
    """Random access to the rows of one Parquet file (see the module docstring).

    Safe to share between threads: pages are read with ``pread``, each thread has its
    own decompressor, and the few cached structures are filled under a lock."""

    def __init__(self, file: Path | str | DataFile, cache: DecodedCache, footer_crc: int | None = None) -> None:
        """``file``: a local file's path, or a :class:`.data_files.DataFile` (an object
        of an object store); ``cache`` keeps the row groups and dictionaries this reader
        decodes; ``footer_crc``, the crc32 of the file's footer, is checked before pyarrow
        parses it (None: a file without one, read unchecked)."""
        try:
            self.file = LocalFile(file) if isinstance(file, (str, os.PathLike)) else file
            self.path = self.file.name
            checksums.check_footer(self.path, self.file.read, self.file.size, footer_crc)
            # Only the footer is kept: pyarrow's reader would hold a second descriptor of
            # the file for as long as this reader lives (row groups open one: _group_column).
            with open_parquet(self.file.arrow_source()) as parquet:
                self._meta, self._parquet_schema, self.schema = parquet.metadata, parquet.schema, parquet.schema_arrow
        except FileNotFoundError:
            raise
        except (OSError, pa.ArrowException) as exc:
            raise StorageError(f"cannot read data file {file}: {exc}") from exc
        # What this file's decoded pieces are cached under: a file rewritten at the same
        # path (a user's, read in place) is another file.
        self._key = (self.path, *self.file.version)
        meta = self._meta
        self.num_rows = meta.num_rows
        sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
        # (the rows' size decoded, as the footer tells: what holding them in memory takes)
        self.data_bytes = sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
        self.group_starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self._cache = cache
        self._lock = threading.Lock()
        self._local = threading.local()
        self._columns: dict[str, _Column | None] = {}
        self._pages: dict[int, _Pages | None] = {}
        # Per narrow column, the rows its page-by-page fetches decoded (``_reads_whole``).
        self._decoded: dict[str, int] = {}
        self._index_locations: tuple[np.ndarray, np.ndarray] | None = None

    # -- what can be read page by page ----------------------------------------------------
    def _column(self, name: str) -> _Column | None:
        with self._lock:
            if name in self._columns:
                return self._columns[name]
        found = self._plan_column(name)
        with self._lock:
            self._columns[name] = found
        return found

    def _plan_column(self, name: str) -> _Column | None:
        meta = self._meta
        schema = self._parquet_schema
        leaves = [i for i in range(len(schema)) if schema.column(i).path == name]
        if len(leaves) != 1 or self.schema.get_field_index(name) < 0:
            return None
        leaf = leaves[0]
        column = schema.column(leaf)
        if column.max_repetition_level != 0 or column.max_definition_level > 1:
            return None
        physical = _physical(self.schema.field(name), column)
        if physical is None:
            return None
        chunks = [meta.row_group(g).column(leaf) for g in range(meta.num_row_groups)]
        decodable = _DECODABLE_INTEGERS if column.physical_type in ("INT32", "INT64") else _DECODABLE
        if any(c.compression not in _CODECS or not set(c.encodings) <= decodable for c in chunks):
            return None
        if self._pages_of(leaf) is None:
            return None
        kind, width, decoded = physical
        codecs = np.array([c.compression for c in chunks] or ["UNCOMPRESSED"])
        return _Column(
            name, leaf, kind, width, column.max_definition_level, self.schema.field(name).type, decoded,
            codecs, codecs != "UNCOMPRESSED", len(set(codecs.tolist())) > 1,
            all(c.total_uncompressed_size <= NARROW_BYTES * meta.row_group(g).num_rows for g, c in enumerate(chunks)),
        )

    def pages_of(self, rows: np.ndarray, name: str) -> np.ndarray | None:
        """The data page of column ``name`` holding each of the local ``rows``
        (ascending), or None if that column is not read page by page."""
        column = self._column(name)
        pages = self._pages_of(column.leaf) if column is not None else None
        if pages is None:
            return None
        return np.searchsorted(pages.first_rows, rows, side="right") - 1

    def row_groups(self, lo: int, hi: int) -> list[int]:
        """The row groups holding any of the local rows ``lo..hi`` (inclusive)."""
        first = int(np.searchsorted(self.group_starts, lo, side="right")) - 1
        last = int(np.searchsorted(self.group_starts, hi, side="right")) - 1
        return list(range(max(first, 0), last + 1))

    def units_of(self, rows: np.ndarray, name: str) -> tuple[str, int]:
        """What a fetch of column ``name`` at the local ``rows`` reads: ("pages", how
        many data pages) or, for a column read by row group, ("row groups", how many)."""
        pages = self.pages_of(rows, name)
        if pages is not None:
            return "pages", len(np.unique(pages))
        return "row groups", len(np.unique(np.searchsorted(self.group_starts, rows, side="right")))

    def _pages_of(self, leaf: int) -> _Pages | None:
        """The column's data pages from the offset index (None without one)."""
        with self._lock:
            if leaf in self._pages:
                return self._pages[leaf]
        found = self._read_offset_index(leaf)
        with self._lock:
            self._pages[leaf] = found
        return found

    def _locations(self) -> tuple[np.ndarray, np.ndarray]:
        """Each row group's and column's offset-index position and length (-1: none),
        read from the footer once."""
        if self._index_locations is None:
            meta = self._meta
            size = self.file.size
            footer = meta.serialized_size
            buf = np.frombuffer(self._pread(size - 8 - footer, footer), dtype=np.uint8)
            offsets = np.empty((meta.num_row_groups, meta.num_columns), dtype=np.int64)
            lengths = np.empty_like(offsets)
            if not offset_index_locations(buf, meta.num_row_groups, meta.num_columns, offsets, lengths):
                raise StorageError(f"damaged data file {self.path}: its footer does not parse")
            self._index_locations = (offsets, lengths)
        return self._index_locations

    def _read_offset_index(self, leaf: int) -> _Pages | None:
        offsets, lengths = self._locations()
        parts: list[tuple[np.ndarray, ...]] = []
        for g in range(offsets.shape[0]):
            at, length = int(offsets[g, leaf]), int(lengths[g, leaf])
            if at < 0 or length <= 0:
                return None
            buf = np.frombuffer(self._pread(at, length), dtype=np.uint8)
            page_at, page_sizes, firsts = page_locations(buf, 0, len(buf))
            if len(page_sizes) and page_sizes[0] < 0:
                raise StorageError(f"damaged data file {self.path}: offset index of row group {g} does not parse")
            parts.append((page_at, page_sizes, firsts + self.group_starts[g], np.full(len(firsts), g)))
        if not parts:
            return _Pages(_NONE, _NONE, _NONE, _NONE)
        return _Pages(*(np.concatenate([p[i] for p in parts]) for i in range(4)))

    # -- reading --------------------------------------------------------------------------
    def _pread(self, offset: int, size: int) -> bytes:
        return self.file.read(size, offset)

    def _dictionary(self, leaf: int, group: int, first_page_at: int, codec: str) -> _Dictionary:
        return self._cache.get(
            (*self._key, "dictionary", leaf, group),
            lambda: self._read_dictionary(leaf, group, first_page_at, codec),
            lambda d: len(d.data),
        )

    def _read_dictionary(self, leaf: int, group: int, first_page_at: int, codec: str) -> _Dictionary:
        chunk = self._meta.row_group(group).column(leaf)
        at = chunk.dictionary_page_offset
        if not chunk.has_dictionary_page or at is None or not 0 < first_page_at - at:
            raise StorageError(f"damaged data file {self.path}: row group {group} has no dictionary page")
        raw = self._pread(at, first_page_at - at)
        what = f"column {chunk.path_in_schema}"
        head = np.empty((1, H_FIELDS), dtype=np.int64)
        if page_headers(np.frombuffer(raw, dtype=np.uint8), np.zeros(1, np.int64), np.array([len(raw)]), head) >= 0:
            raise StorageError(f"damaged data file {self.path}: the dictionary page header of {what} does not parse")
        head = head[0]
        if head[H_HAS_CRC] and crc32(memoryview(raw)[head[H_LEN] : head[H_LEN] + head[H_CSIZE]]) != head[H_CRC]:
            raise StorageError(f"damaged data file {self.path}: checksum mismatch in the dictionary page of {what}")
        if head[H_TYPE] != DICTIONARY_PAGE or head[H_ENCODING] not in (PLAIN, PLAIN_DICTIONARY):
            raise StorageError(f"damaged data file {self.path}: no PLAIN dictionary page in {what}")
        start = int(head[H_LEN])
        try:
            data = _decompress(self, np.frombuffer(raw, dtype=np.uint8), np.array([codec]), np.zeros(1, np.int64),
                               np.array([start]), np.array([start + head[H_CSIZE]]), head[H_USIZE : H_USIZE + 1]).tobytes()
        except _BadPage as err:
            raise StorageError(f"damaged data file {self.path}: the dictionary page of {what} {err.why}") from None
        n = int(head[H_VALUES])
        starts, lens = _NONE, _NONE
        width = {"INT32": 4, "FLOAT": 4, "INT64": 8, "DOUBLE": 8}.get(self._parquet_schema.column(leaf).physical_type, 0)
        if n < 0 or len(data) < n * width:
            raise StorageError(f"damaged data file {self.path}: a dictionary page of {what} is truncated")
        if self._parquet_schema.column(leaf).physical_type == "BYTE_ARRAY":
            starts, lens, ok = plain_entries(np.frombuffer(data, dtype=np.uint8), 0, len(data), n)
            if not ok:
                raise StorageError(f"damaged data file {self.path}: a dictionary page of {what} is truncated")
        return _Dictionary(data, n, starts, lens)

    def take(
        self, rows: np.ndarray, names: list[str], pool: Executor | None = None, chunk_pages: int = CHUNK_PAGES,
        keep: bool = True, order: np.ndarray | None = None,
    ) -> pa.Table:
        """The ``names`` columns of file-local ``rows`` (ascending, distinct); ``keep``: an
        object store's pages read are kept in its range cache (not by scans). With
        ``order``, row i of the result is ``rows[order[i]]`` (repeats allowed): a fetch of
        at most ``chunk_pages`` rows picks its values in that order (a search's rows by
        score: no reordering copy), a larger one is reordered after.

        Each column's rows are read in pieces of at most ``chunk_pages`` pages (so what a
        large fetch holds at once is bounded), run on ``pool`` when one is given: reads,
        decompression and the compiled loops release the GIL. Only scans pass a pool: on
        scattered rows a page is ~10 us of work, and handing the GIL between threads that
        often cost more than the second core gave (100 random rows of the benchmark's
        three columns: 4.0 ms on one thread, 6.0 ms on two; 4,000 rows: 134 vs 170 ms).
        A fetch's loops over a piece's pages (reads, CRCs, decompression) are cut in parts run side
        by side instead (:mod:`.side_by_side`; 1,000 rows of those columns: 26 ms before,
        ~14 ms with that and the pages decompressed in place); a scan's, whose pieces
        already share the cores, run whole."""
        if len(rows) and not 0 <= rows[0] <= rows[-1] < self.num_rows:
            raise StorageError(f"rows {rows[0]}..{rows[-1]} asked of data file {self.path} of {self.num_rows} rows")
        if order is not None and len(rows) > chunk_pages:  # (fetched in pieces: reordered whole)
            return reorder_rows(self.take(rows, names, pool, chunk_pages, keep), order)
        picked = rows if order is None else rows[order]
        pieces: dict[str, list] = {}
        tasks = []
        slow = []
        for name in names:
            column = self._column(name)
            if column is None:
                slow.append(name)
                continue
            if keep and self._reads_whole(column, len(rows), rows):
                pieces[name] = [self._whole_column(name).take(numeric_array(picked)).cast(self.schema.field(name).type)]
                continue
            pieces[name] = []
            for chunk in self._chunks(column, rows, chunk_pages):
                tasks.append((name, column, chunk))
        if pool is not None and len(tasks) > 1:
            arrays = list(pool.map(lambda task: _alone(_take_pieces, [_Piece(self, task[1], task[2])], keep, order),
                                   tasks))
        else:
            arrays = [_take_pieces([_Piece(self, column, chunk)], keep, order) for _, column, chunk in tasks]
        for (name, _, _), array in zip(tasks, arrays):
            pieces[name].append(array)
        pieces.update((name, self._take_from_groups(rows, name, order)) for name in slow)
        fields = [self.schema.field(n) for n in names]
        return pa.table([pa.chunked_array(pieces[f.name], f.type) for f in fields], schema=pa.schema(fields))

    def _chunks(self, column: _Column, rows: np.ndarray, chunk_pages: int) -> list[np.ndarray]:
        """``rows`` cut where every ``chunk_pages``-th page of the column starts."""
        pages = self._pages_of(column.leaf)
        assert pages is not None
        if len(rows) <= chunk_pages:
            return [rows]
        page_of = np.searchsorted(pages.first_rows, rows, side="right")
        starts = np.flatnonzero(np.diff(page_of, prepend=-1))
        return np.split(rows, starts[chunk_pages::chunk_pages])

    def take_codes(self, rows: np.ndarray, name: str) -> CodedRows:
        """Column ``name`` (text or integers) at ``rows`` (ascending, distinct) as codes:
        their places in the whole file's codes where :meth:`take` reads it whole (no
        value taken, no code copied), else its values encoded. What counting by the
        column needs."""
        found = self.whole_codes(name, len(rows))
        if found is not None:
            return CodedRows(found[0], rows, found[1])
        return CodedRows.of(self.take(rows, [name]).column(0))

    def _reads_whole(self, column: _Column, n: int, rows: np.ndarray | None = None) -> bool:
        """Whether a fetch of ``n`` rows (``rows``, where known) reads ``column`` whole, kept
        decoded (:meth:`_whole_column`): a narrow column (at most ``NARROW_BYTES`` a row as
        stored: codes, numbers, dates) kept whole already, or fetched for at least as many
        rows as it has pages in the file (``WHOLE_DENSITY`` rows a page; such a fetch reads
        about every page anyway), or once the pages its fetches decoded page by page (a page
        is decoded from its start), this one's included, hold half the file's rows: from
        then on it is kept, so fetching page by page never costs more than about twice
        reading it whole once (a rent-or-buy rule). A GROUP BY or aggregate over many
        matches fetches such a column for every match, statement after statement; a top 10
        fetches its ids, query after query (10 ids of 1,024-row pages: ~0.12 ms page by
        page). Once kept, a fetch of any number of rows takes them from it (a rare term's
        39 matches counted by a kept column: 0.8 ms page by page). The same values either
        way."""
        if not column.narrow:
            return False
        if self._cache.holds(self._whole_key(column.name)):
            return True
        pages = self._pages_of(column.leaf)
        if pages is None:
            return False
        if n >= WHOLE_MIN_ROWS and n * WHOLE_DENSITY >= len(pages.first_rows):
            return True
        if rows is None or not len(rows):
            return False
        touched = locate_rows(pages.first_rows, rows)[0]
        decoded = self._decoded.get(column.name, 0) + int(np.diff(pages.first_rows, append=self.num_rows)[touched].sum())
        self._decoded[column.name] = decoded  # (a heuristic's count: a lost update between threads costs nothing)
        return 2 * decoded >= self.num_rows

    def _whole_key(self, name: str) -> tuple:
        """Where the cache keeps column ``name`` of the whole file (:meth:`_whole_column`)."""
        return (*self._key, "whole column", name)

    def _whole_column(self, name: str) -> pa.Array:
        """Column ``name`` of the whole file, decoded by pyarrow and kept in the cache; text
        and bytes as one dictionary over the file (a take of many rows is one gather of
        codes and one cast: per row group, the two cost ~80 us each). Numbers and times
        are read a row group at a time into the one array kept: read whole and then
        joined, a 1M-row int64 column held it twice at once, and the process's resident
        memory grew by 22.6 MB for the 8 MB kept (pyarrow's allocator keeps what it
        freed)."""

        def read() -> pa.Array:
            with open_parquet(self.file.arrow_source(), self._meta, self._as_dictionary(name)) as parquet:
                field = parquet.schema_arrow.field(name)
                if _fixed_width(field.type):
                    return _read_fixed(parquet, name, self.num_rows)
                column = parquet.read(columns=[name]).column(0)
            if column.num_chunks and pa.types.is_dictionary(column.type):
                column = column.unify_dictionaries()
            return column.combine_chunks() if column.num_chunks else pa.array([], column.type)

        return self._cache.get(self._whole_key(name), read, lambda c: c.nbytes)

    def whole_codes(self, name: str, n: int, gaps: np.ndarray | None = None) -> tuple[np.ndarray, pa.Array] | None:
        """Column ``name`` (text or integers) of the whole file as one code a row
        (``coded_rows``) and its distinct values, where a fetch of ``n`` of its rows reads
        it whole (:meth:`_reads_whole`), else None: rows counted by it need only their
        places. With ``gaps`` (ascending offsets, from the file's first row id, of the ids
        its range holds but the file lacks: deleted rows), the codes spread over the ids,
        a gap's code 0 (never counted: its row is deleted). Kept in the cache beside the
        column (text is read as a dictionary already; other values are encoded once)."""
        column = self._column(name)
        if column is None or not self._reads_whole(column, n):
            return None
        spread = gaps is not None and len(gaps) > 0

        def read() -> tuple[np.ndarray, pa.Array]:
            whole = self._whole_column(name)
            encoded = whole if pa.types.is_dictionary(whole.type) else whole.dictionary_encode()
            codes = codes_of(encoded)
            if spread:
                kept = np.ones(len(codes) + len(gaps), bool)  # type: ignore[arg-type]
                kept[gaps] = False
                by_id = np.zeros(len(kept), codes.dtype)
                by_id[kept] = codes
                codes = by_id
            return codes, encoded.dictionary

        key = (*self._key, "whole codes by id" if spread else "whole codes", name)
        return self._cache.get(key, read, lambda c: c[0].nbytes + c[1].nbytes)

    def _take_from_groups(self, rows: np.ndarray, name: str, order: np.ndarray | None = None) -> list[pa.Array]:
        """Column ``name`` at ``rows`` (ascending; with ``order``, in that order, as
        :meth:`take`), from its row groups decoded whole by pyarrow and kept in the cache
        (text and bytes as dictionaries: only the rows taken become strings): the columns
        this reader cannot read page by page."""
        field = self.schema.field(name)
        groups = np.searchsorted(self.group_starts, rows, side="right") - 1
        bounds = np.flatnonzero(np.diff(groups, prepend=-1)).tolist() + [len(rows)]
        out = []
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            group = int(groups[lo])
            values = self._group_column(group, name)
            taken = values.take(pa.array(rows[lo:hi] - self.group_starts[group]))
            out.extend(taken.cast(field.type).chunks)
        return out if order is None else pa.chunked_array(out, field.type).take(numeric_array(order)).chunks

    def _group_column(self, group: int, name: str) -> pa.ChunkedArray:
        def read() -> pa.ChunkedArray:
            with open_parquet(self.file.arrow_source(), self._meta, self._as_dictionary(name)) as parquet:
                return parquet.read_row_group(group, columns=[name]).column(0)

        return self._cache.get((*self._key, "group column", group, name), read, lambda c: c.nbytes)

    def _as_dictionary(self, name: str) -> list[str] | None:
        """``[name]`` if column ``name`` holds text or bytes (read by pyarrow as a
        dictionary: only the rows taken become strings), else None."""
        t = self.schema.field(name).type
        text = pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t)
        return [name] if text else None

    def readable(self, names: list[str]) -> bool:
        """Whether every one of ``names`` is read page by page (else by row group)."""
        return all(self._column(n) is not None for n in names)

    def scan(self, names: list[str], batch_rows: int, lo: int, hi: int, pool: Executor | None = None
             ) -> Iterator[pa.RecordBatch]:
        """Rows ``lo..hi`` (inclusive) of the ``names`` columns in batches of at most
        ``batch_rows``, each page read and decompressed once, with one read per run of
        adjacent pages: what Arrow's reader does, without its costs per page (it makes a
        ZSTD context per page, ~6-30 us with the page faults of its allocation)."""
        for start in range(lo, hi + 1, batch_rows):
            rows = np.arange(start, min(start + batch_rows, hi + 1), dtype=np.int64)
            # (no copy: batches are cut where pieces of SCAN_CHUNK_PAGES pages end)
            yield from self.take(rows, names, pool, SCAN_CHUNK_PAGES, keep=False).to_batches()

    def _decompressor(self, codec: str) -> Callable[[memoryview, list[tuple[int, int, int]]], list]:
        """This thread's decompression of spans of a buffer for ``codec`` (zstandard for
        ZSTD: it reuses one context, pyarrow makes one per call)."""
        if codec == "UNCOMPRESSED":
            return lambda view, spans: [bytes(view[a:b]) for a, b, _ in spans]
        if codec == "ZSTD":
            dctx = getattr(self._local, "zstd", None)
            if dctx is None:
                dctx = self._local.zstd = zstandard.ZstdDecompressor()
            return lambda view, spans: [dctx.decompress(view[a:b], max_output_size=z) for a, b, z in spans]
        if codec == "LZ4":
            return _lz4
        arrow = pa.Codec(_CODECS[codec])
        return lambda view, spans: [arrow.decompress(view[a:b], decompressed_size=z) for a, b, z in spans]



def _fixed_width(t: pa.DataType) -> bool:
    """Whether values of ``t`` are one fixed-width number each (no bit-packed booleans)."""
    return (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t)) and \
        not pa.types.is_interval(t) and t.bit_width % 8 == 0


def _read_fixed(parquet: Any, name: str, n: int) -> pa.Array:
    """Column ``name`` (fixed-width values) of all ``n`` rows of the open file
    ``parquet``, read a row group at a time into one buffer (and its validity), of the
    type pyarrow reads it as."""
    chunks = (chunk for group in range(parquet.num_row_groups)
              for chunk in parquet.read_row_group(group, columns=[name]).column(0).chunks)
    first = next(chunks, None)
    if first is None:
        return pa.array([], parquet.schema_arrow.field(name).type)
    arrow_type = first.type
    width = arrow_type.bit_width // 8
    data = np.empty(n * width, dtype=np.uint8)
    valid = np.ones(n, dtype=np.bool_)
    at = 0
    for chunk in itertools.chain([first], chunks):
        m = len(chunk)
        if chunk.type != arrow_type or at + m > n:
            raise StorageError(f"column {name!r} does not read as {n} values of {arrow_type}")
        values = chunk.buffers()[1]
        if values is not None and m:
            data[at * width : (at + m) * width] = np.frombuffer(values, np.uint8)[
                chunk.offset * width : (chunk.offset + m) * width]
        if chunk.null_count:
            valid[at : at + m] = chunk.is_valid().to_numpy(zero_copy_only=False)
        at += m
    if at != n:
        raise StorageError(f"column {name!r} does not read as {n} values of {arrow_type}")
    mask, nulls = validity(valid)
    return pa.Array.from_buffers(arrow_type, n, [mask, pa.py_buffer(data)], null_count=nulls)


def take_rows(parts: list[tuple[PageReader, np.ndarray]], names: list[str], order: np.ndarray | None = None
              ) -> pa.Table:
    """The ``names`` columns of several files' rows (each file's local rows ascending
    and distinct; at least one row in all), file after file, as one table of the first
    file's column types; with ``order``, row i of the result is row ``order[i]`` of that
    (as ``PageReader.take``).

    A column decoded alike in every file is fetched as one piece of work: the pages of
    all files read by one compiled loop, parsed, checked, decompressed and picked from
    together. Per file and column, a separate fetch paid ~100 us of its own besides its
    pages (top-10 rows of three columns at 10M documents touch ten files: 30 fetches)."""
    parts = [(reader, rows) for reader, rows in parts if len(rows)]
    if len(parts) == 1:
        return parts[0][0].take(parts[0][1], names, order=order)
    if sum(len(rows) for _, rows in parts) > CHUNK_PAGES:
        # (a large fetch: file by file, each in pieces of bounded size)
        tables = [reader.take(rows, names) for reader, rows in parts]
        table = pa.concat_tables([t if t.schema == tables[0].schema else t.cast(tables[0].schema) for t in tables])
        return table if order is None else reorder_rows(table, order)
    fields = [parts[0][0].schema.field(n) for n in names]
    columns: list[pa.ChunkedArray] = []
    for name, field in zip(names, fields):
        found = [reader._column(name) for reader, _ in parts]
        if all(c is not None and _decodes_alike(c, found[0]) and reader.schema.field(name) == field
               for c, (reader, _) in zip(found, parts)):
            columns.append(pa.chunked_array(
                [_take_pieces([_Piece(r, c, rows) for (r, rows), c in zip(parts, found)], order=order)]))
        else:
            column = pa.chunked_array(
                [c for r, rows in parts for c in r.take(rows, [name]).column(0).cast(field.type).chunks], field.type)
            columns.append(column if order is None else column.take(numeric_array(order)))
    return pa.table(columns, schema=pa.schema(fields))


def take_codes(parts: list[tuple[PageReader, np.ndarray]], name: str) -> list[CodedRows]:
    """:meth:`PageReader.take_codes` of each file's rows, file after file."""
    return [reader.take_codes(rows, name) for reader, rows in parts if len(rows)]


def pages_of(parts: list[tuple[PageReader, np.ndarray]], name: str) -> np.ndarray | None:
    """A key of the page of column ``name`` each row of ``parts`` (file after file) sits
    in, equal for rows of one page of one file; None if a file reads it by row group."""
    keys = []
    for i, (reader, rows) in enumerate(parts):
        pages = reader.pages_of(rows, name)
        if pages is None:
            return None
        keys.append(pages + (i << 40))
    return np.concatenate(keys) if keys else np.zeros(0, np.int64)


def fetch_units(parts: list[tuple[PageReader, np.ndarray]], name: str) -> Counter[str]:
    """What :func:`take_rows` reads of column ``name`` at ``parts``: data pages, or row
    groups where the column is read by row group (``PageReader.units_of``)."""
    units: Counter[str] = Counter()
    for reader, rows in parts:
        unit, count = reader.units_of(rows, name)
        units[unit] += count
    return units


@dataclass(frozen=True)
class _Piece:
    """One file's share of a column fetch: its reader, how the column decodes in it,
    and its rows (file-local, ascending, distinct)."""

    reader: PageReader
    column: _Column
    rows: np.ndarray


class _BadPage(Exception):
    """Page ``page`` of a fetch is damaged (``why``): the caller names its file."""

    def __init__(self, page: int, why: str) -> None:
        super().__init__(why)
        self.page, self.why = page, why


def _decodes_alike(a: _Column, b: _Column) -> bool:
    """Whether pages of ``a`` and ``b`` (one column of two files) decode by the same loop
    to the same Arrow type."""
    return (a.kind, a.width, a.max_def, a.arrow_type, a.physical) == (b.kind, b.width, b.max_def, b.arrow_type, b.physical)


def _alone(run: Callable[..., T], *args: Any) -> T:
    """``run(*args)`` with this thread's page loops whole (:func:`.side_by_side.one_part`)."""
    with one_part():
        return run(*args)


def _take_pieces(pieces: list[_Piece], keep: bool = True, order: np.ndarray | None = None) -> pa.Array:
    """The column's values at each piece's rows, piece after piece, from the pages they
    sit in (the pieces' columns decode alike); an object store's pages read are kept in
    its range cache if ``keep`` (a fetch's: a scan reads each page once). With ``order``,
    value i is that of row ``order[i]`` of those (the values are picked in row order,
    then laid out in this one)."""
    column = pieces[0].column
    located = []
    for piece in pieces:
        pages = piece.reader._pages_of(piece.column.leaf)
        assert pages is not None
        located.append((pages, *locate_rows(pages.first_rows, piece.rows)))
    counts = np.array([len(used) for _, used, _, _ in located], dtype=np.int64)
    bases = np.cumsum(counts) - counts
    which = np.repeat(np.arange(len(pieces)), counts)  # each page's piece
    sizes = np.concatenate([pages.sizes[used] for pages, used, _, _ in located])
    raw = read_file_ranges([p.reader.file for p in pieces], which,
                           np.concatenate([pages.offsets[used] for pages, used, _, _ in located]), sizes, keep)
    mine = [(p.column, pages.groups[used]) for p, (pages, used, _, _) in zip(pieces, located)]  # (row groups)
    groups = np.concatenate([g for _, g in mine])
    compressed = np.concatenate([c.compressed[g] for c, g in mine])
    try:
        spans = np.empty((len(sizes), S_FIELDS), dtype=np.int64)
        bad, why = page_spans(raw, sizes, compressed, column.max_def, spans)
        if bad >= 0:
            raise _BadPage(bad, _WHY[why])
        # Decompressed values go after the raw pages (decompressed there: not copied
        # again; where every page is compressed, after their levels only), where their
        # spans then point. A small piece of one codec is checked and
        # decompressed by one compiled call (ten rows' pages: the arrays and calls between
        # separate loops cost more than the pages).
        fused = None
        if len(pieces) == 1 and not column.mixed:
            fused = c_page_codecs.check_and_inflate(str(column.codecs[0]), raw, spans)
        if fused is not None:
            buf, bad, why = fused
            if bad >= 0:
                raise _BadPage(bad, ("has a checksum mismatch", "does not decompress to its size")[why])
        else:
            _check_crcs(raw, spans)
            buf = _inflated(pieces, mine, raw, spans)
        encodings = spans[:, S_ENCODING]
        dict_n = np.zeros(len(sizes), np.int64)
        dictionaries = {}
        on_dictionary = (encodings == RLE_DICTIONARY) | (encodings == PLAIN_DICTIONARY)
        if on_dictionary.any():
            dictionaries = _dictionaries(pieces, [pages for pages, _, _, _ in located], which, groups, on_dictionary)
            for (i, group), d in dictionaries.items():
                dict_n[on_dictionary & (which == i) & (groups == group)] = d.n
        page_of = np.concatenate([page_of + base for (_, _, page_of, _), base in zip(located, bases.tolist())])
        wanted = np.concatenate([wanted for _, _, _, wanted in located])
        n = len(wanted)
        valid = np.empty(n, dtype=np.bool_)
        a = np.zeros(n, dtype=np.int64)
        b = np.zeros(n, dtype=np.int64)
        coded = np.zeros(n, dtype=np.bool_)
        bad = select_values(buf, spans, dict_n, page_of, wanted, column.kind, column.width, column.max_def,
                            valid, a, b, coded)
        if bad >= 0:
            raise _BadPage(bad, "does not decode")
        if coded.any():
            buf = _look_up(column, dictionaries, which[page_of], groups[page_of], coded, buf, a, b)
    except _BadPage as err:
        path = pieces[int(which[err.page])].reader.path
        raise StorageError(f"damaged data file {path}: a page of column {column.name!r} {err.why}") from None
    if order is not None:
        valid, a, b = valid[order], a[order], b[order]
    return _arrow(column, buf, valid, a, b)


def _inflated(pieces: list[_Piece], mine: list[tuple[_Column, np.ndarray]], raw: np.ndarray, spans: np.ndarray
              ) -> np.ndarray:
    """``raw`` (where every page is compressed, its pages' levels only: :func:`_levels_first`)
    followed by the values of its compressed pages decompressed, where their spans
    (``spans``' S_VAL_LO, S_VAL_HI) are moved; ``mine``: each piece's column and its
    pages' row groups (their codecs)."""
    packed = np.flatnonzero(spans[:, S_PACKED])
    if not len(packed):
        return raw
    column = pieces[0].column
    if len(pieces) == 1 and not column.mixed:
        one = column.codecs[:1]  # (one codec: one tight loop)
    else:
        one = np.concatenate([c.codecs[g] for c, g in mine])[packed]
    done = spans[packed, S_USIZE]
    kept = _levels_first(raw, spans) if len(packed) == len(spans) else None
    if kept is None:  # (a page's values are the raw bytes themselves)
        kept = raw
    buf = np.empty(len(kept) + int(done.sum()), dtype=np.uint8)
    buf[: len(kept)] = kept
    _decompress(pieces[0].reader, raw, one, packed, spans[packed, S_VAL_LO], spans[packed, S_VAL_HI],
                done, buf[len(kept) :])
    spans[packed, S_VAL_LO] = len(kept) + np.cumsum(done) - done
    spans[packed, S_VAL_HI] = spans[packed, S_VAL_LO] + done
    return buf


def _levels_first(raw: np.ndarray, spans: np.ndarray) -> np.ndarray | None:
    """The levels of ``raw``'s data pages v2 (S_LEV_LO, S_LEV_HI), end to end, their spans
    moved there: all that is read of the raw pages once every page's values are
    decompressed elsewhere (a v1 page's levels are among its values). Copying them, not
    the whole of ``raw``, saved ~0.9 ms of a 941-row fetch of ~7.8 MB of pages. None
    where a span is out of bounds (the whole is kept, for the values' loop to report)."""
    lo, hi = spans[:, S_LEV_LO], spans[:, S_LEV_HI]
    v2 = lo >= 0
    lengths = np.where(v2, hi - lo, 0)
    if np.any(lengths < 0) or np.any(hi[v2] > len(raw)):
        return None
    at = np.cumsum(lengths) - lengths
    total = int(lengths.sum())
    levels = raw[np.arange(total) + np.repeat(lo - at, lengths)] if total else np.zeros(0, dtype=np.uint8)
    spans[v2, S_LEV_LO] = at[v2]
    spans[v2, S_LEV_HI] = at[v2] + lengths[v2]
    return levels


def _check_crcs(raw: np.ndarray, spans: np.ndarray) -> None:
    """The pages' CRCs (those that carry one) checked: in one compiled call where the C
    libraries load (:mod:`.c_page_codecs`), else page by page through ``zlib``."""
    if c_page_codecs.AVAILABLE:
        bad = c_page_codecs.check_crcs(raw, spans[:, S_HAS_CRC], spans[:, S_CRC_LO], spans[:, S_CRC_HI],
                                       spans[:, S_CRC])
        if bad >= 0:
            raise _BadPage(bad, "has a checksum mismatch")
        return
    view = memoryview(raw)
    for page, (has, lo, hi, crc) in enumerate(spans[:, _CRC_FIELDS].tolist()):
        if has and crc32(view[lo:hi]) != crc:
            raise _BadPage(page, "has a checksum mismatch")


def _dictionaries(
    pieces: list[_Piece], pages: list[_Pages], which: np.ndarray, groups: np.ndarray, coded: np.ndarray,
) -> dict[tuple[int, int], _Dictionary]:
    """The dictionaries (cached, decompressed) of the row groups whose pages ``coded``
    refer to one, by (piece, row group)."""
    found = {}
    for i in np.unique(which[coded]).tolist():
        piece = pieces[i]
        for group in np.unique(groups[coded & (which == i)]).tolist():
            first_page = int(pages[i].offsets[np.searchsorted(pages[i].groups, group)])
            found[i, group] = piece.reader._dictionary(piece.column.leaf, group, first_page,
                                                       str(piece.column.codecs[group]))
    return found


def _look_up(
    column: _Column, dictionaries: dict[tuple[int, int], _Dictionary], piece_of: np.ndarray, group_of: np.ndarray,
    coded: np.ndarray, buf: np.ndarray, a: np.ndarray, b: np.ndarray,
) -> np.ndarray:
    """The values of the rows ``coded`` (``a``: their dictionary entries, of row group
    ``group_of`` of piece ``piece_of``) from their dictionaries: fixed-width values into
    ``a``; byte arrays' bytes appended to ``buf`` (returned), ``a``/``b`` pointing there.
    Only the wanted entries are copied, not the dictionaries, nor ``buf`` (every page
    read, decompressed): byte arrays of rows not coded (pages past a dictionary's
    fallback to plain) are first gathered from it, so the values are those bytes alone
    (appending to ``buf`` copied it whole: 0.15 ms a fetch of 10 rows of pyarrow's pages)."""
    extra, filled = [buf], len(buf)
    if column.kind == BYTES:
        plain = ~coded
        offsets, data = gather_bytes(buf, plain, a, b)
        a[plain] = offsets[:-1][plain]
        extra, filled = [data], len(data)
    for (i, group), d in dictionaries.items():
        rows = np.flatnonzero(coded & (piece_of == i) & (group_of == group))
        if not len(rows):
            continue
        entries = a[rows]
        if column.kind == FIXED:
            values = np.frombuffer(d.data, dtype="<i8" if column.width == 8 else "<u4", count=d.n)
            a[rows] = values[entries].astype(np.int64)
            continue
        starts, lens = d.starts[entries], d.lens[entries]
        offsets, data = gather_bytes(np.frombuffer(d.data, dtype=np.uint8), np.ones(len(rows), np.bool_), starts, lens)
        a[rows], b[rows] = filled + offsets[:-1], lens
        extra.append(data)
        filled += len(data)
    return np.concatenate(extra) if len(extra) > 1 else extra[0] if extra else buf


def _decompress(
    reader: PageReader, raw: np.ndarray, codecs: np.ndarray, pages: np.ndarray, lo: np.ndarray, hi: np.ndarray,
    sizes: np.ndarray, out: np.ndarray | None = None,
) -> np.ndarray:
    """``raw[lo[i]:hi[i]]`` decompressed to ``sizes[i]`` bytes each, end to end in one
    array (``out`` if given, of their total size), with ``reader``'s decompressors for
    this thread (``codecs``: each span's, or one for all); ``pages[i]``: which page span i
    is, for errors. ZSTD pages go through one compiled call where libzstd loads, LZ4
    pages where liblz4 does (:mod:`.c_page_codecs`)."""
    one = len(codecs) == 1 or len(set(codecs.tolist())) == 1
    compiled = None
    if one and str(codecs[0]) == "ZSTD" and c_page_codecs.AVAILABLE:
        compiled = c_page_codecs.decompress_frames
    elif one and str(codecs[0]) == "LZ4" and c_page_codecs.LZ4_AVAILABLE:
        compiled = c_page_codecs.decompress_lz4_blocks
    if compiled is not None:
        out, bad = compiled(raw, lo, hi, sizes, out)
        if bad >= 0:
            raise _BadPage(int(pages[bad]), "does not decompress to its size")
        return out
    view = memoryview(raw)
    spans = list(zip(lo.tolist(), hi.tolist(), sizes.tolist()))
    try:
        if one:  # (one codec: one tight loop)
            parts = reader._decompressor(str(codecs[0]))(view, spans)
        else:
            parts = [reader._decompressor(c)(view, [span])[0] for c, span in zip(codecs.tolist(), spans)]
    except (zstandard.ZstdError, pa.ArrowException, ValueError, _BadPage) as exc:
        # (find the page: decompress them one by one)
        for i, (span, codec) in enumerate(zip(spans, np.resize(codecs, len(spans)).tolist())):
            try:
                reader._decompressor(codec)(view, [span])
            except (zstandard.ZstdError, pa.ArrowException, ValueError, _BadPage):
                raise _BadPage(int(pages[i]), f"does not decompress ({exc})") from None
        raise
    for i, (v, (_, _, z)) in enumerate(zip(parts, spans)):
        if len(v) != z:
            raise _BadPage(int(pages[i]), "decompresses to the wrong size")
    joined = np.frombuffer(b"".join(parts), dtype=np.uint8)
    if out is None:
        return joined
    out[:] = joined
    return out


def _lz4(view: memoryview, spans: list[tuple[int, int, int]]) -> list:
    """LZ4 pages in one compiled call (see ``kernels/lz4_block.pyx``)."""
    lo, hi, sizes = (np.array(x, dtype=np.int64) for x in zip(*spans))
    out, bad = decompress_blocks(np.frombuffer(view, dtype=np.uint8), lo, hi, sizes)
    if bad >= 0:
        raise _BadPage(bad, "is not LZ4")
    ends = np.cumsum(sizes).tolist()
    return [out[e - z : e] for e, z in zip(ends, sizes.tolist())]

def _arrow(column: _Column, buf: np.ndarray, valid: np.ndarray, a: np.ndarray, b: np.ndarray) -> pa.Array:
    """The picked values as an array of the column's type."""
    if column.kind == BYTES:
        return bytes_array(column.arrow_type, valid, *gather_bytes(buf, valid, a, b))
    n = len(valid)
    mask, nulls = validity(valid)
    if column.kind == BOOLEAN:
        bits = pa.py_buffer(np.packbits((a != 0) & valid, bitorder="little"))
        return pa.Array.from_buffers(pa.bool_(), n, [mask, bits], null_count=nulls)
    data = a if column.width == 8 else a.astype(np.uint32)  # (FIXED: a value's bits; 0 for a null)
    array = pa.Array.from_buffers(column.physical, n, [mask, pa.py_buffer(data)], null_count=nulls)
    return array if column.physical == column.arrow_type else array.cast(column.arrow_type)
