"""The write-ahead log of a table's fresh tier (docs/design.md: "Fresh tier and visibility").

A log is a file of records, each ``[u32 length][u32 crc32][payload]`` where the payload
is one Arrow IPC stream (a batch of rows with their ``_rowid``). ``append`` returns only
after the record is on disk (fsync); writers that arrive while another one syncs share
the next fsync (group commit). Replay stops at the first torn or corrupt record — the
tail of a write that never returned — and the writer truncates it away, so exactly the
acknowledged records survive a crash. A reader (without the directory's writer lock)
leaves the file alone: that tail may be a record another process is writing.
"""

from __future__ import annotations

import os
import struct
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pyarrow as pa

from ..errors import StorageError
from .store import fsync_path

_HEADER = struct.Struct("<II")


def encode(batch: pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    payload = sink.getvalue().to_pybytes()
    return _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def _records(data: bytes, at: int = 0) -> Iterator[tuple[int, pa.RecordBatch]]:
    """(end offset, batch) of every intact record from offset ``at`` on, stopping at the
    first bad one."""
    while at + _HEADER.size <= len(data):
        length, crc = _HEADER.unpack_from(data, at)
        start, end = at + _HEADER.size, at + _HEADER.size + length
        if end > len(data) or zlib.crc32(data[start:end]) != crc:
            return
        try:
            reader = pa.ipc.open_stream(pa.py_buffer(data[start:end]))
            batches = list(reader)
        except pa.ArrowInvalid:
            return
        for batch in batches:
            yield end, batch
        at = end


@dataclass(frozen=True)
class Replay:
    """What a replay read: the intact records' batches (after the earlier replay's bytes
    when ``resumed``), and the end and crc32 of the intact bytes, to resume from."""

    batches: list[pa.RecordBatch]
    end: int
    crc: int
    resumed: bool


class WriteAheadLog:
    """An append-only, fsynced log file with group commit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()  # guards the file position and pending count
        self._sync_lock = threading.Lock()  # one fsync at a time
        self._written = 0  # records written (not necessarily synced)
        self._synced = 0  # records known durable

    def _read(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return b""

    def replay(self, prefix: tuple[int, int] | None = None) -> Replay:
        """The intact records, in order. ``prefix`` is the (end, crc) of an earlier replay:
        if the file still begins with those bytes, only the records after them are read."""
        data = self._read()
        start, crc = 0, 0
        if prefix is not None and prefix[0] <= len(data) and zlib.crc32(data[: prefix[0]]) == prefix[1]:
            start, crc = prefix
        good, batches = start, []
        for good, batch in _records(data, start):
            batches.append(batch)
        return Replay(batches, good, zlib.crc32(data[start:good], crc), resumed=start > 0)

    def repair(self) -> None:
        """Cut the first torn or corrupt record and everything after it (a write that never
        returned) off the file. Only the directory's writer may: for anyone else that tail
        may be a record being written."""
        data = self._read()
        good = 0
        for good, _ in _records(data):
            pass
        if good < len(data):
            with open(self.path, "r+b") as f:
                f.truncate(good)
                f.flush()
                os.fsync(f.fileno())

    def append(self, batch: pa.RecordBatch) -> None:
        """Write one record and return once it is durable."""
        record = encode(batch)
        try:
            if not self.path.exists():
                self.path.touch()
                fsync_path(self.path.parent)  # the log's name must be durable too
            with open(self.path, "ab") as f:
                with self._lock:
                    f.write(record)
                    f.flush()  # in the file (page cache) before anyone's fsync below
                    self._written += 1
                    mine = self._written
                with self._sync_lock:
                    if self._synced >= mine:
                        return  # another writer's fsync covered this record
                    with self._lock:
                        target = self._written
                    os.fsync(f.fileno())  # makes every record written so far durable
                    self._synced = target
        except OSError as exc:
            raise StorageError(f"cannot write the log {self.path}: {exc}") from exc

    def truncate(self) -> None:
        """Empty the log (its rows are committed elsewhere)."""
        with self._lock:
            with open(self.path, "wb") as f:
                f.flush()
                os.fsync(f.fileno())
            self._written = self._synced = 0
