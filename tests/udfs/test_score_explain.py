"""score_explain(): the JSON reproduces score() bit for bit, for every plan (issue 8)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from engine_tables import engine_table
from explain_checks import check_explanation
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import corpora, corpus_and_query

import datafusion_fts as fts
from datafusion_fts.errors import PlanError
from datafusion_fts.operators.explain import explain_search
from datafusion_fts.planner.plan_search import column_analyzer

# (engine_tables layout, forced plan)
PLANS = [("indexed", "indexed"), ("indexed", "flat_scan"), ("hybrid", "auto"), ("segments", "auto"), ("flat", "auto")]


@st.composite
def search_params(draw, row_ids) -> dict:
    """Mostly every match (more rows to explain), sometimes a page or a prefilter."""
    include = None
    if row_ids and draw(st.integers(0, 3)) == 0:
        include = draw(st.lists(st.sampled_from(sorted(row_ids)), unique=True))
    return {"limit": draw(st.sampled_from((None, None, 1, 5))), "offset": draw(st.sampled_from((0, 0, 2))),
            "include_row_ids": include}


def explained(t: fts.Table, query, params: dict) -> tuple[pa.Table, list[dict]]:
    plan, request = t.plan(query, limit=params["limit"], offset=params["offset"],
                           include_row_ids=params["include_row_ids"])
    result = pa.Table.from_batches(list(plan.execute()))
    analyzers = {c: column_analyzer(request.snapshot, c) for c in request.columns}
    ids = result.column(0).to_numpy()
    docs = explain_search(plan, request.snapshot, request.query, analyzers, ids).to_pylist()
    return result, [json.loads(d) for d in docs]


@given(corpus_and_query(min_rows=5, deletes=True, params=True, token_limits=True), st.sampled_from(PLANS), st.data())
def test_explanations_reproduce_scores_on_every_plan(case, layout_plan, data):
    ref, query = case
    layout, forced = layout_plan
    params = data.draw(search_params(ref.rows))
    t = engine_table(ref, layout, [data.draw(st.integers(0, 40))])
    t.db.settings.set("fts.force_plan", forced)
    try:
        result, docs = explained(t, query, params)
    except PlanError:
        assume(False)  # e.g. forcing the index on a query with no column
    for score, doc in zip(result.column(1).to_pylist(), docs):
        check_explanation(doc, score)
        assert doc["matched"]


# -- through db.sql ---------------------------------------------------------------------

@st.composite
def query_strings(draw, columns: list[str], words: list[str], depth: int = 2) -> str:
    """Random query strings (docs/design.md: "The query tree and the query string") that parse:
    terms, prefixes, fuzzy terms, phrases with slop, boosts, +/-, AND/OR, groups and field
    scopes."""

    def clause(d: int) -> str:
        kind = draw(st.integers(0, 6 if d > 0 else 5))
        word = draw(st.sampled_from(words))
        if kind == 1:
            return word + "*"
        if kind == 2:
            return f"{word}~{draw(st.integers(1, 2))}"
        if kind == 3:
            phrase = " ".join(draw(st.lists(st.sampled_from(words), min_size=1, max_size=3)))
            return f'"{phrase}"' + draw(st.sampled_from(("", "~1", "~2")))
        if kind == 4:
            return word + "^" + draw(st.sampled_from(("2", "0.5")))
        if kind == 5:
            return f"{draw(st.sampled_from(columns))}:{word}"
        if kind == 6:
            return "(" + clauses(d - 1) + ")"
        return word

    def clauses(d: int) -> str:
        parts = [draw(st.sampled_from(("", "", "+", "-"))) + clause(d) for _ in range(draw(st.integers(1, 3)))]
        out = parts[0]
        for part in parts[1:]:
            out += draw(st.sampled_from((" ", " AND ", " OR "))) + part
        return out

    return clauses(depth)


SQL_PLANS = [("indexed", "auto"), ("indexed", "flat_scan"), ("hybrid", "hybrid"), ("flat", "flat_scan")]


@given(corpora(min_rows=3, max_rows=25), st.sampled_from(SQL_PLANS), st.data())
def test_sql_explanations_equal_score(ref, layout_plan, data):
    from strategies import table_columns, table_words

    layout, forced = layout_plan
    columns = table_columns(ref)
    words = [w for w in table_words(ref) if w.isalnum()] or ["alpha"]
    query = data.draw(query_strings(columns, words))
    target = data.draw(st.sampled_from(columns))
    limit = data.draw(st.sampled_from(("", " LIMIT 3", " LIMIT 2 OFFSET 1")))
    t = engine_table(ref, layout, [data.draw(st.integers(0, 30))])
    db = t.db
    db.sql(f"SET fts.force_plan = '{forced}'")
    sql = (f"SELECT _rowid, score() AS s, score_explain() AS e FROM docs WHERE MATCH({target}, '{query}') "
           f"ORDER BY s DESC{limit}")
    try:
        rows = db.sql(sql).to_pylist()
    except PlanError:
        assume(False)
    expected = t.search(query, limit=None, default_columns=[target], columns=[])
    assert len(rows) <= expected.num_rows
    for row in rows:
        check_explanation(json.loads(row["e"]), row["s"])


@pytest.fixture(scope="module")
def docs():
    db = fts.connect()
    db.create_table("docs", pa.table({
        "id": [1, 2, 3, 4, 5],
        "title": ["Foxes", "Bears", "Engines", "Dogs", "Fox facts"],
        "body": ["the quick brown fox jumps over the lazy dog", "brown bears and brown foxes",
                 "a quick query engine", "the lazy dog sleeps", "a fox is quick and brown"],
    }))
    db.table("docs").create_index("body", positions=True)
    db.table("docs").create_index("title", analyzer="english")
    return db


def test_a_leaf_explained(docs):
    rows = docs.sql("SELECT id, score(), score_explain() FROM docs WHERE MATCH(body, 'fox quick') "
                    "ORDER BY score() DESC LIMIT 2 OFFSET 1").to_arrow_table()
    assert rows.column_names == ["id", "_score", "_explain"]
    for row in rows.to_pylist():
        doc = json.loads(row["_explain"])
        check_explanation(doc, row["_score"])
        leaf = doc["explanation"]
        assert leaf["type"] == "terms" and leaf["column"] == "body" and leaf["N"] == 5
        assert [g["query_term"] for g in leaf["groups"]] == ["fox", "quick"]
        term = leaf["groups"][0]["terms"][0]
        assert term["term"] == "fox" and term["df"] == 2 and set(term) == {"term", "tf", "df", "idf", "weight", "contribution"}
        assert {"dl", "avgdl", "k1", "b", "boost", "norm", "sum"} <= set(leaf)


def test_compound_queries_explained(docs):
    sql = ("SELECT id, score() AS s, score_explain() AS why FROM docs "
           "WHERE MATCH((title, body), 'fox') AND MATCH(body, '\"quick brown\"~1 OR qu* OR fix~1') AND NOT MATCH(body, 'lazy') "
           "ORDER BY s DESC")
    rows = docs.sql(sql).to_pylist()
    assert [r["id"] for r in rows] == [5]
    doc = json.loads(rows[0]["why"])
    check_explanation(doc, rows[0]["s"])
    root = doc["explanation"]
    assert root["type"] == "boolean" and len(root["must"]) == 2 and len(root["must_not"]) == 1
    multi, body = root["must"]
    assert [c["column"] for c in multi["should"]] == ["title", "body"]
    assert multi["should"][0]["groups"][0]["terms"][0]["term"] == "fox"  # english stem
    phrase, prefix, fuzzy = body["should"]
    assert phrase["type"] == "phrase" and phrase["tf"] == 1 and phrase["matched"]  # "quick and brown"
    assert prefix["groups"][0]["query_term"] == "qu*"
    assert [t["term"] for t in prefix["groups"][0]["terms"]] == ["query", "quick"]
    assert fuzzy["groups"][0]["query_term"] == "fix~1" and fuzzy["groups"][0]["terms"][0]["term"] == "fox"


def test_rows_kept_by_a_relational_or_explain_as_unmatched(docs):
    rows = docs.sql("SELECT id, score() AS s, score_explain() AS e FROM docs WHERE MATCH(body, 'engine') OR id = 4 "
                    "ORDER BY s DESC").to_pylist()
    assert [r["id"] for r in rows] == [3, 4]
    docs_ = [json.loads(r["e"]) for r in rows]
    assert docs_[0]["matched"] and not docs_[1]["matched"] and docs_[1]["score"] == 0.0
    for row, doc in zip(rows, docs_):
        check_explanation(doc, row["s"])


def test_foreign_tables(docs):
    docs.ctx.from_pydict({"txt": ["red fox", "blue fox", "red red"]}, name="memos")
    rows = docs.sql("SELECT txt, score() AS s, score_explain() AS e FROM memos WHERE MATCH(txt, 'red') ORDER BY s DESC").to_pylist()
    assert [r["txt"] for r in rows] == ["red red", "red fox"]
    for row in rows:
        check_explanation(json.loads(row["e"]), row["s"])


def test_only_the_returned_rows_are_explained(docs, monkeypatch):
    from datafusion_fts.sql.search import execute

    seen = []
    original = execute.explain_search

    def spy(plan, snapshot, query, analyzers, row_ids):
        seen.append(sorted(row_ids.tolist()))
        return original(plan, snapshot, query, analyzers, row_ids)

    monkeypatch.setattr(execute, "explain_search", spy)
    # No top-k pushdown (ordered by another column): the search returns every match.
    rows = docs.sql("SELECT _rowid, score_explain() FROM docs WHERE MATCH(body, 'brown OR quick') ORDER BY id DESC LIMIT 2").to_pylist()
    assert seen == [sorted(r["_rowid"] for r in rows)] and len(rows) == 2


def test_score_explain_anywhere_explains_the_rows_it_is_read_for(docs):
    """(Refused before issue 41.) Beside GROUP BY, in an aggregate, an expression or a
    subquery, score_explain() explains each row DataFusion reads it for."""
    rows = docs.sql("SELECT x.id, x.s, x.e FROM (SELECT id, score() AS s, score_explain() AS e FROM docs "
                    "WHERE MATCH(body, 'fox') OR id = 4) AS x ORDER BY x.id").to_pylist()
    assert rows
    for row in rows:
        check_explanation(json.loads(row["e"]), row["s"])
    grouped = docs.sql("SELECT count(*) AS n, max(score()) AS best, max(length(score_explain())) AS longest "
                       "FROM docs WHERE MATCH(body, 'fox') GROUP BY id % 2").to_pylist()
    assert sum(r["n"] for r in grouped) == len(docs.sql("SELECT id FROM docs WHERE MATCH(body, 'fox')").to_pylist())
    assert all(r["longest"] > 0 for r in grouped)


def test_misplaced_score_explain_is_refused(docs):
    docs.ctx.from_pydict({"txt": ["red fox", "blue fox"]}, name="notes")
    cases = {
        "SELECT score_explain() FROM docs": "score_explain() needs a MATCH predicate in the same SELECT",
        "SELECT length(score_explain()) FROM notes WHERE MATCH(txt, 'fox')": "a table of the session must be a column",
        "SELECT id, score_explain() FROM docs WHERE MATCH(body, 'fox') OR MATCH(title, 'fox') OR id = 1":
            "one MATCH",
    }
    for sql, message in cases.items():
        with pytest.raises(fts.SqlError, match=message.replace("(", r"\(").replace(")", r"\)")):
            docs.sql(sql)


def test_phrase_prefixes_explain_each_expanded_phrase():
    from reference import RefTable

    bodies = ["a b c", "b a c", "c b a", "big bad wolf", "big bad woman and a wolf"]
    t = engine_table(RefTable(rows={i: {"body": b} for i, b in enumerate(bodies)}, columns=["body"]), "indexed")
    sql = ("SELECT _rowid, score() AS s, score_explain() AS e FROM docs "
           "WHERE MATCH(body, '\"big bad wo\"*^1.5 OR \"a b\"~2') ORDER BY s DESC")
    rows = t.db.sql(sql).to_pylist()
    assert {r["_rowid"] for r in rows} == {0, 1, 2, 3, 4}
    for row in rows:
        check_explanation(json.loads(row["e"]), row["s"])
    doc = json.loads(next(r for r in rows if r["_rowid"] == 4)["e"])
    prefix, sloppy = doc["explanation"]["should"]
    assert prefix["query_term"] == "wo*" and [p["terms"][-1] for p in prefix["phrases"]] == ["wolf", "woman"]
    assert [p["tf"] for p in prefix["phrases"]] == [0, 1] and prefix["boost"] == 1.5
    assert sloppy["in_order"] is False and sloppy["slop"] == 2
