"""A database at an object store's URL (issue 32 item 3), on a real S3-protocol server on
loopback (tests/s3_server.py): written there by the same statements as a directory, or
a directory copied there, it answers every search and plain statement as the directory
does; commits are conditional (two writers: one wins, the other's write is refused and
invisible); every acknowledged insert is a commit; garbage collection spares what a
reader or another writer may still use."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from s3_server import S3Server, s3_server

import datafusion_fts as fts
from datafusion_fts.index.segment import Segment

QUERIES = ("alpha", "beta gamma", "+alpha -delta", '"alpha beta"', "w3 OR w5")


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.client().create_bucket(Bucket="bucket")
        yield server


def _written(path: Path) -> fts.Database:
    return _write(fts.connect(path))


def _written_at(s3: S3Server, prefix: str) -> fts.Database:
    return _write(fts.connect(f"s3://bucket/{prefix}", storage_options=s3.options()))


def _write(db: fts.Database) -> fts.Database:
    """The statements every database of these tests is made by."""
    words = ["alpha", "beta", "gamma", "delta"]
    rows = [f"{words[i % 4]} {words[(i * 7) % 4]} w{i % 9} alpha" if i % 5 else f"beta w{i % 9}" for i in range(2000)]
    docs = db.create_table("docs", pa.table({"id": list(range(2000)), "title": [f"t{i}" for i in range(2000)],
                                             "body": rows}))
    docs.create_index("body", positions=True)
    docs.insert(pa.table({"id": [5000], "title": ["late"], "body": ["alpha beta gamma late"]}))
    # (most rows deleted: OPTIMIZE's segment writes its row lengths compressed)
    db.sql("DELETE FROM docs WHERE id % 97 = 0 OR (id >= 400 AND id < 2000 AND id % 4 > 0)")
    db.sql("CREATE TABLE notes (n INT, body VARCHAR NOT NULL) AS VALUES (1, 'alpha note'), (2, 'other')")
    db.sql("OPTIMIZE docs")  # (its log's rows committed: a copy holds them)
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
    url = s3.upload_directory(tmp_path / "db", "bucket", "copied")
    remote = fts.connect(url, storage_options=s3.options())
    assert remote.table_names() == ["docs", "notes"]
    assert _answers(remote) == expected
    assert remote.read_only is None


def test_a_database_written_at_a_url_answers_as_one_written_in_a_directory(s3: S3Server, tmp_path: Path) -> None:
    """The same statements, one database in a directory and one at a URL: the same
    answers, to the bit, before and after it is opened again (inserts are commits)."""
    local = _written(tmp_path / "db")
    remote = _written_at(s3, "written")
    assert _answers(remote) == _answers(local)
    assert any(Segment.open(seg, remote.store).compressed for seg in remote.manifest.tables["docs"].indexes["body"].segments)
    assert [k for k in _keys(s3, "written/") if k.startswith("written/wal")] == []
    again = fts.connect("s3://bucket/written", storage_options=s3.options())
    assert _answers(again) == _answers(local)
    assert again.sql("SELECT count(*) AS n FROM docs WHERE id = 5000").to_pylist() == [{"n": 1}]


def test_writes_to_a_database_opened_read_only_are_refused_and_change_nothing(s3: S3Server, tmp_path: Path) -> None:
    _written(tmp_path / "db")
    url = s3.upload_directory(tmp_path / "db", "bucket", "refused")
    remote = fts.connect(url, storage_options=s3.options(), read_only=True)
    before, keys = _answers(remote), _keys(s3, "refused/")
    for write in ("INSERT INTO notes VALUES (3, 'x')", "CREATE TABLE t (a INT)", "DELETE FROM docs WHERE id = 1",
                  "OPTIMIZE docs"):
        with pytest.raises(fts.ReadOnlyError, match="read_only=True"):
            remote.sql(write)
    assert _answers(remote) == before and _keys(s3, "refused/") == keys


def test_of_two_writers_one_commits_and_the_other_is_refused_with_nothing_lost(s3: S3Server) -> None:
    """Both read one version; the first commit wins, the second is a ConflictError and
    none of its rows are seen; its next write starts from the winner's version."""
    url = "s3://bucket/two"
    first = fts.connect(url, storage_options=s3.options())
    first.create_table("t", pa.table({"id": [0], "body": ["start"]})).create_index("body")
    second = fts.connect(url, storage_options=s3.options())
    assert second.table("t").count_rows() == 1  # (both at the same version)
    checked = second.store.lock_for_writes
    second.store.lock_for_writes = lambda: False  # type: ignore[method-assign]  (it checked before first committed)
    first.table("t").insert(pa.table({"id": [1], "body": ["alpha from first"]}))
    with pytest.raises(fts.ConflictError, match="another writer"):
        second.table("t").insert(pa.table({"id": [2], "body": ["alpha from second"]}))
    second.store.lock_for_writes = checked  # type: ignore[method-assign]
    third = fts.connect(url, storage_options=s3.options())
    assert sorted(third.table("t").to_arrow().column("id").to_pylist()) == [0, 1]
    second.table("t").insert(pa.table({"id": [3], "body": ["alpha again"]}))  # (from first's version)
    fourth = fts.connect(url, storage_options=s3.options())
    assert sorted(fourth.table("t").to_arrow().column("id").to_pylist()) == [0, 1, 3]
    assert [r["id"] for r in fourth.sql("SELECT id FROM t WHERE MATCH(body, 'alpha') ORDER BY id").to_pylist()] == [1, 3]


def test_racing_inserts_from_two_processes_keep_every_acknowledged_row(s3: S3Server) -> None:
    """Threads of two Databases insert at once: every insert that returned is in the
    database, every refused one (ConflictError) is not, and nothing else is."""
    from concurrent.futures import ThreadPoolExecutor

    url = "s3://bucket/race"
    fts.connect(url, storage_options=s3.options()).create_table("t", pa.table({"id": [-1], "body": ["x"]}))
    dbs = [fts.connect(url, storage_options=s3.options()) for _ in range(2)]

    def insert(i: int) -> int | None:
        try:
            dbs[i % 2].table("t").insert(pa.table({"id": [i], "body": [f"row {i}"]}))
            return i
        except fts.ConflictError:
            return None

    with ThreadPoolExecutor(4) as pool:
        done = [i for i in pool.map(insert, range(24)) if i is not None]
    assert done  # (some won)
    found = fts.connect(url, storage_options=s3.options()).table("t").to_arrow().column("id").to_pylist()
    assert sorted(found) == [-1, *sorted(done)]


def test_garbage_is_collected_only_past_the_grace_period(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files a commit retired stay while readers may use them (fts.gc_grace_seconds), then
    go; a failed write's own files go at once."""
    from datafusion_fts.storage.stores import remote_store

    monkeypatch.setattr(remote_store, "_LISTING_GC_SECONDS", 0.0)
    url = "s3://bucket/gc"
    db = fts.connect(url, storage_options=s3.options(), config={"fts.gc_grace_seconds": 3600})
    t = db.create_table("t", pa.table({"id": [1], "body": ["alpha"]}))
    t.create_index("body")
    t.insert(pa.table({"id": [2], "body": ["beta"]}))
    before = _keys(s3, "gc/")
    db.sql("OPTIMIZE t")  # (merges: the old segments and fragments are retired)
    assert before <= _keys(s3, "gc/")  # (kept: within the grace period)
    db.sql("SET fts.gc_grace_seconds = 0")
    t.insert(pa.table({"id": [3], "body": ["gamma"]}))
    named = {f"gc/{k}" for k in _named_keys(db)}
    assert {k for k in _keys(s3, "gc/") if "/data/" in k or "/index/" in k} == named
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 2, 3]


def _keys(s3: S3Server, prefix: str) -> set[str]:
    pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket="bucket", Prefix=prefix)
    return {o["Key"] for page in pages for o in page.get("Contents", [])}


def _named_keys(db: fts.Database) -> set[str]:
    """The keys of the files the database's manifest names."""
    keys = set()
    for meta in db.state.manifest.tables.values():
        for frag in meta.fragments:
            keys.add(f"data/{frag.id}.parquet")
            if frag.deletes:
                keys.add(f"data/{frag.deletes}.arrow")
        for index in meta.indexes.values():
            for seg in index.segments:
                keys.update(k.split("/", 1)[1] for k in db.store.objects.list(f"index/{seg.id}") for k in [f"x/{k.key}"])
    return keys


def test_rows_only_a_log_holds_are_never_silently_left_out(s3: S3Server, tmp_path: Path) -> None:
    """Inserted rows not yet flushed are in the copy's log only: opening it is refused,
    saying to flush, rather than answering without them."""
    db = fts.connect(tmp_path / "db")
    db.create_table("docs", pa.table({"id": [1], "body": ["alpha"]})).insert(pa.table({"id": [2], "body": ["beta"]}))
    url = s3.upload_directory(tmp_path / "db", "bucket", "logged")
    with pytest.raises(fts.StorageError, match="write-ahead logs hold rows.*OPTIMIZE"):
        fts.connect(url, storage_options=s3.options())


def test_a_url_without_a_database_is_an_error_naming_it_when_read_only(s3: S3Server) -> None:
    with pytest.raises(fts.StorageError, match="no database at s3://bucket/nothing-here"):
        fts.connect("s3://bucket/nothing-here", storage_options=s3.options(), read_only=True)


def test_a_clusters_shared_store_at_a_url_reads_what_the_directory_holds(s3: S3Server, tmp_path: Path) -> None:
    """Ray workers open the database where the driver does (storage/stores/shared.py):
    at a URL, through the same object interface and options, never a local path; its
    segments and fragments read alike, a damaged footer is an error, writes are refused."""
    from datafusion_fts.storage.stores.shared import SharedLocation, open_shared

    local = _written(tmp_path / "db")
    url = s3.upload_directory(tmp_path / "db", "bucket", "shared")
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


def test_a_database_written_at_a_url_and_copied_to_a_directory_answers_alike(s3: S3Server, tmp_path: Path) -> None:
    """A store writes each segment as one object (its bundle: one request, not a dozen);
    a directory reads that layout too, so a database moves either way."""
    remote = _written_at(s3, "moved")
    bundles = [k for k in _keys(s3, "moved/index/") if k.endswith("/bundle")]
    assert bundles and all(k.count("/") == 3 for k in bundles)
    assert not [k for k in _keys(s3, "moved/index/") if k.endswith(".arrow")]
    client = s3.client()
    for key in _keys(s3, "moved/"):
        target = tmp_path / "moved" / key.split("/", 1)[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        client.download_file("bucket", key, str(target))
    assert _answers(fts.connect(tmp_path / "moved")) == _answers(remote)


def test_a_damaged_segment_bundle_is_a_storage_error_naming_it() -> None:
    from datafusion_fts.storage.files.segment_bundle import pack, unpack

    files = {"a.arrow": b"x" * 13, "checksums.ipc": b"yz"}
    data = pack(files)
    assert {k: bytes(v) for k, v in unpack(data, "here").items()} == files
    for damaged in (data[:20], b"NOTABNDL" + data[8:], data[:-7]):
        with pytest.raises(fts.StorageError, match="damaged index segment bundle here"):
            unpack(damaged, "here")


def test_a_session_made_at_open_is_given_the_bucket_without_asking(s3: S3Server, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening a database at a URL with no session of the user's gives the session it makes
    a store for the bucket without first asking whether it reaches one (a read of the
    data directory's schema: a request or two at every open); a session of the user's
    is asked, so a store they registered is kept. Both answer plain SQL alike."""
    import datafusion

    url = "s3://bucket/no-probe"
    expected = _answers(_write(fts.connect(url, storage_options=s3.options())))
    probes: list[str] = []
    real = datafusion.SessionContext.read_parquet
    monkeypatch.setattr(datafusion.SessionContext, "read_parquet",
                        lambda self, path, *a, **k: probes.append(path) or real(self, path, *a, **k))
    db = fts.connect(url, storage_options=s3.options())
    assert probes == [] and _answers(db) == expected
    ctx = datafusion.SessionContext()
    ctx.register_object_store("s3://", s3.store("bucket"), "bucket")
    assert _answers(fts.connect(url, storage_options=s3.options(), ctx=ctx)) == expected and probes


def test_a_file_id_handed_out_again_is_read_as_its_new_file(s3: S3Server) -> None:
    """A write that failed leaves its file ids to the next one: a page reader of the failed
    write's fragment, kept by id, must not stand for the new fragment of that id (it read
    the old object's version: 'rewritten since it was listed', which made concurrent
    inserts fail once each write merged fragments)."""
    import numpy as np

    db = fts.connect("s3://bucket/reused", storage_options=s3.options())
    db.create_table("t", pa.table({"id": [0], "body": ["x"]}))
    store = db.store
    schema = pa.schema([pa.field("_rowid", pa.int64(), False), pa.field("id", pa.int64()), pa.field("body", pa.string())])

    def fragment(body: str) -> list[pa.RecordBatch]:
        return [pa.RecordBatch.from_arrays([pa.array(np.arange(2)), pa.array([7, 8]), pa.array([body] * 2)],
                                           schema=schema)]

    frag_id, _ = db.manifest.file_id("frag")
    store.write_fragment(frag_id, schema, fragment("failed"))
    assert {b for batch in store.iter_fragment(frag_id, ["body"], 8) for b in batch.column(0).to_pylist()} == {"failed"}
    store.collect_garbage(db.manifest.file_ids())  # (the write failed: its file goes, its id is free)
    store.write_fragment(frag_id, schema, fragment("again"))
    assert {b for batch in store.iter_fragment(frag_id, ["body"], 8) for b in batch.column(0).to_pylist()} == {"again"}
