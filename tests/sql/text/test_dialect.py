"""The SQL dialect (docs/design.md: "SQL"): every statement form parses into its own node, the
generator writes it back, and syntax errors are ``SqlError``s carrying line:column and
the offending span of the SQL text."""

from __future__ import annotations

import pytest
from sqlglot import exp

from datafusion_fts.errors import FtsError, SqlError
from datafusion_fts.sql.text.dialect import (
    CreateFulltextIndex,
    Explain,
    Fts,
    FtsMatch,
    FtsScore,
    Optimize,
    parse_sql,
)


def one(sql: str) -> exp.Expression:
    statements = parse_sql(sql)
    assert len(statements) == 1, statements
    return statements[0]


def matches(node: exp.Expression) -> list[FtsMatch]:
    return list(node.find_all(FtsMatch, bfs=False))  # in text order


# ------------------------------------------------------------------------------ MATCH


def test_match_on_one_column():
    select = one("SELECT id FROM docs WHERE MATCH(body, 'alpha beta')")
    assert isinstance(select, exp.Select)
    (m,) = matches(select)
    assert m.column_names == ["body"]
    assert isinstance(m.expressions[0], exp.Column)
    query = m.args["query"]
    assert isinstance(query, exp.Literal) and query.is_string and query.this == "alpha beta"
    # The MATCH is the WHERE clause itself, not a function call DataFusion would see.
    assert select.args["where"].this is m


def test_match_on_a_qualified_column():
    (m,) = matches(one("SELECT d.id FROM docs AS d WHERE MATCH(d.body, 'x')"))
    col = m.expressions[0]
    assert (col.table, col.name) == ("d", "body")
    assert m.column_names == ["body"]


def test_match_on_a_parenthesised_column_list_is_one_node_with_every_column():
    (m,) = matches(one("SELECT id FROM docs WHERE MATCH((title, body, d.tags), '\"a b\"~2')"))
    assert m.column_names == ["title", "body", "tags"]
    assert m.expressions[2].table == "d"
    assert m.args["query"].this == '"a b"~2'


def test_match_keyword_and_score_are_case_insensitive():
    select = one("select id, Score() from docs where match(body, 'x') and MaTcH(title, 'y')")
    assert [m.column_names for m in matches(select)] == [["body"], ["title"]]
    assert len(list(select.find_all(FtsScore))) == 1


def test_match_string_keeps_sql_escapes_decoded():
    (m,) = matches(one("SELECT id FROM docs WHERE MATCH(body, 'it''s \"a b\"')"))
    assert m.args["query"].this == 'it\'s "a b"'


def test_and_or_not_of_matches_keep_their_shape():
    select = one(
        "SELECT id FROM docs WHERE MATCH(body, 'x') AND (MATCH(title, 'y') OR year > 3) "
        "AND NOT MATCH(body, 'z')"
    )
    where = select.args["where"].this
    assert isinstance(where, exp.And)
    assert isinstance(where.right, exp.Not) and isinstance(where.right.this, FtsMatch)
    ors = list(where.find_all(exp.Or))
    assert len(ors) == 1 and isinstance(ors[0].left, FtsMatch)
    assert [m.column_names[0] for m in matches(select)] == ["body", "title", "body"]


def test_score_is_its_own_node_wherever_it_appears():
    select = one(
        "SELECT id, score() AS s, score() * 2 FROM docs WHERE MATCH(body, 'x') "
        "ORDER BY score() DESC LIMIT 3"
    )
    scores = list(select.find_all(FtsScore))
    assert len(scores) == 3
    assert isinstance(select.expressions[1], exp.Alias) and isinstance(
        select.expressions[1].this, FtsScore
    )
    assert isinstance(select.args["order"].expressions[0].this, FtsScore)


def test_match_in_a_subquery_and_a_cte_parse_in_place():
    statement = one(
        "WITH r AS (SELECT id FROM docs WHERE MATCH(body, 'x')) "
        "SELECT * FROM r WHERE id IN (SELECT id FROM docs WHERE MATCH(title, 'y'))"
    )
    assert len(matches(statement)) == 2
    for m in matches(statement):
        assert m.find_ancestor(exp.Select) is not statement


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id FROM docs WHERE MATCH(body)",
        "SELECT id FROM docs WHERE MATCH((title, body))",
        "SELECT id FROM docs WHERE MATCH(body, )",
        "SELECT id FROM docs WHERE MATCH()",
        "SELECT id FROM docs WHERE MATCH(body 'x')",
    ],
)
def test_match_without_a_query_string_is_an_sql_error(sql):
    with pytest.raises(SqlError) as info:
        parse_sql(sql)
    err = info.value
    assert err.line == 1
    # The error points inside the MATCH call, not at the start of the statement.
    assert sql.index("MATCH(") < err.offset <= len(sql)


# --------------------------------------------------------------- CREATE FULLTEXT INDEX


def test_create_fulltext_index_with_options():
    node = one(
        "CREATE FULLTEXT INDEX ON docs (title, body) "
        "WITH (analyzer = 'simple', positions = true, k1 = 1.5, b = 0, stop_words = 'english')"
    )
    assert isinstance(node, CreateFulltextIndex)
    assert node.this.name == "docs"
    assert [c.name for c in node.expressions] == ["title", "body"]
    assert node.args.get("name") is None
    options = node.args["options"]
    assert all(isinstance(o, exp.EQ) for o in options)
    assert [o.this.name for o in options] == ["analyzer", "positions", "k1", "b", "stop_words"]
    values = [o.expression for o in options]
    assert values[0].is_string and values[0].this == "simple"
    assert isinstance(values[1], exp.Boolean) and values[1].this is True
    assert not values[2].is_string and values[2].this == "1.5"
    assert values[3].this == "0"
    assert values[4].this == "english"


def test_create_fulltext_index_with_a_name_and_no_options():
    node = one("create fulltext index body_idx on docs (body)")
    assert isinstance(node, CreateFulltextIndex)
    assert node.args["name"].name == "body_idx"
    assert node.this.name == "docs"
    assert [c.name for c in node.expressions] == ["body"]
    assert not node.args.get("options")


@pytest.mark.parametrize(
    "sql, bad",
    [
        ("CREATE FULLTEXT INDEX ON docs title", "title"),
        ("CREATE FULLTEXT INDEX ix docs (body)", "docs"),
        ("CREATE FULLTEXT INDEX ON (body)", "("),
        ("CREATE FULLTEXT INDEX ON docs (body) WITH positions = true", "positions"),
        ("CREATE FULLTEXT INDEX ON docs (body) WITH (positions = )", ")"),
    ],
)
def test_malformed_create_fulltext_index_points_at_the_bad_token(sql, bad):
    with pytest.raises(SqlError) as info:
        parse_sql(sql)
    err = info.value
    assert (err.line, err.column) == (1, sql.rindex(bad) + 1)
    assert sql[err.offset : err.offset + err.length] == bad


# ------------------------------------------------------------------ OPTIMIZE, EXPLAIN


def test_optimize():
    node = one("OPTIMIZE docs")
    assert isinstance(node, Optimize)
    assert node.this.name == "docs"
    assert isinstance(one("optimize Docs2"), Optimize)


def test_optimize_needs_a_table_name():
    with pytest.raises(SqlError) as info:
        parse_sql("OPTIMIZE")
    assert (info.value.line, info.value.column) == (1, 1)


@pytest.mark.parametrize("analyze", [False, True])
def test_explain_wraps_the_statement(analyze):
    sql = (
        "EXPLAIN ANALYZE " if analyze else "EXPLAIN "
    ) + "SELECT id FROM docs WHERE MATCH(body, 'x') LIMIT 3"
    node = one(sql)
    assert isinstance(node, Explain)
    assert bool(node.args.get("analyze")) is analyze
    inner = node.this
    assert isinstance(inner, exp.Select)
    assert len(matches(inner)) == 1
    assert inner.args["limit"].expression.this == "3"


def test_explain_of_our_own_statements():
    assert isinstance(one("EXPLAIN OPTIMIZE docs").this, Optimize)
    assert isinstance(one("explain create fulltext index on docs (body)").this, CreateFulltextIndex)


def test_explain_needs_a_statement():
    with pytest.raises(SqlError):
        parse_sql("EXPLAIN")


# ------------------------------------------------------------------------------- SET


@pytest.mark.parametrize(
    "sql, name, value",
    [
        ("SET fts.force_plan = 'flat_scan'", "fts.force_plan", exp.Literal.string("flat_scan")),
        (
            "SET fts.residual_row_limit = 100000",
            "fts.residual_row_limit",
            exp.Literal.number(100000),
        ),
        ("set fts.force_plan TO indexed", "fts.force_plan", None),
    ],
)
def test_set_parses_into_a_name_and_a_value(sql, name, value):
    node = one(sql)
    assert isinstance(node, exp.Set)
    (item,) = node.expressions
    eq = item.this
    assert isinstance(eq, exp.EQ)
    assert eq.this.sql() == name
    if value is not None:
        assert eq.expression == value
    else:
        assert eq.expression.name == "indexed"


# ---------------------------------------------------------------- multi-statement text


def test_several_statements_in_one_text():
    statements = parse_sql(
        "CREATE TABLE docs (id BIGINT, body VARCHAR);\n"
        "INSERT INTO docs VALUES (1, 'a; b');\n"
        "CREATE FULLTEXT INDEX ON docs (body);\n"
        "OPTIMIZE docs;\n"
        "SET fts.force_plan = 'auto';\n"
        "EXPLAIN SELECT id FROM docs WHERE MATCH(body, 'a;b');\n"
    )
    assert [type(s) for s in statements] == [
        exp.Create,
        exp.Insert,
        CreateFulltextIndex,
        Optimize,
        exp.Set,
        Explain,
    ]
    # A ';' inside a string literal does not split statements.
    assert [lit.this for lit in statements[1].find_all(exp.Literal, bfs=False)] == ["1", "a; b"]
    assert matches(statements[5])[0].args["query"].this == "a;b"


def test_empty_statements_are_dropped():
    assert [type(s) for s in parse_sql(";;SELECT 1;;")] == [exp.Select]
    assert parse_sql("") == []


# --------------------------------------------------------------- round trip (generator)


@pytest.mark.parametrize(
    "sql",
    [
        (
            "SELECT id, score() AS s FROM docs AS d WHERE MATCH(d.body, 'alpha beta') "
            "AND MATCH((title, body), '\"x y\"~2') AND NOT MATCH(body, 'it''s') "
            "ORDER BY s DESC LIMIT 3 OFFSET 1"
        ),
        "CREATE FULLTEXT INDEX ON docs (title, body) WITH (analyzer = 'simple', positions = TRUE, k1 = 1.5)",
        "CREATE FULLTEXT INDEX ON docs (body)",
        "OPTIMIZE docs",
        "EXPLAIN ANALYZE SELECT id FROM docs WHERE MATCH(body, 'x')",
        "EXPLAIN SELECT 1",
        "SET fts.force_plan = 'flat_scan'",
    ],
)
def test_generator_round_trips(sql):
    node = one(sql)
    text = node.sql(dialect=Fts)
    assert text == sql
    assert one(text) == node


def test_generator_keeps_the_index_name():
    node = one("CREATE FULLTEXT INDEX body_idx ON docs (body)")
    assert one(node.sql(dialect=Fts)) == node


# ---------------------------------------------------------------------- syntax errors


def test_syntax_error_on_a_later_line_points_at_line_and_column():
    sql = "SELECT id\nFROM docs\n  WHERE year >\n  ORDER BY id"
    with pytest.raises(SqlError) as info:
        parse_sql(sql)
    err = info.value
    assert isinstance(err, FtsError)
    assert (err.line, err.column) == (4, 3)
    assert sql[err.offset : err.offset + err.length] == "ORDER BY"
    # The message shows the offending line with a caret under the span.
    rendered = str(err)
    assert "at 4:3" in rendered
    assert "  ORDER BY id\n    ^^^^^^^^" in rendered


def test_syntax_error_in_a_multi_line_match():
    sql = "SELECT id\nFROM docs\nWHERE MATCH((body, title) 'x')"
    with pytest.raises(SqlError) as info:
        parse_sql(sql)
    err = info.value
    assert (err.line, err.column) == (3, sql.split("\n")[2].index("'x'") + 1)
    assert sql[err.offset : err.offset + err.length] == "'x'"


@pytest.mark.parametrize(
    "sql, bad",
    [
        ("SELEC id FROM docs", "FROM"),
        ("SELECT id FROM docs WHERE MATCH(body, 'x') AND", "AND"),
        ("SELECT id FROM docs WHERE MATCH(body, 'a', 'b')", ")"),
        ("OPTIMIZE docs extra", "extra"),
        ("SELECT 1;\nSELECT id FROM\n docs WHERE id = = 3", "= 3"),
    ],
)
def test_syntax_errors_carry_the_offending_span(sql, bad):
    with pytest.raises(SqlError) as info:
        parse_sql(sql)
    err = info.value
    start = sql.rindex(bad)
    assert err.offset == start
    assert err.line == sql.count("\n", 0, start) + 1
    assert err.column == start - (sql.rfind("\n", 0, start) + 1) + 1
    assert bad.startswith(sql[err.offset : err.offset + err.length])


def test_unterminated_string_points_at_its_opening_quote():
    sql = "SELECT id\nFROM docs\nWHERE MATCH(body, 'alpha"
    with pytest.raises(SqlError) as info:
        parse_sql(sql)
    err = info.value
    assert (err.line, err.column) == (3, sql.split("\n")[2].index("'") + 1)


def test_a_known_function_with_arguments_sqlglot_does_not_take_is_datafusions_to_check() -> None:
    """datetime/dates.slt:379 with a search added (issue 41): sqlglot refused ``to_date``
    with five formats ("greater than the maximum number of supported arguments"), which
    DataFusion takes; the call is kept as written, and the search answers as DataFusion's
    own filter does."""
    import datafusion

    import datafusion_fts as fts

    call = "to_date(ts, '%Y-%m-%d %H/%M/%S%#z', '%s', '%q', '%d-%m-%Y %H:%M:%S%#z', '%+')"
    node = one(f"SELECT {call} AS d FROM t WHERE MATCH(body, 'alpha')").find(exp.Anonymous)
    assert node is not None and node.name == "to_date" and len(node.expressions) == 6
    rows = "VALUES ('2020-09-08 12/00/00+00:00', 'alpha'), ('2020-09-09', 'beta')"
    db = fts.connect()
    db.sql(f"CREATE TABLE t (ts VARCHAR, body VARCHAR) AS {rows}")
    db.sql("CREATE FULLTEXT INDEX ON t (body)")
    plain = datafusion.SessionContext()
    plain.sql(f"CREATE TABLE t (ts VARCHAR, body VARCHAR) AS {rows}").collect()
    assert (db.sql(f"SELECT {call} AS d FROM t WHERE MATCH(body, 'alpha')").to_arrow_table()
            == plain.sql(f"SELECT {call} AS d FROM t WHERE body = 'alpha'").to_arrow_table())
