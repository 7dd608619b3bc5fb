"""Where a database's bytes live: a directory on disk, or memory (``fts.connect()``).

Both stores hold the same things — a manifest, Parquet data fragments (as Arrow tables in
memory), and index segments (named Arrow arrays; memory-mapped Arrow IPC on disk) — behind
one interface, so the engine never asks which it has.

Data fragments are Parquet files DataFusion scans natively, laid out for random access
too: small data pages (a few kilobytes of each column's values), an offset index saying
where each page starts, and a CRC per page. Fetching a search's k rows then reads and
decompresses about k small pages per column (:mod:`.page_reader`), not k row groups.
"""

from __future__ import annotations

import errno
import fcntl
import itertools
import json
import mmap
import os
import re
import shutil
import struct
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ...errors import ReadOnlyError, StaleSnapshotError, StorageError
from ..coded_rows import CodedRows
from ..files import checksums
from ..files.crc32 import crc32
from ..files.layout import MANIFEST
from ..files.manifest import FORMAT_VERSION, FragmentMeta, Manifest
from ..files.os_files import describe_os_error, fsync_path, make_dirs
from ..files.segment_bundle import BUNDLE, unpack
from ..parquet.data_files import DataFile
from ..parquet.page_reader import (
    DecodedCache,
    OpenReaders,
    PageReader,
    fetch_units,
    open_parquet,
    pages_of,
    take_codes,
    take_rows,
)
from ..parquet.reorder_rows import reorder_rows

ROW_GROUP_ROWS = 65_536
# The rows of a batch a scan of a fragment or a source file yields.
SCAN_BATCH_ROWS = 32_768
# A data page closes once its values pass PAGE_BYTES, checked every ``write_batch_size``
# rows; that step is chosen per file so a page of the widest column holds about
# PAGE_ROW_BYTES (see _writer_options). Smaller pages cost more bytes on disk (less for
# the codec to work with), larger ones more time per fetched row: on the benchmark corpus
# (~400-byte bodies) pages of 16 bodies make ZSTD files 1.19x the size of 1 MiB pages;
# with LZ4, pages of 8 KiB or 16 KiB made files 6 % or 10 % smaller than 4 KiB, and
# fetching 941 scattered rows' title and body 1.5x or 2.2x slower.
PAGE_BYTES = 4096
PAGE_ROW_BYTES = 8192
# The codecs of text and other variable-width columns a data file may be written with
# (``fts.text_codec``; see _writer_options), the first the default.
TEXT_CODECS = ("lz4", "zstd")
# Rows a page holds at most (a delta-encoded page of ids is decoded up to the fetched row).
PAGE_MAX_ROWS = 1024
# Column statistics are kept but for text columns longer than this on average (bodies'
# min/max would repeat whole documents in every page header).
STATISTICS_MAX_BYTES = 64
# A column is dictionary-encoded when its first batch has at most this share of distinct values.
DICTIONARY_MAX_DISTINCT = 0.5
# Seconds a write waits for the writer lock before it is refused: another Database
# opening the directory holds it for the moment its garbage collection takes.
LOCK_WAIT = 0.5
_COUNTERS = struct.Struct("<QQ")
# Why a store opened with ``read_only=True`` may not be written (``DirectoryStore.read_only``);
# opening a directory for writing falls back to reading on these errors.
READ_ONLY_ASKED = "read_only=True was asked"
_READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
_FRAGMENT_FILE = re.compile(r"^((?:frag|dv)-\d{8})(\.parquet|\.arrow)?(\.tmp)?$")
_SEGMENT_DIR = re.compile(r"^(seg-\d{8})(\.tmp)?$")


def parse_manifest(data: bytes, where: str) -> Manifest:
    """The manifest in ``data`` (read from ``where``); a StorageError if it does not
    parse, or is of a format newer than this version reads."""
    try:
        parsed = json.loads(data.decode("utf-8"))
        found = parsed.get("format") if isinstance(parsed, dict) else None
        if isinstance(found, int) and found > FORMAT_VERSION:
            raise StorageError(
                f"the manifest {where} has format {found}: the database was written by a newer "
                f"datafusion-fts (this one reads formats 1 to {FORMAT_VERSION}); upgrade datafusion-fts to open it"
            )
        return Manifest.from_json(parsed)
    except (ValueError, KeyError, TypeError, AttributeError, pa.ArrowException) as exc:
        raise StorageError(f"unreadable manifest {where}: {exc}") from exc


def segment_arrays(
    where: str, names: list[str], buffer_of: Callable[[str], pa.Buffer],
    sums: tuple[dict[str, checksums.FileSums], int] | None, lazy: frozenset[str],
) -> tuple[dict[str, pa.Array], dict[str, checksums.LazyRegions]]:
    """A segment's arrays (``names``, each file's bytes from ``buffer_of``, zero copy),
    verified against ``sums`` (its checksum file's, decoded; None: written before
    checksums, read as it is) but for the values of the ``lazy`` arrays: their regions
    to verify when read are returned."""
    out, regions = {}, {}
    for name in names:
        buffer = buffer_of(name)
        path = f"{where}/{name}.arrow"
        if sums is None:
            out[name] = checksums.parse(buffer, path)
            continue
        files, region = sums
        data = checksums.file_bytes(buffer)
        done = checksums.verify_file(path, data, files[name], region, name in lazy)
        out[name] = checksums.parse(buffer, path)
        if name in lazy:
            regions[name] = checksums.lazy_regions(path, out[name], buffer.address, data, files[name], region, done)
    return out, regions


def bundle_arrays(
    where: str, bundle: bytes | memoryview, crc: int | None, lazy: frozenset[str],
) -> tuple[dict[str, pa.Array], dict[str, checksums.LazyRegions]]:
    """A segment's arrays from its bundle (``files/segment_bundle.py``: the files of a
    segment directory as one object), verified as a directory's are."""
    files = unpack(bundle, where)
    names = sorted(n[: -len(".arrow")] for n in files if n.endswith(".arrow"))
    sums = None
    if crc is not None:
        if checksums.CHECKSUMS not in files:
            raise StorageError(f"index segment {where} holds no {checksums.CHECKSUMS}")
        found, region = checksums.decode(bytes(files[checksums.CHECKSUMS]), crc, f"{where}/{checksums.CHECKSUMS}")
        names, sums = sorted(found), (found, region)

    def buffer_of(name: str) -> pa.Buffer:
        if f"{name}.arrow" not in files:
            raise StorageError(f"index segment {where} holds no {name}.arrow")
        return pa.py_buffer(files[f"{name}.arrow"])

    return segment_arrays(where, names, buffer_of, sums, lazy)


class Store(Protocol):
    # Whether an acknowledged insert is a commit (a store with no write-ahead log: the
    # object store's), rather than a record in the table's log.
    commits_inserts: bool

    def load_manifest(self) -> Manifest: ...
    def check_manifest(self) -> None: ...
    def changes(self) -> tuple[int, int]: ...
    def announce(self) -> None: ...
    def commit(self, manifest: Manifest) -> None: ...
    def write_fragment(
        self, frag_id: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch]
    ) -> tuple[int, checksums.ParquetCrcs]:
        """Write a fragment; the rows written and the crc32s of its file."""
    def check_fragments(self, fragments: Iterable[FragmentMeta]) -> None:
        """Check each fragment's whole file against its crc32 (``FragmentMeta.crc``),
        the first time it is asked in this process, before DataFusion's Parquet reader
        (which checks no page CRC) scans it; a mismatch is a StorageError naming the file."""
    def iter_fragment(
        self, frag_id: str, columns: list[str], batch_rows: int, local_range: tuple[int, int] | None = None
    ) -> Iterator[pa.RecordBatch]: ...
    def take_rows(self, parts: list[tuple[str, np.ndarray]], columns: list[str], order: np.ndarray | None = None
                  ) -> pa.Table:
        """The ``columns`` of rows of fragments, fragment after fragment: ``parts`` are
        (fragment id, local rows ascending and distinct, at least one); with ``order``,
        row i of the result is row ``order[i]`` of that (repeats allowed)."""
    def take_codes(self, parts: list[tuple[str, np.ndarray]], column: str) -> list[CodedRows]:
        """``column`` (text or integers) of the rows of ``parts`` (as for ``take_rows``)
        as codes, fragment after fragment: what counting by the column needs, without
        making a value per row where the store keeps the column decoded."""
    def whole_codes(self, frag_id: str, column: str, n: int, gaps: np.ndarray | None = None
                    ) -> tuple[np.ndarray, pa.Array] | None:
        """Column ``column`` of the whole fragment as codes and keys (spread over its ids
        around ``gaps``: ``PageReader.whole_codes``) where the store keeps it so for
        counting ``n`` of its rows, else None."""
    def pages_of(self, parts: list[tuple[str, np.ndarray]], column: str) -> np.ndarray | None:
        """A key of the page of ``column`` each row of ``parts`` (as for ``take_rows``)
        sits in, equal for rows of one page; None where rows are not read by page."""
    def fetch_units(self, parts: list[tuple[str, np.ndarray]], column: str) -> Counter[str]:
        """What ``take_rows(parts, [column])`` reads, by unit ("pages", "row groups",
        "rows in memory"), for EXPLAIN ANALYZE."""
    def fragment_paths(self, frag_ids: list[str]) -> list[str] | None: ...
    def fragment_bytes(self, frag_ids: list[str]) -> int | None:
        """What the fragments' rows take in memory, decoded (None: not known cheaply)."""
    def write_segment(self, seg_id: str, arrays: dict[str, pa.Array], compressed: frozenset[str] = frozenset()
                      ) -> int | None: ...
    def read_segment(
        self, seg_id: str, crc: int | None, lazy: frozenset[str] = frozenset()
    ) -> tuple[dict[str, pa.Array], dict[str, checksums.LazyRegions]]: ...
    @property
    def read_only(self) -> str | None:
        """Why this store may not be written (``connect(read_only=True)``, or storage
        that refused a write at open); None when it may."""
    def refuse_writes(self) -> None:
        """Raise :class:`ReadOnlyError` when :attr:`read_only`."""
    def lock_for_writes(self) -> bool: ...
    def release_write_lock(self) -> None: ...
    @property
    def holds_write_lock(self) -> bool: ...
    def exclusive(self) -> AbstractContextManager[bool]: ...
    def reading_alone(self) -> AbstractContextManager[bool]: ...
    def write_deletes(self, dv_id: str, rows: np.ndarray) -> int | None: ...
    def read_deletes(self, dv_id: str, crc: int | None) -> np.ndarray: ...
    def collect_garbage(self, keep: frozenset[str]) -> None: ...


class PagedFragments:
    """The reads of data fragments by page, for the stores whose fragments are Parquet
    files a :class:`PageReader` reads (a directory's, an object store's): each store says
    where a fragment's file is (``_fragment_file``), its whole file's crc32
    (``_fragment_crc``) and which threads a scan may use; the readers, the footers' and
    the checked files' bookkeeping are these."""

    def _init_fragments(self) -> None:
        self._readers = OpenReaders()  # (by fragment id: each keeps its offset index)
        self._cache = DecodedCache()
        self._checked: set[str] = set()  # fragments whose whole file matched its crc32
        self._footer_crcs: dict[str, int] = {}  # (see note_footers)
        self._lock = threading.Lock()

    def _fragment_file(self, frag_id: str) -> Path | DataFile:
        """The fragment's file (a StaleSnapshotError if it is gone)."""
        raise NotImplementedError

    def _fragment_crc(self, frag_id: str) -> int:
        """The crc32 of the fragment's whole file (a StaleSnapshotError if it is gone)."""
        raise NotImplementedError

    def _scan_pool(self) -> Executor | None:
        return None

    def note_footers(self, crcs: dict[str, int]) -> None:
        """Keep the footer crc32s of data files (by id) that readers opened later check.
        Every manifest this store reads or writes gives its own, so every fragment a
        snapshot can name has its crc here; a build task told a table's notes them."""
        with self._lock:
            self._footer_crcs.update(crcs)

    def _pages(self, frag_id: str) -> PageReader:
        """The fragment's page reader (kept open while recently used: it keeps its offset
        index; at most ``OPEN_READERS`` of them)."""

        def opened() -> PageReader:
            try:
                return PageReader(self._fragment_file(frag_id), self._cache, self._footer_crcs.get(frag_id))
            except FileNotFoundError:
                raise file_gone(self.root, "data fragment", frag_id) from None  # type: ignore[attr-defined]

        return self._readers.get((frag_id,), opened)

    def check_fragments(self, fragments: Iterable[FragmentMeta]) -> None:
        """Check each fragment's whole file against its crc32 (``FragmentMeta.crc``),
        the first time it is asked in this process, before DataFusion's Parquet reader
        (which checks no page CRC) scans it; a mismatch is a StorageError naming the file.
        (None: written before format 6.) Several files are summed on the scan threads,
        as the sum releases the GIL."""
        todo = [f for f in fragments if f.crc is not None and f.id not in self._checked]
        pool = self._scan_pool() if len(todo) > 1 else None
        found = list(pool.map(self._fragment_crc, [f.id for f in todo])) if pool is not None else [
            self._fragment_crc(f.id) for f in todo]
        for frag, crc in zip(todo, found):
            if crc != frag.crc:
                raise StorageError(f"damaged data file {self._fragment_name(frag.id)}: its crc32 is {crc}, "
                                   f"the manifest says {frag.crc}")
        with self._lock:
            self._checked.update(f.id for f in todo)

    def _fragment_name(self, frag_id: str) -> str:
        raise NotImplementedError

    def iter_fragment(
        self, frag_id: str, columns: list[str], batch_rows: int, local_range: tuple[int, int] | None = None
    ) -> Iterator[pa.RecordBatch]:
        """The fragment's rows in batches; with ``local_range`` (inclusive local rows) only
        those (paged files), or the row groups that overlap it (others)."""
        pages = self._pages(frag_id)
        if pages.readable(columns):
            lo, hi = local_range if local_range is not None else (0, pages.num_rows - 1)
            yield from pages.scan(columns, batch_rows, lo, hi, self._scan_pool())
            return
        # A reader of its own per scan: concurrent scans never share pyarrow state, and
        # without memory mapping the scanned pages are not charged to this process's RSS.
        groups = pages.row_groups(*local_range) if local_range is not None else None
        yield from open_parquet(pages.file.arrow_source()).iter_batches(batch_size=batch_rows, columns=columns,
                                                                        row_groups=groups)

    def fragment_bytes(self, frag_ids: list[str]) -> int:
        """What the fragments' rows take decoded, as their footers say."""
        return sum(self._pages(frag_id).data_bytes for frag_id in frag_ids)

    def take_rows(self, parts: list[tuple[str, np.ndarray]], columns: list[str], order: np.ndarray | None = None
                  ) -> pa.Table:
        """Rows by fragment and local index, reading only the pages they sit in, the
        pages of all fragments at once (``page_reader.take_rows``), a small fetch's
        values picked in ``order``."""
        return take_rows([(self._pages(frag_id), rows) for frag_id, rows in parts], columns, order)

    def whole_codes(self, frag_id: str, column: str, n: int, gaps: np.ndarray | None = None
                    ) -> tuple[np.ndarray, pa.Array] | None:
        return self._pages(frag_id).whole_codes(column, n, gaps)

    def take_codes(self, parts: list[tuple[str, np.ndarray]], column: str) -> list[CodedRows]:
        return take_codes([(self._pages(frag_id), rows) for frag_id, rows in parts], column)

    def pages_of(self, parts: list[tuple[str, np.ndarray]], column: str) -> np.ndarray | None:
        return pages_of([(self._pages(frag_id), rows) for frag_id, rows in parts], column)

    def fetch_units(self, parts: list[tuple[str, np.ndarray]], column: str) -> Counter[str]:
        return fetch_units([(self._pages(frag_id), rows) for frag_id, rows in parts], column)


def _remove(path: Path) -> None:
    """Delete a file, or a segment directory as a whole: renamed to its ``.tmp`` form
    first, so a reader opening its files finds all of them or none (a reader that finds
    only some could not tell a missing array from one the segment never had)."""
    if not path.is_dir() or path.is_symlink():
        path.unlink(missing_ok=True)
        return
    if path.suffix != ".tmp":
        trash = path.with_name(path.name + ".tmp")
        shutil.rmtree(trash, ignore_errors=True)
        try:
            os.rename(path, trash)
            path = trash
        except OSError:
            pass
    shutil.rmtree(path, ignore_errors=True)


@contextmanager
def _writing(what: str, tmp: Path) -> Iterator[None]:
    """A step writing ``what`` through its temporary file or directory ``tmp``: an OSError
    (the disk full, an I/O error, a read-only file system) removes ``tmp`` at once (a
    failed build's files would keep a full disk full) and is a StorageError. A file
    already renamed into place is not named by any manifest yet: the writer's
    ``discard_uncommitted`` deletes it."""
    try:
        yield
    except BaseException as exc:
        _remove(tmp)
        if isinstance(exc, OSError):
            raise StorageError(f"cannot write {what}: {describe_os_error(exc)}") from exc
        raise


class _SourceFailed(Exception):
    """An error of the rows being written (the user's reader), carried past
    :func:`_writing`, which would take an OSError of it for one of the disk's."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def _pulled(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    iterator = iter(batches)
    while True:
        try:
            batch = next(iterator)
        except StopIteration:
            return
        except Exception as exc:
            raise _SourceFailed(exc) from exc
        yield batch


def write_fragment_file(path: Path, schema: pa.Schema, batches: Iterable[pa.RecordBatch],
                        text_codec: str = TEXT_CODECS[0]) -> tuple[int, checksums.ParquetCrcs]:
    """Write a data fragment's Parquet file at ``path`` (through ``path.parquet.tmp``,
    fsynced, renamed into place), its text columns compressed with ``text_codec``; the
    rows written and the crc32s of the file. An error of ``batches`` (the user's reader)
    is raised as it is; one of the disk, as a StorageError."""
    tmp = path.with_suffix(".parquet.tmp")
    rows = 0
    source = _pulled(batches)
    try:
        first = next(source, None)
        with _writing(f"data file {path}", tmp):
            with pq.ParquetWriter(tmp, schema, **_writer_options(schema, first, text_codec)) as writer:
                # Row groups of ROW_GROUP_ROWS whatever the incoming batch sizes.
                pending: list[pa.RecordBatch] = []
                pending_rows = 0
                for batch in itertools.chain([] if first is None else [first], source):
                    pending.append(batch)
                    pending_rows += batch.num_rows
                    rows += batch.num_rows
                    if pending_rows >= ROW_GROUP_ROWS:
                        table = pa.Table.from_batches(pending, schema=schema)
                        full = pending_rows - pending_rows % ROW_GROUP_ROWS
                        writer.write_table(table.slice(0, full), row_group_size=ROW_GROUP_ROWS)
                        pending = table.slice(full).to_batches()
                        pending_rows -= full
                if pending_rows:
                    writer.write_table(pa.Table.from_batches(pending, schema=schema), row_group_size=ROW_GROUP_ROWS)
            fsync_path(tmp)
            crcs = checksums.parquet_crcs(tmp)  # (read back from the page cache: ~0.1 s a 100 MB)
            os.replace(tmp, path)
            fsync_path(path.parent)  # the new name itself must survive a power loss
    except _SourceFailed as failed:
        raise failed.error from None
    return rows, crcs


def _write_file(path: Path, data: bytes) -> None:
    """``data`` as the file ``path``, fsynced."""
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def write_array_file(sink: pa.NativeFile, name: str, array: pa.Array, compression: str | None = None) -> None:
    """``array`` as the Arrow IPC file of one column ``name``: a segment's files (in a
    directory, or in an object store's bundle, byte for byte the same; uncompressed, for
    they are memory-mapped, but those a segment reads whole: ``Segment.compressed``) and
    deletion vectors are these."""
    batch = pa.record_batch([array], names=[name])
    with pa.ipc.new_file(sink, batch.schema, options=pa.ipc.IpcWriteOptions(compression=compression)) as writer:
        writer.write_batch(batch)


# The column of a deletion vector file: its sorted row ids, or (format 11) the
# differences between them, the first from 0.
DELETED_IDS, DELETED_ID_STEPS = "_rowid", "_rowid_steps"


def deletes_file(rows: np.ndarray) -> bytes:
    """The Arrow IPC file of a deletion vector (small: written and read whole): the steps
    between its sorted ids as uint32, compressed with ZSTD (the ids themselves where a
    step does not fit). A table's deletion vectors list every row it ever deleted
    (compaction only drops the rows), mostly in runs: 335,000 ids of 355,000 take 37 KB
    so, 342 KB as ids."""
    steps = np.diff(rows, prepend=0)
    name, array = ((DELETED_ID_STEPS, pa.array(steps.astype(np.uint32))) if len(rows) and 0 <= int(steps.min()) and int(steps.max()) < 2**32
                   else (DELETED_IDS, pa.array(rows, pa.int64())))
    sink = pa.BufferOutputStream()
    write_array_file(sink, name, array, "zstd")
    return sink.getvalue().to_pybytes()


def deletes_of(data: bytes, crc: int | None, where: str) -> np.ndarray:
    """The row ids of deletion vector file ``data``, checked against ``crc`` when given."""
    if crc is not None and crc32(data) != crc:
        raise StorageError(f"deletion vector {where} is damaged: its crc32 is {crc32(data)}, "
                           f"the manifest says {crc}")
    try:
        table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
        name, column = table.column_names[0], table.column(0)
    except (OSError, pa.ArrowInvalid, IndexError) as exc:
        raise StorageError(f"cannot read deletion vector {where}: {exc}") from exc
    if name == DELETED_ID_STEPS:
        return np.cumsum(column.to_numpy(), dtype=np.int64)
    if name != DELETED_IDS:
        raise StorageError(f"cannot read deletion vector {where}: it holds a column {name!r}")
    return column.to_numpy()


def file_gone(root: Path | str, kind: str, file_id: str) -> StaleSnapshotError:
    return StaleSnapshotError(
        f"{kind} {file_id} is not in {root}: a commit made after this read's snapshot retired "
        "it and it was deleted fts.gc_grace_seconds later (run the read again: it will read "
        "the current version), or the database is damaged",
        file_id,
    )


class _ChangeCounters:
    """Two words every process that opens the directory maps (the first 16 bytes of
    ``LOCK``): the commits made and the changes made (commits, acknowledged inserts, a
    new writer), each counted by the writer after the change is durable. A reader notices
    another process's change with one memory read instead of reading the manifest."""

    def __init__(self, path: Path, writable: bool = True) -> None:
        self._path = path
        self._map: mmap.mmap | None = None
        if not writable:  # (mapped when a writer has made the file: see read)
            self._map = self._mapped_read_only()
            return
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size < _COUNTERS.size:
                os.ftruncate(fd, _COUNTERS.size)  # (a no-op if another process just did it)
            self._map = mmap.mmap(fd, _COUNTERS.size)
        finally:
            os.close(fd)  # the mapping keeps the file

    def _mapped_read_only(self) -> mmap.mmap | None:
        """The counters mapped for reading, never creating or growing the file (a
        read-only opener changes nothing); None while ``LOCK`` is missing or short."""
        try:
            fd = os.open(self._path, os.O_RDONLY)
        except OSError:
            return None
        try:
            if os.fstat(fd).st_size < _COUNTERS.size:
                return None  # (mapping past the end would fault when read)
            return mmap.mmap(fd, _COUNTERS.size, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)

    def read(self) -> tuple[int, int]:
        if self._map is None:
            # A read-only opener of a directory without LOCK: no writer has counted
            # anything yet; one that appears later makes it, and is seen from then on.
            self._map = self._mapped_read_only()
            if self._map is None:
                return (0, 0)
        return _COUNTERS.unpack_from(self._map)  # type: ignore[return-value]

    def bump(self, commits: int) -> None:
        done, changes = self.read()
        assert self._map is not None  # (only the writer counts, and it made the file)
        _COUNTERS.pack_into(self._map, 0, done + commits, changes + 1)


def _writer_options(schema: pa.Schema, sample: pa.RecordBatch | None, text_codec: str = TEXT_CODECS[0]) -> dict:
    """ParquetWriter options for a data fragment whose first batch is ``sample``: small
    pages with an offset index and CRCs (see the module docstring).

    Text and other variable-width columns are compressed with ``text_codec``: LZ4 (the
    default, Parquet's LZ4_RAW) or ZSTD. ZSTD pages are ~35 % smaller (the benchmark
    corpus: 278 MB against 427 MB; real English text 0.76 against 1.08 MB), but each small
    ZSTD frame sets up its entropy tables: 4-7 KiB pages decompress in 6-9 us against 1.5-2.5
    us for LZ4, which every fetched row pays per text column, and DataFusion's scans of the
    files pay per page too (a LIKE over 1M bodies: ~1.4x the time). Nested columns, which
    are read by row group, keep ZSTD. Integers and times are delta-encoded
    (DELTA_BINARY_PACKED: ids and timestamps take a few bits a value) and floats and
    booleans stored plain, both without a codec: a codec's frame of 4 KiB of integers
    costs a fetched row more than reading it plain."""
    if text_codec not in TEXT_CODECS:
        raise ValueError(f"text codec {text_codec!r}: one of {', '.join(TEXT_CODECS)} wanted")
    step = 1024
    stats: list[str] | bool = True
    dictionary: list[str] | bool = True
    compression: dict[str, str] | str = "zstd"
    encoding: dict[str, str] = {}
    if not any(pa.types.is_nested(f.type) for f in schema):
        integral = {f.name for f in schema if pa.types.is_integer(f.type) or pa.types.is_temporal(f.type)}
        compression = {f.name: "none" if pa.types.is_primitive(f.type) else text_codec for f in schema}
        encoding = dict.fromkeys(integral, "DELTA_BINARY_PACKED")
        dictionary = [f.name for f in schema if f.name not in integral]
        if sample is not None and sample.num_rows:
            # Dictionaries for columns of repeated values only: a column of distinct ones
            # would start each row group with a dictionary page a fetch must read first.
            dictionary = [
                f.name for f, column in zip(schema, sample.columns)
                if f.name in dictionary and (pa.types.is_dictionary(f.type)
                                             or pc.count_distinct(column).as_py() <= DICTIONARY_MAX_DISTINCT * len(column))
            ]
    if sample is not None and sample.num_rows:
        widths = [sample.column(i).nbytes / sample.num_rows for i in range(sample.num_columns)]
        step = 1 << max(0, min(10, int(np.log2(max(1.0, PAGE_ROW_BYTES / max(widths, default=1.0))))))
        if not any(pa.types.is_nested(f.type) for f in schema):
            stats = [
                f.name for f, width in zip(schema, widths)
                if not (pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
                        or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type))
                or width <= STATISTICS_MAX_BYTES
            ]
    if not any(pa.types.is_nested(f.type) for f in schema):
        # No min/max of a float column: NaN is left out of them, and a reader that trusts
        # them reads a column whose min equals its max as that one value (DataFusion's did:
        # a column of 1.1 and NaNs read as all 1.1).
        stats = [f.name for f in schema if not pa.types.is_floating(f.type) and (stats is True or f.name in stats)]
    return {
        "compression": compression,
        "data_page_version": "2.0",
        "data_page_size": PAGE_BYTES,
        "max_rows_per_page": PAGE_MAX_ROWS,
        "write_batch_size": step,
        "use_dictionary": dictionary,
        "column_encoding": encoding or None,
        "dictionary_pagesize_limit": 64 << 10,
        "write_page_index": True,
        "write_page_checksum": True,
        "write_statistics": stats,
    }


class DirectoryStore(PagedFragments):
    """A database directory: ``manifest.json``, ``data/*.parquet``, ``index/<segment>/``."""

    commits_inserts = False  # (its logs hold acknowledged inserts)

    def __init__(self, root: str | os.PathLike[str], read_only: bool = False,
                 text_codec: Callable[[], str] = lambda: TEXT_CODECS[0]) -> None:
        self.root = Path(root)
        self._text_codec = text_codec  # (fts.text_codec now)
        # Why this store may not be written (None: it may): asked, or the storage refused.
        self.read_only: str | None = READ_ONLY_ASKED if read_only else None
        if read_only:
            if not self.root.is_dir():
                raise StorageError(f"cannot open database {self.root} read-only: it is not a directory")
        else:
            try:
                make_dirs(self.root / "data", self.root / "index")
                self._counters = _ChangeCounters(self.root / "LOCK")
            except OSError as exc:
                if exc.errno not in _READ_ONLY_ERRNOS or not self.root.is_dir():
                    raise StorageError(f"cannot create database directory {self.root}: {exc}") from exc
                # An existing directory that cannot be written (a read-only mount, no
                # permission) is still readable: opened read-only, saying why.
                self.read_only = f"its storage cannot be written: {exc}"
        if self.read_only is not None:
            self._counters = _ChangeCounters(self.root / "LOCK", writable=False)
        self._lock_fd: int | None = None
        self._exclusive = False  # the writer lock is held, for writing or for a moment
        self._pool: ThreadPoolExecutor | None = None
        self._init_fragments()

    # -- the writer lock ----------------------------------------------------------------
    def refuse_writes(self) -> None:
        """Raise :class:`ReadOnlyError` if this store was opened read-only: before the
        writer lock, which would create ``LOCK``, and before any file is written."""
        if self.read_only is not None:
            raise ReadOnlyError(str(self.root), self.read_only)

    def _flock(self) -> int | None:
        """A descriptor of ``LOCK`` holding its exclusive flock, or None if another
        Database holds it; refused on a read-only store (opening ``LOCK`` to write
        would make it)."""
        self.refuse_writes()
        fd = os.open(self.root / "LOCK", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        return fd

    def lock_for_writes(self) -> bool:
        """Become the directory's one writer (readers never need this): row ids and file
        ids are handed out in memory, so a second writer on the same files would reuse
        them. Held until :meth:`release_write_lock` or until this store is dropped.
        Returns True when the lock was taken now (others may have written since this
        store last read the directory), False when it was held already."""
        if self._lock_fd is not None:
            return False
        deadline = time.monotonic() + LOCK_WAIT
        while (fd := self._flock()) is None:
            if time.monotonic() >= deadline:
                raise StorageError(
                    f"database {self.root} is being written by another Database (in this or another "
                    "process); write through that one, or close it first"
                )
            time.sleep(0.01)
        self._lock_fd = fd
        self._exclusive = True
        self._unlock = weakref.finalize(self, os.close, fd)
        return True

    @property
    def holds_write_lock(self) -> bool:
        return self._lock_fd is not None

    def release_write_lock(self) -> None:
        if self._lock_fd is not None:
            self._unlock()  # closing the descriptor releases the flock
            self._lock_fd = None
            self._exclusive = False

    @contextmanager
    def exclusive(self) -> Iterator[bool]:
        """The writer lock for the block, if nobody writes (True: then files no manifest
        names are garbage); False if another Database holds it."""
        if self._lock_fd is not None:
            yield True
            return
        fd = self._flock()
        if fd is None:
            yield False
            return
        self._exclusive = True
        try:
            yield True
        finally:
            self._exclusive = False
            os.close(fd)  # releases the lock

    @contextmanager
    def reading_alone(self) -> Iterator[bool]:
        """For a read-only opener: True for the block if no Database writes (a shared
        flock on ``LOCK``, which needs no write access and changes nothing; no ``LOCK``
        at all means no writer ever came), False if one does."""
        try:
            fd = os.open(self.root / "LOCK", os.O_RDONLY)
        except FileNotFoundError:
            yield True
            return
        except OSError:
            yield False
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                yield False
                return
            yield True
        finally:
            os.close(fd)  # (releases the shared flock)

    # -- manifest -------------------------------------------------------------------
    def load_manifest(self) -> Manifest:
        """The committed manifest (an empty one in a new directory)."""
        path = self.root / MANIFEST
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return Manifest()
        manifest = parse_manifest(data, str(path))
        self.note_footers(manifest.footer_crcs())
        return manifest

    def check_manifest(self) -> None:
        """Refuse a directory that holds data or index files but no manifest (called with
        the writer lock, when nobody is writing): opened as empty, its files would be
        garbage to collect. (While another Database writes its first commit, that is
        what the directory looks like: then it is not called.)"""
        if (self.root / MANIFEST).exists():
            return
        ours = sorted(p.name for d in ("data", "index") if (self.root / d).is_dir() for p in (self.root / d).iterdir()
                      if _FRAGMENT_FILE.match(p.name) or _SEGMENT_DIR.match(p.name))
        if ours:
            raise StorageError(
                f"{self.root} holds {len(ours)} data and index files (such as {ours[0]}) but no {MANIFEST}: "
                f"it was lost, or the database's first commit never finished. Nothing was changed; restore "
                f"{MANIFEST} from a backup, or remove the directory to start over"
            )

    def changes(self) -> tuple[int, int]:
        """(commits, changes) made in this directory so far, by any process (see
        :class:`_ChangeCounters`): a reader compares them with what it last read."""
        return self._counters.read()

    def announce(self) -> None:
        """Tell readers the writer changed something that is not a commit (an insert is
        durable in a log; a new writer adopted what a crashed one left)."""
        self._counters.bump(0)

    def commit(self, manifest: Manifest) -> None:
        """Write the manifest to a temporary file, fsync it, rename it into place, then
        tell readers."""
        tmp, path = self.root / (MANIFEST + ".tmp"), self.root / MANIFEST
        with _writing(f"the manifest {path}", tmp):
            try:
                previous: bytes | None = path.read_bytes()
            except FileNotFoundError:
                previous = None
            _write_file(tmp, json.dumps(manifest.to_json(), separators=(",", ":")).encode("utf-8"))
            os.replace(tmp, path)
            try:
                fsync_path(self.root)
            except OSError:
                # The new manifest is in place but its name may not survive a power loss:
                # the commit failed, so the previous one goes back (if that fails too, the
                # new one stays: a consistent state, which the next open reads).
                if previous is not None:
                    _write_file(tmp, previous)
                    os.replace(tmp, path)
                raise
        self.note_footers(manifest.footer_crcs())
        self._counters.bump(1)

    # -- fragments ------------------------------------------------------------------
    def _fragment_path(self, frag_id: str) -> Path:
        return self.root / "data" / f"{frag_id}.parquet"

    def write_fragment(
        self, frag_id: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch]
    ) -> tuple[int, checksums.ParquetCrcs]:
        return write_fragment_file(self._fragment_path(frag_id), schema, batches, self._text_codec())

    def _fragment_file(self, frag_id: str) -> Path:
        return self._fragment_path(frag_id)

    def _fragment_name(self, frag_id: str) -> str:
        return str(self._fragment_path(frag_id))

    def _fragment_crc(self, frag_id: str) -> int:
        try:
            return checksums.file_crc32(self._fragment_path(frag_id))
        except FileNotFoundError:
            raise file_gone(self.root, "data fragment", frag_id) from None

    def _scan_pool(self) -> ThreadPoolExecutor:
        """Threads a scan spreads its pages over (made on first use)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="fts-scan")
            return self._pool

    def fragment_paths(self, frag_ids: list[str]) -> list[str]:
        """The fragments' files (each checked to exist)."""
        paths = [self._fragment_path(f) for f in frag_ids]
        for frag_id, path in zip(frag_ids, paths):
            if not path.exists():
                raise file_gone(self.root, "data fragment", frag_id)
        return [str(p) for p in paths]

    # -- segments -------------------------------------------------------------------
    def write_segment(self, seg_id: str, arrays: dict[str, pa.Array], compressed: frozenset[str] = frozenset()
                      ) -> int:
        """Write a segment's arrays (those named in ``compressed`` with ZSTD) and their
        checksum file; the crc32 of that file (for the manifest)."""
        final = self.root / "index" / seg_id
        tmp = self.root / "index" / (seg_id + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        with _writing(f"index segment {final}", tmp):
            tmp.mkdir()
            sums = {}
            for name, array in arrays.items():
                path = tmp / f"{name}.arrow"
                with pa.OSFile(str(path), "wb") as sink:
                    write_array_file(sink, name, array, "zstd" if name in compressed else None)
                fsync_path(path)
                sums[name] = checksums.file_sums(pa.memory_map(str(path), "r").read_buffer())
            data = checksums.encode(sums)
            _write_file(tmp / checksums.CHECKSUMS, data)
            fsync_path(tmp)  # the files' names in it must survive a power loss too
            os.replace(tmp, final)
            fsync_path(final.parent)
        return crc32(data)

    def read_segment(
        self, seg_id: str, crc: int | None, lazy: frozenset[str] = frozenset()
    ) -> tuple[dict[str, pa.Array], dict[str, checksums.LazyRegions]]:
        """Memory-map every array of a segment (zero copy). With ``crc`` (the manifest's
        crc32 of its checksum file) its files are verified first, but for the values of
        the ``lazy`` arrays: their regions to verify when read are returned."""
        directory = self.root / "index" / seg_id
        if (directory / BUNDLE).is_file():  # (written on an object store, copied here)
            try:
                return bundle_arrays(str(directory), pa.memory_map(str(directory / BUNDLE), "r").read_buffer(), crc,
                                     lazy)
            except FileNotFoundError:
                raise file_gone(self.root, "index segment", seg_id) from None
        try:
            if crc is None:  # (written before checksums: read as it is)
                names = sorted(name[: -len(".arrow")] for name in os.listdir(directory) if name.endswith(".arrow"))
            else:
                path = directory / checksums.CHECKSUMS
                files, region = checksums.decode(path.read_bytes(), crc, str(path))
                names = sorted(files)
        except (FileNotFoundError, NotADirectoryError):
            if directory.is_dir():
                raise StorageError(f"index segment checksum file {directory / checksums.CHECKSUMS} is missing") from None
            raise file_gone(self.root, "index segment", seg_id) from None

        def buffer_of(name: str) -> pa.Buffer:
            path = directory / f"{name}.arrow"
            try:
                return pa.memory_map(str(path), "r").read_buffer()
            except FileNotFoundError:
                raise file_gone(self.root, "index segment", seg_id) from None  # deleted while being read
            except OSError as exc:
                raise StorageError(f"cannot read index segment file {path}: {exc}") from exc

        return segment_arrays(str(directory), names, buffer_of, None if crc is None else (files, region), lazy)

    def delete_segments(self, seg_ids: Iterable[str]) -> None:
        """Delete segments no commit names (a failed build's, written by its tasks)."""
        for seg_id in seg_ids:
            _remove(self.root / "index" / seg_id)

    # -- deletion vectors -------------------------------------------------------------
    def write_deletes(self, dv_id: str, rows: np.ndarray) -> int:
        """Write a deletion vector; the crc32 of its file (for the manifest)."""
        path = self.root / "data" / f"{dv_id}.arrow"
        tmp = path.with_suffix(".arrow.tmp")
        data = deletes_file(rows)
        with _writing(f"deletion vector {path}", tmp):
            _write_file(tmp, data)
            os.replace(tmp, path)
            fsync_path(path.parent)
        return crc32(data)

    def read_deletes(self, dv_id: str, crc: int | None) -> np.ndarray:
        """A deletion vector's row ids, its file checked against ``crc`` (the manifest's
        crc32 of it; None for files written before checksums)."""
        path = self.root / "data" / f"{dv_id}.arrow"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise file_gone(self.root, "deletion vector", dv_id) from None
        except OSError as exc:
            raise StorageError(f"cannot read deletion vector {path}: {exc}") from exc
        return deletes_of(data, crc, str(path))

    # -- housekeeping ---------------------------------------------------------------
    def file_bytes(self, file_id: str) -> int:
        """Bytes on disk of a fragment, deletion vector or index segment (0 if absent)."""
        if file_id.startswith("seg-"):
            directory = self.root / "index" / file_id
            return sum(p.stat().st_size for p in directory.iterdir()) if directory.is_dir() else 0
        suffix = ".parquet" if file_id.startswith("frag-") else ".arrow"
        path = self.root / "data" / f"{file_id}{suffix}"
        return path.stat().st_size if path.exists() else 0

    def collect_garbage(self, keep: frozenset[str]) -> None:
        """Remove our own files (``frag-*``, ``dv-*``, ``seg-*`` and their ``.tmp`` forms)
        but those in ``keep``: leftovers of writes that never committed, and retired files
        past their grace period. Files we did not name are kept.

        Only with the writer lock held: another Database's files, written but not
        committed yet, look like garbage to everyone else.
        """
        if not self._exclusive:
            raise StorageError("garbage is collected only under the writer lock")
        for path in (self.root / "data").iterdir():
            match = _FRAGMENT_FILE.match(path.name)
            if match and match.group(1) not in keep:
                self._readers.discard((match.group(1),))
                _remove(path)
        for path in (self.root / "index").iterdir():
            match = _SEGMENT_DIR.match(path.name)
            if match and match.group(1) not in keep:
                _remove(path)


class MemoryStore:
    """Everything in memory; the same interface as :class:`DirectoryStore`."""

    commits_inserts = False  # (nothing outlives the process: inserts stay fresh rows)

    def __init__(self) -> None:
        self._manifest = Manifest()
        self._fragments: dict[str, pa.Table] = {}
        self._segments: dict[str, dict[str, pa.Array]] = {}
        self._deletes: dict[str, np.ndarray] = {}

    def load_manifest(self) -> Manifest:
        return self._manifest

    def check_manifest(self) -> None:
        pass  # (memory is never without its manifest)

    def changes(self) -> tuple[int, int]:
        return (0, 0)  # no one else can reach this memory

    def announce(self) -> None:
        pass

    def commit(self, manifest: Manifest) -> None:
        self._manifest = manifest

    def write_fragment(
        self, frag_id: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch]
    ) -> tuple[int, checksums.ParquetCrcs]:
        table = pa.Table.from_batches(list(batches), schema=schema).combine_chunks()
        self._fragments[frag_id] = table
        return table.num_rows, checksums.ParquetCrcs(None, None)

    def check_fragments(self, fragments: Iterable[FragmentMeta]) -> None:
        pass  # (memory holds no file to damage)

    def iter_fragment(
        self, frag_id: str, columns: list[str], batch_rows: int, local_range: tuple[int, int] | None = None
    ) -> Iterator[pa.RecordBatch]:
        table = self._fragments[frag_id].select(columns)
        if local_range is not None:
            table = table.slice(local_range[0], local_range[1] - local_range[0] + 1)
        yield from table.to_batches(max_chunksize=batch_rows)

    def take_rows(self, parts: list[tuple[str, np.ndarray]], columns: list[str], order: np.ndarray | None = None
                  ) -> pa.Table:
        tables = [self._fragments[frag_id].select(columns).take(pa.array(rows)) for frag_id, rows in parts]
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
        return table if order is None else reorder_rows(table, order)

    def take_codes(self, parts: list[tuple[str, np.ndarray]], column: str) -> list[CodedRows]:
        return [CodedRows.of(self.take_rows(parts, [column]).column(0))]

    def whole_codes(self, frag_id: str, column: str, n: int, gaps: np.ndarray | None = None) -> None:
        return None  # (rows in memory: coded per fetch, nothing kept)

    def pages_of(self, parts: list[tuple[str, np.ndarray]], column: str) -> None:
        return None  # (rows in memory: no pages to read)

    def fetch_units(self, parts: list[tuple[str, np.ndarray]], column: str) -> Counter[str]:
        return Counter({"rows in memory": sum(len(rows) for _, rows in parts)})

    def fragment_paths(self, frag_ids: list[str]) -> None:
        """None: the fragments are in memory, not in files."""
        return None

    def fragment_bytes(self, frag_ids: list[str]) -> int:
        return sum(self._fragments[frag_id].nbytes for frag_id in frag_ids)

    def write_segment(self, seg_id: str, arrays: dict[str, pa.Array], compressed: frozenset[str] = frozenset()
                      ) -> None:
        """Keep the arrays (no checksums: memory holds no file to damage; none compressed)."""
        self._segments[seg_id] = dict(arrays)

    def read_segment(
        self, seg_id: str, crc: int | None, lazy: frozenset[str] = frozenset()
    ) -> tuple[dict[str, pa.Array], dict[str, checksums.LazyRegions]]:
        return self._segments[seg_id], {}

    read_only: str | None = None  # (memory is always written by its one Database)

    def refuse_writes(self) -> None:
        pass

    def lock_for_writes(self) -> bool:
        """Nothing to lock: no one else can reach this memory (so nothing to adopt)."""
        return False

    def release_write_lock(self) -> None:
        pass

    @property
    def holds_write_lock(self) -> bool:
        return True  # always the one writer

    @contextmanager
    def exclusive(self) -> Iterator[bool]:
        yield True

    @contextmanager
    def reading_alone(self) -> Iterator[bool]:
        yield True

    def write_deletes(self, dv_id: str, rows: np.ndarray) -> None:
        self._deletes[dv_id] = np.asarray(rows, dtype=np.int64)

    def read_deletes(self, dv_id: str, crc: int | None) -> np.ndarray:
        return self._deletes[dv_id]

    def collect_garbage(self, keep: frozenset[str]) -> None:
        for files in (self._fragments, self._segments, self._deletes):
            for key in set(files) - keep:
                del files[key]
