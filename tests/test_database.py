"""``Database`` as a user meets it first: its repr, and its tables'."""

from __future__ import annotations

import pyarrow as pa

import datafusion_fts as fts


def test_reprs_name_the_database_its_tables_and_rows(tmp_path):
    assert repr(fts.connect()) == "Database(in memory, tables=[])"
    db = fts.connect(tmp_path / "db")
    db.create_table("docs", pa.table({"body": ["a", "b"]}))
    assert repr(db) == f"Database({str(tmp_path / 'db')!r}, tables=['docs'])"
    assert repr(db.table("docs")) == "Table('docs', rows=2)"
