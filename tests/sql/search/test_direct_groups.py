"""Counts by a column over a search's matches answered without DataFusion
(sql/search/direct_groups.py): every generated GROUP BY statement answers as DataFusion answers it
(``fts.sql_fast_paths`` off: DataFusion groups the fetched matches), names, types and rows,
on tables with NULL keys and values, deleted rows, an unindexed tail and fresh rows; the
shapes it takes are taken, the others left to DataFusion."""

from __future__ import annotations

from pathlib import Path

import datafusion
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from whole_columns import whole_columns

import datafusion_fts as fts
from datafusion_fts.sql.search import execute

WORDS = ("alpha", "beta", "gamma", "delta")
CATS = ("news", "blog", "wiki", "Wiki", "ß", "")


@st.composite
def tables(draw) -> pa.Table:
    n = draw(st.integers(1, 40))
    words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "body": pa.array(draw(st.lists(words, min_size=n, max_size=n))),
        "cat": pa.array(draw(st.lists(st.none() | st.sampled_from(CATS), min_size=n, max_size=n)), pa.string()),
        "year": pa.array(draw(st.lists(st.none() | st.integers(1990, 2030), min_size=n, max_size=n)), pa.int32()),
        "big": pa.array(draw(st.lists(st.none() | st.integers(-2**62, 2**62), min_size=n, max_size=n)), pa.int64()),
        "price": pa.array(draw(st.lists(st.none() | st.floats(0, 100), min_size=n, max_size=n)), pa.float64()),
    })


AGGREGATES = ("count(*)", "count(year)", "count(cat)", "min(year)", "max(year)", "sum(year)", "avg(year)",
              "min(big)", "max(big)", "sum(big)", "avg(big)", "count(DISTINCT year)", "sum(price)", "min(id)")


@st.composite
def statements(draw) -> str:
    key = draw(st.sampled_from(["cat", "year"]))
    aggs = draw(st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=4, unique=True))
    items = ([key] if draw(st.booleans()) else []) + [f"{a} AS a{i}" for i, a in enumerate(aggs)]
    if draw(st.booleans()) and "count(*)" in aggs:
        items = [("count(*)" if a == f"count(*) AS a{aggs.index('count(*)')}" else a) for a in items]
    query = draw(st.sampled_from(WORDS + ("alpha beta", "+alpha -gamma", "nothing")))
    beside = draw(st.sampled_from(["", " AND year > 1995", " AND cat <> 'blog'", " AND (year IS NULL OR big < 0)",
                                   " AND score() > 0.5", " AND _rowid % 2 = 0"]))
    sql = f"SELECT {', '.join(items)} FROM docs WHERE MATCH(body, '{query}'){beside} GROUP BY {key}"
    if draw(st.booleans()):
        sql += " HAVING count(*) > 1" if draw(st.integers(0, 4)) == 0 else ""
    names = [i.split(" AS ")[-1] for i in items]
    keys = draw(st.lists(st.sampled_from(names), max_size=2, unique=True))
    if keys:
        sql += " ORDER BY " + ", ".join(f"{k}{draw(st.sampled_from(['', ' DESC', ' ASC NULLS FIRST', ' DESC NULLS LAST']))}"
                                        for k in keys)
    if draw(st.booleans()):
        sql += f" LIMIT {draw(st.integers(0, 5))}"
        if draw(st.booleans()):
            sql += f" OFFSET {draw(st.integers(0, 3))}"
    return sql


def _database(table: pa.Table, tiers: str, root: Path | None = None) -> fts.Database:
    db = fts.connect(root)
    t = db.create_table("docs", table)
    if tiers != "tail":
        t.create_index("body")
    if tiers == "deleted":
        t.delete_rows(pa.array(range(0, table.num_rows, 3), pa.int64()).to_numpy())
    elif tiers in ("fresh", "tail"):
        t.insert(table.slice(0, table.num_rows // 2))
    return db


@settings(max_examples=200, deadline=None)
@given(tables(), st.sampled_from(["indexed", "deleted", "fresh", "tail"]), st.lists(statements(), min_size=1, max_size=4),
       st.sampled_from(["memory", "directory", "directory, columns read whole"]))
def test_a_group_by_over_matches_answers_as_datafusion(tmp_path_factory, table, tiers, sqls, store):
    """In memory, and in a directory whose fragments are read page by page or (forced
    here: tables this small read page by page) as whole columns kept decoded."""
    root = tmp_path_factory.mktemp("db") if store != "memory" else None
    with whole_columns(store.endswith("whole")):
        _check(_database(table, tiers, root), sqls)


def _check(db: fts.Database, sqls: list[str]) -> None:
    for sql in sqls:
        fast = [_answer(db, sql) for _ in range(2)]  # (the second from the remembered shape)
        db.settings.set("fts.sql_fast_paths", False)
        general = _answer(db, sql)
        db.settings.set("fts.sql_fast_paths", True)
        for answer in fast:
            _same(answer, general, sql)


def _answer(db: fts.Database, sql: str) -> pa.Table:
    return db.sql(sql).to_arrow_table()


def _same(answer: pa.Table, general: pa.Table, sql: str) -> None:
    """``answer`` is one DataFusion could give where ``general`` is the one it gave: the
    same names and types; the same rows, in the same order but for rows tied on every
    ORDER BY key (a LIMIT cutting ties may keep other rows: then as many)."""
    assert answer.schema == general.schema, sql
    order = sql.split(" ORDER BY ")[1].split(" LIMIT ")[0] if " ORDER BY " in sql else ""
    if " LIMIT " in sql and not any(k in order.replace(",", " ").split() for k in ("cat", "year")):
        assert answer.num_rows == general.num_rows, sql
    elif order:
        assert _ordered(answer, sql) == _ordered(general, sql), sql
    else:
        assert sorted(answer.to_pylist(), key=repr) == sorted(general.to_pylist(), key=repr), sql


def _ordered(table: pa.Table, sql: str) -> list:
    """The rows, those tied on every ORDER BY key in any order among themselves."""
    keys = [k.strip().split(" ")[0] for k in sql.split(" ORDER BY ")[1].split(" LIMIT ")[0].split(",")]
    rows = table.to_pylist()
    runs: list[list] = []
    for row in rows:
        if runs and all(runs[-1][0][k] == row[k] for k in keys):
            runs[-1].append(row)
        else:
            runs.append([row])
    return [sorted(run, key=repr) for run in runs]


@pytest.mark.parametrize("sql, taken", [
    ("SELECT cat, count(*) AS n FROM docs WHERE MATCH(body, 'alpha') GROUP BY cat ORDER BY n DESC, cat LIMIT 2", True),
    ("SELECT cat, count(*) FROM docs WHERE MATCH(body, 'alpha') GROUP BY cat", True),
    ("SELECT year AS y, count(year) AS n, min(big) AS lo, avg(year) AS mean FROM docs WHERE MATCH(body, 'alpha beta') "
     "GROUP BY year ORDER BY y DESC NULLS LAST", True),
    ("SELECT count(*) AS n FROM docs WHERE MATCH(body, 'alpha') GROUP BY cat ORDER BY n", True),
    ("SELECT cat, count(*) AS n FROM docs WHERE MATCH(body, 'alpha') GROUP BY cat ORDER BY n DESC LIMIT 2", False),
    ("SELECT cat, sum(price) AS s FROM docs WHERE MATCH(body, 'alpha') GROUP BY cat", True),
    ("SELECT cat, avg(price) AS p, count(*) AS n FROM docs WHERE MATCH(body, 'alpha beta') GROUP BY cat ORDER BY p DESC",
     True),
    ("SELECT cat, min(price) AS m FROM docs WHERE MATCH(body, 'alpha') GROUP BY cat", False),
    ("SELECT cat, max(score()) AS s FROM docs WHERE MATCH(body, 'alpha') GROUP BY cat", False),
    ("SELECT cat, count(*) AS n FROM docs WHERE MATCH(body, 'alpha') AND year > 2000 GROUP BY cat", True),
    ("SELECT cat, count(*) AS n FROM docs WHERE MATCH(body, 'alpha') AND score() > 0 GROUP BY cat", False),
    ("SELECT cat, count(*) AS n FROM docs WHERE MATCH(body, 'alpha') GROUP BY cat HAVING count(*) > 1", False),
    ("SELECT cat, min(year) FROM docs WHERE MATCH(body, 'alpha') GROUP BY cat", False),
    ("SELECT cat, count(*) AS year FROM docs WHERE MATCH(body, 'alpha') GROUP BY cat ORDER BY year", False),
])
def test_the_shapes_answered_without_datafusion(sql, taken):
    """Counts, exact aggregates and float sums by one column, beside a prefilter or not,
    ordered by anything that includes the key or not cut: answered directly; a float's
    min, score(), HAVING, an aggregate DataFusion would name, an alias naming a column,
    ties cut by LIMIT: not."""
    table = pa.table({"body": ["alpha beta", "alpha", "beta", "alpha gamma"], "cat": ["a", None, "a", "b"],
                      "year": pa.array([2001, None, 1999, 2001], pa.int32()), "big": [1, 2, 3, None],
                      "price": [1.5, 2.5, None, 0.1]})
    db = fts.connect()
    db.create_table("docs", table).create_index("body")
    answered = []
    real = execute.SqlSession._grouped
    execute.SqlSession._grouped = lambda self, *a: answered.append(1) or real(self, *a)  # type: ignore[method-assign]
    try:
        fast = [_answer(db, sql) for _ in range(2)]
    finally:
        execute.SqlSession._grouped = real  # type: ignore[method-assign]
    assert bool(answered) == taken
    db.settings.set("fts.sql_fast_paths", False)
    general = _answer(db, sql)
    for answer in fast:
        _same(answer, general, sql)


def test_a_sum_too_large_to_add_exactly_in_floats_is_left_to_datafusion():
    """Integers whose magnitudes add up past 2^53: DataFusion's float sum for avg depends on
    the order it adds them in; the statement is DataFusion's."""
    db = fts.connect()
    db.create_table("docs", pa.table({"body": ["alpha"] * 3, "cat": ["a"] * 3, "big": [2**60, 1, -2**60]}))
    db.table("docs").create_index("body")
    sql = "SELECT cat, avg(big) AS m, count(*) AS n FROM docs WHERE MATCH(body, 'alpha') GROUP BY cat"
    answered = []
    real = execute.SqlSession._grouped
    execute.SqlSession._grouped = lambda self, *a: answered.append(found := real(self, *a)) or found  # type: ignore[method-assign]
    try:
        fast = [_answer(db, sql) for _ in range(2)]
    finally:
        execute.SqlSession._grouped = real  # type: ignore[method-assign]
    assert answered and all(a is None for a in answered)  # (asked, declined)
    db.settings.set("fts.sql_fast_paths", False)
    assert all(f.equals(_answer(db, sql)) for f in fast)


def test_float_sums_are_datafusion_s_in_one_partition_over_the_rows_in_table_order(tmp_path):
    """A float64 column's sum and average by a key, over some 18,000 matches (deleted
    rows, fresh rows, NULLs): bit for bit DataFusion's answer with one
    partition over the matching rows in row id order (DataFusion's own answer with more
    partitions depends on how it splits them); the same numbers as the general plan's but
    for the last bits. The sums in another order differ: the test can tell."""
    rng = np.random.default_rng(7)
    n = 30_000

    def rows(k: int) -> pa.Table:
        return pa.table({"body": rng.choice(["alpha beta", "alpha", "beta"], k),
                         "cat": pa.array(rng.choice(["a", "b", "c", ""], k)).to_pylist()[:k - 50] + [None] * 50,
                         "price": pa.array(np.round(rng.gamma(2.0, 20.0, k), 2), mask=rng.random(k) < 0.05)})

    db = fts.connect(tmp_path)
    t = db.create_table("docs", rows(n))
    t.create_index("body")
    t.delete_rows(np.arange(0, n, 7))
    t.insert(rows(2_000))
    aggregates = "sum(price) AS s, avg(price) AS p, count(price) AS c"
    sql = f"SELECT cat, {aggregates} FROM docs WHERE MATCH(body, 'alpha') GROUP BY cat ORDER BY cat"
    answered = []
    real = execute.SqlSession._grouped
    execute.SqlSession._grouped = lambda self, *a: answered.append(found := real(self, *a)) or found  # type: ignore[method-assign]
    try:
        got = _answer(db, sql)
    finally:
        execute.SqlSession._grouped = real  # type: ignore[method-assign]
    assert answered and answered[0] is not None
    matched = db.sql("SELECT _rowid, cat, price FROM docs WHERE MATCH(body, 'alpha') ORDER BY _rowid").to_arrow_table()
    assert matched.num_rows > 15_000

    def one_partition(table: pa.Table) -> pa.Table:
        ctx = datafusion.SessionContext(datafusion.SessionConfig().with_target_partitions(1))
        ctx.register_record_batches("m", [table.to_batches()])
        return ctx.sql(f"SELECT cat, {aggregates} FROM m GROUP BY cat ORDER BY cat").to_arrow_table()

    want = one_partition(matched)
    assert got.equals(want)
    assert not one_partition(matched.take(pa.array(np.arange(matched.num_rows)[::-1]))).equals(want)
    db.settings.set("fts.sql_fast_paths", False)
    general = _answer(db, sql)
    assert general.column("cat").equals(got.column("cat")) and general.column("c").equals(got.column("c"))
    for name in ("s", "p"):
        assert np.allclose(general.column(name).to_numpy(), got.column(name).to_numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize("direction", ["", " DESC", " NULLS FIRST", " DESC NULLS LAST"])
def test_float_sums_are_ordered_as_datafusion_orders_floats(direction):
    """Groups ordered by a float sum holding NaN of either sign (inf - inf is a negative
    NaN on x86), -0.0 and +0.0, infinities and NULL: DataFusion's total order of floats
    (-NaN first, -0.0 below +0.0, NaN last), as the general plan's sort gives it."""
    prices = {"a": [float("nan")], "b": [-0.0], "c": [0.0], "d": [float("inf")], "e": [-float("inf")],
              "f": [float("inf"), -float("inf")], "g": [None], "h": [1.5], "i": [-2.5]}
    cats = [c for c, ps in prices.items() for _ in ps]
    table = pa.table({"body": ["alpha"] * len(cats), "cat": cats,
                      "price": pa.array([p for ps in prices.values() for p in ps], pa.float64())})
    db = fts.connect()
    db.create_table("docs", table).create_index("body")
    sql = f"SELECT cat, sum(price) AS s FROM docs WHERE MATCH(body, 'alpha') GROUP BY cat ORDER BY s{direction}, cat"
    fast = _answer(db, sql)
    db.settings.set("fts.sql_fast_paths", False)
    general = _answer(db, sql)
    assert fast.column("cat").to_pylist() == general.column("cat").to_pylist(), sql
    bits = [np.array([v if v is not None else 0.0]).view(np.int64)[0] for v in fast.column("s").to_pylist()]
    assert bits == [np.array([v if v is not None else 0.0]).view(np.int64)[0] for v in general.column("s").to_pylist()]
