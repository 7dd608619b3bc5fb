"""Faults at every write point (issue 34): each durable step of every write operation
(an ``os.fsync``, an ``os.replace``, a log's ``os.write``) fails in turn, with ENOSPC or
EIO, in a copy of a small database. After each fault, either

- the call raised an FtsError saying what happened and had no effect: the same rows, row
  ids, tables and indexes in this process and in the database opened afresh (without
  repair), no temporary file left and no file that no manifest keeps; a new write works
  and survives reopening; or
- the step was after the commit (emptying a log the commit made stale), and the call
  returned with its whole effect, durable.

pyarrow's own writes of a file's bytes are not intercepted here: a real full disk
(tests/catalog/test_write_faults.py, on a tmpfs) covers them.

:func:`power_trial` cuts the power instead (tests/power_loss.py): only what was fsynced
survives, and the database must show the state before the call or after it.

Run as a script for the long run (docs/guide/guarantees.md quotes its counts):
``python tests/fault_trials.py [DATABASES] [SEED]`` runs every operation with every fault,
and with the power lost, at every step on that many databases of random shapes.
"""

from __future__ import annotations

import errno
import gc
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import pyarrow as pa

import datafusion_fts as fts
from datafusion_fts.errors import FtsError
from datafusion_fts.query import Match

sys.path.insert(0, str(Path(__file__).resolve().parent))
from power_loss import PowerLoss  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64()), ("body", pa.string()), ("title", pa.string())])
MEMTABLE_ROWS = 1_000


def rows(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": ids, "body": [f"alpha w{i}" for i in ids], "title": [f"t{i % 3}" for i in ids]},
                    schema=SCHEMA)


OPERATIONS: dict[str, Callable[[Any], Any]] = {
    "insert": lambda db: db.table("docs").insert(rows(100, 3)),
    "sql insert": lambda db: db.sql("INSERT INTO docs VALUES (200, 'alpha sql', 't9')").to_arrow_table(),
    "bulk insert": lambda db: db.table("docs").bulk_insert(rows(300, 5)),
    "flush": lambda db: db.table("docs").flush(),
    "create table": lambda db: db.create_table("more", rows(0, 4)),
    "create or replace": lambda db: db.sql("CREATE OR REPLACE TABLE extra AS SELECT 1 AS a").to_arrow_table(),
    "create index": lambda db: db.table("docs").create_index("title"),
    "optimize": lambda db: db.table("docs").optimize(),
    "delete": lambda db: db.table("docs").delete("id = 3"),
    "sql update": lambda db: db.sql("UPDATE docs SET body = 'beta' WHERE id = 4").to_arrow_table(),
    "drop table": lambda db: db.drop_table("extra"),
    # (writes that merge fragments in their commit: catalog/compaction.py)
    "compacting delete": lambda db: compacting(db).table("docs").delete("id = 5"),
    "compacting bulk insert": lambda db: compacting(db).table("docs").bulk_insert(rows(300, 5)),
}


def compacting(db: Any) -> Any:
    """``db`` keeping one data fragment a table: every write merges them all."""
    db.settings.set("fts.max_fragments", 1)
    return db
# (the call that fails, its errno)
FAULTS = (("fsync", errno.ENOSPC), ("fsync", errno.EIO), ("replace", errno.ENOSPC), ("write", errno.ENOSPC))


def make_template(path: Path, committed: int = 10, fragments: int = 2, fresh: int = 2, extra_fresh: int = 1) -> None:
    """A database: ``docs`` (``committed`` rows in ``fragments`` fragments, ``body``
    indexed, ``fresh`` rows in its log) and ``extra`` (with ``extra_fresh`` fresh rows)."""
    db = open_db(path)
    per = max(1, committed // fragments)
    docs = db.create_table("docs", rows(0, per))
    for start in range(per, committed, per):
        docs.bulk_insert(rows(start, min(per, committed - start)))
    docs.create_index("body")
    if fresh:
        docs.insert(rows(committed, fresh))
    extra = db.create_table("extra", rows(0, 2))
    if extra_fresh:
        extra.insert(rows(2, extra_fresh))
    del db, docs, extra
    gc.collect()


def open_db(path: Path) -> Any:
    db = fts.connect(path)
    db.settings.set("fts.memtable_rows", MEMTABLE_ROWS)
    return db


def state(db: Any) -> dict[str, Any]:
    """What a user can see of ``db``: each table's rows with their ids, its indexes and
    what a search of each finds (ids and scores)."""
    seen = {}
    for name in sorted(db.table_names()):
        table = db.sql(f"SELECT * FROM __fts_rows_{name} ORDER BY _rowid").to_arrow_table()
        indexes = sorted(db.manifest.tables[name].indexes)
        # (a search of each index reads its segments: a lost segment file raises)
        found = [db.table(name).search(Match(column, "alpha t1 beta"), limit=None, columns=[]).to_pydict()
                 for column in indexes]
        seen[name] = (table.to_pydict(), indexes, found)
    return seen


def leftovers(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.name.endswith(".tmp"))


def unnamed(path: Path, db: Any) -> list[str]:
    """The database's files no manifest of ``db`` keeps (its version, or one retired
    within the grace period): what a failed call left behind."""
    keep = db.manifest.kept_files(time.time(), db.settings.get("fts.gc_grace_seconds"))
    return sorted(p.name for folder in ("data", "index") for p in (path / folder).iterdir()
                  if p.name.split(".")[0] not in keep)


class Fault:
    """Counts the calls of ``os.<call>`` and makes the ``nth`` fail with ``code``."""

    def __init__(self, call: str, code: int, nth: int) -> None:
        self.call, self.code, self.nth = call, code, nth
        self.calls, self.hit = 0, False

    @contextmanager
    def armed(self) -> Iterator["Fault"]:
        real = getattr(os, self.call)

        def failing(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == self.nth:
                self.hit = True
                raise OSError(self.code, os.strerror(self.code))
            return real(*args, **kwargs)

        setattr(os, self.call, failing)
        try:
            yield self
        finally:
            setattr(os, self.call, real)


def _closed(db: Any) -> None:
    del db
    gc.collect()


def trial(template: Path, work: Path, operation: str, call: str, code: int, stride: int = 1) -> Counter[str]:
    """Fail ``operation`` at each of its ``call`` steps in turn (every ``stride``-th from
    the first), on copies of ``template`` (see the module docstring); counts of what
    happened ("raised", "returned after its commit"). An AssertionError says which step
    broke which promise."""
    reference = work / "reference"
    shutil.copytree(template, reference)
    db = open_db(reference)
    OPERATIONS[operation](db)
    expected = state(db)
    _closed(db)
    counts: Counter[str] = Counter()
    for nth in range(1, 400, stride):
        path = work / f"db{nth}"
        shutil.copytree(template, path)
        db = open_db(path)
        before = state(db)
        failed: FtsError | None = None
        with Fault(call, code, nth).armed() as fault:
            try:
                OPERATIONS[operation](db)
            except FtsError as exc:
                failed = exc
        where = f"{operation}: {call} #{nth} failing with {errno.errorcode[code]}"
        if not fault.hit:
            assert failed is None, f"{operation}: an error without a fault: {failed}"
            assert state(db) == expected
            _closed(db)
            shutil.rmtree(path)
            break
        if failed is None:
            counts["returned after its commit"] += 1
            assert state(db) == expected, f"{where}: the call returned, its effect is not there"
            _closed(db)
            assert state(open_db(path)) == expected, f"{where}: the call returned, its effect is not durable"
        else:
            counts["raised"] += 1
            assert state(db) == before, f"{where}: the failed call changed what this process sees"
            assert leftovers(path) == [] and unnamed(path, db) == [], f"{where}: files left behind"
            assert os.strerror(code).lower() in str(failed).lower(), f"{where}: the error does not say so: {failed}"
            db.table("docs").insert(rows(500, 1))  # a new write works
            after = state(db)
            _closed(db)
            assert state(open_db(path)) == after, f"{where}: reopening differs"
        gc.collect()
        shutil.rmtree(path)
    else:
        raise AssertionError(f"{operation} never completed")
    shutil.rmtree(reference)
    return counts


def power_trial(template: Path, work: Path, operation: str, stride: int = 1) -> Counter[str]:
    """Cut the power before each fsync and rename of ``operation`` (every ``stride``-th),
    and once it returned, keeping only what was fsynced (tests/power_loss.py); each such
    image of the database must open without repair and show the state before the call or
    after it, whole (after it, once it returned), and take a new write. Counts the images
    that showed each."""
    path = work / "db"
    shutil.copytree(template, path)
    db = open_db(path)
    before = state(db)
    images: list[Path] = []
    steps = iter(range(1, 10_000))

    def step(_: str) -> None:
        if (next(steps) - 1) % stride == 0:
            images.append(work / f"image{len(images)}")
            loss.image(images[-1])

    with PowerLoss(path).recording(step) as loss:
        OPERATIONS[operation](db)
        returned = work / "returned"
        loss.image(returned)
    after = state(db)
    _closed(db)
    counts: Counter[str] = Counter()
    db = open_db(returned)
    assert state(db) == after, f"{operation}: power lost once it returned: its effect is gone"
    _closed(db)
    for i, image in enumerate(images):
        db = open_db(image)
        seen = state(db)
        assert seen in (before, after), f"{operation}: power lost before step {i * stride + 1}: neither state"
        counts["before" if seen == before else "after"] += 1
        db.table("docs").insert(rows(500, 1))
        assert leftovers(image) == [] and unnamed(image, db) == [], f"{operation}: step {i * stride + 1}: files left"
        _closed(db)
        shutil.rmtree(image)
    return counts


def main() -> None:
    databases = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    totals: Counter[str] = Counter()
    start = time.perf_counter()
    for i in range(databases):
        shape = {"committed": rng.randint(2, 40), "fragments": rng.randint(1, 4), "fresh": rng.randint(0, 5),
                 "extra_fresh": rng.randint(0, 2)}
        with tempfile.TemporaryDirectory() as tmp:
            template = Path(tmp) / "template"
            make_template(template, **shape)
            for operation in OPERATIONS:
                for call, code in FAULTS:
                    work = Path(tmp) / "work"
                    work.mkdir()
                    counts = trial(template, work, operation, call, code)
                    shutil.rmtree(work)
                    totals["trials"] += 1
                    totals["faults"] += counts["raised"] + counts["returned after its commit"]
                    totals.update(counts)
                work = Path(tmp) / "work"
                work.mkdir()
                lost = power_trial(template, work, operation)
                shutil.rmtree(work)
                totals["power losses"] += sum(lost.values())
        print(f"database {i + 1}/{databases} {shape}: {dict(totals)}", flush=True)
    print(f"{databases} databases, {totals['trials']} (operation, fault) pairs, {totals['faults']} faults: "
          f"{totals['raised']} raised with no effect, {totals['returned after its commit']} returned after their "
          f"commit with their effect; {totals['power losses']} power losses, each leaving the state before or "
          f"after; 0 broken promises ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
