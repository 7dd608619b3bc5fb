"""SQL searches (docs/design.md: "SQL"; "Order, top-k and paging"; "Prefilters"): every ``SELECT ...
WHERE MATCH`` returns what ``t.search`` returns for the same query tree, bit for bit and in the same
order, and what the brute-force reference returns; relational predicates, joins, aggregates and
subqueries around a search behave as in any SQL.

Scores are compared as ``repr`` strings, i.e. bit for bit (-0.0 is not 0.0, NaN is NaN)."""

from __future__ import annotations

import os
import random
import re

import datafusion
import pyarrow as pa
import pytest
from engine_tables import arrow_table, delete_rows, engine_table, index_options
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import RefTable, ref_search
from strategies import (
    COMMON_WORDS,
    UNICODE_WORDS,
    corpora,
    table_columns,
    table_words,
)

import datafusion_fts as fts
from datafusion_fts.planner import answer_search
from datafusion_fts.query import Boolean, Match, Phrase, parse

Hit = tuple[int, str]

# The default run is deterministic (the same examples every time); HYPOTHESIS_PROFILE=thorough
# explores new ones on each run.
deterministic = settings(derandomize=os.environ.get("HYPOTHESIS_PROFILE", "default") == "default")


# ---------------------------------------------------------------------------- helpers


def lit(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def columns_sql(columns: list[str]) -> str:
    return columns[0] if len(columns) == 1 else "(" + ", ".join(columns) + ")"


def rows(df) -> list[tuple]:
    table = df.to_arrow_table()
    return list(zip(*(c.to_pylist() for c in table.columns))) if table.num_columns else []


def sql_hits(db: fts.Database, sql: str) -> list[Hit]:
    """(row id, repr(score)) of a SELECT whose first two columns are _rowid and score()."""
    return [(r, repr(s)) for r, s, *_ in rows(db.sql(sql))]


def search_hits(t: fts.Table, tree, limit=None, offset=0, include=None) -> list[Hit]:
    if limit == 0:
        return []
    result = t.search(tree, limit=limit, offset=offset, include_row_ids=include, columns=[])
    return [
        (r, repr(s))
        for r, s in zip(result.column("_rowid").to_pylist(), result.column("_score").to_pylist())
    ]


def reference_hits(ref: RefTable, tree, limit=None, offset=0, include=None) -> list[Hit]:
    return [(r, repr(s)) for r, s in ref_search(ref, tree, limit, offset, include)]


def limit_sql(limit: int | None, offset: int) -> str:
    text = "" if limit is None else f" LIMIT {limit}"
    return text + (f" OFFSET {offset}" if offset else "")


def table_with(ref: RefTable, layout: str, extra: dict[str, pa.Array] | None = None) -> fts.Table:
    """``engine_table`` with extra (non-text) columns after the text ones."""
    if not extra:
        return engine_table(ref, layout)
    db = fts.connect()
    data = arrow_table(ref)
    for name, values in extra.items():
        data = data.append_column(name, values)
    t = db.create_table("docs", data)
    text_columns = table_columns(ref) or ["title"]
    if layout == "indexed":
        for column in text_columns:
            t.create_index(column, **index_options(ref, column))
    delete_rows(t, ref.deleted)
    return t


# ------------------------------------------------------------ random MATCH query strings

# Words that mean nothing to the query-string parser (no AND/OR/NOT, no syntax characters);
# "it's" needs SQL quoting, the others match corpus words or nothing.
QUERY_STRING_WORDS = COMMON_WORDS + UNICODE_WORDS + ("gamma", "alpah", "cafe", "it's")


@st.composite
def clauses(draw, words: list[str], depth: int) -> str:
    word = st.sampled_from(words)
    kind = draw(st.integers(0, 11))
    if kind <= 4:
        body = draw(word)
    elif kind <= 6:
        body = '"' + " ".join(draw(st.lists(word, min_size=1, max_size=3))) + '"'
        if draw(st.booleans()):
            body += f"~{draw(st.integers(0, 2))}"
    elif kind == 7:
        w = draw(word)
        body = w[: draw(st.integers(1, len(w)))] + "*"
    elif kind == 8:
        body = draw(word) + f"~{draw(st.integers(1, 2))}"
    elif kind == 9:
        body = draw(word) + "^" + draw(st.sampled_from(("2", "0.5", "1.7")))
    elif depth > 0:
        body = "(" + draw(query_strings(words, depth - 1)) + ")"
    else:
        body = draw(word)
    return draw(st.sampled_from(("", "", "", "+", "-"))) + body


@st.composite
def query_strings(draw, words: list[str], depth: int = 1) -> str:
    """A Lucene-style query string (docs/design.md: "The query tree and the query string") without
    field scopes: words, +/-, phrases (with slop), prefixes, fuzzy terms, boosts, AND/OR and
    groups."""
    parts = draw(st.lists(clauses(words, depth), min_size=1, max_size=4))
    out = parts[0]
    for part in parts[1:]:
        out += draw(st.sampled_from((" ", " ", " ", " AND ", " OR "))) + part
    return out


@st.composite
def sql_search_cases(draw, max_columns: int = 3):
    ref = draw(corpora(min_rows=0, max_rows=30, max_columns=max_columns))
    columns = table_columns(ref) or ["title"]
    words = list(QUERY_STRING_WORDS) + table_words(ref) * 5  # most words occur in the corpus
    chosen = draw(st.permutations(columns))[: draw(st.sampled_from((1, 1, 1, 2)))]
    text = draw(query_strings(words))
    limit = draw(st.one_of(st.none(), st.integers(0, 12)))
    offset = draw(st.sampled_from((0, 0, 0, 0, 1, 3)))
    return ref, list(chosen), text, limit, offset


@deterministic
@given(sql_search_cases(), st.sampled_from(("flat", "indexed", "segments", "forced_flat_scan")))
def test_sql_match_string_equals_search_and_reference(case, layout):
    ref, columns, text, limit, offset = case
    t = engine_table(ref, "indexed" if layout == "forced_flat_scan" else layout, splits=[5, 17])
    db = t.db
    if layout == "forced_flat_scan":
        db.sql("SET fts.force_plan = 'flat_scan'")
    sql = (
        f"SELECT _rowid, score() FROM docs WHERE MATCH({columns_sql(columns)}, {lit(text)}) "
        f"ORDER BY score() DESC" + limit_sql(limit, offset)
    )
    try:
        tree = parse(text, columns)
    except fts.QuerySyntaxError:
        with pytest.raises(fts.QuerySyntaxError):
            db.sql(sql)
        return
    got = sql_hits(db, sql)
    assert got == search_hits(t, tree, limit, offset)
    assert got == reference_hits(ref, tree, limit, offset)


@deterministic
@given(sql_search_cases(max_columns=1), st.data())
def test_rowid_prefilter_equals_include_row_ids(case, data):
    ref, columns, text, limit, offset = case
    t = engine_table(ref, data.draw(st.sampled_from(("flat", "indexed"))))
    try:
        tree = parse(text, columns)
    except fts.QuerySyntaxError:
        return
    live = ref.live_row_ids()
    include = data.draw(st.lists(st.sampled_from(live), unique=True)) if live else []
    predicate = f"_rowid IN ({', '.join(map(str, include))})" if include else "_rowid < 0"
    sql = (
        f"SELECT _rowid, score() FROM docs WHERE {predicate} AND MATCH({columns[0]}, {lit(text)}) "
        f"ORDER BY score() DESC" + limit_sql(limit, offset)
    )
    got = sql_hits(t.db, sql)
    assert got == search_hits(t, tree, limit, offset, include)
    assert got == reference_hits(ref, tree, limit, offset, include)


# ------------------------------------------------------- AND / OR / NOT of MATCH predicates

SIMPLE_WORDS = ("a", "b", "c", "alpha", "beta", "bet", "gamma")


def boolean_shapes(a: str, b: str, qa, qb, qc):
    """(WHERE clause, the query tree docs/design.md: "SQL" says it builds)."""
    ta, tb, tc = parse(qa, [a]), parse(qb, [b]), parse(qc, [a])
    ma, mb, mc = f"MATCH({a}, {lit(qa)})", f"MATCH({b}, {lit(qb)})", f"MATCH({a}, {lit(qc)})"
    return [
        (f"{ma} AND {mb}", Boolean(must=(ta, tb))),
        (f"{ma} AND {mb} AND NOT {mc}", Boolean(must=(ta, tb), must_not=(tc,))),
        (f"NOT {mc} AND {ma}", Boolean(must=(ta,), must_not=(tc,))),
        (f"{ma} OR {mb}", Boolean(should=(ta, tb))),
        (f"({ma} OR {mb}) AND NOT {mc}", Boolean(must=(Boolean(should=(ta, tb)),), must_not=(tc,))),
        (f"({ma} AND {mb}) OR {mc}", Boolean(should=(Boolean(must=(ta, tb)), tc))),
        (f"NOT {mc}", Boolean(must_not=(tc,))),
    ]


@deterministic
@given(
    corpora(min_rows=1, max_rows=30, min_columns=2, max_columns=3),
    st.data(),
    st.sampled_from(("flat", "indexed")),
)
def test_match_predicates_build_one_boolean_tree(ref, data, layout):
    columns = table_columns(ref)
    a, b = data.draw(st.permutations(columns))[:2]
    words = list(SIMPLE_WORDS) + table_words(ref)
    texts = [
        data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=3).map(" ".join))
        for _ in range(3)
    ]
    where, tree = data.draw(st.sampled_from(boolean_shapes(a, b, *texts)))
    limit = data.draw(st.one_of(st.none(), st.integers(1, 8)))
    t = engine_table(ref, layout)
    got = sql_hits(
        t.db,
        f"SELECT _rowid, score() FROM docs WHERE {where} ORDER BY score() DESC"
        + limit_sql(limit, 0),
    )
    assert got == search_hits(t, tree, limit)
    assert got == reference_hits(ref, tree, limit)


def test_match_and_not_match_on_two_columns_by_hand():
    ref = RefTable(
        rows={
            0: {"title": "alpha", "body": "beta gamma"},
            1: {"title": "alpha beta", "body": "beta"},
            2: {"title": "gamma", "body": "beta beta"},
            3: {"title": "alpha", "body": "delta"},
            4: {"title": "alpha", "body": "beta zeta"},
        }
    )
    t = engine_table(ref, "indexed")
    tree = Boolean(
        must=(Match("title", "alpha"), Match("body", "beta")), must_not=(Match("title", "beta"),)
    )
    got = sql_hits(
        t.db,
        "SELECT _rowid, score() FROM docs WHERE MATCH(title, 'alpha') AND MATCH(body, 'beta') "
        "AND NOT MATCH(title, 'beta') ORDER BY score() DESC",
    )
    assert [r for r, _ in got] == [0, 4]  # row 1 excluded, rows 2 and 3 miss a MUST
    assert got == search_hits(t, tree) == reference_hits(ref, tree)


# ------------------------------------------------------------------- a shared test table

VOCAB = ("alpha", "beta", "gamma", "delta", "epsilon")


def library_rows(n: int = 48, seed: int = 11) -> list[tuple[int, str, str, int]]:
    """(id, title, body, year): short texts over five words, so scores tie often."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        title = " ".join(rng.choice(VOCAB[:3]) for _ in range(rng.randint(1, 2)))
        body = " ".join(rng.choice(VOCAB) for _ in range(rng.randint(1, 4)))
        out.append((100 + i, title, body, 1990 + (i * 7) % 30))
    return out


LIBRARY = library_rows()
LIBRARY_REF = RefTable(rows={i: {"title": r[1], "body": r[2]} for i, r in enumerate(LIBRARY)})


def create_library(db: fts.Database, index: bool = True) -> None:
    db.sql("CREATE TABLE docs (id BIGINT, title VARCHAR, body VARCHAR, year INT)")
    values = ", ".join(f"({i}, {lit(t)}, {lit(b)}, {y})" for i, t, b, y in LIBRARY)
    db.sql(f"INSERT INTO docs VALUES {values}")
    if index:
        db.sql("CREATE FULLTEXT INDEX ON docs (title, body) WITH (positions = true)")
    # A plain DataFusion table next to the managed one.
    meta = pa.table(
        {
            "id": pa.array([r[0] for r in LIBRARY[::2]], pa.int64()),
            "category": [("odd", "even", "none")[i % 3] for i in range(len(LIBRARY[::2]))],
        }
    )
    db.ctx.register_record_batches("meta", [meta.to_batches()])


@pytest.fixture(params=["indexed", "flat"])
def library(request) -> fts.Database:
    db = fts.connect()
    create_library(db, index=request.param == "indexed")
    return db


def library_year(rowid: int) -> int:
    return LIBRARY[rowid][3]


def library_id(rowid: int) -> int:
    return LIBRARY[rowid][0]


def test_library_is_what_the_reference_sees(library):
    assert rows(library.sql("SELECT _rowid, id, title, body, year FROM docs ORDER BY _rowid")) == [
        (i, *r) for i, r in enumerate(LIBRARY)
    ]


# --------------------------------------------------------------------- prefilter (§5.6)


@pytest.mark.parametrize("plan", ["auto", "flat_scan"])
def test_prefilter_never_starves_the_top_k(plan):
    """The 60 best-scoring rows all fail ``year > 2000``; LIMIT 10 still gets 10 rows."""
    n = 120
    bodies = [
        "alpha alpha alpha" if i % 2 == 0 else "alpha " + "filler " * (i % 9) for i in range(n)
    ]
    years = [1990 if i % 2 == 0 else 2001 + i for i in range(n)]
    ref = RefTable(rows={i: {"body": b} for i, b in enumerate(bodies)})
    db = fts.connect(config={"fts.force_plan": plan})
    t = db.create_table("docs", pa.table({"body": bodies, "year": pa.array(years, pa.int32())}))
    t.create_index("body")
    tree = Match("body", "alpha")
    include = [i for i in range(n) if years[i] > 2000]
    assert all(r % 2 == 0 for r, _ in reference_hits(ref, tree, 60))  # the best 60 are old rows
    for limit, offset in ((10, 0), (10, 55), (7, 58), (None, 0)):
        got = sql_hits(
            db,
            "SELECT _rowid, score(), year FROM docs WHERE MATCH(body, 'alpha') AND year > 2000 "
            "ORDER BY score() DESC" + limit_sql(limit, offset),
        )
        expected = reference_hits(ref, tree, limit, offset, include)
        assert got == expected
        assert len(got) == min(limit or n, 60 - offset)


@deterministic
@given(
    corpora(min_rows=1, max_rows=30, max_columns=1),
    st.data(),
    st.sampled_from(("flat", "indexed")),
)
def test_relational_prefilter_equals_brute_force(ref, data, layout):
    n = len(ref.rows)
    years = data.draw(st.lists(st.integers(1995, 2005), min_size=n, max_size=n))
    cut = data.draw(st.integers(1994, 2005))
    column = table_columns(ref)[0]
    text = data.draw(
        st.lists(
            st.sampled_from(list(SIMPLE_WORDS) + table_words(ref)), min_size=1, max_size=3
        ).map(" ".join)
    )
    limit = data.draw(st.one_of(st.none(), st.integers(1, 10)))
    offset = data.draw(st.sampled_from((0, 0, 2)))
    t = table_with(ref, layout, {"year": pa.array(years, pa.int32())})
    include = [r for r in range(n) if years[r] > cut]
    got = sql_hits(
        t.db,
        f"SELECT _rowid, score() FROM docs WHERE MATCH({column}, {lit(text)}) AND year > {cut} "
        "ORDER BY score() DESC" + limit_sql(limit, offset),
    )
    assert got == reference_hits(ref, Match(column, text), limit, offset, include)


PREFILTER_TITLES = ["alpha", "it's", "a\\b", None, "ALPHA beta", "beta", "x%y", "al_pha"]


@pytest.mark.parametrize(
    "predicate",
    [
        "title = 'it''s'",
        "title = 'a\\b'",
        "title LIKE 'al%'",
        "title ILIKE 'AL%'",
        "title LIKE 'x\\%y'",
        "title ~ '^al'",
        "title IS NOT NULL",
        "coalesce(title, '') <> ''",
        "year BETWEEN 1995 AND 2005",
        "CAST(year AS VARCHAR) = '2005'",
        "year::VARCHAR = '2005'",
        "year % 2 = 0",
        "year IN (1990, 2005)",
        "NOT (year > 2000)",
        "title || body LIKE '%beta%'",
        "lower(title) = 'alpha'",
        "starts_with(title, 'al')",
        "_rowid BETWEEN 2 AND 5",
    ],
)
def test_prefilter_predicates_mean_what_datafusion_says(predicate):
    """The prefilter is sent to DataFusion as SQL text: it must select the same rows as
    the same predicate in a plain DataFusion query."""
    db = fts.connect()
    n = len(PREFILTER_TITLES)
    t = db.create_table(
        "docs",
        pa.table(
            {
                "title": PREFILTER_TITLES,
                "body": ["alpha"] * n,
                "year": pa.array(range(1990, 1990 + 5 * n, 5), pa.int32()),
            }
        ),
    )
    t.create_index("body")
    plain = {r for (r,) in rows(db.sql(f"SELECT _rowid FROM docs WHERE {predicate}"))}
    got = sql_hits(
        db,
        f"SELECT _rowid, score() FROM docs WHERE MATCH(body, 'alpha') AND {predicate} ORDER BY score() DESC LIMIT {n}",
    )
    assert {r for r, _ in got} == plain
    assert got == search_hits(t, Match("body", "alpha"), n, 0, sorted(plain))


# ------------------------------------------------------------------- order and paging (§5.2)


def test_order_by_score_breaks_ties_by_rowid_and_pages_reassemble(library):
    tree = Match("body", "alpha beta")
    full = sql_hits(
        library,
        "SELECT _rowid, score() FROM docs WHERE MATCH(body, 'alpha beta') ORDER BY score() DESC",
    )
    assert full == reference_hits(LIBRARY_REF, tree)
    assert len({s for _, s in full}) < len(full) - 5, "the corpus must be tie-heavy"
    for size in (1, 3, 4, 7):
        pages = []
        for offset in range(0, len(full) + size, size):
            pages += sql_hits(
                library,
                "SELECT _rowid, score() AS s FROM docs WHERE MATCH(body, 'alpha beta') "
                f"ORDER BY s DESC LIMIT {size} OFFSET {offset}",
            )
        assert pages == full


def test_top_k1_is_a_prefix_of_top_k2(library):
    full = sql_hits(
        library,
        "SELECT _rowid, score() FROM docs WHERE MATCH(title, 'gamma') ORDER BY score() DESC",
    )
    for k in range(len(full) + 2):
        got = sql_hits(
            library,
            f"SELECT _rowid, score() FROM docs WHERE MATCH(title, 'gamma') ORDER BY score() DESC LIMIT {k}",
        )
        assert got == full[:k]


def test_tie_break_applies_with_other_selected_columns_and_a_table_alias(library):
    got = rows(
        library.sql(
            "SELECT d.id, score() AS s, d._rowid FROM docs AS d WHERE MATCH(d.title, 'alpha') "
            "ORDER BY s DESC LIMIT 6"
        )
    )
    expected = reference_hits(LIBRARY_REF, Match("title", "alpha"), 6)
    assert [(r, repr(s)) for _, s, r in got] == expected
    assert [i for i, _, _ in got] == [library_id(r) for r, _ in expected]


def test_order_by_score_ascending_is_the_reverse_order(library):
    full = sql_hits(
        library, "SELECT _rowid, score() FROM docs WHERE MATCH(body, 'gamma') ORDER BY score() DESC"
    )
    asc = sql_hits(
        library, "SELECT _rowid, score() FROM docs WHERE MATCH(body, 'gamma') ORDER BY score() ASC"
    )
    assert asc == full[::-1]


def test_without_limit_every_match_is_returned(library):
    tree = parse("alpha -beta", ["body"])
    expected = reference_hits(LIBRARY_REF, tree)
    got = sql_hits(library, "SELECT _rowid, score() FROM docs WHERE MATCH(body, 'alpha -beta')")
    assert sorted(got) == sorted(expected)
    assert len(got) > 10  # more than any default limit would give
    (count,) = rows(library.sql("SELECT count(*) FROM docs WHERE MATCH(body, 'alpha -beta')"))[0]
    assert count == len(expected)


@pytest.mark.parametrize(
    "tail",
    [
        "LIMIT 0",
        "ORDER BY score() DESC LIMIT 0",
        "ORDER BY score() DESC LIMIT 0 OFFSET 3",
        "ORDER BY id LIMIT 0",
    ],
)
def test_limit_zero_returns_no_row(library, tail):
    df = library.sql(f"SELECT id, score() FROM docs WHERE MATCH(body, 'alpha') {tail}")
    table = df.to_arrow_table()
    assert table.num_rows == 0
    assert table.column_names == ["id", "_score"]


def test_offset_past_the_end_returns_no_row(library):
    assert (
        rows(
            library.sql(
                "SELECT id FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC LIMIT 5 OFFSET 1000"
            )
        )
        == []
    )


def test_limit_without_order_by_returns_k_matching_rows(library):
    got = rows(library.sql("SELECT _rowid, score() FROM docs WHERE MATCH(body, 'delta') LIMIT 4"))
    everything = dict(reference_hits(LIBRARY_REF, Match("body", "delta")))
    assert len(got) == 4
    assert all(everything[r] == repr(s) for r, s in got)


# -------------------------------------------------------- MATCH under OR with relational predicates


def test_rows_matching_only_the_relational_side_score_zero(library):
    got = rows(
        library.sql(
            "SELECT _rowid, score(), year FROM docs WHERE MATCH(body, 'epsilon') OR year < 1995 "
            "ORDER BY score() DESC"
        )
    )
    matched = dict(reference_hits(LIBRARY_REF, Match("body", "epsilon")))
    expected_ids = set(matched) | {r for r in range(len(LIBRARY)) if library_year(r) < 1995}
    assert {r for r, _, _ in got} == expected_ids
    for r, s, year in got:
        assert year == library_year(r)
        assert repr(s) == matched.get(r, repr(0.0))
    # The total order holds across matched and unmatched rows.
    keyed = [(-s, r) for r, s, _ in got]
    assert keyed == sorted(keyed)
    assert set(matched) - {r for r, _, _ in got} == set()
    assert any(r not in matched for r, _, _ in got)


def test_or_with_relational_predicate_and_a_prefilter_and_a_limit(library):
    got = rows(
        library.sql(
            "SELECT _rowid, score() FROM docs WHERE (MATCH(title, 'beta') OR year > 2015) AND id % 2 = 0 "
            "ORDER BY score() DESC LIMIT 9"
        )
    )
    matched = dict(reference_hits(LIBRARY_REF, Match("title", "beta")))
    candidates = [
        (r, matched.get(r, repr(0.0)))
        for r in range(len(LIBRARY))
        if library_id(r) % 2 == 0 and (r in matched or library_year(r) > 2015)
    ]
    candidates.sort(key=lambda h: (-float(h[1]), h[0]))
    assert [(r, repr(s)) for r, s in got] == candidates[:9]


def test_two_matches_under_one_or_with_a_relational_predicate(library):
    got = rows(
        library.sql(
            "SELECT _rowid, score() FROM docs WHERE MATCH(title, 'beta') OR year = 1990 OR MATCH(body, 'delta') "
            "ORDER BY score() DESC"
        )
    )
    tree = Boolean(should=(Match("title", "beta"), Match("body", "delta")))
    matched = dict(reference_hits(LIBRARY_REF, tree))
    expected = [
        (r, matched.get(r, repr(0.0)))
        for r in range(len(LIBRARY))
        if r in matched or library_year(r) == 1990
    ]
    expected.sort(key=lambda h: (-float(h[1]), h[0]))
    assert [(r, repr(s)) for r, s in got] == expected


_MATCH_CALL = re.compile(r"MATCH\((\w+), '([^']*)'\)")


@pytest.mark.parametrize(
    "where",
    [
        "(MATCH(body, 'alpha') AND year > 1995) OR MATCH(title, 'beta')",
        "MATCH(body, 'alpha') OR (year > 1995 AND MATCH(title, 'beta'))",
        "(MATCH(body, 'alpha') OR year > 1995) AND MATCH(title, 'beta')",
        "(MATCH(body, 'alpha') OR year > 1995) AND NOT MATCH(title, 'beta')",
        "(MATCH(body, 'alpha') OR year > 1995) AND (MATCH(title, 'beta') OR year < 1992)",
        "NOT (MATCH(body, 'alpha') OR year > 1995)",
        "((MATCH(body, 'alpha') AND year > 1) OR MATCH(title, 'beta')) AND year < 2010",
        "MATCH(body, 'alpha') = true",
        "CASE WHEN MATCH(body, 'alpha') THEN 1 ELSE 0 END = 1",
        "COALESCE(MATCH(body, 'alpha'), false)",
    ],
)
def test_match_mixed_with_predicates_at_any_depth_keeps_the_rows_sql_keeps(library, where):
    """(Refused before issue 41.) Each MATCH is a boolean: the rows kept are those plain
    DataFusion keeps with each MATCH replaced by its truth, computed by the reference."""
    marks = {"id": [r[0] for r in LIBRARY], "year": [r[3] for r in LIBRARY]}
    plain = where
    for i, (column, text) in enumerate(_MATCH_CALL.findall(where)):
        found = dict(reference_hits(LIBRARY_REF, Match(column, text)))
        marks[f"m{i}"] = [row in found for row in range(len(LIBRARY))]
        plain = plain.replace(f"MATCH({column}, '{text}')", f"m{i}", 1)
    ctx = datafusion.SessionContext()
    ctx.from_pydict(marks, name="docs")
    want = sorted(r["id"] for r in ctx.sql(f"SELECT id FROM docs WHERE {plain}").to_pylist())
    version = library.manifest.version
    assert sorted(r[0] for r in rows(library.sql(f"SELECT id FROM docs WHERE {where}"))) == want
    assert library.manifest.version == version


# ----------------------------------------------------- joins, aggregates and subqueries


def test_join_with_a_plain_datafusion_table(library):
    got = rows(
        library.sql(
            "SELECT d.id, m.category, score() AS s FROM docs d JOIN meta m ON d.id = m.id "
            "WHERE MATCH(d.body, 'alpha') ORDER BY s DESC LIMIT 5"
        )
    )
    meta = dict(rows(library.sql("SELECT id, category FROM meta")))
    expected = [
        (library_id(r), meta[library_id(r)], s)
        for r, s in reference_hits(LIBRARY_REF, Match("body", "alpha"))
        if library_id(r) in meta
    ][:5]
    assert [(i, c, repr(s)) for i, c, s in got] == expected


def test_join_with_a_filter_on_the_other_table_does_not_starve_the_limit(library):
    got = rows(
        library.sql(
            "SELECT d._rowid, score() FROM meta m JOIN docs d ON m.id = d.id "
            "WHERE MATCH(body, 'delta') AND m.category = 'none' ORDER BY score() DESC LIMIT 4"
        )
    )
    meta = dict(rows(library.sql("SELECT id, category FROM meta")))
    expected = [
        (r, s)
        for r, s in reference_hits(LIBRARY_REF, Match("body", "delta"))
        if meta.get(library_id(r)) == "none"
    ][:4]
    assert len(expected) == 4
    assert [(r, repr(s)) for r, s in got] == expected


def test_count_and_group_by(library):
    matched = dict(reference_hits(LIBRARY_REF, Match("title", "gamma")))
    ((count,),) = rows(library.sql("SELECT count(*) FROM docs WHERE MATCH(title, 'gamma')"))
    assert count == len(matched)
    got = rows(
        library.sql(
            "SELECT year, count(*) AS n, max(score()) AS best FROM docs WHERE MATCH(title, 'gamma') "
            "GROUP BY year ORDER BY year"
        )
    )
    expected: dict[int, list[float]] = {}
    for r, s in matched.items():
        expected.setdefault(library_year(r), []).append(float(s))
    assert [(y, n, repr(b)) for y, n, b in got] == [
        (y, len(v), repr(max(v))) for y, v in sorted(expected.items())
    ]


def test_group_by_with_limit_is_not_cut_by_the_search(library):
    got = rows(
        library.sql(
            "SELECT year, count(*) FROM docs WHERE MATCH(body, 'beta') GROUP BY year ORDER BY year LIMIT 3"
        )
    )
    years: dict[int, int] = {}
    for r, _ in reference_hits(LIBRARY_REF, Match("body", "beta")):
        years[library_year(r)] = years.get(library_year(r), 0) + 1
    assert got == sorted(years.items())[:3]


def test_order_by_another_column_with_limit_is_not_cut_by_the_search(library):
    got = rows(
        library.sql("SELECT id FROM docs WHERE MATCH(body, 'beta') ORDER BY id DESC LIMIT 3")
    )
    ids = sorted(
        (library_id(r) for r, _ in reference_hits(LIBRARY_REF, Match("body", "beta"))), reverse=True
    )
    assert [i for (i,) in got] == ids[:3]


@pytest.mark.parametrize("sql", [
    "SELECT id, score() AS s, count(*) OVER () AS total FROM docs WHERE MATCH(body, 'beta gamma') ORDER BY s DESC LIMIT 4",
    "SELECT *, COUNT(*) over() * 10 AS n FROM docs WHERE MATCH(body, 'beta') AND year > 2000 "
    "ORDER BY score() DESC LIMIT 3 OFFSET 2",
    "SELECT id, count(*) OVER () AS total FROM docs WHERE MATCH(body, 'beta') ORDER BY score() DESC LIMIT 0",
    "SELECT id, count(*) OVER () AS total FROM docs WHERE MATCH(body, 'nothing') ORDER BY score() DESC LIMIT 2",
    "SELECT title, score() AS s, count(*) OVER () AS total FROM docs WHERE MATCH(body, 'beta') ORDER BY s DESC LIMIT 2",
])
def test_a_count_over_the_matches_beside_a_top_k_is_the_search_s_count(library, sql):
    """``count(*) OVER ()`` beside ``ORDER BY score() DESC LIMIT k``: the top k is pushed
    into the search, which counts every match once, or, for one term on a fully indexed
    table, runs its top k and reads the count from the index (planner/answer_search.py; EXPLAIN:
    ``total``); every row, name, type and nullability as the general plan
    (fts.sql_fast_paths off) gives them."""
    counted = []
    real = answer_search.counted_from_statistics
    answer_search.counted_from_statistics = lambda *a: counted.append(found := real(*a)) or found  # type: ignore[assignment]
    try:
        fast = library.sql(sql).to_arrow_table()
    finally:
        answer_search.counted_from_statistics = real  # type: ignore[assignment]
    statistics = bool(counted) and counted[0] is not None
    if "'beta') ORDER BY s DESC LIMIT 2" in sql:  # (from the index's statistics where it has one)
        assert counted and statistics == bool(library.table("docs").snapshot().meta.fulltext)
    logical = explain(library, sql)["logical_plan"]
    assert re.search(r"k=\d+, total", logical)
    assert ("total: the index's document frequencies" in logical) == statistics, logical
    library.settings.set("fts.sql_fast_paths", False)
    general = library.sql(sql).to_arrow_table()
    assert fast.schema == general.schema and fast.equals(general)
    library.settings.set("fts.sql_fast_paths", True)
    assert library.sql(sql).to_arrow_table().equals(general)  # (the statement's shape remembered)


@pytest.mark.parametrize("sql, scored", [
    ("SELECT title, count(*) AS n, avg(year) AS y FROM docs WHERE MATCH(body, 'beta') GROUP BY title ORDER BY n DESC, title",
     False),
    ("SELECT year, count(*) FROM docs WHERE MATCH(body, 'beta gamma') AND year > 1990 GROUP BY year ORDER BY year", False),
    ("SELECT count(*) AS n, max(year) AS m FROM docs WHERE MATCH(body, 'beta')", False),
    ("SELECT id FROM docs WHERE MATCH(body, 'beta') ORDER BY id DESC LIMIT 2", False),
    ("SELECT title, max(score()) AS best FROM docs WHERE MATCH(body, 'beta') GROUP BY title ORDER BY title", True),
    ("SELECT title FROM docs WHERE MATCH(body, 'beta') GROUP BY title HAVING sum(score()) > 0 ORDER BY title", True),
    ("SELECT id, rank() OVER (ORDER BY score() DESC) AS r FROM docs WHERE MATCH(body, 'beta') ORDER BY id", True),
    ("SELECT * FROM docs WHERE MATCH(body, 'beta') ORDER BY id", True),
])
def test_a_statement_that_reads_no_score_finds_its_matches_unscored(library, sql, scored):
    """Every match of a statement that reads no score() is found without scoring
    (planner/count_matches: its rows, or its counts by a column; EXPLAIN: ``unscored``),
    one reading it anywhere is scored; rows, names and types as the general plan
    (fts.sql_fast_paths off) gives them."""
    found = []
    real = {name: getattr(answer_search, name) for name in ("matching_rows", "counted_by")}
    for name, function in real.items():
        setattr(answer_search, name, lambda *a, function=function: found.append(1) or function(*a))
    try:
        fast = library.sql(sql).to_arrow_table()
    finally:
        for name, function in real.items():
            setattr(answer_search, name, function)
    assert bool(found) != scored
    assert ("unscored" in explain(library, sql)["logical_plan"]) != scored
    library.settings.set("fts.sql_fast_paths", False)
    general = library.sql(sql).to_arrow_table()
    assert fast.schema == general.schema and fast.equals(general)


@pytest.mark.parametrize("sql", [
    "SELECT _rowid, title, score() FROM docs WHERE MATCH(body, 'beta') ORDER BY score() DESC LIMIT 3 OFFSET 1",
    "SELECT _rowid, score() AS s FROM docs WHERE MATCH(body, 'beta') ORDER BY score() DESC LIMIT 3 OFFSET 1",
    "SELECT score() AS s FROM docs WHERE MATCH(body, 'beta gamma') ORDER BY s DESC",
    "SELECT count(*) AS n, max(score()) AS m FROM docs WHERE MATCH(body, 'beta')",
    "SELECT _rowid, score() AS s FROM docs WHERE MATCH(body, 'beta') ORDER BY s DESC LIMIT 0",
    "SELECT id, title, score() AS s FROM docs WHERE MATCH(body, 'beta') ORDER BY s DESC LIMIT 0",
])
def test_the_fast_paths_answer_with_the_general_plan_s_schema(library, sql):
    """Names, types and nullability: ``_rowid`` NOT NULL as the table's (a result carrying
    columns made it nullable), ``score()`` nullable (a result of ``_rowid`` and ``_score``
    alone made it NOT NULL); twice, the second from the statement's remembered shape."""
    fast = [library.sql(sql).to_arrow_table() for _ in range(2)]
    library.settings.set("fts.sql_fast_paths", False)
    general = library.sql(sql).to_arrow_table()
    assert all(f.schema == general.schema and f.equals(general) for f in fast)


def test_a_count_over_the_matches_of_a_table_with_a_column_named_total_is_not_pushed_down():
    db = fts.connect()
    db.create_table("docs", pa.table({"_total": [5, 6, 7], "body": ["a b", "a", "b"]})).create_index("body")
    sql = "SELECT _total, count(*) OVER () AS n FROM docs WHERE MATCH(body, 'a') ORDER BY score() DESC LIMIT 1"
    assert "k=all" in explain(db, sql)["logical_plan"]
    assert db.sql(sql).to_pylist() == [{"_total": 6, "n": 2}]


def test_a_count_over_the_matches_without_a_name_of_its_own_is_not_pushed_down(library):
    """Its column would be named by DataFusion's text of the window: the statement takes
    the general plan, every match found."""
    sql = "SELECT id, count(*) OVER () FROM docs WHERE MATCH(body, 'beta') ORDER BY score() DESC LIMIT 2"
    assert "k=all" in explain(library, sql)["logical_plan"]
    matches = len(reference_hits(LIBRARY_REF, Match("body", "beta")))
    assert library.sql(sql).to_arrow_table().column(1).to_pylist() == [matches] * 2


def test_in_subquery_next_to_match(library):
    got = sql_hits(
        library,
        "SELECT _rowid, score() FROM docs WHERE id IN (SELECT id FROM meta WHERE category = 'odd') "
        "AND MATCH(body, 'epsilon') ORDER BY score() DESC LIMIT 3",
    )
    meta = dict(rows(library.sql("SELECT id, category FROM meta")))
    expected = [
        h
        for h in reference_hits(LIBRARY_REF, Match("body", "epsilon"))
        if meta.get(library_id(h[0])) == "odd"
    ][:3]
    assert len(expected) == 3
    assert got == expected


def test_a_search_inside_an_in_subquery_next_to_another_search(library):
    got = sql_hits(
        library,
        "SELECT _rowid, score() FROM docs WHERE MATCH(body, 'alpha') "
        "AND id IN (SELECT id FROM docs WHERE MATCH(title, 'beta')) ORDER BY score() DESC",
    )
    titles = {library_id(r) for r, _ in reference_hits(LIBRARY_REF, Match("title", "beta"))}
    expected = [
        h for h in reference_hits(LIBRARY_REF, Match("body", "alpha")) if library_id(h[0]) in titles
    ]
    assert expected and got == expected


def test_search_in_a_derived_table_and_a_cte(library):
    expected = reference_hits(LIBRARY_REF, Match("body", "delta"), 5)
    derived = rows(
        library.sql(
            "SELECT r.rid, r.s FROM (SELECT _rowid AS rid, score() AS s FROM docs WHERE MATCH(body, 'delta') "
            "ORDER BY score() DESC LIMIT 5) AS r ORDER BY r.s DESC, r.rid"
        )
    )
    cte = rows(
        library.sql(
            "WITH r AS (SELECT _rowid AS rid, score() AS s FROM docs WHERE MATCH(body, 'delta')) "
            "SELECT rid, s FROM r ORDER BY s DESC, rid LIMIT 5"
        )
    )
    assert [(r, repr(s)) for r, s in derived] == expected
    assert [(r, repr(s)) for r, s in cte] == expected


def test_scalar_subquery_with_a_search(library):
    ((n, best),) = rows(
        library.sql(
            "SELECT (SELECT count(*) FROM docs WHERE MATCH(title, 'alpha')) AS n, "
            "(SELECT max(score()) FROM docs WHERE MATCH(title, 'alpha')) AS best"
        )
    )
    expected = reference_hits(LIBRARY_REF, Match("title", "alpha"))
    assert n == len(expected)
    assert repr(best) == expected[0][1]


def test_union_of_two_searches(library):
    got = rows(
        library.sql(
            "SELECT _rowid FROM docs WHERE MATCH(title, 'beta') UNION SELECT _rowid FROM docs "
            "WHERE MATCH(body, 'epsilon') ORDER BY 1"
        )
    )
    expected = {r for r, _ in reference_hits(LIBRARY_REF, Match("title", "beta"))}
    expected |= {r for r, _ in reference_hits(LIBRARY_REF, Match("body", "epsilon"))}
    assert [r for (r,) in got] == sorted(expected)


def test_multi_column_match_is_a_multi_match(library):
    tree = parse("gamma delta", ["title", "body"])
    got = sql_hits(
        library,
        "SELECT _rowid, score() FROM docs WHERE MATCH((title, body), 'gamma delta') ORDER BY score() DESC LIMIT 8",
    )
    assert (
        got == search_hits(library.table("docs"), tree, 8) == reference_hits(LIBRARY_REF, tree, 8)
    )


def test_score_filtered_in_an_outer_query(library):
    expected = [h for h in reference_hits(LIBRARY_REF, Match("body", "alpha")) if float(h[1]) > 0.5]
    got = rows(
        library.sql(
            "SELECT rid, s FROM (SELECT _rowid AS rid, score() AS s FROM docs WHERE MATCH(body, 'alpha')) AS r "
            "WHERE s > 0.5 ORDER BY s DESC, rid"
        )
    )
    assert [(r, repr(s)) for r, s in got] == expected


def test_score_in_where_next_to_match_filters_or_is_refused_cleanly(library):
    sql = "SELECT _rowid, score() FROM docs WHERE MATCH(body, 'alpha') AND score() > 0.5 ORDER BY score() DESC"
    try:
        got = sql_hits(library, sql)
    except fts.FtsError:
        return
    assert got == [
        h for h in reference_hits(LIBRARY_REF, Match("body", "alpha")) if float(h[1]) > 0.5
    ]


# ------------------------------------------------------------ SELECT *, _rowid and score()


def test_select_star_with_match_hides_rowid_and_score(library):
    table = library.sql("SELECT * FROM docs WHERE MATCH(body, 'alpha')").to_arrow_table()
    assert table.column_names == ["id", "title", "body", "year"]
    aliased = library.sql(
        "SELECT d.* FROM docs AS d WHERE MATCH(d.body, 'alpha') OR d.year < 1995"
    ).to_arrow_table()
    assert aliased.column_names == ["id", "title", "body", "year"]
    expected = {library_id(r) for r, _ in reference_hits(LIBRARY_REF, Match("body", "alpha"))}
    assert set(table.column("id").to_pylist()) == expected


def test_rowid_and_score_are_selectable_by_name(library):
    table = library.sql(
        "SELECT *, _rowid, score() AS s FROM docs WHERE MATCH(body, 'alpha') ORDER BY s DESC LIMIT 3"
    ).to_arrow_table()
    assert table.column_names == ["id", "title", "body", "year", "_rowid", "s"]
    expected = reference_hits(LIBRARY_REF, Match("body", "alpha"), 3)
    assert (
        list(zip(table.column("_rowid").to_pylist(), map(repr, table.column("s").to_pylist())))
        == expected
    )
    assert table.column("id").to_pylist() == [library_id(r) for r, _ in expected]


def test_select_star_over_a_join_with_match_hides_rowid_and_score(library):
    table = library.sql(
        "SELECT * FROM docs d JOIN meta m ON d.id = m.id WHERE MATCH(d.body, 'alpha')"
    ).to_arrow_table()
    assert "_rowid" not in table.column_names
    assert "_score" not in table.column_names


def test_select_star_without_match_hides_rowid(library):
    assert library.sql("SELECT * FROM docs").to_arrow_table().column_names == [
        "id",
        "title",
        "body",
        "year",
    ]


# ---------------------------------------------- tables registered on the session by other means


def test_match_on_a_plain_datafusion_table_equals_the_managed_one():
    data = pa.table(
        {
            "id": pa.array([r[0] for r in LIBRARY], pa.int64()),
            "title": [r[1] for r in LIBRARY],
            "body": [r[2] for r in LIBRARY],
        }
    )
    db = fts.connect()
    db.ctx.register_record_batches("plain", [data.to_batches()])
    db.create_table("docs", data)
    for tail in (
        "ORDER BY score() DESC",
        "ORDER BY score() DESC LIMIT 5",
        "ORDER BY score() DESC LIMIT 4 OFFSET 3",
    ):
        sql = (
            "SELECT _rowid, score(), id FROM {} WHERE MATCH((title, body), 'alpha \"epsilon beta\"') "
            + tail
        )
        assert rows(db.sql(sql.format("plain"))) == rows(db.sql(sql.format("docs")))
    star = db.sql("SELECT * FROM plain WHERE MATCH(body, 'alpha')").to_arrow_table()
    assert star.column_names == ["id", "title", "body"]


def test_match_under_or_on_a_plain_table_keeps_the_rows_sql_keeps():
    """(Refused before issue 41.) A table of the session is searched by scanning it."""
    db = fts.connect()
    db.ctx.register_record_batches(
        "plain", [pa.table({"id": [1, 2, 3], "body": ["alpha", "beta", "gamma"]}).to_batches()]
    )
    assert rows(db.sql("SELECT id, score() FROM plain WHERE MATCH(body, 'alpha') OR id > 2 ORDER BY id")) == [
        (1, 0.9808292530117263), (3, 0.0)]
    got = rows(db.sql("SELECT id FROM plain WHERE MATCH(body, 'alpha beta') AND id > 1"))
    assert got == [(2,)]


def test_match_on_a_plain_table_with_not_null_columns():
    db = fts.connect()
    schema = pa.schema([pa.field("id", pa.int64(), False), pa.field("body", pa.string(), False)])
    db.ctx.register_record_batches(
        "plain", [pa.table({"id": [1, 2], "body": ["alpha", "beta"]}, schema=schema).to_batches()]
    )
    assert rows(db.sql("SELECT id FROM plain WHERE MATCH(body, 'alpha')")) == [(1,)]


# ----------------------------------------------------------------------------- DDL / DML


def test_create_table_maps_sql_types():
    db = fts.connect()
    db.sql(
        "CREATE TABLE t (a BIGINT, b VARCHAR, c INT, d DOUBLE, e BOOLEAN, f DATE, g SMALLINT, h TEXT, i REAL)"
    )
    schema = db.table("t").schema
    assert [(f.name, f.type) for f in schema] == [
        ("a", pa.int64()),
        ("b", pa.string()),
        ("c", pa.int32()),
        ("d", pa.float64()),
        ("e", pa.bool_()),
        ("f", pa.date32()),
        ("g", pa.int16()),
        ("h", pa.string()),
        ("i", pa.float32()),
    ]
    assert db.table("t").count_rows() == 0
    assert rows(db.sql("SELECT count(*) FROM t")) == [(0,)]


def test_create_table_as_select_with_a_search(library):
    library.sql("CREATE TABLE hits AS SELECT id, body FROM docs WHERE MATCH(body, 'epsilon')")
    expected = {library_id(r) for r, _ in reference_hits(LIBRARY_REF, Match("body", "epsilon"))}
    assert {i for (i,) in rows(library.sql("SELECT id FROM hits"))} == expected
    assert "hits" in library.table_names()


def test_insert_values_select_and_column_list():
    db = fts.connect()
    db.sql("CREATE TABLE docs (id BIGINT, title VARCHAR, body VARCHAR, year INT)")
    db.sql("INSERT INTO docs VALUES (1, 'alpha', 'alpha beta', 1999), (2, NULL, 'beta', 2001)")
    db.sql("INSERT INTO docs (body, id) VALUES ('gamma alpha', 3)")
    db.ctx.register_record_batches(
        "staging",
        [
            pa.table(
                {"k": pa.array([4, 5], pa.int64()), "txt": ["alpha alpha", "delta"]}
            ).to_batches()
        ],
    )
    db.sql("INSERT INTO docs (id, body, year) SELECT k, txt, 2020 FROM staging")
    # (ORDER BY: without one SQL leaves the order, and so the new rows' ids, open)
    db.sql("INSERT INTO docs SELECT id + 10, title, body, year FROM docs WHERE MATCH(body, 'beta') ORDER BY id")
    assert rows(db.sql("SELECT _rowid, id, title, body, year FROM docs ORDER BY _rowid")) == [
        (0, 1, "alpha", "alpha beta", 1999),
        (1, 2, None, "beta", 2001),
        (2, 3, None, "gamma alpha", None),
        (3, 4, None, "alpha alpha", 2020),
        (4, 5, None, "delta", 2020),
        (5, 11, "alpha", "alpha beta", 1999),
        (6, 12, None, "beta", 2001),
    ]
    ref = RefTable(
        rows={
            i: {"body": b}
            for i, b in enumerate(
                ["alpha beta", "beta", "gamma alpha", "alpha alpha", "delta", "alpha beta", "beta"]
            )
        }
    )
    got = sql_hits(
        db, "SELECT _rowid, score() FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC"
    )
    assert got == reference_hits(ref, Match("body", "alpha"))


def test_insert_with_an_unknown_column_writes_nothing():
    db = fts.connect()
    db.sql("CREATE TABLE docs (id BIGINT, body VARCHAR)")
    version = db.manifest.version
    with pytest.raises(fts.FtsError):
        db.sql("INSERT INTO docs (id, nosuch) VALUES (1, 'x')")
    with pytest.raises(fts.FtsError):
        db.sql("INSERT INTO docs VALUES ('not a number', 'x')")
    assert db.manifest.version == version
    assert db.table("docs").count_rows() == 0


@pytest.mark.parametrize("index_first", [True, False])
def test_deleted_rows_leave_search_results_and_statistics(index_first):
    kept = [r for r in LIBRARY if r[0] % 3 != 0]
    db = fts.connect()
    create_library(db, index=index_first)
    db.sql("DELETE FROM docs WHERE id % 3 = 0")
    assert db.table("docs").count_rows() == len(kept)
    if not index_first:
        db.sql("CREATE FULLTEXT INDEX ON docs (title, body) WITH (positions = true)")
    never = fts.connect()
    never.sql("CREATE TABLE docs (id BIGINT, title VARCHAR, body VARCHAR, year INT)")
    never.sql(
        "INSERT INTO docs VALUES "
        + ", ".join(f"({i}, {lit(t)}, {lit(b)}, {y})" for i, t, b, y in kept)
    )
    never.sql("CREATE FULLTEXT INDEX ON docs (title, body) WITH (positions = true)")
    for query in ("alpha", "beta gamma", '"epsilon beta"', "+delta -gamma"):
        sql = f"SELECT id, score() FROM docs WHERE MATCH(body, {lit(query)}) ORDER BY score() DESC, id"
        got = [(i, repr(s)) for i, s in rows(db.sql(sql))]
        assert got == [(i, repr(s)) for i, s in rows(never.sql(sql))]
        assert all(i % 3 != 0 for i, _ in got)
    assert rows(db.sql("SELECT count(*) FROM docs")) == [(len(kept),)]


def test_delete_with_a_bad_predicate_writes_nothing(library):
    version = library.manifest.version
    for sql in (
        "DELETE FROM docs WHERE nosuch = 1",
        "DELETE FROM docs WHERE MATCH(nosuch, 'alpha')",
    ):
        with pytest.raises(fts.FtsError):
            library.sql(sql)
    assert library.manifest.version == version
    assert library.table("docs").count_rows() == len(LIBRARY)


def explain(db: fts.Database, sql: str) -> dict[str, str]:
    out = db.sql("EXPLAIN " + sql).to_arrow_table().to_pydict()
    return dict(zip(out["plan_type"], out["plan"]))


def test_positions_option_enables_phrase_search_on_the_index():
    db = fts.connect()
    create_library(db, index=False)
    sql = "SELECT _rowid, score() FROM docs WHERE MATCH(body, '\"epsilon beta\"') ORDER BY score() DESC"
    expected = reference_hits(LIBRARY_REF, Phrase("body", "epsilon beta"))
    assert expected
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    plan = explain(db, sql)["search_plan"]
    assert "FlatScanSearch" in plan and "no positions" in plan
    assert sql_hits(db, sql) == expected
    db.sql("CREATE FULLTEXT INDEX body_idx ON docs (body) WITH (positions = true)")
    assert "IndexedSearch" in explain(db, sql)["search_plan"]
    assert sql_hits(db, sql) == expected


def test_index_options_k1_and_b_reach_the_scores():
    db = fts.connect()
    create_library(db, index=False)
    db.sql("CREATE FULLTEXT INDEX ON docs (body) WITH (k1 = 2.0, b = 0.3)")
    ref = RefTable(rows=LIBRARY_REF.rows, params={"body": (2.0, 0.3)})
    sql = "SELECT _rowid, score() FROM docs WHERE MATCH(body, 'alpha delta') ORDER BY score() DESC"
    assert sql_hits(db, sql) == reference_hits(ref, Match("body", "alpha delta"))
    db.sql("SET fts.force_plan = 'flat_scan'")
    assert sql_hits(db, sql) == reference_hits(ref, Match("body", "alpha delta"))


@pytest.mark.parametrize(
    "options",
    [
        "nosuch = 1",
        "positions = 'yes'",
        "k1 = -1",
        "b = 2",
        "analyzer = 'nosuch'",
        "positions",
    ],
)
def test_bad_index_option_is_an_error_and_writes_nothing(options):
    db = fts.connect()
    create_library(db, index=False)
    version = db.manifest.version
    with pytest.raises(fts.FtsError):
        db.sql(f"CREATE FULLTEXT INDEX ON docs (title, body) WITH ({options})")
    assert db.manifest.version == version
    assert db.manifest.tables["docs"].indexes == {}


@pytest.mark.parametrize("columns", ["title, year", "title, nosuch", "id"])
def test_index_on_a_bad_column_writes_nothing(columns):
    db = fts.connect()
    create_library(db, index=False)
    version = db.manifest.version
    with pytest.raises(fts.FtsError):
        db.sql(f"CREATE FULLTEXT INDEX ON docs ({columns})")
    assert db.manifest.version == version
    assert db.manifest.tables["docs"].indexes == {}


def test_optimize_after_inserts_keeps_results_and_scores():
    db = fts.connect()
    create_library(db)
    db.sql(
        "INSERT INTO docs VALUES (900, 'alpha', 'alpha alpha beta', 2000), (901, 'beta', 'gamma', 2001)"
    )
    queries = ["alpha", "beta gamma", '"alpha beta"', "alph*", "gama~1", "+alpha -delta"]
    sqls = [
        f"SELECT id, score() FROM docs WHERE MATCH((title, body), {lit(q)}) ORDER BY score() DESC, id"
        for q in queries
    ]
    before = [rows(db.sql(s)) for s in sqls]
    assert "fresh-" in explain(db, sqls[0])["search_plan"]  # the fresh rows' in-memory segments
    version = db.manifest.version
    db.sql("OPTIMIZE docs")
    assert db.manifest.version > version
    assert "IndexedSearch" in explain(db, sqls[0])["search_plan"]
    after = [rows(db.sql(s)) for s in sqls]
    assert [[(i, repr(s)) for i, s in r] for r in after] == [
        [(i, repr(s)) for i, s in r] for r in before
    ]
    assert any(i == 900 for i, _ in after[0])


def test_optimize_after_deletes_and_inserts_keeps_results_and_scores():
    db = fts.connect()
    create_library(db)
    db.sql("DELETE FROM docs WHERE id % 4 = 1")
    db.sql("INSERT INTO docs VALUES (900, 'alpha', 'alpha alpha beta', 2000)")
    db.sql("DELETE FROM docs WHERE id IN (102, 900)")
    queries = ["alpha", "beta gamma", '"epsilon beta"', "alph*", "+alpha -delta"]
    sqls = [
        f"SELECT _rowid, score() FROM docs WHERE MATCH((title, body), {lit(q)}) "
        "ORDER BY score() DESC"
        for q in queries
    ]
    before = [sql_hits(db, s) for s in sqls]
    db.sql("OPTIMIZE docs")
    assert [sql_hits(db, s) for s in sqls] == before
    assert all("IndexedSearch" in explain(db, s)["search_plan"] for s in sqls)
    gone = {i for i, r in enumerate(LIBRARY) if r[0] % 4 == 1 or r[0] == 102}
    ref = RefTable(rows=LIBRARY_REF.rows, deleted=gone)
    assert before[0] == reference_hits(ref, parse("alpha", ["title", "body"]))


def test_optimize_of_an_unknown_table_is_an_error():
    db = fts.connect()
    with pytest.raises(fts.CatalogError):
        db.sql("OPTIMIZE nosuch")


@pytest.mark.parametrize(
    "query",
    [
        "alpha",
        "beta -gamma",
        '"alpha beta"~1',
        "alph*",
        "delt~1",
        "+gamma +alpha",
        "(alpha OR beta) AND NOT delta",
    ],
)
def test_forced_plans_agree(query):
    db = fts.connect()
    create_library(db)
    sql = f"SELECT _rowid, score() FROM docs WHERE MATCH((title, body), {lit(query)}) ORDER BY score() DESC LIMIT 12"
    results = {}
    for plan in ("flat_scan", "indexed", "auto"):
        db.sql(f"SET fts.force_plan = {lit(plan)}")
        assert db.settings.get("fts.force_plan") == plan
        results[plan] = sql_hits(db, sql)
        operator = {
            "flat_scan": "FlatScanSearch",
            "indexed": "IndexedSearch",
            "auto": "IndexedSearch",
        }[plan]
        assert operator in explain(db, sql)["search_plan"]
    assert results["flat_scan"] == results["indexed"] == results["auto"]
    assert results["auto"] == reference_hits(LIBRARY_REF, parse(query, ["title", "body"]), 12)


def test_a_setting_holds_for_later_table_searches():
    db = fts.connect()
    create_library(db)
    db.sql("SET fts.force_plan = 'flat_scan'")
    plan, _ = db.table("docs").plan(Match("body", "alpha"))
    assert "FlatScanSearch" in plan.children()[0].display()


@pytest.mark.parametrize(
    "setup, where, without_any_index",
    [
        ("", "MATCH(body, 'alpha')", True),
        (
            "CREATE FULLTEXT INDEX ON docs (body)",
            "MATCH(body, '\"epsilon beta\"')",
            False,
        ),  # no positions
        (
            "CREATE FULLTEXT INDEX ON docs (body)",
            "MATCH(title, 'alpha') AND MATCH(body, 'alpha')",
            True,
        ),
    ],
)
def test_impossible_forced_plan_is_a_plan_error(setup, where, without_any_index):
    db = fts.connect()
    create_library(db, index=False)
    if setup:
        db.sql(setup)
    version = db.manifest.version
    db.sql("SET fts.force_plan = 'indexed'")
    with pytest.raises(fts.PlanError):
        rows(db.sql(f"SELECT id FROM docs WHERE {where}"))
    if without_any_index:  # a column with no index at all has no hybrid plan either
        db.sql("SET fts.force_plan = 'hybrid'")
        with pytest.raises(fts.PlanError):
            rows(db.sql(f"SELECT id FROM docs WHERE {where}"))
    assert db.manifest.version == version
    db.sql("SET fts.force_plan = 'flat_scan'")
    assert rows(db.sql(f"SELECT count(*) FROM docs WHERE {where}"))[0][0] > 0


@pytest.mark.parametrize(
    "sql",
    [
        "SET fts.nosuch = 1",
        "SET fts.force_plan = 'bogus'",
        "SET fts.residual_row_limit = -1",
        "SET fts.residual_row_limit = 'x'",
    ],
)
def test_bad_fts_setting_is_an_error_and_changes_nothing(sql):
    db = fts.connect()
    before = (db.settings.get("fts.force_plan"), db.settings.get("fts.residual_row_limit"))
    with pytest.raises(fts.FtsError):
        db.sql(sql)
    assert (db.settings.get("fts.force_plan"), db.settings.get("fts.residual_row_limit")) == before


def test_set_of_datafusion_settings_still_reaches_datafusion():
    db = fts.connect()
    db.sql("SET datafusion.execution.batch_size = 123")
    got = rows(
        db.sql(
            "SELECT value FROM information_schema.df_settings WHERE name = 'datafusion.execution.batch_size'"
        )
    )
    assert got == [("123",)]


def test_drop_table_removes_a_managed_table():
    db = fts.connect()
    db.sql("CREATE TABLE docs (id BIGINT, body VARCHAR); INSERT INTO docs VALUES (1, 'alpha')")
    version = db.manifest.version
    db.sql("DROP TABLE docs")
    assert db.table_names() == []
    assert db.manifest.version == version + 1
    db.sql("CREATE TABLE docs (id BIGINT, body VARCHAR)")
    assert rows(db.sql("SELECT count(*) FROM docs")) == [(0,)]


def test_create_table_if_not_exists_keeps_the_existing_table():
    db = fts.connect()
    db.sql("CREATE TABLE docs (id BIGINT, body VARCHAR); INSERT INTO docs VALUES (1, 'alpha')")
    version = db.manifest.version
    db.sql("CREATE TABLE IF NOT EXISTS docs (x INT)")
    assert db.manifest.version == version
    assert db.table("docs").count_rows() == 1


def test_create_table_twice_is_datafusions_error():
    db = fts.connect()
    db.sql("CREATE TABLE docs (id BIGINT, body VARCHAR)")
    with pytest.raises(fts.EngineError, match="Table 'docs' already exists"):
        db.sql("CREATE TABLE docs (x INT)")


@pytest.mark.parametrize("sql", ["TRUNCATE docs"])
def test_unsupported_dml_on_a_managed_table_is_an_fts_error(sql):
    db = fts.connect()
    db.sql("CREATE TABLE docs (id BIGINT, body VARCHAR); INSERT INTO docs VALUES (1, 'alpha')")
    version = db.manifest.version
    with pytest.raises(fts.FtsError):
        rows(db.sql(sql))
    assert db.manifest.version == version


def test_multi_statement_text_returns_the_last_result():
    db = fts.connect()
    df = db.sql(
        "CREATE TABLE docs (id BIGINT, body VARCHAR);\n"
        "INSERT INTO docs VALUES (1, 'alpha; beta'), (2, 'beta');\n"
        "CREATE FULLTEXT INDEX ON docs (body);\n"
        "SELECT id, score() FROM docs WHERE MATCH(body, 'beta;') ORDER BY score() DESC, id;"
    )
    assert [i for i, _ in rows(df)] == [2, 1]


def test_trailing_comment_after_the_last_statement():
    db = fts.connect()
    assert rows(db.sql("SELECT 1 AS a; -- done")) == [(1,)]


# ------------------------------------------------------------ a failing statement writes nothing


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO docs SELECT id, title, body, year FROM docs WHERE MATCH(body, 'alpha (')",
        "INSERT INTO docs SELECT id, title, body, year FROM docs WHERE MATCH(nosuch, 'alpha')",
        "INSERT INTO docs SELECT id, title, body, year FROM docs WHERE MATCH(year, 'alpha')",
        "CREATE TABLE hits AS SELECT id FROM docs WHERE MATCH(body, '\"unclosed')",
        "CREATE TABLE hits AS SELECT id FROM docs WHERE MATCH(year, 'alpha')",
        "SELECT id FROM docs WHERE MATCH(body, 'alpha AND')",
        "SELECT id FROM docs WHERE MATCH(title, 'alpha') AND MATCH(year, '1999')",
        "SELECT id FROM docs WHERE MATCH(body, 'nosuch:alpha')",
        "INSERT INTO docs SELECT id, title, body, year FROM docs WHERE MATCH(body, 'year:1999')",
    ],
)
def test_failing_statement_writes_nothing(library, sql):
    version = library.manifest.version
    tables = library.table_names()
    with pytest.raises(fts.FtsError):
        rows(library.sql(sql))
    assert library.manifest.version == version
    assert library.table_names() == tables
    assert library.table("docs").count_rows() == len(LIBRARY)


def test_failing_statement_in_a_script_keeps_the_earlier_ones_only(library):
    version = library.manifest.version
    with pytest.raises(fts.QuerySyntaxError):
        library.sql(
            "INSERT INTO docs VALUES (1000, 'x', 'alpha', 2000);\n"
            "INSERT INTO docs SELECT id, title, body, year FROM docs WHERE MATCH(body, '+');\n"
        )
    # The first INSERT is acknowledged into the fresh tier (logged, not yet in the
    # manifest); the failing second one adds nothing.
    assert library.manifest.version == version
    assert library.table("docs").count_rows() == len(LIBRARY) + 1
    assert library.sql("SELECT count(*) AS n FROM docs").to_arrow_table().column(0)[0].as_py() == len(LIBRARY) + 1


# ---------------------------------------------------------------------------------- errors


def match_error(db: fts.Database, sql: str, cls=fts.FtsError):
    with pytest.raises(cls) as info:
        rows(db.sql(sql))
    return info.value


def test_query_syntax_error_points_into_the_literal(library):
    sql = "SELECT id FROM docs WHERE MATCH(body, 'alpha (beta')"
    err = match_error(library, sql, fts.QuerySyntaxError)
    assert err.text == sql
    assert err.offset == sql.index("(beta")
    assert (err.line, err.column) == (1, sql.index("(beta") + 1)


def test_query_syntax_error_on_a_later_line(library):
    sql = "SELECT id\n  FROM docs\n  WHERE year > 1\n    AND MATCH(title, 'alpha beta)')\n  LIMIT 3"
    err = match_error(library, sql, fts.QuerySyntaxError)
    line = sql.split("\n")[3]
    assert (err.line, err.column) == (4, line.index(")'") + 1)
    assert sql[err.offset] == ")"
    assert line in str(err)


def test_query_syntax_error_in_the_second_match(library):
    sql = "SELECT id FROM docs WHERE MATCH(title, 'a^') OR MATCH(body, 'b^')"
    err = match_error(library, sql, fts.QuerySyntaxError)
    assert sql[err.offset - 1 : err.offset + 1] in ("a^", "^'")
    assert err.offset < sql.index("MATCH(body")


def test_query_syntax_error_position_after_an_escaped_quote(library):
    sql = "SELECT id FROM docs WHERE MATCH(body, 'it''s (')"
    err = match_error(library, sql, fts.QuerySyntaxError)
    assert err.offset == sql.rindex("(")


def test_error_position_in_the_second_statement_of_a_script(library):
    sql = "SELECT 1;\nSELECT id FROM docs WHERE MATCH(body, 'x (')"
    err = match_error(library, sql, fts.QuerySyntaxError)
    line = sql.split("\n")[1]
    assert (err.line, err.column) == (2, line.rindex("(") + 1)


def test_unknown_column_in_match_is_an_sql_error_at_the_column(library):
    sql = "SELECT id\nFROM docs\nWHERE MATCH(nosuch, 'x')"
    err = match_error(library, sql, fts.SqlError)
    assert (err.line, err.column) == (3, 13)
    assert sql[err.offset : err.offset + err.length] == "nosuch"
    assert "nosuch" in err.message


def test_qualified_unknown_column_in_match_is_an_sql_error(library):
    sql = "SELECT id FROM docs AS d WHERE MATCH(d.nosuch, 'x')"
    err = match_error(library, sql)
    assert isinstance(err, fts.SqlError)
    assert sql[err.offset :].startswith("d.nosuch") or sql[err.offset :].startswith("nosuch")


def test_match_on_an_alias_not_in_from_is_an_sql_error(library):
    sql = "SELECT id FROM docs WHERE MATCH(x.body, 'alpha')"
    err = match_error(library, sql, fts.SqlError)
    assert err.offset in (sql.index("x.body"), sql.index("body"))


def test_match_on_a_non_text_column_is_an_error(library):
    err = match_error(library, "SELECT id FROM docs WHERE MATCH(year, '1999')")
    assert "year" in str(err)


@pytest.mark.parametrize(
    "sql, at",
    [
        ("SELECT score() FROM docs", "score()"),
        ("SELECT id FROM docs WHERE year > 1 ORDER BY score() DESC", "score()"),
        ("SELECT id FROM docs WHERE score() > 1", "score()"),
        ("SELECT id, (SELECT score() FROM meta) FROM docs WHERE MATCH(body, 'alpha')", "score()"),
    ],
)
def test_score_without_match_is_an_sql_error(library, sql, at):
    err = match_error(library, sql, fts.SqlError)
    assert sql[err.offset :].startswith(at)
    assert "MATCH" in err.message


def test_match_in_the_select_list_is_each_rows_truth(library):
    """(Refused before issue 41.) MATCH stands wherever a boolean may."""
    got = rows(library.sql("SELECT id, MATCH(body, 'alpha') AS hit FROM docs ORDER BY id"))
    found = dict(reference_hits(LIBRARY_REF, Match("body", "alpha")))
    assert got == [(r[0], i in found) for i, r in enumerate(LIBRARY)]


@pytest.mark.parametrize(
    "sql, at",
    [
        (("SELECT a.id, score() FROM docs a JOIN docs b ON a.id = b.id WHERE MATCH(a.body, 'x') "
          "AND MATCH(b.title, 'y')"), "score()"),
        ("SELECT a.id, score(c) FROM docs a WHERE MATCH(a.body, 'x')", "c)"),
        ("SELECT id, score(), MATCH(body, 'a') AS x, MATCH(title, 'b') AS y FROM docs", "MATCH(title"),
    ],
)
def test_sql_error_span_starts_at_the_offending_node(library, sql, at):
    err = match_error(library, sql, fts.SqlError)
    assert err.offset == sql.index(at)


def test_match_on_two_tables_of_a_join(library):
    """(Refused before issue 41.) Each table's MATCH marks its rows; score(alias) names one."""
    got = rows(library.sql(
        "SELECT a.id, score(a) AS sa, score(b) AS sb FROM docs a JOIN docs b ON a.id = b.id "
        "WHERE MATCH(a.body, 'alpha') AND MATCH(b.title, 'beta') ORDER BY a.id"))
    body, title = (dict(reference_hits(LIBRARY_REF, Match(c, q))) for c, q in (("body", "alpha"), ("title", "beta")))
    assert got == [(r[0], float(body[i]), float(title[i])) for i, r in enumerate(LIBRARY) if i in body and i in title]
    err = match_error(
        library,
        "SELECT a.id FROM docs a JOIN docs b ON a.id = b.id WHERE MATCH(body, 'x')",
        fts.SqlError,
    )
    assert "ambiguous" in err.message


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT _rowid, score() FROM docs WHERE MATCH(BODY, 'alpha') ORDER BY score() DESC",
        "SELECT _rowid, score() FROM DOCS WHERE MATCH(body, 'alpha') ORDER BY score() DESC",
    ],
)
def test_unquoted_identifiers_are_case_insensitive_in_match(library, sql):
    assert sql_hits(library, sql) == reference_hits(LIBRARY_REF, Match("body", "alpha"))


@pytest.mark.parametrize("setup", ["memory", "directory", "viewed"])
def test_a_group_by_of_a_key_beside_match_answers_as_datafusion(tmp_path, setup):
    """DataFusion lets ``GROUP BY`` a table's key select its other columns (the key's
    constraint says they depend on it). A search's result carries the table's rows in a
    table of its own: made from the table's definition, it holds the same keys, so such a
    statement answers as DataFusion answers it over the matching rows (it was refused:
    "Column in SELECT must be in GROUP BY"). Held, and viewed (a table past
    ``fts.memory_table_bytes``), alike."""
    import datafusion

    definition = "(id INT PRIMARY KEY, code VARCHAR NOT NULL, grp INT, body VARCHAR, UNIQUE (code))"
    rows = [(i, f"c{i}", i % 3, f"w{i % 4} w{i % 5} alpha" if i % 2 else f"beta w{i % 3}") for i in range(60)]
    values = ", ".join(f"({i}, '{c}', {g}, '{b}')" for i, c, g, b in rows)
    config = {"fts.memory_table_bytes": 0} if setup == "viewed" else {}
    db = fts.connect(None if setup == "memory" else tmp_path / "db", config=config)
    db.sql(f"CREATE TABLE t {definition}")
    db.sql(f"INSERT INTO t VALUES {values}")
    db.sql("CREATE FULLTEXT INDEX ON t (body)")
    ctx = datafusion.SessionContext()
    ctx.sql(f"CREATE TABLE t {definition}").collect()
    ctx.sql(f"INSERT INTO t VALUES {values}").collect()
    for query, where in (("alpha", "id IN ({})"), ("w1 w2", "id IN ({})")):
        ids = [r["id"] for r in db.sql(f"SELECT id FROM t WHERE MATCH(body, '{query}')").to_pylist()]
        assert ids
        matched = where.format(", ".join(map(str, ids)))
        for select, group in (("t.id, t.code, t.grp, count(*) AS n", "id"), ("code, body, grp", "code"),
                              ("id, 2 * grp AS g2, body", "id")):
            ours = db.sql(f"SELECT {select} FROM t WHERE MATCH(body, '{query}') GROUP BY {group} ORDER BY {group}")
            theirs = ctx.sql(f"SELECT {select} FROM t WHERE {matched} GROUP BY {group} ORDER BY {group}")
            assert ours.to_pylist() == theirs.to_pylist(), (setup, query, select)
    # Grouping by a column that is no key is refused as DataFusion refuses it.
    with pytest.raises(fts.FtsError, match="must appear in the GROUP BY"):
        db.sql("SELECT grp, body FROM t WHERE MATCH(body, 'alpha') GROUP BY grp").to_pylist()


@pytest.mark.parametrize("setup", ["memory", "directory"])
def test_other_tables_beside_match_are_read_with_their_keys(tmp_path, setup):
    """A managed table a searching statement reads beside its search is the table
    DataFusion knows, with its keys: a correlated scalar subquery over a keyed column
    answers as DataFusion answers it (it failed: "Correlated scalar subquery must be
    aggregated to return at most one row", read through its rows without keys). A table
    whose row ids the statement reads is still read through its rows. (A table past
    ``fts.memory_table_bytes`` is a view, which holds no key, with MATCH or without.)"""
    import datafusion

    statements = ["CREATE TABLE t1 (t1_id INT, t1_name VARCHAR)",
                  "INSERT INTO t1 VALUES (11, 'alpha'), (22, 'beta'), (33, 'alpha beta')",
                  "CREATE TABLE t3 (t3_id INT PRIMARY KEY, t3_int INT)",
                  "INSERT INTO t3 VALUES (11, 3), (22, 1), (33, 7)"]
    db = fts.connect(None if setup == "memory" else tmp_path / "db")
    ctx = datafusion.SessionContext()
    for statement in statements:
        db.sql(statement)
        ctx.sql(statement).collect()
    sql = "SELECT t1_id, (SELECT t3_int FROM t3 WHERE t3.t3_id = t1.t1_id) AS t3_int FROM t1 WHERE {} ORDER BY t1_id"
    expected = ctx.sql(sql.format("t1_id IN (11, 33)")).to_pylist()
    assert db.sql(sql.format("MATCH(t1_name, 'alpha')")).to_pylist() == expected == [
        {"t1_id": 11, "t3_int": 3}, {"t1_id": 33, "t3_int": 7}]
    assert db.sql("SELECT t1_id FROM t1 WHERE MATCH(t1_name, 'alpha') AND t1_id IN "
                  "(SELECT t3_id FROM t3 WHERE _rowid > 1) ORDER BY t1_id").to_pylist() == [{"t1_id": 33}]


# ------------------------------------------------ issue 41: wrong answers that are now right


def _people_and_posts() -> fts.Database:
    db = fts.connect()
    db.ctx.from_pydict({"pid": [1, 2, 3], "name": ["ann", "bob", "cy"]}, name="people")
    db.sql("CREATE TABLE posts (pid INT, body VARCHAR)")
    db.sql("INSERT INTO posts VALUES (1, 'red fox'), (2, 'blue sky')")
    db.sql("CREATE FULLTEXT INDEX ON posts (body)")
    return db


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("join", ["LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
def test_match_on_the_null_side_of_an_outer_join_is_null(fast, join):
    """F1: a row that does not exist makes MATCH NULL, so WHERE removes it (the search ran
    before the join and MATCH became TRUE: the join's NULL rows were kept)."""
    db = _people_and_posts()
    db.sql(f"SET fts.sql_fast_paths = {str(fast).lower()}")
    sides = "people u {} posts p ON p.pid = u.pid" if join != "RIGHT JOIN" else "posts p {} people u ON p.pid = u.pid"
    base = f"SELECT u.name, p.body FROM {sides.format(join)}"
    assert db.sql(f"{base} WHERE MATCH(p.body, 'red')").to_pylist() == [{"name": "ann", "body": "red fox"}]
    assert db.sql(f"{base} WHERE NOT MATCH(p.body, 'red')").to_pylist() == [{"name": "bob", "body": "blue sky"}]
    like = db.sql(f"{base} WHERE p.body LIKE '%red%' ORDER BY u.name").to_pylist()
    assert like == db.sql(f"{base} WHERE MATCH(p.body, 'red') ORDER BY u.name").to_pylist()


NOTES = "'red', 'red fox', 'red', 'blue', 'red', 'red fox', 'red'"


@pytest.fixture
def notes() -> fts.Database:
    db = fts.connect()
    db.sql("CREATE TABLE notes (body VARCHAR)")
    db.sql("INSERT INTO notes VALUES " + ", ".join(f"({v})" for v in NOTES.split(", ")))
    db.sql("CREATE FULLTEXT INDEX ON notes (body)")
    return db


@pytest.mark.parametrize("fast", [True, False])
def test_pages_in_the_order_the_user_gave(notes, fast):
    """F2: ORDER BY score() DESC, _rowid DESC pages in that order (the pushed top k was
    picked by _rowid ascending: rows repeated across pages and others were on none)."""
    notes.sql(f"SET fts.sql_fast_paths = {str(fast).lower()}")
    base = "SELECT _rowid FROM notes WHERE MATCH(body, 'red') ORDER BY score() DESC, _rowid DESC"
    assert [r["_rowid"] for r in notes.sql(base).to_pylist()] == [6, 4, 2, 0, 5, 1]
    pages = [[r["_rowid"] for r in notes.sql(f"{base} LIMIT 2 OFFSET {o}").to_pylist()] for o in (0, 2, 4)]
    assert pages == [[6, 4], [2, 0], [5, 1]]


@pytest.mark.parametrize("fast", [True, False])
def test_ordering_by_the_scores_position_breaks_ties_by_row_id(notes, fast):
    """F3: ORDER BY 2 (the score's position) is the total order (it had no tie-break)."""
    notes.sql(f"SET fts.sql_fast_paths = {str(fast).lower()}")
    sql = "SELECT _rowid, score() FROM notes WHERE MATCH(body, 'red') ORDER BY 2 {} LIMIT 2"
    assert [r["_rowid"] for r in notes.sql(sql.format("DESC")).to_pylist()] == [0, 2]
    assert [r["_rowid"] for r in notes.sql(sql.format("ASC")).to_pylist()] == [5, 1]


def test_match_in_on_and_over_a_cte_and_a_derived_table(notes):
    """(Refused before issue 41.) MATCH in a join's ON; a search over a CTE or a derived
    table, whose statistics are the rows it yields."""
    notes.ctx.from_pydict({"k": [0, 1, 3]}, name="keys")
    got = notes.sql("SELECT k.k, n.body FROM keys k LEFT JOIN notes n ON n._rowid = k.k AND MATCH(n.body, 'fox') "
                    "ORDER BY k.k").to_pylist()
    assert got == [{"k": 0, "body": None}, {"k": 1, "body": "red fox"}, {"k": 3, "body": None}]
    only_fox = "(SELECT body FROM notes WHERE body LIKE '%fox%')"
    cte = notes.sql(f"WITH r AS {only_fox} SELECT score() AS s FROM r WHERE MATCH(body, 'red')").to_pylist()
    derived = notes.sql(f"SELECT score() AS s FROM {only_fox} AS r WHERE MATCH(body, 'red')").to_pylist()
    over_two = reference_hits(RefTable(rows={0: {"body": "red fox"}, 1: {"body": "red fox"}}), Match("body", "red"))
    assert cte == derived == [{"s": float(s)} for _, s in over_two]
    whole = notes.sql("SELECT score() AS s FROM notes WHERE MATCH(body, 'red fox') AND body LIKE '%fox%'").to_pylist()
    assert cte[0]["s"] != whole[0]["s"]
