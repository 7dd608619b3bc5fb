"""Faults of the object store under a table indexed in place on it (issue 32 item 5), on
a real S3-protocol server of each test's own (tests/s3_server.py), stopped by a signal at
a point of our own reads: paused (requests time out), or killed. After each, the error
is a StorageError naming the object, nothing of the failed work is committed, the
database opens, and once the server answers again every answer is the right one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from s3_server import S3Server, s3_server

import datafusion_fts as fts
from datafusion_fts.storage.objects.remote import RemoteObjects

ROWS = pa.table({"id": list(range(3000)), "body": [f"w{i % 13} w{i % 7} alpha row{i}" for i in range(3000)]})  # (bodies all differ: a wide column)
# Requests give up fast: one retry, a second each (the defaults wait minutes).
FAST = {"timeout": "1s", "connect_timeout": "1s", "max_retries": "1", "retry_timeout": "3"}


@pytest.fixture
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.client().create_bucket(Bucket="bucket")
        for i in range(3):
            server.put_parquet("bucket", f"data/part-{i}.parquet", ROWS.slice(i * 1000, 1000),
                               write_page_index=True, data_page_size=1024)
        yield server


def _stop_at_read(monkeypatch: pytest.MonkeyPatch, reads: int, stop) -> None:
    """Call ``stop()`` before the ``reads``-th ranged read of an object (then read on)."""
    count = [0]
    real = RemoteObjects.get_ranges

    def get_ranges(self, key, starts, ends, version=None):  # noqa: ANN001, ANN202
        count[0] += 1
        if count[0] == reads:
            stop()
        return real(self, key, starts, ends, version)

    monkeypatch.setattr(RemoteObjects, "get_ranges", get_ranges)


def _ids(db: fts.Database, query: str) -> list[int]:
    """The ids of the query's top 20 (in the total order), fetched with their bodies: a
    wide column is read page by page from the store for those rows every time, where a
    narrow one may be taken from its whole column, kept decoded, and read no more."""
    return [r["id"] for r in db.sql(f"SELECT id, body FROM docs WHERE MATCH(body, '{query}') "
                                    "ORDER BY score() DESC LIMIT 20").to_pylist()]


def test_a_build_whose_server_stops_answering_commits_nothing_and_succeeds_once_it_answers(
        s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = fts.connect(tmp_path / "db", storage_options={**s3.options(), **FAST})
    db.index_in_place("docs", "s3://bucket/data/")
    expected = _ids(db, "w5 w3")  # (a scan of the files: no index yet)
    with monkeypatch.context() as patch:
        _stop_at_read(patch, 2, s3.pause)
        with pytest.raises(fts.StorageError, match="s3://bucket/data/part-"):
            db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    s3.resume()
    assert db.table("docs").snapshot().meta.indexes == {}
    del db
    again = fts.connect(tmp_path / "db", storage_options={**s3.options(), **FAST})
    assert again.table("docs").snapshot().meta.indexes == {}
    again.sql("CREATE FULLTEXT INDEX ON docs (body)")
    assert _ids(again, "w5 w3") == expected


def test_a_query_whose_server_stops_answering_is_an_error_then_answers_alike(
        s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = fts.connect(tmp_path / "db", storage_options={**s3.options(), **FAST, "max_retries": "0"})
    db.index_in_place("docs", "s3://bucket/data/")
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    db.sql("SET fts.object_cache_bytes = 0")  # (every query reads the pages of its rows)
    expected = _ids(db, "w11 alpha")
    with monkeypatch.context() as patch:
        _stop_at_read(patch, 1, s3.pause)
        with pytest.raises(fts.StorageError, match="s3://bucket/data/part-"):
            _ids(db, "w11 alpha")
    s3.resume()
    assert _ids(db, "w11 alpha") == expected


def test_a_build_whose_server_dies_commits_nothing_and_the_database_opens(
        s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    options = {**s3.options(), **FAST}
    db = fts.connect(tmp_path / "db", storage_options=options)
    db.index_in_place("docs", "s3://bucket/data/")
    with monkeypatch.context() as patch:
        _stop_at_read(patch, 2, s3.kill)
        with pytest.raises(fts.StorageError, match="s3://bucket/data/"):
            db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    del db
    again = fts.connect(tmp_path / "db", storage_options=options)
    assert again.table_names() == ["docs"]
    assert again.state.manifest.tables["docs"].indexes == {}  # (nothing of the build committed)
    with pytest.raises(fts.StorageError, match="s3://bucket/data"):
        _ids(again, "w5")
