"""An index keeps the analysis it was built with (issue 42): a database written before
bigrams (tests/data/before-bigrams, by commit 262f7c4: four rows, an index with
positions) answers as it did then, for its rows and for rows added now."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa

import datafusion_fts as fts

BEFORE = Path(__file__).resolve().parent.parent / "data" / "before-bigrams"
# What commit 262f7c4 answered on that database: (ids, scores) by query.
ANSWERS = {
    "数据库管理系统": ([0], [1.5135658111526056]),
    "数据": ([1], [1.2039728043259361]),
    "数据库": ([3], [1.2039728043259361]),
    "ｶﾞｲﾄﾞ": ([2], [0.9995245922705885]),
    "guide": ([2], [0.9995245922705885]),
}


def test_a_database_written_before_bigrams_answers_as_it_did(tmp_path: Path) -> None:
    shutil.copytree(BEFORE, tmp_path / "db")
    db = fts.connect(tmp_path / "db")
    t = db.table("docs")
    assert db.manifest.tables["docs"].indexes["body"].analyzer.segmenter == "none"
    for query, (ids, scores) in ANSWERS.items():
        got = t.search(query, limit=10)
        assert (got.column("id").to_pylist(), got.column("_score").to_pylist()) == (ids, scores), query
    # A row added now is analyzed as the index's rows were: a run is one token.
    t.insert(pa.table({"id": [4], "body": ["数据库管理系统"]}))
    assert sorted(t.search("数据库管理系统", limit=10).column("id").to_pylist()) == [0, 4]
    assert t.search('"数据库"', limit=10).column("id").to_pylist() == [3]
