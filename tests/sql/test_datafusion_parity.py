"""Statements a DataFusion user already has answer through ``db.sql`` as through ``ctx.sql``
(issue 31; DESIGN §3.1): the records of tests/sql/parity/*.slt, run in order on plain
DataFusion and through ``db.sql`` in memory and in a database directory, compared value by
value, name by name, type by type (tests/sql/sqllogic.py). The whole run over DataFusion's
own sqllogictest files is tests/sql/datafusion_parity.py; its report is docs/sqllogictest.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sqllogic import Outcome, Record, Tally, compare, parse_slt, read_slt, run_records

PARITY = Path(__file__).parent / "parity"
FILES = sorted(PARITY.glob("*.slt"))


@pytest.mark.parametrize("searched", [False, True], ids=["as written", "with a search added"])
@pytest.mark.parametrize("setup", ["memory", "directory"])
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_records_answer_as_datafusion_answers(path: Path, setup: str, searched: bool, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Every record as written; then each query that fits with a MATCH added to its WHERE,
    against DataFusion with fts_match there (sqllogic.with_search). Each run starts in a
    directory of its own, where a file's relative paths (COPY, external tables) lead."""
    records = read_slt(path)
    assert records, f"{path.name} holds no record"
    for run in ("reference", setup):
        (tmp_path / run).mkdir()
    monkeypatch.chdir(tmp_path / "reference")
    reference = run_records(records, "datafusion", searched=searched)
    assert sum(o.error is None for o in reference) > len(records) // 2, "the reference itself fails"
    if searched:
        assert sum(o.searched for o in reference) >= 5, "too few records took a search"
    monkeypatch.chdir(tmp_path / setup)
    tally = Tally()
    tally.add(path.stem, records, reference, run_records(records, setup, tmp_path / "db", searched=searched))
    cases = [f"{record.line}: {' '.join(record.sql.split())[:100]}\n    DataFusion: {ref.describe()}\n    {setup}: {out.describe()}"
             for _, record, ref, out, _ in tally.cases]
    assert not cases, "\n".join(cases)


def _record(sql: str, sort: bool = False) -> Record:
    return Record(1, "query", sql, sort)


def test_the_comparison_tells_a_silent_difference_from_an_error() -> None:
    """The harness itself: an answer where DataFusion refuses, or another answer, is
    ``different``; a refusal where DataFusion answers is ``error``; rows compare as a
    multiset unless the statement orders them."""
    answer = Outcome(("a",), ("int64",), (("1",), ("2",)))
    swapped = Outcome(("a",), ("int64",), (("2",), ("1",)))
    refused = Outcome(error="no")
    assert compare(_record("SELECT a FROM t"), answer, swapped) == "identical"
    assert compare(_record("SELECT a FROM t ORDER BY a"), answer, swapped) == "different"
    assert compare(_record("SELECT a FROM t ORDER BY a", sort=True), answer, swapped) == "identical"
    assert compare(_record("x"), answer, refused) == "error"
    assert compare(_record("x"), refused, answer) == "different"
    assert compare(_record("x"), refused, refused) == "identical"
    assert compare(_record("x"), answer, Outcome(("a",), ("int32",), answer.rows)) == "different"
    assert compare(_record("x"), answer, Outcome(("b",), ("int64",), answer.rows)) == "different"
    floats = Outcome(("s",), ("double",), (("0.1",),))
    assert compare(_record("SELECT sum(x)"), floats, Outcome(("s",), ("double",), (("0.10000000000000002",),))) == "rounding"
    assert compare(_record("SELECT sum(x)"), floats, Outcome(("s",), ("double",), (("0.2",),))) == "different"
    plan = Outcome(("plan",), ("string",), (("TableScan: t",),))
    ours = Outcome(("plan",), ("string",), (("TableScan: __fts_t_data_0",),))
    assert compare(_record("EXPLAIN SELECT * FROM t"), plan, ours) == "plan"
    assert compare(_record("EXPLAIN SELECT * FROM t"), plan, Outcome(("plan",), ("string",), (("Float64",),))) == "different"
    memory = Outcome(("plan",), ("string",), (("DataSourceExec: partitions=1, partition_sizes=[2]",),))
    split = Outcome(("plan",), ("string",), (("DataSourceExec: partitions=1, partition_sizes=[1]",),))
    other = Outcome(("plan",), ("string",), (("FilterExec: a > 1\nDataSourceExec: partitions=1, partition_sizes=[2]",),))
    assert compare(_record("EXPLAIN SELECT * FROM t"), memory, split) == "layout"
    assert compare(_record("EXPLAIN SELECT * FROM t"), memory, other) == "different"
    listed = Outcome(("function_name", "function_type"), ("string", "string"), (("'abs'", "'SCALAR'"),))
    with_ours = Outcome(listed.names, listed.types, (*listed.rows, ("'highlight'", "'SCALAR'")))
    assert compare(_record("SHOW FUNCTIONS"), listed, with_ours) == "functions"
    assert compare(_record("SHOW FUNCTIONS"), listed, Outcome(listed.names, listed.types, (
        *listed.rows, ("'nonesuch'", "'SCALAR'")))) == "different"  # (not one of ours)
    assert compare(_record("SHOW FUNCTIONS"), with_ours, listed) == "different"  # (a row missing)


def test_what_datafusion_answers_otherwise_from_run_to_run_varies_and_no_wrong_answer_does() -> None:
    """A listed difference (here a plan) where DataFusion's own runs differ too is
    ``varies``; so is an answer one of DataFusion's runs gave where they differ (a hash
    set's order). An answer none gave stays ``different``, whatever DataFusion's runs do."""
    record = _record("EXPLAIN ANALYZE SELECT 1")
    timed = Outcome(("plan",), ("string",), (("elapsed=1ms",),))
    again, ours = Outcome(("plan",), ("string",), (("elapsed=2ms",),)), Outcome(("plan",), ("string",), (("elapsed=3ms",),))
    tally = Tally()
    tally.add("t", [record, record], [timed, timed], [ours, ours], [[again, timed]])
    assert tally.counts == {"varies": 1, "plan": 1}

    def listed(*values: str) -> Outcome:
        return Outcome(("a",), ("list<item: int32>",), ((f"[{', '.join(values)}]",),))

    query = _record("SELECT array_agg(DISTINCT id) FROM t")
    for ours_, runs, verdict in ((listed("None", "1"), [listed("1", "None")], "different"),
                                 (listed("None", "1"), [listed("1", "None"), listed("None", "1")], "varies"),
                                 (listed("2"), [listed("1", "None"), listed("None", "1")], "different")):
        tally = Tally()
        tally.add("t", [query], [listed("1", "None")], [ours_], [[run] for run in runs])
        assert tally.counts == {verdict: 1}, (ours_, runs)


def test_records_are_read_as_sqllogictest_writes_them() -> None:
    text = """# a comment
statement ok
CREATE TABLE t (a INT)

query I rowsort
SELECT a
FROM t
----
1
2

onlyif postgres
query I
SELECT 'postgres only'
----
x

statement error DataFusion error: .*
SELECT nope
"""
    records = parse_slt(text)
    assert [(r.line, r.kind, r.sql, r.sort) for r in records] == [
        (3, "statement", "CREATE TABLE t (a INT)", False),
        (6, "query", "SELECT a\nFROM t", True),
        (19, "statement", "SELECT nope", False),
    ]
