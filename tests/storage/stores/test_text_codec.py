"""``fts.text_codec``: the codec of the text columns of the data files written from now on
(LZ4 by default, ZSTD on request), in a directory and at an object store's URL. Files of
either codec, side by side in one table, answer every search, fetch and plain statement
alike; numbers stay without a codec; a value not offered is refused and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from s3_server import S3Server
from test_remote_store import s3  # noqa: F401  (s3: its server with a bucket, a fixture)

import datafusion_fts as fts
from datafusion_fts.errors import FtsError
from datafusion_fts.storage.stores.store import TEXT_CODECS

WORDS = ["alpha", "beta", "gamma", "delta", "épée", "数据库"]


def _rows(lo: int, n: int) -> pa.Table:
    return pa.table({
        "id": pa.array(range(lo, lo + n), pa.int64()),
        "body": [" ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 2 + i % 30)) for i in range(lo, lo + n)],
        "tag": [None if i % 7 == 0 else f"t{i % 5}" for i in range(lo, lo + n)],
        "score": [i / 3 for i in range(lo, lo + n)],
    })


def _codecs(root: Path) -> dict[str, set[str]]:
    """Each column's codecs over the data files under ``root``."""
    found: dict[str, set[str]] = {}
    for path in sorted((root / "data").glob("*.parquet")):
        meta = pq.ParquetFile(path).metadata
        for g in range(meta.num_row_groups):
            for c in range(meta.num_columns):
                column = meta.row_group(g).column(c)
                found.setdefault(column.path_in_schema, set()).add(column.compression)
    return found


def _answers(db: fts.Database) -> list:
    statements = [
        "SELECT id, body, tag, score() AS s FROM docs WHERE MATCH(body, 'alpha épée') ORDER BY s DESC, id LIMIT 20",
        "SELECT tag, count(*) AS n, sum(score) AS total FROM docs GROUP BY tag ORDER BY tag",
        "SELECT id, tag FROM docs WHERE body LIKE '%数据%' AND id % 3 = 0 ORDER BY id",
        "SELECT id, length(body) AS n FROM docs WHERE id IN (3, 250, 777, 1499) ORDER BY id",
    ]
    return [db.sql(s).to_arrow_table() for s in statements]


def test_text_columns_are_lz4_by_default_and_zstd_when_set(tmp_path: Path) -> None:
    assert TEXT_CODECS[0] == "lz4" and fts.connect().settings.get("fts.text_codec") == "lz4"
    db = fts.connect(tmp_path / "db")
    table = db.create_table("docs", _rows(0, 800))
    table.create_index("body")
    assert {c: _codecs(tmp_path / "db")[c] for c in ("body", "tag", "id")} == {
        "body": {"LZ4"}, "tag": {"LZ4"}, "id": {"UNCOMPRESSED"}}
    db.sql("SET fts.text_codec = 'zstd'")
    table.bulk_insert(_rows(800, 700))
    assert _codecs(tmp_path / "db")["body"] == {"LZ4", "ZSTD"}

    # The same rows written all ZSTD answer alike, before and after reopening.
    other = fts.connect(tmp_path / "other", config={"fts.text_codec": "zstd"})
    other.create_table("docs", _rows(0, 1500)).create_index("body")
    assert _codecs(tmp_path / "other")["body"] == {"ZSTD"}
    expected = _answers(other)
    assert _answers(db) == expected
    assert _answers(fts.connect(tmp_path / "db", read_only=True)) == expected

    # OPTIMIZE merges the fragments into files of the codec set now.
    db.sql("SET fts.text_codec = 'lz4'")
    db.sql("OPTIMIZE docs")
    assert _answers(db) == expected


def test_a_codec_not_offered_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    db = fts.connect(tmp_path / "db")
    with pytest.raises(FtsError, match="text_codec"):
        db.sql("SET fts.text_codec = 'snappy'")
    with pytest.raises(FtsError, match="text_codec"):
        fts.connect(tmp_path / "other", config={"fts.text_codec": "gzip"})
    assert db.settings.get("fts.text_codec") == "lz4"


def test_a_database_at_a_url_writes_the_codec_set(s3: S3Server, tmp_path: Path) -> None:
    url = "s3://bucket/codec"
    db = fts.connect(url, storage_options=s3.options(), config={"fts.text_codec": "zstd"})
    db.create_table("docs", _rows(0, 600)).create_index("body")
    local = fts.connect(tmp_path / "db")
    local.create_table("docs", _rows(0, 600)).create_index("body")
    assert _answers(db) == _answers(local)
    client = s3.client()
    keys = [o["Key"] for o in client.list_objects_v2(Bucket="bucket", Prefix="codec/data/")["Contents"]]
    copy = tmp_path / "copy" / "data"
    copy.mkdir(parents=True)
    for key in keys:
        if key.endswith(".parquet"):
            (copy / Path(key).name).write_bytes(client.get_object(Bucket="bucket", Key=key)["Body"].read())
    assert _codecs(tmp_path / "copy")["body"] == {"ZSTD"}
    assert _codecs(tmp_path / "db")["body"] == {"LZ4"}
