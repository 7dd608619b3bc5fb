"""Index builds on the Ray executor: parallel tasks over row ranges, committed at once;
a failed task leaves nothing registered (docs/design.md: "Commits, garbage collection and
recovery")."""

from __future__ import annotations

import os
import shutil

import pytest
from shapes import corpus

import datafusion_fts as fts
from datafusion_fts.query import Boolean, Match, Phrase

pytest.importorskip("ray")
pytestmark = pytest.mark.ray

QUERIES = [Match("body", "alpha beta"), Phrase("body", "gamma delta"),
           Boolean(must=[Match("body", "zeta")], must_not=[Match("title", "alpha")])]


def three_fragments(path, executor: str) -> fts.Table:
    """Rows 0..399, 400..699 and 700..999 in three data fragments."""
    db = fts.connect(str(path), executor=executor, config={"fts.ray_actors": 3})
    t = db.create_table("docs", corpus(400))
    for seed, n in ((1, 300), (2, 300)):
        t.insert(corpus(n, seed))
        t.flush()
    return t


def results(t: fts.Table) -> list:
    return [t.search(q, limit=15, columns=[]).to_pylist() for q in QUERIES]


def seg_dirs(t: fts.Table) -> list[str]:
    return sorted(p for p in os.listdir(os.path.join(t.db.path, "index")) if p.startswith("seg-"))


def test_create_index_and_optimize_build_in_parallel_tasks(ray_session, tmp_path):
    t = three_fragments(tmp_path / "ray", "ray")
    local = three_fragments(tmp_path / "local", "local")
    steps: list[fts.BuildProgress] = []
    for table in (t, local):
        table.create_index("body", positions=True)
        table.create_index("title", progress=steps.append if table is t else None)
    # The tasks build, merge and write; the driver reports the rows when they are done,
    # and commits (no merging of the tasks' segments, nothing left to write).
    assert [(s.phase, s.done, s.total) for s in steps] == [
        ("tokenizing", 0, 1000), ("tokenizing", 1000, 1000), ("writing", 0, 0),
        ("committing", 0, 1000), ("committing", 1000, 1000)]
    segments = t.snapshot().meta.indexes["body"].segments
    assert [(s.lo, s.hi) for s in segments] == [(0, 333), (334, 399), (400, 667), (668, 699), (700, 999)]
    assert seg_dirs(t) == sorted({s.id for ix in t.snapshot().meta.indexes.values() for s in ix.segments})
    assert results(t) == results(local)
    for table in (t, local):  # deletes and a tail, then OPTIMIZE rebuilds and indexes them
        table.delete("_rowid IN (10, 500, 501)")
        table.insert(corpus(50, 3))
        table.optimize()
        assert table.snapshot().meta.indexes["body"].covered_until == 1049
    assert results(t) == results(local)
    t.db.settings.set("fts.executor", "local")
    assert results(t) == results(local)


def test_a_failed_task_leaves_nothing_registered(ray_session, tmp_path):
    t = three_fragments(tmp_path, "ray")
    before = t.db.manifest
    middle = t.snapshot().meta.fragments[1]
    path = os.path.join(t.db.path, "data", f"{middle.id}.parquet")
    shutil.copy(path, path + ".good")
    with open(path, "r+b") as f:  # a poisoned row range: rows 400..699 no longer decode
        f.truncate(os.path.getsize(path) // 2)
    with pytest.raises(fts.StorageError, match=r"rows 400\.\.667|rows 668\.\.699"):
        t.create_index("body")
    assert t.db.manifest == before and not t.snapshot().meta.indexes
    assert seg_dirs(t) == []  # the other tasks' segments are gone too
    reopened = fts.connect(str(tmp_path))
    assert reopened.manifest.tables["docs"].indexes == {}
    os.replace(path + ".good", path)
    t.create_index("body")
    t.db.settings.set("fts.executor", "local")
    assert t.search("alpha", limit=5, columns=[]).num_rows == 5
    # OPTIMIZE too: the segment over rows 400..667 holds a deleted row and must be rebuilt.
    t.delete("_rowid = 450")
    t.db.settings.set("fts.executor", "ray")
    before, dirs = t.db.manifest, seg_dirs(t)
    shutil.copy(path, path + ".good")
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    # (OPTIMIZE compacts the fragments first, which reads the damaged one: either fails
    # before anything is registered)
    with pytest.raises(fts.StorageError, match=r"rows 400\.\.667|damaged data file"):
        t.optimize()
    assert t.db.manifest == before and seg_dirs(t) == dirs
