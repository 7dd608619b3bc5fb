"""Errors (docs/design.md: "Errors"): every bad input raises a subclass of ``FtsError`` whose
message names the problem (and, for a query string, the place as line:column), and a call that fails
writes nothing."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import datafusion_fts as fts
from datafusion_fts.errors import (
    CatalogError,
    EngineError,
    FtsError,
    InvalidArgument,
    PlanError,
    QuerySyntaxError,
    ReadOnlyError,
    SqlError,
    StorageError,
)
from datafusion_fts.query import Boolean, Boost, Match, MultiMatch, Phrase, Prefix


def test_every_error_class_shares_the_base_and_is_exported():
    for cls in (CatalogError, EngineError, InvalidArgument, PlanError, QuerySyntaxError, ReadOnlyError, SqlError,
                StorageError):
        assert issubclass(cls, FtsError)
        assert getattr(fts, cls.__name__) is cls
    assert fts.FtsError is FtsError


@pytest.fixture
def db(tmp_path: Path) -> fts.Database:
    """A directory database: ``docs`` (id BIGINT, title, body; body indexed), ``other``."""
    db = fts.connect(tmp_path / "db")
    t = db.create_table(
        "docs",
        pa.table(
            {
                "id": pa.array([1, 2, 3], pa.int64()),
                "title": ["alpha", "beta", None],
                "body": ["alpha beta", "beta gamma", "gamma"],
            }
        ),
    )
    t.create_index("body", positions=True)
    db.create_table("other", pa.table({"body": ["x"]}))
    return db


def files(db: fts.Database) -> dict[str, str]:
    root = Path(db.path)
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# (id, call on the db, expected error class, words the message must contain)
Call = Callable[[fts.Database], Any]
CASES: list[tuple[str, Call, type[FtsError], tuple[str, ...]]] = [
    # -- catalog
    ("unknown table", lambda db: db.table("nope"), CatalogError, ("nope",)),
    ("drop unknown table", lambda db: db.drop_table("nope"), CatalogError, ("nope",)),
    (
        "table exists",
        lambda db: db.create_table("docs", pa.table({"a": [1]})),
        CatalogError,
        ("docs", "exists"),
    ),
    (
        "empty table name",
        lambda db: db.create_table("", pa.table({"a": [1]})),
        InvalidArgument,
        ("name",),
    ),
    (
        "table name not a string",
        lambda db: db.create_table(7, pa.table({"a": [1]})),
        InvalidArgument,
        ("name",),
    ),
    (
        "table name with a control character",
        lambda db: db.create_table("d\nrop", pa.table({"a": [1]})),
        InvalidArgument,
        ("control characters",),
    ),
    ("create without data", lambda db: db.create_table("new"), InvalidArgument, ("data",)),
    (
        "create from a list",
        lambda db: db.create_table("new", [1, 2]),
        InvalidArgument,
        ("data", "list"),
    ),
    (
        "reserved _rowid column",
        lambda db: db.create_table("new", pa.table({"_rowid": [1]})),
        InvalidArgument,
        ("_rowid",),
    ),
    (
        "duplicate column",
        lambda db: db.create_table(
            "new", pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["a", "a"])
        ),
        InvalidArgument,
        ("distinct",),
    ),
    # -- query leaves
    (
        "unknown column",
        lambda db: db.table("docs").search(Match("nope", "alpha")),
        CatalogError,
        ("nope",),
    ),
    (
        "unknown column nested",
        lambda db: db.table("docs").search(
            Boolean(must=[Match("body", "alpha")], should=[Phrase("nope", "a b")])
        ),
        CatalogError,
        ("nope",),
    ),
    (
        "unknown column in MultiMatch",
        lambda db: db.table("docs").search(MultiMatch("alpha", ("body", "nope"))),
        CatalogError,
        ("nope",),
    ),
    (
        "unknown column in Boost",
        lambda db: db.table("docs").search(Boost(Match("body", "alpha"), Prefix("nope", "a"))),
        CatalogError,
        ("nope",),
    ),
    (
        "unknown field in query string",
        lambda db: db.table("docs").search("nope:alpha"),
        CatalogError,
        ("nope",),
    ),
    (
        "non-text column in query",
        lambda db: db.table("docs").search(Match("id", "1")),
        InvalidArgument,
        ("id", "int64"),
    ),
    (
        "non-text column in phrase",
        lambda db: db.table("docs").search(Phrase("id", "1 2")),
        InvalidArgument,
        ("id",),
    ),
    (
        "leaf without column",
        lambda db: db.table("docs").search(Match(None, "alpha")),
        PlanError,
        ("column",),
    ),
    (
        "phrase without column",
        lambda db: db.table("docs").search(Phrase(None, "a b")),
        PlanError,
        ("column",),
    ),
    (
        "nested prefix without column",
        lambda db: db.table("docs").search(
            Boolean(must=[Match("body", "alpha")], must_not=[Prefix(None, "b")])
        ),
        PlanError,
        ("column",),
    ),
    ("query None", lambda db: db.table("docs").search(None), InvalidArgument, ("query",)),
    ("query not a query", lambda db: db.table("docs").search(42), InvalidArgument, ("query",)),
    # -- limit / offset / columns
    (
        "limit 0",
        lambda db: db.table("docs").search("alpha", limit=0),
        InvalidArgument,
        ("limit", "0"),
    ),
    (
        "limit -1",
        lambda db: db.table("docs").search("alpha", limit=-1),
        InvalidArgument,
        ("limit", "-1"),
    ),
    (
        "limit 1.5",
        lambda db: db.table("docs").search("alpha", limit=1.5),
        InvalidArgument,
        ("limit", "1.5"),
    ),
    (
        "limit True",
        lambda db: db.table("docs").search("alpha", limit=True),
        InvalidArgument,
        ("limit",),
    ),
    (
        "negative offset",
        lambda db: db.table("docs").search("alpha", offset=-1),
        InvalidArgument,
        ("offset", "-1"),
    ),
    (
        "offset 0.5",
        lambda db: db.table("docs").search("alpha", offset=0.5),
        InvalidArgument,
        ("offset",),
    ),
    (
        "unknown result column",
        lambda db: db.table("docs").search("alpha", columns=["nope"]),
        CatalogError,
        ("nope",),
    ),
    (
        "impossible forced plan",
        lambda db: (
            db.settings.set("fts.force_plan", "indexed"),
            db.table("docs").search(Match("title", "a")),
        ),
        PlanError,
        ("indexed", "title"),
    ),
    # -- index options
    (
        "index k1=-1",
        lambda db: db.table("docs").create_index("body", k1=-1),
        InvalidArgument,
        ("k1", "-1"),
    ),
    (
        "index b=2",
        lambda db: db.table("docs").create_index("body", b=2),
        InvalidArgument,
        ("b must", "2"),
    ),
    (
        "index positions='yes'",
        lambda db: db.table("docs").create_index("body", positions="yes"),
        InvalidArgument,
        ("positions", "yes"),
    ),
    (
        "index k1 not a number",
        lambda db: db.table("docs").create_index("body", k1="1.2"),
        InvalidArgument,
        ("k1",),
    ),
    (
        "index unknown analyzer",
        lambda db: db.table("docs").create_index("body", analyzer="nope"),
        InvalidArgument,
        ("analyzer", "nope"),
    ),
    (
        "index unknown stemmer",
        lambda db: db.table("docs").create_index("body", stemmer="klingon"),
        InvalidArgument,
        ("stemmer", "klingon"),
    ),
    (
        "index unknown option",
        lambda db: db.table("docs").create_index("body", colour="red"),
        InvalidArgument,
        ("colour",),
    ),
    (
        "index non-text column",
        lambda db: db.table("docs").create_index("id"),
        InvalidArgument,
        ("id", "int64"),
    ),
    (
        "index unknown column",
        lambda db: db.table("docs").create_index("nope"),
        CatalogError,
        ("nope",),
    ),
    # -- build_segment
    (
        "segment from > to",
        lambda db: db.table("docs").build_segment("body", (5, 2)),
        InvalidArgument,
        ("row_range", "(5, 2)"),
    ),
    (
        "segment negative from",
        lambda db: db.table("docs").build_segment("body", (-1, 2)),
        InvalidArgument,
        ("row_range", "-1"),
    ),
    (
        "segment negative to",
        lambda db: db.table("docs").build_segment("body", (0, -2)),
        InvalidArgument,
        ("row_range", "-2"),
    ),
    (
        "segment to past 2^63-1",
        lambda db: db.table("docs").build_segment("body", (0, 1 << 63)),
        InvalidArgument,
        ("row_range",),
    ),
    (
        "segment float bound",
        lambda db: db.table("docs").build_segment("body", (0, 1.5)),
        InvalidArgument,
        ("row_range", "1.5"),
    ),
    (
        "segment with other options",
        lambda db: db.table("docs").build_segment("body", (0, 1), analyzer="english"),
        InvalidArgument,
        ("body", "options"),
    ),
    (
        "segment non-text column",
        lambda db: db.table("docs").build_segment("id", (0, 1)),
        InvalidArgument,
        ("id",),
    ),
    # -- settings
    ("unknown setting", lambda db: db.settings.set("fts.nope", 1), InvalidArgument, ("fts.nope",)),
    (
        "bad forced plan",
        lambda db: db.settings.set("fts.force_plan", "fastest"),
        InvalidArgument,
        ("fts.force_plan", "fastest"),
    ),
    # -- writes
    (
        "insert mismatched columns",
        lambda db: db.table("docs").insert(pa.table({"body": ["x"]})),
        InvalidArgument,
        ("columns",),
    ),
    (
        "insert uncastable type",
        lambda db: db.table("docs").insert(
            pa.table({"id": [1], "title": ["t"], "body": pa.array([[1]])})
        ),
        InvalidArgument,
        ("body",),
    ),
    (
        "insert into unknown table",
        lambda db: db.table("nope").insert(pa.table({"a": [1]})),
        CatalogError,
        ("nope",),
    ),
    # -- out of range, overflowing, malformed text (issue 19)
    ("reserved table prefix", lambda db: db.create_table("__fts_docs_fresh", pa.table({"a": [1]})),
     InvalidArgument, ("__fts_", "engine's own")),
    ("table name too long", lambda db: db.create_table("t" * 129, pa.table({"a": [1]})), InvalidArgument, ("128",)),
    ("table name with NUL", lambda db: db.create_table("a\x00b", pa.table({"a": [1]})), InvalidArgument, ("name",)),
    ("setting overflows", lambda db: db.sql("SET fts.residual_row_limit = 1e999"), InvalidArgument,
     ("fts.residual_row_limit", "2^63-1")),
    ("setting to minus a word", lambda db: db.sql("SET fts.force_plan = -auto"), InvalidArgument,
     ("expected a literal value", "-auto")),
    ("setting past int64", lambda db: db.settings.set("fts.memtable_rows", 1 << 63), InvalidArgument, ("2^63-1",)),
    ("limit past int64", lambda db: db.table("docs").search("alpha", limit=1 << 63), InvalidArgument, ("limit", "2^63-1")),
    ("limit plus offset past int64", lambda db: db.table("docs").search("alpha", limit=2, offset=(1 << 63) - 2),
     InvalidArgument, ("offset", "2^63-1")),
    ("SQL LIMIT past int64", lambda db: db.sql("SELECT _rowid FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC LIMIT 9223372036854775808").to_arrow_table(), SqlError,
     ("LIMIT", "2^63-1", "1:"),),
    ("SQL OFFSET past int64", lambda db: db.sql("SELECT _rowid FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC LIMIT 3 OFFSET 18446744073709551616").to_arrow_table(), SqlError,
     ("OFFSET", "2^63-1")),
    ("slop past 32 bits", lambda db: db.table("docs").search(Phrase("body", "a b", slop=1 << 70)), InvalidArgument,
     ("slop", "2147483647")),
    ("max_expansions past int64", lambda db: Prefix("body", "al", max_expansions=1 << 70), InvalidArgument,
     ("max_expansions",)),
    ("SQL nested too deeply",
     lambda db: db.sql("SELECT _rowid FROM docs WHERE " + "(" * 3000 + "MATCH(body, 'a')" + ")" * 3000),
     SqlError, ("nests more than 1,000 levels deep",)),
    ("lone surrogate in a query string", lambda db: db.table("docs").search("alpha \udc80"), QuerySyntaxError,
     ("surrogate", "1:7")),
    ("lone surrogate in SQL", lambda db: db.sql("SELECT _rowid FROM docs WHERE MATCH(body, '\udc80')"), SqlError,
     ("surrogate", "1:44")),
    ("query string over the term cap", lambda db: db.table("docs").search("a " * 10_001), QuerySyntaxError,
     ("more than 10,000 terms", "fts.max_query_terms", "1:20001")),
    ("MATCH over a lowered term cap",
     lambda db: (db.sql("SET fts.max_query_terms = 2"), db.sql("SELECT _rowid FROM docs WHERE MATCH(body, 'a b c')")),
     QuerySyntaxError, ("more than 2 terms",)),
    ("snippet max_tokens past int64",
     lambda db: db.sql("SELECT snippet(body, 'alpha', 18446744073709551616) FROM docs"), SqlError,
     ("max_tokens", "at most 2^63-1", "1:31")),
    ("snippet max_tokens below -2^63",
     lambda db: db.sql("SELECT snippet(body, 'alpha', -9223372036854775809) FROM docs"), SqlError,
     ("max_tokens", "positive integer")),
    # (DataFusion plans these by recursion: past a few thousand levels its stack overflowed)
    ("SQL chain past the depth cap", lambda db: db.sql(" UNION ALL ".join(["SELECT 1"] * 5_000)), SqlError,
     ("more than 1,000 levels deep", "1:1")),
    ("unparsed statement past the depth cap", lambda db: db.sql("PREPARE p AS SELECT 1" + " + 1" * 15_000),
     SqlError, ("more than 1,000 levels deep",)),
    ("fts_search with two arguments", lambda db: db.sql("SELECT * FROM fts_search('docs', 'body')"), InvalidArgument,
     ("fts_search takes 4 arguments", "got 2")),
    ("fts_search with five arguments", lambda db: db.sql("SELECT * FROM fts_search('docs', 'body', 'a', 3, 4)"),
     InvalidArgument, ("got 5",)),
    ("function name past 128 characters", lambda db: db.sql("SELECT id, " + "f" * 129 + "(1) FROM docs"), SqlError,
     ("no function has a name longer than 128 characters", "1:12")),
    ("INSERT without rows", lambda db: db.sql("INSERT INTO docs"), EngineError, ("Expected: SELECT, VALUES, or a subquery",)),
    ("CREATE TABLE with a NUL in a column name", lambda db: db.sql('CREATE TABLE t2 (id BIGINT, "a\x00b" VARCHAR)'),
     InvalidArgument, ("without NUL",)),
    ("create_table with a NUL in a column name", lambda db: db.create_table("t2", pa.table({"a\x00b": [1]})),
     InvalidArgument, ("without NUL",)),
    ("CREATE TABLE AS with a NUL in a column name", lambda db: db.sql('CREATE TABLE t3 AS SELECT 1 AS "a\x00b"'),
     InvalidArgument, ("without NUL",)),
    ("an unknown column beside a search's", lambda db: db.sql("SELECT nope, * FROM docs WHERE MATCH(body, 'alpha')").to_arrow_table(),
     EngineError, ("nope",)),
    ("MATCH without a column", lambda db: db.sql("SELECT _rowid FROM docs WHERE MATCH(, 'alpha')"), SqlError,
     ("MATCH needs a column", "1:37")),
    ("MATCH without a query", lambda db: db.sql("SELECT _rowid FROM docs WHERE MATCH(body, )"), SqlError,
     ("MATCH needs a query string", "1:43")),
    # -- messages that name the cause (issue 20)
    ("MATCH on a missing table", lambda db: db.sql("SELECT id FROM nope WHERE MATCH(body, 'a')"), SqlError,
     ("no table named 'nope'", "1:16")),
    ("unknown index option", lambda db: db.sql("CREATE FULLTEXT INDEX ON docs (title) WITH (bogus = 1)"),
     InvalidArgument, ("bogus", "positions", "k1", "'b'", "analyzer", "stemmer")),
    ("DataFusion's error", lambda db: db.sql("SELECT nope FROM docs").to_arrow_table(), EngineError, ("nope",)),
    ("DataFusion's error at run time", lambda db: db.sql("SELECT 1 / 0").to_arrow_table(), EngineError,
     ("Divide by zero",)),
    ("a NUL in a result column's name", lambda db: db.sql("SELECT 'a\x00b'").to_arrow_table(), EngineError,
     ("cannot be handed over", "Null byte")),
    ("a NUL in a collected column's name", lambda db: db.sql("SELECT 1 AS \"a\x00b\"").collect(), EngineError,
     ("cannot be handed over",)),
]


@pytest.mark.parametrize(
    ("call", "error", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_raises_a_named_error_and_writes_nothing(db, call, error, words):
    version, on_disk, tables = db.manifest.version, files(db), db.table_names()
    with pytest.raises(error) as info:
        call(db)
    assert isinstance(info.value, FtsError)
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    assert db.manifest.version == version
    assert files(db) == on_disk
    assert db.table_names() == tables


@pytest.mark.parametrize(
    ("text", "offset", "place"),
    [
        ("body:(alpha", 5, "1:6"),  # the "(" left open
        ('alpha "beta', 6, "1:7"),  # the opening quote of an unterminated phrase
        ("alpha\n  AND )", 8, "2:3"),  # second line
        ("alpha^", 5, "1:6"),
        (")", 0, "1:1"),
    ],
)
def test_query_syntax_error_points_at_the_problem(db, text, offset, place):
    version = db.manifest.version
    with pytest.raises(QuerySyntaxError) as info:
        db.table("docs").search(text)
    error = info.value
    assert isinstance(error, FtsError)
    assert error.offset == offset
    assert f"at {place}" in str(error)
    assert db.manifest.version == version


@pytest.mark.parametrize(
    "text", ["(", "AND", "a ~3", "title:", '"a b"~', "x^-1", "alpha\n\nbeta OR", "((a)"]
)
def test_query_syntax_error_line_and_column_agree_with_offset(db, text):
    with pytest.raises(QuerySyntaxError) as info:
        db.table("docs").search(text)
    error = info.value
    assert 0 <= error.offset <= len(text)
    line = text.count("\n", 0, error.offset) + 1
    column = error.offset - (text.rfind("\n", 0, error.offset) + 1) + 1
    assert (error.line, error.column) == (line, column)
    assert f"{line}:{column}" in str(error)


@pytest.mark.parametrize("bad", [None, (0,), (0, 1, 2), "0-5"], ids=repr)
def test_build_segment_row_range_not_a_pair(db, bad):
    version = db.manifest.version
    with pytest.raises(InvalidArgument, match="row_range"):
        db.table("docs").build_segment("body", bad)
    assert db.manifest.version == version


def test_include_row_ids_must_be_integers(db):
    with pytest.raises(InvalidArgument, match="include_row_ids"):
        db.table("docs").search("alpha", include_row_ids=["a"])


def test_failed_call_does_not_disturb_later_ones(db):
    t = db.table("docs")
    before = t.search("alpha beta", limit=None)
    for bad in (
        lambda: t.search(None),
        lambda: t.create_index("body", k1=-1),
        lambda: t.build_segment("body", (3, 1)),
        lambda: t.insert(pa.table({"x": [1]})),
    ):
        with pytest.raises(FtsError):
            bad()
    assert t.search("alpha beta", limit=None) == before
    assert t.insert(pa.table({"id": [4], "title": ["t"], "body": ["alpha"]})) == 1
    assert t.count_rows() == 4


def test_delete_takes_a_match_predicate(db):
    assert db.sql("DELETE FROM docs WHERE MATCH(body, 'gamma') AND id > 2").to_pylist() == [{"count": 1}]
    assert db.sql("SELECT id FROM docs ORDER BY id").to_pylist() == [{"id": 1}, {"id": 2}]
    assert db.table("docs").delete("MATCH(body, 'alpha')") == 1
    assert db.sql("SELECT id FROM docs").to_pylist() == [{"id": 2}]


def test_the_term_cap_is_read_when_a_cached_sql_shape_runs_again(db):
    sql = "SELECT _rowid FROM docs WHERE MATCH(body, '{}') ORDER BY score() DESC LIMIT 3"
    assert db.sql(sql.format("alpha beta gamma")).to_arrow_table().num_rows == 3
    db.sql("SET fts.max_query_terms = 2")
    with pytest.raises(QuerySyntaxError, match="more than 2 terms"):
        db.sql(sql.format("alpha beta gamma"))
    assert db.sql(sql.format("alpha beta")).to_arrow_table().num_rows == 2
