"""A table's snapshot (storage/snapshot.py): its deleted row ids from any id on read only
the deletion vectors that reach there, and equal the tail of all of them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

import datafusion_fts as fts
from datafusion_fts.storage.snapshot import TableSnapshot


def test_deleted_from_an_id_is_the_tail_of_every_deleted_id(tmp_path: Path) -> None:
    db = fts.connect(tmp_path / "db", config={"fts.gc_grace_seconds": 0})
    t = db.create_table("docs", pa.table({"id": range(100), "body": [f"w{i}" for i in range(100)]}))
    for lo in range(100, 400, 100):
        t.insert(pa.table({"id": range(lo, lo + 100), "body": [f"w{i}" for i in range(lo, lo + 100)]}))
        t.flush()
    t.delete("id BETWEEN 100 AND 199 OR id % 7 = 0")
    db.sql("OPTIMIZE docs")  # (one fragment, rows 100..199 its gaps; 0 and 399 holes: no fragment holds them)
    t.delete("id % 11 = 0")
    meta = db.manifest.tables["docs"]
    assert meta.holes == ((0, 0), (399, 399)) and any(f.gap_rows >= 100 for f in meta.fragments)
    every = TableSnapshot(meta, db.store).deleted
    assert len(every) == 100 + len({i for i in range(400) if (i % 7 == 0 or i % 11 == 0) and not 100 <= i <= 199})
    reads: list[str] = []
    real = db.store.read_deletes
    db.store.read_deletes = lambda dv, crc: reads.append(dv) or real(dv, crc)  # type: ignore[method-assign]
    for first in (0, 1, 99, 100, 150, 199, 200, 301, 399, 400, 10_000):
        reads.clear()
        got = TableSnapshot(meta, db.store).deleted_from(first)
        assert got.tolist() == every[every >= first].tolist(), first
        assert set(reads) == {f.deletes for f in meta.fragments if f.deletes and f.row_hi >= first}, first
        assert got.dtype == np.int64
