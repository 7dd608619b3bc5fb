"""A damaged write-ahead log is never silent (docs/design.md: "Commits, garbage collection and
recovery"): a bad record that is not a torn tail makes opening refuse and change nothing, and
``datafusion-fts repair`` keeps every intact record."""

from __future__ import annotations

import gc
import shutil
import struct
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner

import datafusion_fts as fts
from datafusion_fts.cli import main
from datafusion_fts.errors import StorageError
from datafusion_fts.query import Match
from datafusion_fts.storage.files.wal import LogDamaged

HEADER = 8  # [u32 length][u32 crc32]


def rows(start: int, n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "body": [f"alpha w{i}" for i in range(start, start + n)]})


def logged(path: Path, inserts: int = 3) -> tuple[Path, list[int]]:
    """A database of 2 committed rows and ``inserts`` logged inserts of 2 rows each; its
    log and where each record starts."""
    db = fts.connect(path)
    t = db.create_table("docs", rows(0, 2))
    t.create_index("body")
    log = path / "wal" / "docs.log"
    starts = []
    for i in range(inserts):
        starts.append(log.stat().st_size if log.exists() else 0)
        t.insert(rows(2 + 2 * i, 2))
    del db, t
    gc.collect()
    return log, starts


def ids(path: Path) -> list[int]:
    db = fts.connect(path)
    try:
        return sorted(db.table("docs").to_arrow().column("id").to_pylist())
    finally:
        del db
        gc.collect()


def repair(path: Path) -> str:
    result = CliRunner().invoke(main, ["repair", str(path)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def flip(log: Path, at: int, bit: int = 0) -> None:
    data = bytearray(log.read_bytes())
    data[at] ^= 1 << bit
    log.write_bytes(bytes(data))


def test_a_damaged_first_record_refuses_to_open_and_changes_nothing(tmp_path):
    log, starts = logged(tmp_path / "db")
    flip(log, starts[0] + HEADER + 20)
    before = log.read_bytes()
    with pytest.raises(LogDamaged) as caught:
        ids(tmp_path / "db")
    assert (caught.value.offset, caught.value.intact_after) == (starts[0], 2)
    assert f"byte {starts[0]}" in str(caught.value) and "repair" in str(caught.value)
    assert log.read_bytes() == before


def test_a_damaged_length_still_finds_the_records_after_it(tmp_path):
    log, starts = logged(tmp_path / "db")
    data = bytearray(log.read_bytes())
    struct.pack_into("<I", data, starts[0], 7)  # a length that ends inside the payload
    log.write_bytes(bytes(data))
    with pytest.raises(LogDamaged) as caught:
        ids(tmp_path / "db")
    assert caught.value.intact_after == 2


@pytest.mark.parametrize("where", ["payload", "crc", "longer length"])
def test_a_whole_last_record_that_fails_its_check_is_damage_not_a_torn_tail(tmp_path, where):
    log, starts = logged(tmp_path / "db")
    if where == "payload":
        flip(log, starts[-1] + HEADER + 30)
    elif where == "crc":
        flip(log, starts[-1] + 4)
    else:  # the file seems to end inside the record, but all of its payload is there
        data = bytearray(log.read_bytes())
        length = struct.unpack_from("<I", data, starts[-1])[0]
        struct.pack_into("<I", data, starts[-1], length + 100)
        log.write_bytes(bytes(data))
    with pytest.raises(LogDamaged) as caught:
        ids(tmp_path / "db")
    assert caught.value.intact_after == 0


def test_a_torn_last_record_is_still_cut_on_its_own(tmp_path):
    log, starts = logged(tmp_path / "db")
    log.write_bytes(log.read_bytes()[:-5])
    assert ids(tmp_path / "db") == list(range(6))


def test_repair_keeps_every_intact_record_and_moves_the_damaged_log_aside(tmp_path):
    path = tmp_path / "db"
    log, starts = logged(path)
    flip(log, starts[1] + HEADER + 20)  # the middle insert: rows 4 and 5
    damaged = log.read_bytes()
    out = repair(path)
    assert "kept 4 logged rows" in out and "4..5" in out
    assert (path / "wal" / "docs.log.damaged-1").read_bytes() == damaged
    assert ids(path) == [0, 1, 2, 3, 6, 7]
    db = fts.connect(path)
    t = db.table("docs")
    found = t.search(Match("body", "alpha"), limit=None)
    assert sorted(found.column("id").to_pylist()) == [0, 1, 2, 3, 6, 7]
    assert sorted(found.column("_rowid").to_pylist()) == [0, 1, 2, 3, 6, 7]  # ids kept, not renumbered
    t.insert(rows(8, 1))
    assert t.count_rows() == 7
    del db, t
    gc.collect()
    assert "the log is intact" in repair(path)


def test_every_single_bit_flip_in_a_log_is_refused_then_repaired_to_the_intact_records(tmp_path):
    template = tmp_path / "template"
    log, starts = logged(template, inserts=4)
    size = log.stat().st_size
    ends = starts[1:] + [size]
    for at in range(0, size, 73):  # (32 flips: headers and payloads of all four records)
        path = tmp_path / f"flip-{at}"
        shutil.copytree(template, path)
        flip(path / "wal" / "docs.log", at, bit=at % 8)
        with pytest.raises(StorageError):
            ids(path)
        hit = next(i for i, (lo, hi) in enumerate(zip(starts, ends)) if lo <= at < hi)
        repair(path)
        assert ids(path) == [0, 1] + [i for r in range(4) if r != hit for i in (2 + 2 * r, 3 + 2 * r)], at
        shutil.rmtree(path)
