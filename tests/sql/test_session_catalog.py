"""The session's schema as DataFusion sees it: SHOW TABLES and information_schema list the
user's and the managed tables (not the engine's own), and nothing reaches stderr."""

from __future__ import annotations

import pyarrow as pa
import pytest

import datafusion_fts as fts


@pytest.fixture
def db():
    db = fts.connect()
    docs = db.create_table("docs", pa.table({"id": [1, 2], "body": ["a b", "b c"]}))
    docs.create_index("body")
    db.ctx.register_record_batches("mine", [[pa.record_batch({"x": [1]})]])
    return db


def test_show_tables_and_information_schema_list_the_sessions_tables(db, capfd):
    db.sql("SELECT id FROM docs WHERE MATCH(body, 'b') ORDER BY score() DESC").to_arrow_table()  # (a temporary result)
    shown = db.sql("SHOW TABLES").to_arrow_table().to_pydict()
    public = sorted(n for n, s in zip(shown["table_name"], shown["table_schema"]) if s == "public")
    assert public == ["docs", "mine"]
    listed = db.sql("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'").to_arrow_table()
    assert sorted(listed.column(0).to_pylist()) == ["docs", "mine"]
    assert db.ctx.catalog().schema().names() == {"docs", "mine"}
    assert capfd.readouterr().err == ""


def test_statements_sqlglot_cannot_parse_print_nothing(db, capfd):
    assert "body" in db.sql("SHOW COLUMNS FROM docs").to_arrow_table().column("column_name").to_pylist()
    with pytest.raises(fts.FtsError):
        db.sql("VACUUM docs").to_arrow_table()
    assert capfd.readouterr().err == ""
