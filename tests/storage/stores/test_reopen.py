"""A directory database (docs/design.md: "The Python API"; "Errors"; "Commits, garbage collection
and recovery"): tables created from every kind of data keep their rows and row ids across inserts
and reopening, search gives bit-identical results after reopening, leftovers of writes that never
committed are removed at open, a broken manifest is a StorageError, and a failing write leaves no
trace."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import shutil
import weakref
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from reference import RefTable, ref_search

import datafusion_fts as fts
from datafusion_fts.query import Boolean, Match, MultiMatch, Phrase, Prefix
from datafusion_fts.storage.files.manifest import CHECKSUM, checksum, log_file_name
from datafusion_fts.storage.stores import append_rows

BODIES = [
    "alpha beta gamma",
    "beta beta",
    None,
    "",
    "Alpha, alpha! delta",
    "gamma delta epsilon alpha",
    "beta gamma",  # ties with row 1 for some queries
    "straße café İstanbul",
    "alpha beta gamma",  # same text as row 0: a tie broken by row id
]
TITLES = ["one", "two", "three", None, "five", "six", "seven", "eight", "nine"]


def docs(start: int = 0, bodies: list[str | None] = BODIES) -> pa.Table:
    n = len(bodies)
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "title": pa.array((TITLES * 10)[:n], pa.string()),
            "body": pa.array(bodies, pa.string()),
        }
    )


QUERIES = [
    Match("body", "alpha"),
    Match("body", "beta gamma"),
    Match("body", "alpha delta", operator="and"),
    Phrase("body", "beta gamma"),
    Prefix("body", "gam"),
    Match("body", "alpah", fuzziness=1),
    Boolean(must=[Match("body", "gamma")], must_not=[Match("body", "epsilon")]),
    MultiMatch("alpha one", ("title", "body")),
]


def hits(t: fts.Table, query) -> list[tuple[int, str]]:
    """(row id, repr of the score) of every match: repr keeps every bit of the float."""
    result = t.search(query, limit=None, columns=[])
    return list(
        zip(
            result.column("_rowid").to_pylist(),
            map(repr, result.column("_score").to_pylist()),
            strict=True,
        )
    )


def ref_hits(rows: pa.Table, query) -> list[tuple[int, str]]:
    ref = RefTable(
        rows={
            r: {"title": rows.column("title")[r].as_py(), "body": rows.column("body")[r].as_py()}
            for r in range(rows.num_rows)
        }
    )
    return [(r, repr(s)) for r, s in ref_search(ref, query)]


def listing(root: Path) -> dict[str, str]:
    """Every file under ``root`` with a digest of its bytes."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def reopen(path: Path, old: weakref.ref) -> fts.Database:
    """Open ``path`` again once the caller has dropped every reference to the database
    ``old`` refers to (as a process that closed it would have)."""
    gc.collect()
    assert old() is None, "the old Database object is still alive"
    return fts.connect(path)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "my.db"


# ------------------------------------------------------------------ create, insert


def rows_of(t: fts.Table) -> list[dict]:
    return t.to_arrow().to_pylist()


def expected_rows(data: pa.Table, first_rowid: int = 0) -> list[dict]:
    return [{"_rowid": first_rowid + i, **row} for i, row in enumerate(data.to_pylist())]


def test_create_from_table_parquet_and_reader(path, tmp_path):
    db = fts.connect(path)
    data = docs()
    parquet = tmp_path / "docs.parquet"
    pq.write_table(data, parquet, row_group_size=4)
    reader = pa.RecordBatchReader.from_batches(data.schema, data.to_batches(max_chunksize=2))

    created = {
        "from_table": db.create_table("from_table", data),
        "from_parquet": db.create_table("from_parquet", str(parquet)),
        "from_path": db.create_table("from_path", parquet),  # a PathLike works too
        "from_reader": db.create_table("from_reader", reader),
    }
    for name, t in created.items():
        assert rows_of(t) == expected_rows(data), name
        assert t.schema == data.schema
    assert db.table_names() == sorted(created)


def test_row_ids_continue_across_inserts_of_every_kind(path, tmp_path):
    db = fts.connect(path)
    t = db.create_table("docs", docs(0))
    more = docs(100, ["x y", None, "z"])
    parquet = tmp_path / "more.parquet"
    pq.write_table(more, parquet)

    assert t.insert(more) == 3
    assert t.insert(str(parquet)) == 3
    assert t.insert(pa.RecordBatchReader.from_batches(more.schema, more.to_batches(1))) == 3
    # columns in another order and types that cast losslessly are accepted
    assert (
        t.insert(
            more.select(["body", "id", "title"]).cast(
                pa.schema([("body", pa.large_string()), ("id", pa.int32()), ("title", pa.string())])
            )
        )
        == 3
    )

    n = len(BODIES)
    assert rows_of(t) == expected_rows(docs(0)) + [
        row for k in range(4) for row in expected_rows(more, n + 3 * k)
    ]
    old = weakref.ref(db)
    del db, t
    db = reopen(path, old)
    t = db.table("docs")
    assert [r["_rowid"] for r in rows_of(t)] == list(range(n + 12))
    assert t.insert(more) == 3  # after reopening, ids go on from the last one
    assert [r["_rowid"] for r in rows_of(t)][-3:] == [n + 12, n + 13, n + 14]


# ------------------------------------------------------------------------- reopen


def build(path: Path) -> fts.Database:
    """Two tables: ``docs`` with an index on body and an unindexed tail; ``empty``."""
    db = fts.connect(path)
    t = db.create_table("docs", docs(0))
    t.create_index("body", positions=True)
    t.insert(docs(50, ["alpha tail", "beta gamma alpha", None]))  # not covered by the index
    db.create_table("empty", schema=pa.schema([("body", pa.string())]))
    return db


def state(db: fts.Database) -> dict:
    t = db.table("docs")
    return {
        "tables": db.table_names(),
        "rows": {name: db.table(name).to_arrow() for name in db.table_names()},
        "hits": [hits(t, q) for q in QUERIES],
        "indexes": db.manifest.tables["docs"].indexes,
        "version": db.manifest.version,
    }


def test_reopen_gives_the_same_tables_rows_and_bit_identical_scores(path):
    db = build(path)
    before = state(db)
    old = weakref.ref(db)
    del db
    db = reopen(path, old)
    after = state(db)
    assert after == before
    # ... and those scores are the reference's, bit for bit (statistics over every row)
    all_rows = db.table("docs").to_arrow()
    for query, got in zip(QUERIES, after["hits"], strict=True):
        assert got == ref_hits(all_rows, query), query
    assert db.table("empty").search(Match("body", "alpha")).num_rows == 0


def test_reopen_after_the_index_covers_every_row(path):
    db = build(path)
    db.table("docs").create_index("body", positions=True)
    before = state(db)
    old = weakref.ref(db)
    del db
    assert state(reopen(path, old)) == before


def test_sql_sees_rowid_and_columns_after_reopen(path):
    build(path)
    db = fts.connect(path)
    assert db.ctx.sql("SELECT * FROM docs").schema().names == ["id", "title", "body"]
    result = db.sql("SELECT _rowid, * FROM docs ORDER BY _rowid").to_arrow_table()
    assert result.column_names == ["_rowid", "id", "title", "body"]
    assert result.column("_rowid").to_pylist() == list(range(len(BODIES) + 3))
    assert result.column("body").to_pylist() == BODIES + ["alpha tail", "beta gamma alpha", None]
    picked = db.sql("SELECT id FROM docs WHERE _rowid = 4").to_arrow_table()
    assert picked.column("id").to_pylist() == [4]
    empty = db.ctx.sql("SELECT * FROM empty").to_arrow_table()
    assert empty.num_rows == 0 and empty.column_names == ["body"]


def test_drop_table_survives_reopen(path):
    db = build(path)
    frags = set(os.listdir(path / "data"))
    db.drop_table("docs")
    old = weakref.ref(db)
    del db
    db = reopen(path, old)
    assert db.table_names() == ["empty"]
    assert not db.ctx.table_exist("docs")
    # Its files are retired, kept for readers of older versions in other processes ...
    assert set(os.listdir(path / "data")) == frags and os.listdir(path / "index")
    old = weakref.ref(db)
    del db
    gc.collect()
    assert old() is None
    fts.connect(path, config={"fts.gc_grace_seconds": 0})
    assert set(os.listdir(path / "data")) < frags  # ... until the grace period is over
    assert os.listdir(path / "index") == []


# ---------------------------------------------------------------- crash leftovers


def simulate_uncommitted_writes(path: Path, next_id: int) -> list[Path]:
    """What a crash between writing files and committing the manifest leaves behind, with
    the file ids the next write will reuse."""
    data, index = path / "data", path / "index"
    orphan_frag = data / f"frag-{next_id:08d}.parquet"  # fully written, never committed
    pq.write_table(
        pa.table(
            {
                "_rowid": pa.array([0, 1], pa.int64()),
                "id": pa.array([666, 667], pa.int64()),
                "title": ["ghost", "ghost"],
                "body": ["alpha alpha alpha ghost", "ghost"],
            }
        ),
        orphan_frag,
    )
    half_frag = data / f"frag-{next_id + 1:08d}.parquet.tmp"  # cut short mid-write
    half_frag.write_bytes(b"PAR1\x00\x01 truncated")
    orphan_seg = index / f"seg-{next_id + 2:08d}"
    orphan_seg.mkdir()
    (orphan_seg / "terms.arrow").write_bytes(b"ARROW1 truncated")
    half_seg = index / f"seg-{next_id + 3:08d}.tmp"
    half_seg.mkdir()
    (half_seg / "postings.arrow").write_bytes(b"")
    (path / "manifest.json.tmp").write_text('{"format": 1, "version": 99')  # a torn commit
    return [orphan_frag, half_frag, orphan_seg, half_seg]


def test_uncommitted_files_are_removed_at_open_and_never_read(path):
    db = build(path)
    before = state(db)
    next_id = db.manifest.next_file_id
    committed = listing(path / "data") | listing(path / "index")
    del db
    gc.collect()
    leftovers = simulate_uncommitted_writes(path, next_id)

    db = fts.connect(path)
    for leftover in leftovers:
        assert not leftover.exists(), leftover
    assert listing(path / "data") | listing(path / "index") == committed
    assert state(db) == before
    t = db.table("docs")
    assert 666 not in t.to_arrow().column("id").to_pylist()
    assert hits(t, Match("body", "ghost")) == []
    # the next writes reuse those file ids without picking up anything of the leftovers
    t.insert(docs(70, ["ghost town"]))
    t.create_index("body", positions=True)
    assert [r for r, _ in hits(t, Match("body", "ghost"))] == [len(BODIES) + 3]
    assert db.ctx.sql("SELECT count(*) AS n FROM docs").to_arrow_table().column(
        "n"
    ).to_pylist() == [len(BODIES) + 4]


def test_stray_tmp_file_in_index_dir_is_removed_at_open(path):
    db = build(path)
    stray = path / "index" / f"seg-{db.manifest.next_file_id:08d}.tmp"
    del db
    gc.collect()
    stray.write_bytes(b"partial")
    fts.connect(path)
    assert not stray.exists()


def test_stray_directory_in_data_dir_is_removed_at_open(path):
    db = build(path)
    stray = path / "data" / f"frag-{db.manifest.next_file_id:08d}"
    del db
    gc.collect()
    stray.mkdir()
    (stray / "part-0.parquet").write_bytes(b"x")
    fts.connect(path)
    assert not stray.exists()


# ----------------------------------------------------------------- broken manifest


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b'{"format": 1, "version": 3, "tab',  # torn write
        b"\xff\xfe\x00garbage",  # not UTF-8
        b'{"format": 99, "version": 1, "next_file_id": 1, "tables": {}}',  # a future format
        b'{"format": 1}',  # fields missing
        b'{"format": 1, "version": "x", "next_file_id": 1, "tables": {}}',
        b'{"format": 1, "version": 1, "next_file_id": 1, "tables": {"t": {"schema": "!!"}}}',
    ],
    ids=["empty", "torn", "binary", "format", "missing", "type", "schema"],
)
def test_corrupted_manifest_raises_storage_error(path, content):
    build(path)
    gc.collect()
    (path / "manifest.json").write_bytes(content)
    with pytest.raises(fts.StorageError, match="manifest"):
        fts.connect(path)


@pytest.mark.parametrize(
    "content",
    [b"[]", b"null", b'{"format": 1, "version": 1, "next_file_id": 1, "tables": []}'],
    ids=["list", "null", "tables-list"],
)
def test_manifest_of_the_wrong_json_shape_raises_storage_error(path, content):
    build(path)
    gc.collect()
    (path / "manifest.json").write_bytes(content)
    with pytest.raises(fts.StorageError):
        fts.connect(path)


def test_missing_fragment_raises_storage_error(path):
    db = build(path)
    frag = db.manifest.tables["docs"].fragments[0].id
    del db
    gc.collect()
    (path / "data" / f"{frag}.parquet").unlink()
    with pytest.raises(fts.StorageError):
        fts.connect(path).table("docs").to_arrow()


def test_missing_segment_raises_storage_error(path):
    db = build(path)
    db.table("docs").create_index("body")
    seg = db.manifest.tables["docs"].indexes["body"].segments[0].id
    del db
    gc.collect()
    shutil.rmtree(path / "index" / seg)
    with pytest.raises(fts.StorageError):
        fts.connect(path).table("docs").search(Match("body", "alpha"))


# ------------------------------------------------------------------- failed writes


def assert_nothing_written(
    path: Path, db: fts.Database, manifest_bytes: bytes, files: dict, version: int
):
    assert (path / "manifest.json").read_bytes() == manifest_bytes
    assert listing(path / "data") | listing(path / "index") == files
    assert db.manifest.version == version


def snapshot_dir(db: fts.Database, path: Path):
    return (
        (path / "manifest.json").read_bytes(),
        listing(path / "data") | listing(path / "index"),
        db.manifest.version,
    )


@pytest.mark.parametrize("bad", ["rowid_column", "missing_path", "not_parquet", "rowid_parquet"])
def test_failed_create_table_writes_nothing(path, tmp_path, bad):
    db = build(path)
    before = snapshot_dir(db, path)
    if bad == "rowid_column":
        data = docs().append_column("_rowid", pa.array(range(len(BODIES)), pa.int64()))
    elif bad == "missing_path":
        data = str(tmp_path / "nowhere.parquet")
    elif bad == "not_parquet":
        data = tmp_path / "fake.parquet"
        data.write_text("id,body\n1,alpha\n")
    else:
        data = tmp_path / "rowid.parquet"
        pq.write_table(pa.table({"_rowid": [1], "body": ["x"]}), data)
    with pytest.raises(fts.InvalidArgument) as info:
        db.create_table("new_table", data)
    assert "_rowid" in str(info.value) or "Parquet" in str(info.value)
    assert_nothing_written(path, db, *before)
    assert "new_table" not in db.table_names()
    assert not db.ctx.table_exist("new_table")
    old = weakref.ref(db)
    del db, info  # the traceback refers to the database too
    assert reopen(path, old).table_names() == ["docs", "empty"]


@pytest.mark.parametrize(
    "data",
    [
        pa.table({"id": [1], "body": ["x"]}),  # a column missing
        pa.table({"id": [1], "title": ["t"], "body": ["x"], "extra": [1]}),  # one too many
        pa.table({"ID": [1], "title": ["t"], "body": ["x"]}),  # another name
        pa.table({"id": [1], "title": ["t"], "body": pa.array([[1]])}),  # list into text
    ],
    ids=["missing", "extra", "renamed", "type"],
)
def test_failed_insert_leaves_the_table_unchanged(path, data):
    db = build(path)
    t = db.table("docs")
    rows, results = t.to_arrow(), [hits(t, q) for q in QUERIES]
    before = snapshot_dir(db, path)
    with pytest.raises(fts.InvalidArgument):
        t.insert(data)
    assert_nothing_written(path, db, *before)
    assert t.to_arrow() == rows
    assert [hits(t, q) for q in QUERIES] == results
    assert t.insert(docs(90, ["next"])) == 1
    assert t.to_arrow().column("_rowid").to_pylist()[-1] == rows.num_rows  # no id was used up


def test_insert_of_values_that_cannot_be_cast_raises_invalid_argument(path):
    db = build(path)
    before = snapshot_dir(db, path)
    with pytest.raises(fts.InvalidArgument):
        db.table("docs").insert(
            pa.table({"id": ["1", "x"], "title": ["a", "b"], "body": ["c", "d"]})
        )
    assert_nothing_written(path, db, *before)


def test_insert_failing_mid_stream_leaves_no_file(path, monkeypatch):
    db = build(path)
    before = snapshot_dir(db, path)
    monkeypatch.setattr(append_rows, "FRAGMENT_ROWS", 2)  # flush a fragment per 2 rows
    schema = pa.schema([("id", pa.int64()), ("title", pa.string()), ("body", pa.string())])

    def batches():
        yield pa.record_batch(
            [pa.array([1, 2]), pa.array(["a", "b"]), pa.array(["c", "d"])], schema=schema
        )
        raise fts.InvalidArgument("the source failed after its first batch")

    with pytest.raises(fts.InvalidArgument):
        db.table("docs").insert(pa.RecordBatchReader.from_batches(schema, batches()))
    assert db.table("docs").count_rows() == len(BODIES) + 3
    assert_nothing_written(path, db, *before)


# -------------------------------------------------------- larger than a batch


def test_large_parquet_file_is_streamed_in(path, tmp_path):
    n = 300_000
    source = tmp_path / "big.parquet"
    with pq.ParquetWriter(source, pa.schema([("id", pa.int64()), ("body", pa.string())])) as writer:
        for start in range(0, n, 50_000):
            ids = pa.array(range(start, start + 50_000), pa.int64())
            bodies = pc.binary_join_element_wise("w", pc.cast(ids, pa.string()), "")
            writer.write_table(pa.table({"id": ids, "body": bodies}))
    assert pq.ParquetFile(source).metadata.num_row_groups == 6

    db = fts.connect(path)
    t = db.create_table("big", source)
    assert t.count_rows() == n
    assert t.insert(source) == n
    sample = [0, 1, 65_535, 65_536, 131_072, n - 1, n, 2 * n - 1]
    where = f"_rowid IN ({', '.join(map(str, sample))})"
    sql = f"SELECT _rowid, id, body FROM big WHERE {where} ORDER BY _rowid"
    got = db.sql(sql).to_arrow_table().to_pylist()
    assert got == [{"_rowid": r, "id": r % n, "body": f"w{r % n}"} for r in sample]
    old = weakref.ref(db)
    del db, t
    db = reopen(path, old)
    assert db.table("big").count_rows() == 2 * n
    total = (
        db.sql("SELECT count(*) AS c, max(_rowid) AS m FROM big").to_arrow_table().to_pylist()
    )
    assert total == [{"c": 2 * n, "m": 2 * n - 1}]


def test_a_directory_with_data_but_no_manifest_is_refused_and_kept(path):
    """(Opened as empty, its files would look like leftovers to garbage collection.)"""
    build(path)
    gc.collect()
    files = sorted(p.relative_to(path) for p in path.rglob("*") if p.is_file() and p.name != "LOCK")
    (path / "manifest.json").unlink()
    for _ in range(2):
        with pytest.raises(fts.StorageError, match="no manifest.json"):
            fts.connect(path)
    kept = sorted(p.relative_to(path) for p in path.rglob("*") if p.is_file() and p.name != "LOCK")
    assert kept == [f for f in files if f.name != "manifest.json"]


@pytest.mark.parametrize("where", ["fragment", "deletion vector", "segment", "retired"])
def test_a_manifest_naming_a_path_outside_the_database_is_refused(path, where):
    """File ids in a manifest become paths (data/<id>.parquet): one that is not of the form
    this system makes is refused before anything is read."""
    build(path)
    gc.collect()
    outside = path.parent / "outside.parquet"
    outside.write_bytes(b"not ours")
    manifest = json.loads((path / "manifest.json").read_text())
    table = manifest["tables"]["docs"]
    if where == "fragment":
        table["fragments"][0]["id"] = "../../outside"
    elif where == "deletion vector":
        table["fragments"][0]["deletes"] = "../../outside"
    elif where == "segment":
        next(iter(table["indexes"].values()))["segments"][0]["id"] = "../outside"
    else:
        manifest["retired"] = [{"id": "../../outside", "at": 0.0}]
    write_manifest(path, manifest)  # (with a valid checksum: the ids are what is refused)
    with pytest.raises(fts.StorageError, match="is not one this system makes"):
        fts.connect(path)
    assert outside.read_bytes() == b"not ours"


def test_a_table_named_like_a_path_keeps_its_log_inside_the_database(path):
    """Any name DataFusion takes may name a table ("../outside" among them): only an
    identifier names its own log file (wal/<name>.log); another one's log is named by the
    name's hash, so no name reaches outside the directory."""
    db = fts.connect(path)
    db.sql('CREATE TABLE "../outside" (body VARCHAR)')
    db.sql("""INSERT INTO "../outside" VALUES ('alpha')""")
    del db
    gc.collect()
    assert not (path.parent / "outside.log").exists()
    assert [p.name for p in (path / "wal").iterdir()] == [log_file_name("../outside")]
    assert log_file_name("../outside").startswith("~")
    assert fts.connect(path).sql('SELECT body FROM "../outside"').to_pylist() == [{"body": "alpha"}]


def write_manifest(path: Path, manifest: dict) -> None:
    body = {k: v for k, v in manifest.items() if k != CHECKSUM}
    (path / "manifest.json").write_text(json.dumps({**body, CHECKSUM: checksum(body)}))


@pytest.mark.parametrize("field", ["next_rowid", "rows", "n_docs"])
def test_a_manifest_changed_but_still_json_fails_its_checksum(path, field):
    """A flipped digit leaves a manifest that parses, with a wrong count: refused, not read."""
    build(path)
    gc.collect()
    text = (path / "manifest.json").read_text()
    at = text.index(f'"{field}":') + len(field) + 3
    changed = text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1:]
    (path / "manifest.json").write_text(changed)
    with pytest.raises(fts.StorageError, match="checksum mismatch"):
        fts.connect(path)
