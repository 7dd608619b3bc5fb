"""A search is a predicate (issue 41; DESIGN §3.2): generated statements that put MATCH and
score() inside the rest of SQL answer as the reference does (tests/sql/search_sql.py:
plain DataFusion over the same rows, each MATCH a boolean column and each score computed
by the brute-force BM25 of tests/reference.py), rows, names and float64 scores to the bit,
with the fast paths on and off, in every setup a table lives in: in memory, a forced flat
scan, a keyed table made by SQL with deletes, updates and fresh rows, a directory with
deleted and fresh rows, a view, Parquet files indexed in place with a new file, CSV files
indexed in place."""

from __future__ import annotations

import math
from pathlib import Path

import datafusion
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

import datafusion_fts as fts
from search_sql import Generator, corpus, reference_answer

SETUPS = ("memory", "flat_scan", "keyed", "directory", "view", "parquet", "csv")
STATEMENTS = 45  # per setup in the suite (the slow test runs more)


def _values(table: pa.Table) -> list[tuple]:
    """Rows with floats as their exact bits (repr), NaN equal to NaN."""
    out = []
    for row in table.to_pylist():
        out.append(tuple(repr(v) if isinstance(v, float) and not math.isnan(v) else
                         ("nan" if isinstance(v, float) else v) for v in row.values()))
    return out


def _literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def _insert(db: fts.Database, table: str, rows: pa.Table) -> None:
    values = ", ".join("(" + ", ".join(_literal(v) for v in row.values()) + ")" for row in rows.to_pylist())
    db.sql(f"INSERT INTO {table} VALUES {values}").collect()


def build(setup: str, tmp: Path, seed: int) -> tuple[fts.Database, dict[str, pa.Table]]:
    """A database holding the corpus in ``setup``; and each table's rows as the engine
    reads them, ``_rowid`` first (the reference's input)."""
    data = corpus(seed)
    docs = data["docs"]
    first, rest = docs.slice(0, 28), docs.slice(28)
    ctx = datafusion.SessionContext()
    if setup in ("parquet", "csv"):
        src = tmp / "src"
        src.mkdir()
        for i, part in enumerate((first.slice(0, 14), first.slice(14))):
            if setup == "parquet":
                pq.write_table(part, src / f"{i}.parquet")
            else:
                pcsv.write_csv(part, src / f"{i}.csv")
        if setup == "parquet":
            ctx.register_parquet("docs", str(src))
        else:
            ctx.register_csv("docs", str(src), schema=docs.schema, file_extension=".csv")
    db = fts.connect(tmp / "db" if setup in ("directory", "parquet", "csv") else None, ctx=ctx)
    if setup == "keyed":
        db.sql("CREATE TABLE docs (id BIGINT PRIMARY KEY, title VARCHAR, body VARCHAR, year INT, cat VARCHAR)")
        _insert(db, "docs", first)
        db.sql("CREATE FULLTEXT INDEX ON docs (title, body) WITH (positions = true)")
        db.sql("DELETE FROM docs WHERE id % 7 = 3").collect()
        db.sql("UPDATE docs SET body = concat(body, ' red fox') WHERE id % 5 = 1").collect()
        _insert(db, "docs", rest)
    elif setup in ("parquet", "csv"):
        db.sql("CREATE FULLTEXT INDEX ON docs (title, body) WITH (positions = true)")
        suffix = "parquet" if setup == "parquet" else "csv"
        (pq.write_table if setup == "parquet" else pcsv.write_csv)(rest, tmp / "src" / f"9.{suffix}")
    else:
        name = "docs_t" if setup == "view" else "docs"
        table = db.create_table(name, first)
        for column in ("title", "body"):
            table.create_index(column, positions=True)
        if setup in ("directory", "view"):
            table.delete("id % 7 = 3")
        table.insert(rest)
        if setup == "view":
            db.sql("CREATE VIEW docs AS SELECT * FROM docs_t").collect()
    notes = db.create_table("notes", data["notes"])
    notes.create_index("text", positions=True)
    notes.delete("nid % 6 = 0")
    db.ctx.register_record_batches("people", [data["people"].to_batches()])
    if setup == "flat_scan":
        db.sql("SET fts.force_plan = 'flat_scan'")
    docs_rows = (db.sql("SELECT * FROM docs") if setup == "view" else db.sql("SELECT _rowid, * FROM docs"))
    docs_rows = docs_rows.to_arrow_table()
    if setup == "view":
        docs_rows = docs_rows.add_column(0, "_rowid", pa.array(range(docs_rows.num_rows), pa.int64()))
    people = data["people"]
    rows = {
        "docs": docs_rows.cast(pa.schema([pa.field(f.name, _plain(f.type)) for f in docs_rows.schema])),
        "notes": db.sql("SELECT _rowid, * FROM notes").to_arrow_table(),
        "people": people.add_column(0, "_rowid", pa.array(range(people.num_rows), pa.int64())),
    }
    return db, rows


def _plain(kind: pa.DataType) -> pa.DataType:
    return pa.string() if pa.types.is_string_view(kind) or pa.types.is_large_string(kind) else kind


def check(db: fts.Database, rows: dict[str, pa.Table], setup: str, seed: int, count: int) -> None:
    generator = Generator(seed, view=setup == "view")
    failures = []
    for _ in range(count):
        statement = generator.statement()
        want = reference_answer(statement, rows, view=setup == "view")
        for fast in (True, False):
            db.sql(f"SET fts.sql_fast_paths = {'true' if fast else 'false'}")
            try:
                got = db.sql(statement.user).to_arrow_table()
            except fts.FtsError as err:
                failures.append(f"[{setup}, fast={fast}] {statement.user}\n  refused: {err}")
                continue
            same_names = got.column_names == want.column_names
            a, b = _values(got), _values(want)
            if not statement.ordered:
                a, b = sorted(a, key=repr), sorted(b, key=repr)
            if not same_names or a != b:
                failures.append(f"[{setup}, fast={fast}] {statement.user}\n  got  {got.column_names} {a}\n"
                                f"  want {want.column_names} {b}")
    assert not failures, f"{len(failures)} wrong of {count * 2}:\n" + "\n".join(failures[:5])


@pytest.mark.parametrize("setup", SETUPS)
def test_generated_statements_answer_as_the_reference(setup: str, tmp_path: Path) -> None:
    db, rows = build(setup, tmp_path, seed=41)
    check(db, rows, setup, seed=SETUPS.index(setup), count=STATEMENTS)


@pytest.mark.slow
@pytest.mark.parametrize("setup", SETUPS)
def test_more_generated_statements_answer_as_the_reference(setup: str, tmp_path: Path) -> None:
    db, rows = build(setup, tmp_path, seed=7)
    check(db, rows, setup, seed=1000 + len(setup), count=400)
