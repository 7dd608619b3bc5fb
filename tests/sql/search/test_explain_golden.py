"""EXPLAIN snapshots (docs/design.md: "SQL"; "The operators"): SQL in, EXPLAIN text out, compared
exactly.

Each ``golden/<case>.sql`` runs on a fresh in-memory database after ``golden/_setup.sql``;
its last statement is an EXPLAIN. ``golden/<case>.explain`` holds the ``plan`` column of
the ``logical_plan`` and ``search_plan`` rows — this project's own plans. DataFusion's
rows (``datafusion_*``) are left out: they change between DataFusion versions.

Nothing is normalized: segment ids (``seg-00000003``) are deterministic in a fresh
in-memory database. To rewrite the snapshots after an intended change::

    UPDATE_GOLDEN=1 pytest tests/sql/search/test_explain_golden.py

and review the diff.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pyarrow as pa
import pytest

import datafusion_fts as fts
from datafusion_fts.sql.text.dialect import Explain, parse_sql

GOLDEN = Path(__file__).parent / "golden"
SETUP = (GOLDEN / "_setup.sql").read_text()
CASES = sorted(p.stem for p in GOLDEN.glob("*.sql") if not p.name.startswith("_"))
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
OWN_ROWS = ("logical_plan", "search_plan")


def fresh_db() -> fts.Database:
    db = fts.connect()
    db.sql(SETUP)
    return db


def explain_rows(db: fts.Database, sql: str) -> list[tuple[str, str]]:
    out = db.sql(sql).to_arrow_table().to_pydict()
    return list(zip(out["plan_type"], out["plan"]))


def render(plan_rows: list[tuple[str, str]]) -> str:
    """The golden text: our own rows, each under a ``-- <plan_type>`` header."""
    plans = dict(plan_rows)
    return "".join(f"-- {kind}\n{plans[kind]}\n" for kind in OWN_ROWS)


def test_there_are_golden_cases():
    assert len(CASES) >= 10


@pytest.mark.parametrize("case", CASES)
def test_explain_matches_golden(case):
    sql = (GOLDEN / f"{case}.sql").read_text()
    assert isinstance(parse_sql(sql)[-1], Explain), f"{case}.sql must end with an EXPLAIN"
    db = fresh_db()
    plan_rows = explain_rows(db, sql)
    kinds = [kind for kind, _ in plan_rows]
    # Our rows come first, then DataFusion's own (which are not snapshotted).
    assert kinds[:2] == list(OWN_ROWS)
    assert all(k.startswith("datafusion_") for k in kinds[2:])
    actual = render(plan_rows)
    path = GOLDEN / f"{case}.explain"
    if UPDATE:
        path.write_text(actual)
    assert path.exists(), f"missing {path.name}: run with UPDATE_GOLDEN=1 to create it"
    assert actual == path.read_text()


def test_every_golden_output_has_its_sql():
    outputs = {p.stem for p in GOLDEN.glob("*.explain")}
    assert outputs == set(CASES)


def test_explain_is_deterministic_across_databases():
    sql = (GOLDEN / "after_optimize.sql").read_text()
    assert render(explain_rows(fresh_db(), sql)) == render(explain_rows(fresh_db(), sql))


def test_explain_writes_nothing_and_leaves_results_alone():
    db = fresh_db()
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    query = "SELECT id, score() FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC LIMIT 3"
    before = db.sql(query).to_arrow_table()
    version = db.manifest.version
    explain_rows(db, "EXPLAIN " + query)
    explain_rows(db, "EXPLAIN ANALYZE " + query)
    assert db.manifest.version == version
    assert db.sql(query).to_arrow_table() == before


def test_explain_analyze_is_one_tree_with_metrics():
    """DataFusion's operators with their metrics, the search's under the scan of its
    result: the fetch of the rows' columns over the search plan, each with its metrics."""
    db = fresh_db()
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    query = "SELECT id FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC LIMIT 3"
    plain = dict(explain_rows(db, "EXPLAIN " + query))
    analyzed = dict(explain_rows(db, "EXPLAIN ANALYZE " + query))
    assert list(analyzed) == ["logical_plan", "datafusion_logical_plan", "plan_with_metrics"]
    assert analyzed["logical_plan"] == plain["logical_plan"]
    tree = analyzed["plan_with_metrics"].split("\n")
    assert all("metrics=[" in line for line in tree[:3])  # DataFusion's own
    at = next(i for i, line in enumerate(tree) if line.lstrip().startswith("FetchRows"))
    assert "partition_sizes=" in tree[at - 1]
    depth = len(tree[at]) - len(tree[at].lstrip())
    assert depth == len(tree[at - 1]) - len(tree[at - 1].lstrip()) + 2
    assert re.fullmatch(r"FetchRows: rows=3, columns=\['id'\]  \[id: \d+ (pages?|rows? in memory)\]", tree[at].strip())
    search = [line[depth + 2:] for line in tree[at + 1:]]
    assert [line.split("  [")[0] for line in search] == plain["search_plan"].split("\n")
    assert "rows_out=3" in search[0]
    assert all(re.search(r"  \[\w+=[^\]]*\]$", line) for line in search)


def test_explain_analyze_of_a_search_of_a_session_table_says_it_scanned_it():
    """A table of the session has no row ids to read by: its rows are fetched by a scan
    (EXPLAIN ANALYZE raised an AttributeError, found by tests/fuzz_inputs.py)."""
    db = fresh_db()
    db.ctx.register_record_batches("session_t", [[pa.record_batch({"k": [1, 2, 3], "txt": ["alpha beta", "beta", "gamma"]})]])
    tree = dict(explain_rows(db, "EXPLAIN ANALYZE SELECT k FROM session_t WHERE MATCH(txt, 'alpha')"))["plan_with_metrics"]
    assert "FetchRows: rows=1, columns=['k']  [k: 3 rows of a scan of the table]" in tree


def test_explain_without_a_search_is_datafusions_own():
    db = fresh_db()
    out = db.sql("EXPLAIN SELECT id FROM docs WHERE year > 2000").to_arrow_table().to_pydict()
    assert "logical_plan" in out["plan_type"]
    assert "search_plan" not in out["plan_type"]
