"""The write-ahead log of a table's fresh tier (docs/design.md: "Fresh tier and visibility").

A log is a file of records, each ``[u32 length][u32 crc32][payload]`` where the payload
is one Arrow IPC stream (a batch of rows with their ``_rowid``). ``append`` returns only
after the record is on disk (fsync); writers that arrive while another one syncs share
the next fsync (group commit).

A *torn* last record (the file ends inside it, and the bytes there do not match its
crc32) is the tail of a write that never returned: replay stops there and the writer cuts
it off (:meth:`WriteAheadLog.cut_torn_tail`), so exactly the acknowledged records survive
a crash. A reader (without the directory's writer lock) leaves the file alone: that tail
may be a record another process is writing. Any other bad record (a whole one failing its
crc32, or one followed by intact records) is damage, never a crash: opening refuses
(:class:`LogDamaged`, naming the log, the offset and the intact records after it) and
changes nothing, until ``datafusion-fts repair`` keeps every intact record
(:meth:`WriteAheadLog.salvage`) and moves the damaged log aside.
"""

from __future__ import annotations

import itertools
import os
import struct
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pyarrow as pa

from ...errors import StorageError
from .os_files import describe_os_error, fsync_path

_HEADER = struct.Struct("<II")
# Every payload is an Arrow IPC stream, which begins with this continuation marker: where
# a record may begin after a damaged one is found by looking for it.
_IPC_MARKER = b"\xff\xff\xff\xff"


class LogDamaged(StorageError):
    """A log record is damaged and intact records follow it: replaying the log would drop
    acknowledged rows, cutting it would delete them."""

    def __init__(self, path: Path, offset: int, intact_after: int) -> None:
        super().__init__(
            f"the log {path} has a damaged record at byte {offset}, with {intact_after} intact record(s) "
            "after it: nothing was changed; run `datafusion-fts repair <database>` to keep every intact record "
            "(the damaged log is moved aside)"
        )
        self.path, self.offset, self.intact_after = path, offset, intact_after


def encode(batch: pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    payload = sink.getvalue().to_pybytes()
    return _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def _record(data: bytes, at: int) -> tuple[int, list[pa.RecordBatch]] | None:
    """(end offset, batches) of the record at offset ``at``, or None if it is not intact."""
    if at + _HEADER.size > len(data):
        return None
    length, crc = _HEADER.unpack_from(data, at)
    start, end = at + _HEADER.size, at + _HEADER.size + length
    if end > len(data) or zlib.crc32(data[start:end]) != crc:
        return None
    try:
        return end, list(pa.ipc.open_stream(pa.py_buffer(data[start:end])))
    except pa.ArrowInvalid:
        return None


def _records(data: bytes, at: int = 0) -> Iterator[tuple[int, pa.RecordBatch]]:
    """(end offset, batch) of every intact record from offset ``at`` on, stopping at the
    first bad one."""
    while (found := _record(data, at)) is not None:
        at, batches = found
        for batch in batches:
            yield at, batch


def _torn(data: bytes, at: int) -> bool:
    """Whether the bad record at ``at`` is a torn last one: the file ends inside it and
    what is there is not the whole payload (a damaged length could make a whole record
    look cut short; its crc32 tells)."""
    if at + _HEADER.size > len(data):
        return True
    length, crc = _HEADER.unpack_from(data, at)
    return at + _HEADER.size + length > len(data) and zlib.crc32(data[at + _HEADER.size :]) != crc


def _intact_after(data: bytes, bad: int) -> list[pa.RecordBatch]:
    """The batches of the intact records after a bad one at offset ``bad``. A damaged
    length hides where the next record starts, so one is looked for wherever a payload's
    IPC marker could sit (a false start would need a matching crc32). Empty for a torn tail."""
    batches: list[pa.RecordBatch] = []
    at = bad + 1
    while (marker := data.find(_IPC_MARKER, at + _HEADER.size)) >= 0:
        start = end = marker - _HEADER.size
        for end, batch in _records(data, start):
            batches.append(batch)
        at = start + 1 if end == start else end + 1
    return batches


def _damage(data: bytes, good: int) -> list[pa.RecordBatch] | None:
    """When the bad record at ``good`` (the end of the intact records) is damage rather
    than a torn tail or the end of the file, the batches of the intact records after it;
    else None."""
    if good == len(data):
        return None
    after = _intact_after(data, good)
    return after if after or not _torn(data, good) else None


@dataclass(frozen=True)
class Replay:
    """What a replay read: the intact records' batches (after the earlier replay's bytes
    when ``resumed``), and the end and crc32 of the intact bytes, to resume from."""

    batches: list[pa.RecordBatch]
    end: int
    crc: int
    resumed: bool


@dataclass(frozen=True)
class Salvaged:
    """What :meth:`WriteAheadLog.salvage` did: the rows it kept, the row-id ranges
    (inclusive) the damaged records held (now rows of nulls, to delete), and where the
    damaged log went."""

    kept_rows: int
    lost: list[tuple[int, int]]
    aside: Path


class WriteAheadLog:
    """An append-only, fsynced log file with group commit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()  # guards the file position and pending count
        self._sync_lock = threading.Lock()  # one fsync at a time
        self._written = 0  # records written (not necessarily synced)
        self._synced = 0  # records known durable
        self._synced_end = 0  # where they end in the file
        self._torn_at: int | None = None  # where a failed write's part begins, if not cut off yet
        self._lost: list[tuple[int, int]] = []  # records a failed fsync cut off: their writers raise
        self._failure = ""  # (why, for them)

    def _read(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return b""

    def replay(self, prefix: tuple[int, int] | None = None) -> Replay:
        """The intact records, in order. ``prefix`` is the (end, crc) of an earlier replay:
        if the file still begins with those bytes, only the records after them are read.
        Raises :class:`LogDamaged` when intact records follow a bad one."""
        data = self._read()
        start, crc = 0, 0
        if prefix is not None and prefix[0] <= len(data) and zlib.crc32(data[: prefix[0]]) == prefix[1]:
            start, crc = prefix
        good, batches = start, []
        for good, batch in _records(data, start):
            batches.append(batch)
        self._refuse_damage(data, good)
        return Replay(batches, good, zlib.crc32(data[start:good], crc), resumed=start > 0)

    def _refuse_damage(self, data: bytes, good: int) -> None:
        """Raise :class:`LogDamaged` if the bad record at ``good`` is not a torn tail."""
        if (after := _damage(data, good)) is not None:
            raise LogDamaged(self.path, good, len(after))

    def cut_torn_tail(self, next_rowid: int) -> None:
        """Cut a torn last record (a write that never returned) off the file, and empty it
        when every intact record holds rows below ``next_rowid`` (the table's committed
        fragments hold them: a crash came between a flush's commit and the emptying of
        the log, which nothing else would empty, as no fresh row remains to flush). Only
        the directory's writer may: for anyone else that tail may be a record being
        written. Raises :class:`LogDamaged`, changing nothing, when the bad record is damage."""
        data = self._read()
        good, last = 0, -1
        for good, batch in _records(data):
            if batch.num_rows:
                last = max(last, batch.column(0)[-1].as_py())  # (a record's ids ascend)
        self._refuse_damage(data, good)
        self._truncate(data, 0 if last < next_rowid else good)

    def _truncate(self, data: bytes, good: int) -> None:
        """Cut the file (``data``) at ``good``, if anything follows it."""
        if good < len(data):
            with open(self.path, "r+b") as f:
                f.truncate(good)
                f.flush()
                os.fsync(f.fileno())

    def salvage(self, next_rowid: int) -> Salvaged | None:
        """For ``repair``, with the writer lock held. When the log is damaged (a bad record
        that is not a torn tail, see the module docstring): move it aside
        (``<name>.damaged-<n>``) and write a new log of every intact record, the row ids the
        damaged records held (from ``next_rowid``, the table's first uncommitted row id, on)
        filled with rows of nulls so the ids stay consecutive, for the caller to delete.
        Else None (and a torn tail is cut)."""
        data = self._read()
        good, batches = 0, []
        for good, batch in _records(data):
            batches.append(batch)
        after = _damage(data, good)
        if after is None:
            self._truncate(data, good)  # (a torn tail, or nothing)
            return None
        batches += after
        lost: list[tuple[int, int]] = []
        kept: list[pa.RecordBatch] = []
        expected = next_rowid
        for batch in batches:
            ids = batch.column(0).to_numpy()
            batch = batch.filter(pa.array(ids >= expected))  # (rows flushed before a crash)
            if not batch.num_rows:
                continue
            first = batch.column(0)[0].as_py()
            if first > expected:
                lost.append((expected, first - 1))
                kept.append(_nulls(batch.schema, expected, first))
            kept.append(batch)
            expected = first + batch.num_rows
        aside = next(path for n in itertools.count(1)
                     if not (path := self.path.with_name(f"{self.path.name}.damaged-{n}")).exists())
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "wb") as f:
            for batch in kept:
                f.write(encode(batch))
            f.flush()
            os.fsync(f.fileno())
        os.replace(self.path, aside)
        os.replace(tmp, self.path)
        fsync_path(self.path.parent)
        return Salvaged(sum(b.num_rows for b in kept) - sum(hi - lo + 1 for lo, hi in lost), lost, aside)

    def append(self, batch: pa.RecordBatch) -> None:
        """Write one record and return once it is durable. A call that raises has had no
        effect: a record the disk took only part of (full, an I/O error) is cut off before
        anyone appends after it, and when an fsync fails, every record it was to make
        durable is cut off and each of their writers raises (an fsync that failed says
        nothing of what reached the disk; the next one may report success anyway). Records
        are numbered from 1 in the order written; those up to ``_synced`` are durable or lost."""
        record = encode(batch)
        try:
            if not self.path.exists():
                self.path.touch()
                fsync_path(self.path.parent)  # the log's name must be durable too
            fd = os.open(self.path, os.O_WRONLY)
        except OSError as exc:
            raise StorageError(f"cannot write the log {self.path}: {describe_os_error(exc)}") from exc
        try:
            with self._lock:
                if self._torn_at is not None:  # (a failed write's part, not cut off then)
                    if not _cut(fd, self._torn_at):
                        raise StorageError(f"cannot write the log {self.path}: the part of a failed write "
                                           "at its end cannot be cut off")
                    self._torn_at = None
                start = os.lseek(fd, 0, os.SEEK_END)
                if self._written == self._synced:
                    self._synced_end = start  # (every record before is durable)
                try:
                    _write_all(fd, record)
                except OSError as exc:
                    if not _cut(fd, start):
                        self._torn_at = start
                    raise self._not_written(describe_os_error(exc)) from exc
                self._written += 1
                mine = self._written
            with self._sync_lock:
                with self._lock:
                    if any(lo <= mine <= hi for lo, hi in self._lost):
                        raise self._not_written(self._failure)
                    if self._synced >= mine:
                        return  # another writer's fsync covered this record
                    target, end = self._written, os.lseek(fd, 0, os.SEEK_END)
                try:
                    os.fsync(fd)  # makes every record written so far durable
                except OSError as exc:
                    with self._lock:  # (records are numbered on: a later one is never taken for a lost one)
                        self._failure = f"an fsync failed ({describe_os_error(exc)})"
                        self._lost.append((self._synced + 1, self._written))
                        if not _cut(fd, self._synced_end):
                            self._torn_at = self._synced_end
                        self._synced = self._written
                    raise self._not_written(self._failure) from exc
                with self._lock:
                    self._synced, self._synced_end = target, end
        finally:
            os.close(fd)

    def _not_written(self, why: str) -> StorageError:
        return StorageError(f"cannot write the log {self.path}: {why}; the record was not written")

    def truncate(self) -> None:
        """Empty the log (its rows are committed elsewhere)."""
        with self._lock:
            try:
                with open(self.path, "wb") as f:
                    f.flush()
                    os.fsync(f.fileno())
            except OSError as exc:
                raise StorageError(f"cannot empty the log {self.path}: {describe_os_error(exc)}") from exc
            self._synced, self._synced_end, self._torn_at = self._written, 0, None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _cut(fd: int, end: int) -> bool:
    """Cut the file back to ``end`` (what was there before a failed write), so the next
    record follows the intact ones; whether it could be (if not, the next append tries
    again first, and an open cuts the torn tail)."""
    try:
        os.ftruncate(fd, end)
        os.fsync(fd)
    except OSError:
        return False
    return True


def _nulls(schema: pa.Schema, lo: int, hi: int) -> pa.RecordBatch:
    """Rows ``lo..hi - 1`` of nulls (``_rowid`` first): what stands for rows a damaged
    record held until they are deleted."""
    ids = pa.array(range(lo, hi), type=schema.field(0).type)
    return pa.RecordBatch.from_arrays([ids, *(pa.nulls(hi - lo, f.type) for f in list(schema)[1:])], schema=schema)
