"""A database at an object store's URL (issue 32 item 3, read only): a database directory
written here and copied to a real S3-protocol server on loopback (tests/s3_server.py),
opened by its URL, answers every search and plain statement as the directory does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from s3_server import S3Server, s3_server

import datafusion_fts as fts

QUERIES = ("alpha", "beta gamma", "+alpha -delta", '"alpha beta"', "w3 OR w5")


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.client().create_bucket(Bucket="bucket")
        yield server


def _copy(s3: S3Server, directory: Path, prefix: str) -> str:
    """The database directory's files to ``s3://bucket/<prefix>/``, as a user copies it."""
    client = s3.client()
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            client.upload_file(str(path), "bucket", f"{prefix}/{path.relative_to(directory).as_posix()}")
    return f"s3://bucket/{prefix}"


def _written(path: Path) -> fts.Database:
    db = fts.connect(path)
    words = ["alpha", "beta", "gamma", "delta"]
    rows = [f"{words[i % 4]} {words[(i * 7) % 4]} w{i % 9} alpha" if i % 5 else f"beta w{i % 9}" for i in range(2000)]
    docs = db.create_table("docs", pa.table({"id": list(range(2000)), "title": [f"t{i}" for i in range(2000)],
                                             "body": rows}))
    docs.create_index("body", positions=True)
    docs.insert(pa.table({"id": [5000], "title": ["late"], "body": ["alpha beta gamma late"]}))
    db.sql("DELETE FROM docs WHERE id % 97 = 0")
    db.sql("CREATE TABLE notes (n INT, body VARCHAR NOT NULL) AS VALUES (1, 'alpha note'), (2, 'other')")
    db.sql("OPTIMIZE docs")  # (its log's rows committed: the copy holds them)
    db.sql("OPTIMIZE notes")
    return db


def _answers(db: fts.Database) -> list:
    out = []
    for q in QUERIES:
        out.append(db.sql(f"SELECT id, title, score() AS s FROM docs WHERE MATCH(body, '{q}') "
                          "ORDER BY s DESC, id LIMIT 15").to_pylist())
    out.append(db.sql("SELECT count(*) AS n, sum(id) AS s FROM docs").to_pylist())
    out.append(db.sql("SELECT n, body FROM notes ORDER BY n").to_pylist())
    out.append(db.table("docs").search("alpha", limit=5, columns=["id", "body"]).to_pylist())
    return out


def test_a_database_copied_to_the_store_answers_as_its_directory(s3: S3Server, tmp_path: Path) -> None:
    local = _written(tmp_path / "db")
    expected = _answers(local)
    url = _copy(s3, tmp_path / "db", "copied")
    remote = fts.connect(url, storage_options=s3.options())
    assert remote.table_names() == ["docs", "notes"]
    assert _answers(remote) == expected
    assert remote.read_only is not None and "object store" in remote.read_only


def test_writes_to_a_database_at_a_url_are_refused_and_change_nothing(s3: S3Server, tmp_path: Path) -> None:
    _written(tmp_path / "db")
    url = _copy(s3, tmp_path / "db", "refused")
    remote = fts.connect(url, storage_options=s3.options())
    before = _answers(remote)
    for write in ("INSERT INTO notes VALUES (3, 'x')", "CREATE TABLE t (a INT)", "DELETE FROM docs WHERE id = 1",
                  "OPTIMIZE docs"):
        with pytest.raises(fts.ReadOnlyError, match="object store"):
            remote.sql(write)
    assert _answers(remote) == before
    keys = {o["Key"] for o in s3.client().list_objects_v2(Bucket="bucket", Prefix="refused/")["Contents"]}
    assert keys == {f"refused/{p.relative_to(tmp_path / 'db').as_posix()}" for p in (tmp_path / "db").rglob("*")
                    if p.is_file()}


def test_rows_only_a_log_holds_are_never_silently_left_out(s3: S3Server, tmp_path: Path) -> None:
    """Inserted rows not yet flushed are in the copy's log only: opening it is refused,
    saying to flush, rather than answering without them."""
    db = fts.connect(tmp_path / "db")
    db.create_table("docs", pa.table({"id": [1], "body": ["alpha"]})).insert(pa.table({"id": [2], "body": ["beta"]}))
    url = _copy(s3, tmp_path / "db", "logged")
    with pytest.raises(fts.StorageError, match="write-ahead logs hold rows.*OPTIMIZE"):
        fts.connect(url, storage_options=s3.options())


def test_a_url_without_a_database_is_an_error_naming_it(s3: S3Server) -> None:
    with pytest.raises(fts.StorageError, match="no database at s3://bucket/nothing-here"):
        fts.connect("s3://bucket/nothing-here", storage_options=s3.options())


def test_a_clusters_shared_store_at_a_url_reads_what_the_directory_holds(s3: S3Server, tmp_path: Path) -> None:
    """Ray workers open the database where the driver does (storage/stores/shared.py):
    at a URL, through the same object interface and options, never a local path; its
    segments and fragments read alike, a damaged footer is an error, writes are refused."""
    from datafusion_fts.storage.stores.shared import SharedLocation, open_shared

    local = _written(tmp_path / "db")
    url = _copy(s3, tmp_path / "db", "shared")
    meta = local.table("docs").snapshot().meta
    directory = open_shared(SharedLocation(str(tmp_path / "db")))
    remote = open_shared(SharedLocation(url, tuple(sorted(s3.options().items()))))
    assert type(remote).__name__ == "RemoteStore" and repr(SharedLocation(url, (("secret", "x"),))).count("x") == 0
    for seg in meta.indexes["body"].segments:
        mine, theirs = directory.read_segment(seg.id, seg.checksums)[0], remote.read_segment(seg.id, seg.checksums)[0]
        assert {k: v.to_pylist() for k, v in theirs.items()} == {k: v.to_pylist() for k, v in mine.items()}
    remote.note_footers(meta.footer_crcs())
    frag = meta.fragments[0].id
    assert [b.to_pylist() for b in remote.iter_fragment(frag, ["id", "body"], 300)] == [
        b.to_pylist() for b in directory.iter_fragment(frag, ["id", "body"], 300)]
    with pytest.raises(fts.ReadOnlyError):
        remote.write_segment("seg-99999999", {})
    data = bytearray((tmp_path / "db" / "data" / f"{frag}.parquet").read_bytes())
    data[len(data) - 8 - int.from_bytes(data[-8:-4], "little") + 20] ^= 0x10
    s3.client().put_object(Bucket="bucket", Key=f"shared/data/{frag}.parquet", Body=bytes(data))
    damaged = open_shared(SharedLocation(url, tuple(sorted(s3.options().items()))))
    damaged.note_footers(meta.footer_crcs())
    with pytest.raises(fts.StorageError, match="footer's crc32"):
        list(damaged.iter_fragment(frag, ["id"], 300))
