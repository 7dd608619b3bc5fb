"""Tables the user registered on an object store (issue 32), against a real S3-protocol
server on loopback (tests/s3_server.py). Until tables on object stores can be indexed in
place, a remote path is never read as a local one: DataFusion's plan names an object
store's file by its path in the bucket, which a local file may share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import datafusion
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import datafusion_fts as fts
from s3_server import S3Server, s3_server

ROWS = pa.table({"id": list(range(6)), "body": ["alpha beta", "beta", "gamma alpha", "delta", "alpha", "omega"]})


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.client().create_bucket(Bucket="bucket")
        yield server


def session(s3: S3Server, key_prefix: str) -> datafusion.SessionContext:
    s3.put_parquet("bucket", f"{key_prefix}/part-0.parquet", ROWS)
    ctx = datafusion.SessionContext()
    ctx.register_object_store("s3://", s3.store("bucket"), "bucket")
    ctx.register_parquet("docs", f"s3://bucket/{key_prefix}/")
    return ctx


def test_a_search_of_a_table_on_s3_answers_from_its_files(s3: S3Server) -> None:
    db = fts.connect(ctx=session(s3, "plain"))
    found = db.sql("SELECT id FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC, id").to_pylist()
    assert sorted(r["id"] for r in found) == [0, 2, 4]


def test_indexing_a_table_on_s3_in_place_is_refused_with_the_reason(s3: S3Server) -> None:
    """It read the bucket's path as a local one: FileNotFoundError on /data/..."""
    db = fts.connect(ctx=session(s3, "data"))
    with pytest.raises(fts.InvalidArgument, match="not on this machine's disk.*object store"):
        db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    assert db.table_names() == []


def test_a_local_file_at_the_buckets_path_is_not_indexed_instead(s3: S3Server, tmp_path: Path) -> None:
    """Issue 32: with a local file where the bucket's path points (here a file under the
    test's own directory, the bucket's key being that directory's path), its rows were
    indexed, and afterwards db.sql and the user's ctx.sql saw them instead of the bucket's."""
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    pq.write_table(pa.table({"id": [7], "body": ["local alpha"]}), decoy / "part-0.parquet")
    ctx = session(s3, str(decoy).lstrip("/"))
    db = fts.connect(ctx=ctx)
    with pytest.raises(fts.InvalidArgument, match="6 rows where the local files.*hold 1"):
        db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    assert db.table_names() == []
    assert ctx.sql("SELECT count(*) AS n FROM docs").to_pylist() == [{"n": 6}]


@pytest.mark.parametrize("uri", ["s3://bucket/db", "gs://bucket/db", "az://container/db"])
def test_a_database_at_an_object_store_uri_is_refused_not_made_locally(uri: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: connect("s3://bucket/db") made a local folder ./s3:/bucket/db and failed
    at the first data write."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(fts.StorageError, match="object store"):
        fts.connect(uri)
    assert list(tmp_path.iterdir()) == []


def test_a_file_uri_is_a_local_directory(tmp_path: Path) -> None:
    uri = (tmp_path / "my db").as_uri()  # (file:///.../my%20db)
    fts.connect(uri).create_table("t", pa.table({"a": [1]}))
    assert (tmp_path / "my db" / "manifest.json").exists()
    assert fts.connect(str(tmp_path / "my db")).table_names() == ["t"]


def test_a_source_on_an_object_store_is_never_read_as_a_local_path(tmp_path: Path) -> None:
    """Issue 32: db.index_in_place("t", "s3://bucket/data/") read the URI as a relative path."""
    db = fts.connect(tmp_path / "db")
    with pytest.raises(fts.InvalidArgument, match="object store"):
        db.index_in_place("t", "s3://bucket/data/")
    assert db.table_names() == []
