"""A computed answer handed back without a DataFusion round trip (sql/result_frame.py):
what it answers from its table is what DataFusion's frame of the same rows answers, and
every other DataFrame method still works on it."""

from __future__ import annotations

import pyarrow as pa
import pytest
from datafusion import col, lit

import datafusion_fts as fts
from datafusion_fts.errors import EngineError
from datafusion_fts.sql.result_frame import ResultFrame

SEARCH = "SELECT id, body, score() AS s FROM docs WHERE MATCH(body, '{q}') ORDER BY score() DESC LIMIT {k}"


@pytest.fixture(scope="module")
def db() -> fts.Database:
    db = fts.connect()
    bodies = ["alpha beta", "beta gamma", "alpha alpha", "gamma", "beta beta beta", None]
    db.create_table("docs", pa.table({"id": list(range(len(bodies))), "body": bodies})).create_index("body")
    return db


@pytest.mark.parametrize("q, k", [("alpha", 10), ("beta", 2), ("gamma", 0), ("zeta", 5)])
def test_answers_as_datafusion_would(db: fts.Database, q: str, k: int) -> None:
    db.sql(SEARCH.format(q=q, k=k))  # (the second run takes the cached shape's direct path)
    frame = db.sql(SEARCH.format(q=q, k=k))
    assert isinstance(frame, ResultFrame)
    engine = db.ctx.from_arrow(frame.to_arrow_table())
    assert frame.to_arrow_table().equals(engine.to_arrow_table())
    assert frame.schema() == engine.schema()
    assert frame.count() == engine.count()
    assert frame.to_pylist() == engine.to_pylist()
    assert frame.to_pydict() == engine.to_pydict()
    assert pa.Table.from_batches(frame.collect(), frame.schema()).equals(engine.to_arrow_table())


def test_other_methods_run_on_datafusion(db: fts.Database) -> None:
    db.sql(SEARCH.format(q="beta", k=10))
    frame = db.sql(SEARCH.format(q="beta", k=10))
    assert isinstance(frame, ResultFrame)
    ids = frame.to_arrow_table().column("id").to_pylist()
    kept = frame.filter(col("id") > lit(ids[-1])).to_arrow_table()
    assert kept.column("id").to_pylist() == [i for i in ids if i > ids[-1]]
    streamed = [b.to_pyarrow() for b in frame.execute_stream()]
    assert sum(b.num_rows for b in streamed) == len(ids)
    with pytest.raises(EngineError):  # DataFusion's own errors come back as ours
        frame.select("no_such_column").to_arrow_table()


def test_statements_leave_no_table_in_the_session() -> None:
    """A computed answer (a status, EXPLAIN's rows, ``score_explain()``'s, a search's
    frame used through DataFusion) is a frame of rows no session table names: each one
    was registered under a name of its own and kept, rows and all, in ``SHOW TABLES``."""
    db = fts.connect()
    db.create_table("docs", pa.table({"id": [1, 2], "body": ["alpha beta", "beta"]})).create_index("body")
    before = db.ctx.sql("SHOW TABLES").to_pylist()
    for _ in range(3):
        assert db.sql("SET fts.force_plan = 'auto'").to_pylist() == [{"status": "fts.force_plan = 'auto'"}]
        assert len(db.sql("EXPLAIN SELECT id FROM docs WHERE MATCH(body, 'alpha')").to_pylist()) >= 2
        explained = db.sql("SELECT id, score_explain() AS e FROM docs WHERE MATCH(body, 'alpha')").to_pylist()
        assert [r["id"] for r in explained] == [1] and "idf" in explained[0]["e"]
        frame = db.sql(SEARCH.format(q="beta", k=10))
        assert frame.filter(col("id") > lit(1)).to_pylist()[0]["id"] == 2
    assert db.ctx.sql("SHOW TABLES").to_pylist() == before
    assert db.ctx.catalog().schema().names() == {"docs"}
