"""Searches on the Ray executor agree bit for bit with the single-process plan and with
the brute-force reference, for every query shape and table layout (docs/design.md: "Statistics and
BM25"; "Prefilters")."""

from __future__ import annotations

import tempfile

import pytest
from engine_tables import engine_table
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import ref_search
from shapes import PARAMS, QUERIES, corpus, layered_table
from strategies import QUERY_WORDS, corpora, query_trees, search_params, table_columns, table_words

import datafusion_fts as fts
from datafusion_fts.query import Match

pytest.importorskip("ray")
pytestmark = pytest.mark.ray

ACTORS = 3


def ray_db(path: str, **config) -> fts.Database:
    return fts.connect(path, executor="ray", config={"fts.ray_actors": ACTORS, **config})


def hits(t: fts.Table, executor: str, query, params) -> list[tuple[int, str]]:
    t.db.settings.set("fts.executor", executor)
    result = t.search(query, limit=params["limit"], offset=params["offset"],
                      include_row_ids=params["include_row_ids"], columns=[])
    return list(zip(result.column("_rowid").to_pylist(), map(repr, result.column("_score").to_pylist())))


@st.composite
def layouts(draw):
    ref = draw(corpora(deletes=True, params=True, token_limits=True))
    columns = table_columns(ref) or ["title"]
    words = list(QUERY_WORDS) + table_words(ref) * 3
    queries = draw(st.lists(
        st.tuples(query_trees(columns, words), search_params(ref.rows)), min_size=1, max_size=4
    ))
    layout = draw(st.sampled_from(("indexed", "segments", "hybrid")))
    splits = draw(st.lists(st.integers(0, 40), max_size=4))
    return ref, layout, splits, queries


@settings(max_examples=max(10, settings().max_examples // 3))  # 20 by default: Ray calls cost ms
@given(layouts())
def test_ray_matches_local_plan_and_reference(ray_session, case):
    ref, layout, splits, queries = case
    with tempfile.TemporaryDirectory() as path:
        t = engine_table(ref, layout, splits, db=ray_db(path))
        for query, params in queries:
            if params["limit"] == 0:
                continue  # rejected before any search, by either executor
            expected = [(r, repr(s)) for r, s in ref_search(ref, query, **params)]
            assert hits(t, "local", query, params) == expected
            assert hits(t, "ray", query, params) == expected


@pytest.fixture(scope="module")
def big_table(ray_session, tmp_path_factory):
    return layered_table(ray_db(str(tmp_path_factory.mktemp("ray"))))


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: type(q).__name__)
def test_every_shape_on_a_larger_table(big_table, query):
    t = big_table
    for params in PARAMS:
        assert hits(t, "ray", query, params) == hits(t, "local", query, params)
    t.db.settings.set("fts.executor", "ray")
    plan, request = t.plan(query)
    assert request.choice == "hybrid"
    assert "DistributedSearch" in plan.tree()


def test_prefilter_skips_shares_with_nothing_to_include(big_table):
    t = big_table
    t.db.settings.set("fts.executor", "ray")
    plan, _ = t.plan(Match("body", "alpha"), include_row_ids=[2, 5])
    list(plan.execute())
    dist = plan.children()[0]
    assert dist.metrics.values["shares_skipped"] == ACTORS - 1


def test_explain_analyze_shows_the_distributed_operator(big_table):
    db = big_table.db
    db.sql("SET fts.executor = 'ray'")
    rows = db.sql(
        "EXPLAIN ANALYZE SELECT _rowid, score() FROM docs WHERE MATCH(body, 'alpha') "
        "ORDER BY score() DESC LIMIT 3"
    ).to_pydict()
    text = dict(zip(rows["plan_type"], rows["plan"]))["plan_with_metrics"]
    line = next(line for line in text.splitlines() if "DistributedSearch" in line)
    assert f"actors={ACTORS}" in line and "executor=ray" in line
    for metric in ("messages=", "stats_bytes=", "result_bytes=", "phase1_ms=", "phase2_ms="):
        assert metric in line
    assert "IndexedSearch" in text  # the driver's tail and fresh rows


def test_sql_search_through_ray_matches_local(big_table):
    db = big_table.db
    sql = "SELECT _rowid, score() AS s FROM docs WHERE MATCH(body, 'alpha beta') AND NOT MATCH(title, 'zeta') ORDER BY s DESC LIMIT 12"
    db.sql("SET fts.executor = 'ray'")
    got = db.sql(sql).to_arrow_table()
    db.sql("SET fts.executor = 'local'")
    assert got.equals(db.sql(sql).to_arrow_table())


def test_ray_needs_a_directory(ray_session):
    with pytest.raises(fts.PlanError, match="database directory"):
        fts.connect(executor="ray")
    db = fts.connect()
    t = db.create_table("docs", corpus(10))
    t.create_index("body")
    db.sql("SET fts.executor = 'ray'")
    with pytest.raises(fts.PlanError, match="in-memory"):
        t.search("alpha")


def test_storage_uri(ray_session, tmp_path):
    """Workers read the segments through a pyarrow.fs URI when one is configured."""
    t = ray_db(str(tmp_path), **{"fts.ray_storage": tmp_path.as_uri()}).create_table("docs", corpus(300))
    t.create_index("body")
    for query in QUERIES[:4]:
        params = {"limit": 10, "offset": 0, "include_row_ids": None}
        assert hits(t, "ray", query, params) == hits(t, "local", query, params)


def test_concurrent_searches(big_table):
    from concurrent.futures import ThreadPoolExecutor

    t = big_table
    params = {"limit": 10, "offset": 0, "include_row_ids": None}
    expected = [hits(t, "local", q, params) for q in QUERIES]
    t.db.settings.set("fts.executor", "ray")

    def run(i: int):
        q = QUERIES[i % len(QUERIES)]
        r = t.search(q, limit=10, columns=[])
        return i % len(QUERIES), list(zip(r.column(0).to_pylist(), map(repr, r.column(1).to_pylist())))

    with ThreadPoolExecutor(4) as pool:
        for i, got in pool.map(run, range(16)):
            assert got == expected[i]

