"""A table indexed in place (Parquet or CSV files) searched on Ray: the same rows and
scores as the local plan as files are added, rewritten and removed (docs/design.md:
"Tables indexed in place")."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from shapes import QUERIES, corpus

import datafusion_fts as fts

pytest.importorskip("ray")
pytestmark = pytest.mark.ray


def write(path: Path, table: pa.Table, tick: int) -> None:
    if path.suffix == ".csv":
        pcsv.write_csv(table, path)
    else:
        pq.write_table(table, path, row_group_size=50)
    os.utime(path, ns=(10**18 + tick, 10**18 + tick))  # (a rewrite must look changed)


def answers(t: fts.Table, executor: str) -> list:
    t.db.settings.set("fts.executor", executor)
    try:
        return [t.search(q, limit=15, columns=["title", "body"]).to_pylist() for q in QUERIES]
    finally:
        t.db.settings.set("fts.executor", "local")


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_ray_searches_a_table_indexed_in_place_as_the_local_plan_does(ray_session, tmp_path, kind):
    src = tmp_path / "src"
    src.mkdir()
    rows = corpus(600, 5)
    for i in range(3):
        write(src / f"part-{i}.{kind}", rows.slice(i * 150, 150), i)
    db = fts.connect(tmp_path / "db", executor="ray", config={"fts.ray_actors": 2})
    t = db.index_in_place("docs", src, store=["title"])
    t.create_index("body", positions=True)
    t.create_index("title")
    assert answers(t, "ray") == answers(t, "local")
    write(src / f"part-3.{kind}", rows.slice(450, 150), 3)  # a new file: the unindexed tail
    assert answers(t, "ray") == answers(t, "local")
    write(src / f"part-1.{kind}", rows.slice(0, 40), 4)  # a rewritten file: its old ids are gone
    (src / f"part-0.{kind}").unlink()  # a removed file
    before = answers(t, "local")
    assert answers(t, "ray") == before
    t.optimize()  # (builds in the driver: tasks cannot read the user's files)
    assert answers(t, "ray") == answers(t, "local") == before
    assert t.snapshot().meta.indexes["body"].covered_until == t.snapshot().meta.next_rowid - 1
    db.sql("SET fts.executor = 'ray'")
    rows = db.sql("EXPLAIN ANALYZE SELECT title, score() FROM docs WHERE MATCH(body, 'alpha') "
                  "ORDER BY score() DESC LIMIT 3").to_pydict()
    text = dict(zip(rows["plan_type"], rows["plan"]))["plan_with_metrics"]
    assert "DistributedSearch" in text and "executor=ray" in text and "pages of stored copies" in text
