"""One version per statement (catalog/table_state.py ``TableState.pinned``; docs/design.md:
"One visibility cut"): every part of a SQL statement (its prefilters, its searches, the rows
they fetch, the tables it reads) reads the version of each table it names as it was when
the statement started, in every setup, while a writer changes the table meanwhile."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from s3_server import S3Server, s3_server

import datafusion_fts as fts
from datafusion_fts.table import Table

ROWS = pa.table({"id": [0, 1, 2, 3], "body": ["fox a", "fox b", "fox c", "dog"]})
SEARCH = "SELECT id, score() AS s FROM docs WHERE MATCH(body, 'fox') AND id >= 0 ORDER BY s DESC"
SEARCHES = {
    "prefilter": SEARCH,
    "explained": SEARCH.replace("score() AS s", "score() AS s, score_explain() AS why"),
    "two searches": "SELECT id, score() AS s FROM docs WHERE MATCH(body, 'fox') AND id >= 0 UNION ALL "
                    "SELECT id, score() AS s FROM docs WHERE MATCH(body, 'fox') AND id < 9 ORDER BY s DESC, id",
    "a search and its table": "SELECT d.id, score() AS s, (SELECT count(*) FROM docs) AS n FROM docs d "
                              "WHERE MATCH(d.body, 'fox') AND d.id >= 0 ORDER BY s DESC",
    "rows fetched": "SELECT id, body, score() AS s FROM docs WHERE MATCH(body, 'fox') ORDER BY s DESC",
}


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.client().create_bucket(Bucket="bucket")
        yield server


def _databases(where: str, tmp_path: Path, s3: Any) -> tuple[fts.Database, fts.Database]:
    """(the writer, the reader) of a table of ``ROWS`` indexed on body."""
    if where == "memory":
        writer = fts.connect()
        reader = writer
    elif where == "object store":
        url = f"s3://bucket/{tmp_path.name}"
        writer = fts.connect(url, storage_options=s3.options())
    else:
        writer = fts.connect(tmp_path / "db")
    writer.create_table("docs", ROWS).create_index("body")
    if where == "object store":
        reader = fts.connect(url, storage_options=s3.options(), config={"fts.store_refresh_seconds": 0})
    elif where != "memory":
        reader = fts.connect(tmp_path / "db", read_only=where == "read-only")
    return writer, reader


@contextmanager
def _at_the_first_search(monkeypatch: pytest.MonkeyPatch, write: Callable[[], Any]) -> Iterator[None]:
    """``write`` runs once a statement's prefilter ran, just before its first search reads
    the table."""
    done: list[bool] = []
    real = Table.run  # (every search of a managed table: planner/answer_search.py)

    def racing(self: Table, *args: Any, **kwargs: Any) -> Any:
        if not done:
            done.append(True)
            write()
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Table, "run", racing)
    yield
    assert done


@pytest.mark.parametrize("statement", list(SEARCHES))
@pytest.mark.parametrize("where", ["memory", "directory", "read-only", "object store"])
def test_a_statement_reads_one_version_while_a_writer_inserts(
    where: str, statement: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest,
) -> None:
    """V1 of issue 45: the prefilter read the table before an insert, the search after it
    (new statistics, the new row missing): an answer no version of the table gives."""
    s3 = request.getfixturevalue("s3") if where == "object store" else None
    writer, reader = _databases(where, tmp_path, s3)
    text = SEARCHES[statement]
    before = reader.sql(text).to_pylist()
    with _at_the_first_search(monkeypatch, lambda: writer.table("docs").insert(pa.table({"id": [4], "body": ["fox fox"]}))):
        racing = reader.sql(text).to_pylist()
    monkeypatch.undo()
    after = reader.sql(text).to_pylist()
    assert racing == before != after
    assert any(row["id"] == 4 for row in after)


def test_a_statement_whose_version_lost_a_file_reads_the_next_version_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files of the version a statement pinned deleted before it read them (a commit
    retired them, ``fts.gc_grace_seconds`` 0): the statement runs again on the next
    version, prefilter and search alike."""
    writer = fts.connect(tmp_path / "db", config={"fts.gc_grace_seconds": 0})
    t = writer.create_table("docs", ROWS)
    t.create_index("body")
    t.insert(pa.table({"id": [4], "body": ["fox fox"]}))
    t.flush()  # (two fragments and segments: OPTIMIZE merges them, deleting these)
    reader = fts.connect(tmp_path / "db", config={"fts.memory_table_bytes": 0})
    text = SEARCHES["rows fetched"].replace("MATCH(body, 'fox')", "MATCH(body, 'fox') AND id >= 0")
    with _at_the_first_search(monkeypatch, lambda: writer.sql("OPTIMIZE docs")):
        racing = reader.sql(text).to_pylist()
    monkeypatch.undo()
    assert racing == reader.sql(text).to_pylist() == writer.sql(text).to_pylist()
    assert [row["id"] for row in racing] == [4, 0, 1, 2]
