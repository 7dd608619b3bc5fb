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


def _index_keys(s3: S3Server, prefix: str) -> set[str]:
    found = s3.client().list_objects_v2(Bucket="bucket", Prefix=f"{prefix}/index/")
    return {o["Key"] for o in found.get("Contents", [])}


def test_build_tasks_write_a_database_at_a_url_and_a_failed_one_leaves_nothing(ray_session, s3: S3Server,
                                                                              tmp_path: Path) -> None:
    """Ray build tasks read the fragments from the store and create their segments there;
    the driver commits them. A task that fails (a damaged fragment) fails the build, and
    the segments every task wrote are deleted from the store."""
    rows = corpus(600)
    local = fts.connect(tmp_path / "local")
    expected_table = local.create_table("docs", rows)
    expected_table.create_index("body")
    expected = [_hits(expected_table, q) for q in QUERIES[:4]]
    url = "s3://bucket/built"
    db = fts.connect(url, executor="ray", storage_options=s3.options(), config={"fts.ray_actors": 2})
    t = db.create_table("docs", rows.slice(0, 200))
    t.insert(rows.slice(200, 200))  # (each insert a commit: a fragment of its own)
    t.insert(rows.slice(400, 200))
    assert len(t.snapshot().meta.fragments) == 3
    before = _index_keys(s3, "built")
    frag = t.snapshot().meta.fragments[1].id  # (the tasks over the others write their segments)
    key = f"built/data/{frag}.parquet"
    good = s3.client().get_object(Bucket="bucket", Key=key)["Body"].read()
    s3.client().put_object(Bucket="bucket", Key=key, Body=good[: len(good) // 2])  # (rows that no longer decode)
    with pytest.raises(fts.StorageError):
        t.create_index("body")
    assert _index_keys(s3, "built") == before and not t.snapshot().meta.indexes
    s3.client().put_object(Bucket="bucket", Key=key, Body=good)
    t.create_index("body")
    assert [_hits(t, q) for q in QUERIES[:4]] == expected
    again = fts.connect(url, storage_options=s3.options())
    assert [_hits(again.table("docs"), q) for q in QUERIES[:4]] == expected


def test_an_object_store_for_ray_beside_a_local_database_is_refused(s3: S3Server, tmp_path: Path) -> None:
    """Issue 32: workers read segments from S3 while the driver committed them locally."""
    db = fts.connect(tmp_path / "db", storage_options=s3.options(), config={"fts.ray_storage": "s3://bucket/x"})
    db.create_table("docs", corpus(50)).create_index("body")
    db.sql("SET fts.executor = 'ray'")
    with pytest.raises(fts.PlanError, match="open the database at that URL"):
        db.table("docs").search("alpha", limit=5)
