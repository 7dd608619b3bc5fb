"""The advise_index rule (docs/design.md: "The planner"): a MATCH the planner could only
answer by scanning says which statement would let it use an index, in EXPLAIN and, once
it scanned more than fts.residual_row_limit rows, as an FtsNotice (the CLI prints it)."""

from __future__ import annotations

import warnings

import datafusion
import pyarrow as pa
import pytest
from click.testing import CliRunner

import datafusion_fts as fts
from datafusion_fts.cli import main
from datafusion_fts.planner.advise_index import advise_index
from datafusion_fts.planner.plan_search import RULES, SearchRequest, apply_rules
from datafusion_fts.query import Match, Phrase

ROWS = pa.table({"id": pa.array(range(20), pa.int64()), "body": [f"alpha w{i % 7} beta" for i in range(20)]})


def docs(limit: int = 10, **index) -> tuple[fts.Database, fts.Table]:
    db = fts.connect()
    db.settings.set("fts.residual_row_limit", limit)
    t = db.create_table("docs", ROWS)
    if index:
        t.create_index("body", **index)
    return db, t


def test_the_rule_runs_after_the_operator_is_chosen():
    assert RULES[-1] is advise_index


def test_a_scan_past_the_limit_of_an_unindexed_column_issues_a_notice():
    db, t = docs()
    with pytest.warns(fts.FtsNotice, match=r"MATCH scanned 20 rows of docs: CREATE FULLTEXT INDEX ON docs \(body\) "
                                           r"would let MATCH on body use an index"):
        found = t.search(Match("body", "alpha"), limit=3)
    assert found.num_rows == 3  # (the answer is the same)


def test_no_notice_within_the_limit_or_with_an_index():
    for db, t in (docs(limit=20), docs(positions=False)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            t.search(Match("body", "alpha"), limit=3)


def test_no_advice_for_a_forced_scan():
    db, t = docs(positions=False)
    req = apply_rules(SearchRequest(db.snapshot("docs"), Match("body", "alpha"), 3, force_plan="flat_scan",
                                    residual_row_limit=10))
    assert (req.choice, req.advice) == ("flat_scan", "")


def test_a_phrase_on_an_index_without_positions_is_told_to_rebuild_it_with_them():
    db, t = docs(positions=False)
    with pytest.warns(fts.FtsNotice, match=r"CREATE FULLTEXT INDEX ON docs \(body\) WITH \(positions = true\)"):
        t.search(Phrase("body", "alpha w1"), limit=3)


def test_a_tail_past_the_limit_is_told_to_optimize():
    db, t = docs(limit=100)
    t.build_segment("body", (0, 3))  # rows 4..19: an unindexed tail of 16 rows
    db.settings.set("fts.residual_row_limit", 10)
    with pytest.warns(fts.FtsNotice, match="OPTIMIZE docs would let MATCH on body use an index"):
        t.search(Match("body", "alpha"), limit=3)


def test_explain_shows_the_advice_whatever_the_table_size():
    db, _ = docs(limit=100)
    plan = db.sql("EXPLAIN SELECT id FROM docs WHERE MATCH(body, 'alpha') LIMIT 3").to_arrow_table()
    text = "\n".join(str(v) for column in plan.columns for v in column.to_pylist())
    assert "advice: CREATE FULLTEXT INDEX ON docs (body) would let MATCH on body use an index" in text


def test_a_table_registered_by_the_user_is_told_how_to_copy_it_into_an_indexed_one():
    ctx = datafusion.SessionContext()
    ctx.register_record_batches("mine", [ROWS.to_batches()])
    db = fts.connect(ctx=ctx)
    db.settings.set("fts.residual_row_limit", 10)
    with pytest.warns(fts.FtsNotice, match=r"mine is not a managed table, so MATCH scans every row; "
                                           r"CREATE TABLE mine_fts AS SELECT \* FROM mine, then "
                                           r"CREATE FULLTEXT INDEX ON mine_fts \(body\), searches an index"):
        db.sql("SELECT id FROM mine WHERE MATCH(body, 'alpha') LIMIT 3").to_arrow_table()


def test_the_cli_prints_the_notice(tmp_path):
    path = tmp_path / "db"
    db = fts.connect(path)
    db.create_table("docs", ROWS)
    del db
    result = CliRunner().invoke(main, ["sql", str(path), "-c", "SET fts.residual_row_limit = 10; "
                                       "SELECT id FROM docs WHERE MATCH(body, 'alpha') LIMIT 2"])
    assert result.exit_code == 0, result.output
    assert "notice: MATCH scanned 20 rows of docs: CREATE FULLTEXT INDEX ON docs (body)" in result.output
