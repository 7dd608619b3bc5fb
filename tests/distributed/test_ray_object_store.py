"""Ray over a database on an object store (issue 32, item 4): the driver opens the
database at its URL and the search actors read its segments from the same store with
the same options, nothing on any local disk (moto's S3 server on loopback,
tests/s3_server.py); a build whose shared storage is an object store is refused before
any task writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from s3_server import S3Server, s3_server
from shapes import QUERIES, corpus

import datafusion_fts as fts

pytest.importorskip("ray")
pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.client().create_bucket(Bucket="bucket")
        yield server


def _hits(t: fts.Table, query) -> list[tuple[int, str]]:
    result = t.search(query, limit=10, columns=[])
    return list(zip(result.column("_rowid").to_pylist(), map(repr, result.column("_score").to_pylist())))


def test_actors_search_a_database_at_a_url_as_the_local_plan_does(ray_session, s3: S3Server, tmp_path: Path) -> None:
    local = fts.connect(tmp_path / "db")
    t = local.create_table("docs", corpus(300))
    t.create_index("body")
    expected = [_hits(t, q) for q in QUERIES[:4]]
    url = s3.upload_directory(tmp_path / "db", "bucket", "ray")
    remote = fts.connect(url, executor="ray", storage_options=s3.options(), config={"fts.ray_actors": 2})
    docs = remote.table("docs")
    assert [_hits(docs, q) for q in QUERIES[:4]] == expected
    executor = remote.distributed_executor()
    assert executor.storage.url == url and executor._partitions  # (the actors ranked shares)
    shares = [share for found, _ in executor._partitions.values() for share in found.shares]
    assert shares and all(share.storage.url == url for share in shares)


def test_a_build_on_object_store_shared_storage_is_refused_before_any_task(ray_session, s3: S3Server,
                                                                          tmp_path: Path) -> None:
    db = fts.connect(tmp_path / "db", executor="ray", storage_options=s3.options(),
                     config={"fts.ray_actors": 2, "fts.ray_storage": "s3://bucket/elsewhere"})
    t = db.create_table("docs", corpus(100))
    with pytest.raises(fts.StorageError, match="reads only"):
        t.create_index("body")
    assert t.snapshot().meta.indexes == {}
    assert "Contents" not in s3.client().list_objects_v2(Bucket="bucket", Prefix="elsewhere/")
