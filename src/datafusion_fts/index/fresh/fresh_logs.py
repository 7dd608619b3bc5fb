"""The fresh tier's logs (docs/design.md: "Fresh tier and visibility"): per table, the
write-ahead log of its acknowledged rows (storage/files/wal.py), and what a reader last replayed
of it, so that reading the logs again after another process's insert tokenizes only the
rows that insert added."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import pyarrow as pa

from ...errors import StorageError
from ...storage.files.manifest import IndexMeta, TableMeta, log_file_name
from ...storage.files.os_files import make_dirs
from ...storage.files.wal import Replay, WriteAheadLog
from .fresh_runs import FreshRun, NewId, append_run, build_run, concat_batches

Runs = tuple[FreshRun, ...]


@dataclass(frozen=True)
class _Logged:
    """A table's fresh rows as replayed from its log by a reader: the runs, where the
    replay ended (to resume from while the log still begins with the same bytes) and the
    committed state they follow."""

    runs: Runs
    end: int
    crc: int
    next_rowid: int
    indexes: Mapping[str, IndexMeta]


# What one table's log held when read: its records, and the replay they resume (if any).
LogRead = tuple[Replay, "_Logged | None"]


class FreshLogs:
    """The logs of a database's tables, in ``directory`` (None: an in-memory database,
    which keeps nothing across processes and has no logs)."""

    def __init__(self, directory: Path | None, counters: Counter[str]) -> None:
        self.directory = directory
        self.counters = counters  # rows tokenized by replays count as "fresh_rows_tokenized"
        self._logs: dict[str, WriteAheadLog] = {}
        self._logged: dict[str, _Logged] = {}
        self._ids = itertools.count()
        self._made = False  # the logs' directory was made (or found) by this writer

    def new_id(self) -> str:
        """The id of an in-memory fresh segment (never a file name)."""
        return f"fresh-{next(self._ids)}"

    def log(self, name: str, writing: bool = True) -> WriteAheadLog | None:
        """Table ``name``'s log (made on first use); None in memory. Only a writer makes
        the logs' directory: a reader (perhaps on read-only storage) reads a missing log
        as empty."""
        if self.directory is None:
            return None
        log = self._logs.get(name)
        if log is None:
            log = self._logs[name] = WriteAheadLog(self.directory / log_file_name(name))
        if writing and not self._made:
            make_dirs(self.directory)
            self._made = True
        return log

    def empty(self, name: str) -> None:
        """Empty ``name``'s log: its rows are committed (or its table dropped)."""
        log = self.log(name)
        if log is not None:
            log.truncate()

    def forget(self, name: str) -> None:
        """Forget ``name``'s log (its file stays as it is)."""
        self._logs.pop(name, None)

    def empty_stale(self, name: str) -> None:
        """Before a new table takes ``name``: empty a log a dropped table of that name left
        (a crash cut its drop short)."""
        log = self.log(name)
        if log is not None and log.path.exists():
            log.truncate()

    def cut_torn_tails(self, tables: Mapping[str, TableMeta]) -> None:
        """With the writer lock held: cut the torn tail a crash left on each table's log,
        and empty a log whose rows the table's fragments hold (a damaged log is refused,
        see storage/files/wal.py)."""
        for name, meta in tables.items():
            log = self.log(name)
            if log is not None:
                log.cut_torn_tail(meta.next_rowid)

    def empty_committed(self, name: str) -> None:
        """With the writer lock held and no fresh row of ``name`` left: empty its log if
        it holds anything (rows a commit holds, left by a crash or a failed truncate, or a
        torn tail), so that no log outlives the rows it held."""
        log = self.log(name, writing=False)
        if log is not None and log.path.exists() and log.path.stat().st_size:
            log.truncate()

    def read(self, name: str, meta: TableMeta, runs: Runs) -> LogRead | None:
        """The records of ``name``'s log, after those replayed last time while the log
        still begins with their bytes and the table's committed rows and indexes are the
        same (so a reader tokenizes each row once); with the runs they resume. ``runs``
        are the table's fresh runs as the reader holds them now."""
        log = self.log(name, writing=False)
        if log is None:
            return None
        last = self._logged.get(name)
        if last is not None and not (
            last.runs is runs and (last.next_rowid, last.indexes) == (meta.next_rowid, meta.indexes)
        ):
            last = None
        read = log.replay(None if last is None else (last.end, last.crc))
        return read, last if read.resumed else None

    def replay(self, reads: Mapping[str, LogRead | None], tables: Mapping[str, TableMeta]) -> dict[str, Runs]:
        """The fresh runs of each table whose log was read (:meth:`read`): the rows past
        its committed ones, tokenized per indexed column; remembered for the next read."""
        logged = {name: _replayed(read, tables[name], self.new_id, self.counters)
                  for name, read in reads.items() if read is not None}
        self._logged = logged
        return {name: log.runs for name, log in logged.items()}


def _replayed(read: LogRead, meta: TableMeta, new_id: NewId, counters: Counter[str]) -> _Logged:
    replay, last = read
    runs = last.runs if last is not None else ()
    expected = meta.next_rowid + sum(r.rows for r in runs)
    batches = []
    for batch in replay.batches:
        ids = batch.column(0).to_numpy()
        batch = batch.filter(pa.array(ids >= expected))  # rows flushed before a crash are in a fragment
        if not batch.num_rows:
            continue
        if batch.column(0)[0].as_py() != expected:
            raise StorageError(f"the log of table {meta.name!r} skips row ids {expected}..")
        batches.append(batch)
        expected += batch.num_rows
    if batches:
        run = build_run(concat_batches(batches), meta.indexes, new_id, counters)
        runs = append_run(runs, run, new_id)
    return _Logged(runs, replay.end, replay.crc, meta.next_rowid, meta.indexes)
