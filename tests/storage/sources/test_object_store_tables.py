"""Tables on an object store (issue 32), against a real S3-protocol server on loopback
(tests/s3_server.py): the user's Parquet files indexed in place where they lie, found,
read and searched as local files are; a remote path is never read as a local one
(DataFusion's plan names an object store's file by its path in the bucket, which a local
file may share)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import datafusion
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from s3_server import S3Server, s3_server

import datafusion_fts as fts

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


def _top(db: fts.Database, query: str, k: int = 10) -> list[tuple]:
    rows = db.sql(f"SELECT id, body, score() AS s FROM docs WHERE MATCH(body, '{query}') "
                  f"ORDER BY s DESC, id LIMIT {k}").to_pylist()
    return [(r["id"], r["body"], r["s"]) for r in rows]


CORPUS = [pa.table({"id": list(range(lo, lo + 400)),
                    "body": [f"w{i % 17} w{i % 5} alpha{'' if i % 3 else ' beta'}" for i in range(lo, lo + 400)]})
          for lo in (0, 400, 800)]


def _put_corpus(s3: S3Server, prefix: str, local: Path) -> None:
    """The same three files on the bucket under ``prefix`` and in the directory ``local``,
    with an offset index and small pages (read page by page), as DataFusion writes them."""
    local.mkdir(parents=True, exist_ok=True)
    options = {"write_page_index": True, "data_page_size": 512, "use_dictionary": ["id"]}
    for i, table in enumerate(CORPUS):
        s3.put_parquet("bucket", f"{prefix}/part-{i}.parquet", table, **options)
        pq.write_table(table, local / f"part-{i}.parquet", **options)


def test_a_table_on_s3_is_indexed_in_place_and_answers_as_the_same_files_on_disk(s3: S3Server, tmp_path: Path) -> None:
    """Issue 32: CREATE FULLTEXT INDEX on a table the user registered on S3 indexes the
    bucket's files where they lie; every answer is the local copy's, to the bit."""
    _put_corpus(s3, "same", tmp_path / "same")
    ctx = datafusion.SessionContext()
    ctx.register_object_store("s3://", s3.store("bucket"), "bucket")
    ctx.register_parquet("docs", "s3://bucket/same/")
    remote = fts.connect(tmp_path / "remote.db", ctx=ctx, storage_options=s3.options())
    remote.sql("CREATE FULLTEXT INDEX ON docs (body)")
    assert remote.state.manifest.tables["docs"].source == "s3://bucket/same/"
    local_ctx = datafusion.SessionContext()
    local_ctx.register_parquet("docs", str(tmp_path / "same"))
    local = fts.connect(tmp_path / "local.db", ctx=local_ctx)
    local.sql("CREATE FULLTEXT INDEX ON docs (body)")
    for query in ("w3", "alpha beta", "w4 w16", "+beta -w2"):
        assert _top(remote, query, 25) == _top(local, query, 25)
    assert remote.sql("SELECT count(*) AS n FROM docs WHERE id % 7 = 0").to_pylist() == [{"n": 172}]
    assert ctx.sql("SELECT count(*) AS n FROM docs").to_pylist() == [{"n": 1200}]


def test_new_and_rewritten_objects_are_found_as_local_files_are(s3: S3Server, tmp_path: Path) -> None:
    """Listed at every query (fts.remote_source_refresh_seconds = 0), an object added
    after the index is searched at once (the unindexed tail), then indexed by OPTIMIZE;
    an object rewritten is another file: its old rows are gone, its new ones found (its
    ETag differs)."""
    _put_corpus(s3, "grow", tmp_path / "grow")
    db = fts.connect(tmp_path / "db", storage_options=s3.options(), config={"fts.remote_source_refresh_seconds": 0})
    db.index_in_place("docs", "s3://bucket/grow")
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    assert [r[0] for r in _top(db, "zeta")] == []
    s3.put_parquet("bucket", "grow/part-3.parquet", pa.table({"id": [5000], "body": ["zeta alpha"]}))
    assert [r[0] for r in _top(db, "zeta")] == [5000]
    db.sql("OPTIMIZE docs")
    assert [r[0] for r in _top(db, "zeta")] == [5000]
    s3.put_parquet("bucket", "grow/part-0.parquet", pa.table({"id": [6000, 6001], "body": ["zeta", "w3"]}))
    assert [r[0] for r in _top(db, "zeta")] == [6000, 5000]
    assert not any(r[0] < 400 for r in _top(db, "w3", 1000))
    assert db.sql("SELECT count(*) AS n FROM docs").to_pylist() == [{"n": 803}]


def test_a_listing_is_reused_for_a_second_and_a_file_gone_meanwhile_is_never_read(
        s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """By default a remote source's listing serves the queries of the next second (a LIST
    costs milliseconds): an object added is found after it; an object deleted or rewritten
    meanwhile is never read as listed: the query lists again and answers from what is
    there (no cache of pages here: fts.object_cache_bytes = 0)."""
    from datafusion_fts.storage.sources import in_place

    now = [1000.0]
    monkeypatch.setattr(in_place.time, "monotonic", lambda: now[0])
    _put_corpus(s3, "reuse", tmp_path / "reuse")
    db = fts.connect(tmp_path / "db", storage_options=s3.options(), config={"fts.object_cache_bytes": 0})
    db.index_in_place("docs", "s3://bucket/reuse")
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    assert _top(db, "zeta") == []
    s3.put_parquet("bucket", "reuse/part-3.parquet", pa.table({"id": [5000], "body": ["zeta alpha"]}))
    now[0] += 0.5
    assert _top(db, "zeta") == []  # (the listing of half a second ago)
    now[0] += 0.6
    assert [r[0] for r in _top(db, "zeta")] == [5000]
    s3.client().delete_object(Bucket="bucket", Key="reuse/part-0.parquet")
    s3.put_parquet("bucket", "reuse/part-1.parquet", pa.table({"id": [6000], "body": ["zeta w1"]}))
    ids = {r[0] for r in _top(db, "alpha", 2000)}  # (within the second: the listing is stale)
    assert 5000 in ids and not ids & set(range(0, 800))
    assert [r[0] for r in _top(db, "zeta")] == [5000, 6000] or [r[0] for r in _top(db, "zeta")] == [6000, 5000]
    assert db.sql("SELECT count(*) AS n FROM docs").to_pylist() == [{"n": 402}]


def test_the_environment_reaches_the_bucket_and_the_table_reopens(s3: S3Server, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """With the store's standard environment variables and no options, both our reads and
    DataFusion's scan of the table (a store registered on the session for the bucket)
    reach it, after the database is opened again too."""
    for name, value in s3.environment().items():
        monkeypatch.setenv(name, value)
    _put_corpus(s3, "env", tmp_path / "env")
    db = fts.connect(tmp_path / "db")
    db.index_in_place("docs", "s3://bucket/env/")
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    expected = _top(db, "w5 beta")
    assert expected
    del db
    again = fts.connect(tmp_path / "db")
    assert _top(again, "w5 beta") == expected
    assert again.ctx.sql("SELECT count(*) AS n FROM docs").to_pylist() == [{"n": 1200}]


def test_an_object_rewritten_under_a_reader_is_never_read_as_the_one_listed(s3: S3Server, tmp_path: Path) -> None:
    """Each read asks for the listed version (If-Match its ETag): a rewritten object is a
    stale snapshot (the query runs again on a new listing), never another file's pages."""
    from datafusion_fts.errors import StaleSnapshotError
    from datafusion_fts.storage.sources.object_sources import SourceStores

    s3.put_parquet("bucket", "stale/part-0.parquet", CORPUS[0])
    stores = SourceStores(s3.options())
    [(key, size, etag)] = stores.listing("s3://bucket/stale/")
    file = stores.file("s3://bucket/stale/", key, size, etag)
    assert file.read(4, 0) == b"PAR1"
    s3.put_parquet("bucket", "stale/part-0.parquet", CORPUS[1])
    with pytest.raises(StaleSnapshotError, match="s3://bucket/stale/part-0.parquet changed"):
        file.read(4, 0)


def test_a_bucket_this_database_cannot_reach_is_a_storage_error_naming_it(s3: S3Server, tmp_path: Path) -> None:
    """The session reaches the bucket, the database's options do not (another endpoint):
    a StorageError naming the object and what to configure; nothing is committed."""
    options = {**s3.options(), "endpoint": "http://127.0.0.1:9", "timeout": "2s", "connect_timeout": "1s"}
    db = fts.connect(tmp_path / "db", ctx=session(s3, "unreached"), storage_options=options)
    with pytest.raises(fts.StorageError, match=r"s3://bucket/.*storage_options"):
        db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    assert db.table_names() == []


def test_a_database_at_an_unreachable_uri_is_an_error_naming_it_never_a_local_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: connect("s3://bucket/db") made a local folder ./s3:/bucket/db and failed
    at the first data write. Now the URL is the store's (tests/storage/stores/
    test_remote_store.py), here one that does not answer."""
    monkeypatch.chdir(tmp_path)
    options = {"endpoint": "http://127.0.0.1:9", "access_key_id": "k", "secret_access_key": "s",
               "region": "us-east-1", "allow_http": "true", "max_retries": "0"}
    with pytest.raises(fts.StorageError, match="s3://bucket/db"):
        fts.connect("s3://bucket/db", storage_options=options)
    assert list(tmp_path.iterdir()) == []


def test_a_file_uri_is_a_local_directory(tmp_path: Path) -> None:
    uri = (tmp_path / "my db").as_uri()  # (file:///.../my%20db)
    fts.connect(uri).create_table("t", pa.table({"a": [1]}))
    assert (tmp_path / "my db" / "manifest.json").exists()
    assert fts.connect(str(tmp_path / "my db")).table_names() == ["t"]


def test_a_source_on_an_object_store_is_never_read_as_a_local_path(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: db.index_in_place("t", "s3://bucket/data/") read the URI as a relative
    path. Now it is the bucket's, here unreachable: an error naming it, no local folder."""
    monkeypatch.chdir(tmp_path)
    options = {"endpoint": "http://127.0.0.1:9", "access_key_id": "k", "secret_access_key": "s",
               "region": "us-east-1", "allow_http": "true", "timeout": "2s", "connect_timeout": "1s"}
    db = fts.connect(tmp_path / "db", storage_options=options)
    with pytest.raises(fts.StorageError, match="s3://bucket/data"):
        db.index_in_place("t", "s3://bucket/data/")
    assert db.table_names() == [] and sorted(p.name for p in tmp_path.iterdir()) == ["db"]


def test_a_warm_query_reads_no_range_twice_and_the_cache_setting_bounds_it(s3: S3Server, tmp_path: Path) -> None:
    """Pages of the bucket's files read once are kept (fts.object_cache_bytes): the same
    query again reads nothing from the store; with the setting 0 nothing is kept."""
    _put_corpus(s3, "warm", tmp_path / "warm")
    db = fts.connect(tmp_path / "db", storage_options=s3.options())
    db.index_in_place("docs", "s3://bucket/warm/")
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    cache = db.sources.cache
    first = _top(db, "w7 beta")
    misses = cache.misses
    assert _top(db, "w7 beta") == first and cache.misses == misses and cache.hits
    db.sql("SET fts.object_cache_bytes = 0")
    assert _top(db, "w7 beta") == first and cache.misses > misses
    misses = cache.misses
    assert _top(db, "w7 beta") == first and cache.misses > misses


def _write_tree(root: Path, kind: str) -> None:
    """Hive-partitioned files (``year=.../region=...``), Parquet or CSV (quoted commas,
    doubled quotes, a newline inside a value, an empty value), and a file outside the
    partition directories that is not the table's."""
    parts = {(2023, "eu"): range(0, 150), (2024, "eu"): range(150, 260), (2024, "us"): range(260, 400)}
    for (year, region), ids in parts.items():
        where = root / f"year={year}" / f"region={region}"
        where.mkdir(parents=True)
        bodies = [f"w{i % 13} w{i % 7}{' alpha' if i % 3 else ''}" for i in ids]
        if kind == "parquet":
            pq.write_table(pa.table({"id": list(ids), "body": bodies}), where / "part.parquet")
        else:
            lines = [f'{i},"{b}{", x" if i % 11 == 0 else ""}{chr(10) + "q" if i % 17 == 0 else ""}"' for i, b in
                     zip(ids, bodies)]
            lines[3] = f'{ids[3]},'  # (an empty value: null)
            lines[5] = f'{ids[5]},"alpha ""quoted"""'
            (where / "part.csv").write_text("id,body\n" + "\n".join(lines) + "\n")
    loose = root / ("loose.parquet" if kind == "parquet" else "loose.csv")
    if kind == "parquet":
        pq.write_table(pa.table({"id": [9999], "body": ["alpha"]}), loose)
    else:
        loose.write_text("id,body\n9999,alpha\n")


def _register(ctx: datafusion.SessionContext, kind: str, location: str) -> None:
    partitions = [("year", pa.int32()), ("region", pa.string())]
    if kind == "parquet":
        ctx.register_parquet("ev", location, table_partition_cols=partitions)
    else:
        ctx.register_csv("ev", location, options=datafusion.CsvReadOptions(table_partition_cols=partitions))


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_partitioned_and_csv_tables_on_s3_answer_as_the_same_files_on_disk(s3: S3Server, tmp_path: Path,
                                                                           kind: str) -> None:
    """Issue 32: a session's table on S3 with Hive partition columns, of Parquet or CSV
    files, is indexed in place where it lies (these were refused: "tables on object stores
    are indexed in place without them for now", "CSV files on an object store cannot be
    indexed in place"), and answers every statement as the same files on local disk do,
    scores to the bit, on every plan; and as DataFusion reads the bucket."""
    _write_tree(tmp_path / "tree", kind)
    location = s3.upload_directory(tmp_path / "tree", "bucket", f"hive-{kind}") + "/"
    remote_ctx = datafusion.SessionContext()
    remote_ctx.register_object_store("s3://", s3.store("bucket"), "bucket")
    _register(remote_ctx, kind, location)
    own = remote_ctx.sql("SELECT id, body, year, region FROM ev ORDER BY id").to_pylist()
    remote = fts.connect(tmp_path / "remote.db", ctx=remote_ctx, storage_options=s3.options())
    remote.sql("CREATE FULLTEXT INDEX ON ev (body)")
    meta = remote.manifest.tables["ev"]
    assert (meta.source, meta.partitions) == (location, ("year", "region"))
    assert meta.csv == (fts.CsvFormat(",", True) if kind == "csv" else None)
    assert len(meta.fragments) == 3  # (not the loose file)
    local_ctx = datafusion.SessionContext()
    _register(local_ctx, kind, str(tmp_path / "tree"))
    local = fts.connect(tmp_path / "local.db", ctx=local_ctx)
    local.sql("CREATE FULLTEXT INDEX ON ev (body)")
    assert remote.sql("SELECT id, body, year, region FROM ev ORDER BY id").to_pylist() == own
    assert len(own) == 400 and own[5]["body"] == ('alpha "quoted"' if kind == "csv" else own[5]["body"])
    sql = ("SELECT id, body, year, region, score() AS s FROM ev WHERE MATCH(body, '{q}') {where}"
           "ORDER BY s DESC, id LIMIT 30")
    for plan in ("auto", "indexed", "flat_scan"):
        for db in (remote, local):
            db.settings.set("fts.force_plan", plan)
        for q, where in (("alpha", ""), ("w3 w5", "AND year = 2024 "), ("+alpha -w2", "AND region = 'eu' ")):
            text = sql.format(q=q, where=where)
            assert remote.sql(text).to_pylist() == local.sql(text).to_pylist(), (plan, q)
    found = remote.table("ev").search("w12", limit=None, columns=["id", "region"]).to_pylist()
    assert sorted((r["id"], r["region"]) for r in found) == sorted(
        (r["id"], r["region"]) for r in own if r["body"] and "w12" in r["body"].split())


def test_csv_objects_indexed_by_url_are_found_rewritten_and_refused_as_local_files_are(s3: S3Server,
                                                                                      tmp_path: Path) -> None:
    """A directory of ``.csv`` objects given by URL is CSV with a header, as a local one
    is; an object added is searched at once, one rewritten is read as its new version
    (another ETag), and one whose columns are not the table's is a StorageError naming it."""
    client = s3.client()
    client.put_object(Bucket="bucket", Key="csv/a.csv", Body=b'id,title,body\n1,"a, b",alpha beta\n2,,beta\n')
    client.put_object(Bucket="bucket", Key="csv/b.csv", Body=b"id,title,body\n3,c,alpha alpha\n")
    db = fts.connect(tmp_path / "db", storage_options=s3.options(), config={"fts.remote_source_refresh_seconds": 0})
    t = db.index_in_place("docs", "s3://bucket/csv/")
    assert t.snapshot().meta.csv == fts.CsvFormat(",", True) and t.schema.field("id").type == pa.int64()
    t.create_index("body")

    def top(query: str) -> list[tuple]:
        return [(r["id"], r["title"]) for r in t.search(query, columns=["id", "title"]).to_pylist()]

    assert top("alpha") == [(3, "c"), (1, "a, b")]
    client.put_object(Bucket="bucket", Key="csv/c.csv", Body=b"id,title,body\n4,d,alpha omega\n")
    assert top("omega") == [(4, "d")]
    client.put_object(Bucket="bucket", Key="csv/a.csv", Body=b"id,title,body\n7,g,omega omega\n")
    assert top("omega") == [(7, "g"), (4, "d")] and top("beta") == []
    assert db.sql("SELECT id, title FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC").to_pylist() == [
        {"id": 3, "title": "c"}, {"id": 4, "title": "d"}]
    client.put_object(Bucket="bucket", Key="csv/d.csv", Body=b"id,text\n9,alpha\n")
    with pytest.raises(fts.StorageError, match=r"s3://bucket/csv/d\.csv has columns \['id', 'text'\]"):
        top("alpha")
