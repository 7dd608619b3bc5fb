"""``index``, ``optimize`` and ``stats``: builds, tiers and sizes, counted independently."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pyarrow as pa
import pytest
from cli_support import invoke, on_db, phase_lines
from rich.filesize import decimal

import datafusion_fts as fts
from datafusion_fts.index.building import build_range
from datafusion_fts.index.building.build_progress import PHASES


def corpus(n: int, start: int = 0) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": ids, "body": [f"common word{i % 7} w{i}" for i in ids],
                     "title": [f"t{i}" for i in ids]})


def test_index_builds_with_the_options_given(library: Path) -> None:
    result = invoke("index", str(library), "docs", "body", "--analyzer", "english",
                    "--no-positions", "--k1", "1.5", "--no-progress")
    assert result.exit_code == 0, result.output
    index = on_db(library, lambda db: db.table("docs").snapshot().meta.indexes["body"])
    assert (index.analyzer.stemmer, index.positions, index.k1, index.b) == ("english", False, 1.5, 0.75)
    # create_index flushes the fresh row first, so all 6 rows are indexed.
    assert "docs.body: 6 indexed · 0 unindexed tail · 0 fresh · 1 segment" in result.stdout
    hits = on_db(library, lambda db: db.sql(
        "SELECT id FROM docs WHERE MATCH(body, 'jumping') ORDER BY id").to_pylist())
    assert hits == [{"id": 1}]  # stemmed: jumps ~ jumping


def test_index_several_columns_and_progress(library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build_range, "BUILD_CHUNK_BYTES", 1)  # (a chunk per scan batch: a merge)
    result = invoke("index", str(library), "docs", "body", "title", "--progress")
    assert result.exit_code == 0, result.output
    for column in ("body", "title"):  # 5 committed rows and the fresh one, flushed first
        assert phase_lines(result.stderr, f"indexing {column}") == dict.fromkeys(PHASES, 6)
    assert re.search(r"indexing title: committing .* 6/6 [\d,]+ rows/s ETA 0:00:00", result.stderr)
    assert "docs.body:" in result.stdout and "docs.title:" in result.stdout
    quiet = invoke("index", str(library), "docs", "title", "--no-progress")
    assert quiet.exit_code == 0 and quiet.stderr == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["body", "nosuch"], "has no column 'nosuch'"),
        (["body", "id"], "only text columns can be indexed"),
        (["body", "--stemmer", "klingon"], "klingon"),
        (["body", "--b", "2"], "b must be a number in [0, 1]"),
    ],
)
def test_a_bad_index_request_changes_nothing(library: Path, args: list[str], message: str) -> None:
    before = on_db(library, lambda db: db.manifest.tables["docs"].indexes)
    result = invoke("index", str(library), "docs", *args, "--no-progress")
    assert result.exit_code == 1, result.output
    assert message in result.stderr and "Traceback" not in result.output
    assert on_db(library, lambda db: db.manifest.tables["docs"].indexes) == before


def test_index_and_optimize_need_an_existing_database_and_table(tmp_path: Path, library: Path) -> None:
    result = invoke("optimize", str(tmp_path), "docs")
    assert result.exit_code == 2 and "not a datafusion-fts database" in result.output
    result = invoke("optimize", str(library), "nosuch")
    assert result.exit_code == 1 and "no table named 'nosuch'" in result.stderr


def _tiered(path: Path) -> None:
    """100 indexed rows (3 later deleted), a 10-row tail (1 deleted), 5 fresh rows."""

    def build(db: fts.Database) -> None:
        docs = db.create_table("docs", corpus(100))
        docs.insert(corpus(10, start=100))
        docs.flush()
        docs.build_segment("body", (0, 99))  # (inserted rows would be indexed as they arrive)
        docs.delete("id IN (3, 50, 99, 105)")
        docs.insert(corpus(5, start=110))

    on_db(path, build)


def test_stats_counts_rows_per_tier_and_sizes_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "db"
    _tiered(path)
    result = invoke("stats", str(path))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert re.search(r"docs\s+111\s+5\s+4\s+2\s", out), out  # rows, fresh, deleted, fragments
    assert "97 indexed · 9 unindexed tail · 5 fresh · 1 segment" in out
    assert "OPTIMIZE indexes the rest" in out
    meta = on_db(path, lambda db: db.manifest.tables["docs"])
    segment = meta.indexes["body"].segments[0]
    on_disk = sum(f.stat().st_size for f in (path / "index" / segment.id).iterdir())
    assert re.search(rf"{segment.id}\s+0\.\.99\s+100\s+100\s+.*{re.escape(decimal(on_disk))}", out)
    data = sum(
        os.path.getsize(path / "data" / name)
        for name in os.listdir(path / "data")
        if name.split(".")[0] in {f.id for f in meta.fragments} | {f.deletes for f in meta.fragments}
    )
    assert decimal(data) in out


def test_optimize_folds_the_tail_and_fresh_rows_into_the_index(tmp_path: Path) -> None:
    path = tmp_path / "db"
    _tiered(path)
    result = invoke("optimize", str(path), "docs", "--progress")
    assert result.exit_code == 0, result.output
    # The segment with deletes is rebuilt from its 97 live rows, the tail's 9 are indexed;
    # with the flushed fresh rows' segment they merge (deleted rows spanned too).
    assert phase_lines(result.stderr, "optimizing docs.body") == {
        "tokenizing": 106, "merging": 115, "writing": 115, "committing": 115}
    assert "docs.body: 111 indexed · 0 unindexed tail · 0 fresh" in result.stdout
    stats = invoke("stats", str(path))
    assert "111 indexed · 0 unindexed tail · 0 fresh" in stats.stdout
    assert "OPTIMIZE" not in stats.stdout


def test_stats_counts_overlapping_segments_once(tmp_path: Path) -> None:
    path = tmp_path / "db"

    def build(db: fts.Database) -> None:
        docs = db.create_table("docs", corpus(100))
        docs.build_segment("body", (0, 59))
        docs.build_segment("body", (40, 79))

    on_db(path, build)
    result = invoke("stats", str(path))
    assert result.exit_code == 0, result.output
    assert "80 indexed · 20 unindexed tail · 0 fresh · 2 segments" in result.stdout
    assert re.search(r"0\.\.59\s+60\s", result.stdout) and re.search(r"40\.\.79\s+40\s", result.stdout)
