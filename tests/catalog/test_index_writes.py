"""Index writes (catalog/index_writes.py), run by the writer: with ``fts.executor =
'ray'`` the build hands its ranges to the ``RayBuild`` it was given and commits the
segments that wrote; a failed one leaves no file; a local build never calls it. The Ray
builds here run in this process (tests/distributed covers real Ray tasks)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import datafusion_fts as fts
from datafusion_fts.index.building.build_progress import BuildReporter
from datafusion_fts.index.building.build_range import build_range, merge_neighbours
from datafusion_fts.storage.files.manifest import IndexMeta, Manifest, SegmentMeta
from datafusion_fts.storage.snapshot import TableSnapshot

WORDS = ["alpha beta", "beta gamma", "gamma alpha", "delta", "alpha alpha beta"]


def files(path: Path) -> list[str]:
    return sorted(p.name for p in (path / "data").iterdir()) + sorted(p.name for p in (path / "index").iterdir())


class InProcessRay:
    """A ``RayBuild`` doing what the Ray build tasks do (distributed/build.py), here."""

    def __init__(self, db: fts.Database, fail: bool = False) -> None:
        self.db, self.fail = db, fail
        self.calls: list[tuple[list[tuple[int, int]], bool]] = []

    def __call__(
        self, manifest: Manifest, snap: TableSnapshot, index: IndexMeta, ranges: list[tuple[int, int]], split: bool
    ) -> tuple[Manifest, list[SegmentMeta]]:
        self.calls.append((ranges, split))
        reserved = manifest

        def new_id() -> str:
            nonlocal reserved
            seg_id, reserved = reserved.file_id("seg")
            return seg_id

        quiet = BuildReporter(None, index.column)
        metas = []
        for lo, hi in ranges:
            for seg in merge_neighbours(build_range(snap, index, lo, hi, new_id, quiet), new_id, quiet):
                metas.append(seg.write_to(self.db.store).meta)
                if self.fail:
                    raise OSError("a build task failed")
        return reserved, metas


def table(tmp_path: Path, executor: str) -> fts.Table:
    db = fts.connect(tmp_path / "db")
    t = db.create_table("docs", pa.table({"body": WORDS * 4}))
    db.settings.set("fts.executor", executor)
    return t


def index_of(t: fts.Table) -> IndexMeta:
    return t.index_meta("body", {}, None)


def test_a_ray_build_gets_every_row_split_and_its_segments_are_committed_as_written(tmp_path: Path) -> None:
    t = table(tmp_path, "ray")
    ray = InProcessRay(t.db)
    t.db.writer.create_index("docs", index_of(t), None, ray)
    assert ray.calls == [([(0, 19)], True)]
    committed = t.snapshot().meta.indexes["body"].segments
    assert [meta.id for meta in committed] and all(meta.checksums is not None for meta in committed)
    t.db.settings.set("fts.executor", "local")
    assert t.search("alpha", limit=None).num_rows == 12


def test_optimize_on_ray_hands_over_only_the_ranges_to_rebuild_unsplit(tmp_path: Path) -> None:
    t = table(tmp_path, "local")
    t.create_index("body")
    t.bulk_insert(pa.table({"body": ["alpha"] * 3}))
    t.db.settings.set("fts.executor", "ray")
    ray = InProcessRay(t.db)
    t.db.writer.optimize("docs", None, ray)
    assert ray.calls == [([(20, 22)], False)]  # the tail; no segment holds a deleted row
    t.db.settings.set("fts.executor", "local")
    assert t.search("alpha", limit=None).num_rows == 15


def test_a_failed_ray_build_leaves_no_file_and_commits_nothing(tmp_path: Path) -> None:
    t = table(tmp_path, "ray")
    before, manifest = files(tmp_path / "db"), t.db.manifest
    with pytest.raises(OSError, match="a build task failed"):
        t.db.writer.create_index("docs", index_of(t), None, InProcessRay(t.db, fail=True))
    assert files(tmp_path / "db") == before
    assert t.db.manifest is manifest


def test_a_local_build_never_calls_ray(tmp_path: Path) -> None:
    t = table(tmp_path, "local")
    ray = InProcessRay(t.db)
    t.db.writer.create_index("docs", index_of(t), None, ray)
    t.db.writer.build_segment("docs", t.snapshot().meta.indexes["body"], 0, 4, None)
    t.db.writer.optimize("docs", None, ray)
    assert ray.calls == []
    assert t.search("alpha", limit=None).num_rows == 12
