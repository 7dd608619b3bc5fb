"""Index segments of a database at an object store's URL kept on local disk
(storage/stores/segment_cache.py; issue 32: a bounded local cache, so a process holds
what its searches touch and the next one fetches nothing again), against moto's S3
server on loopback (tests/s3_server.py)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from s3_server import S3Server
from test_remote_store import _answers, _write, s3  # noqa: F401  (s3: its server, a fixture)

import datafusion_fts as fts
from datafusion_fts.storage.objects.remote import RemoteObjects
from datafusion_fts.storage.stores.segment_cache import SegmentCache


def _segment_gets(monkeypatch: pytest.MonkeyPatch, sizes: list[int] | None = None) -> list[str]:
    """The keys of index segments fetched (whole or in ranges) from any store from now on;
    ``sizes`` collects the bytes of each fetch."""
    fetched: list[str] = []
    real_get, real_ranges = RemoteObjects.get, RemoteObjects.get_ranges

    def get(self, key: str, *args, **kwargs):  # noqa: ANN001, ANN202
        data = real_get(self, key, *args, **kwargs)
        if key.startswith("index/"):
            fetched.append(key)
            if sizes is not None:
                sizes.append(len(data))
        return data

    def get_ranges(self, key: str, *args, **kwargs):  # noqa: ANN001, ANN202
        found = real_ranges(self, key, *args, **kwargs)
        if key.startswith("index/"):
            fetched.append(key)
            if sizes is not None:
                sizes.append(sum(len(b) for b in found))
        return found

    monkeypatch.setattr(RemoteObjects, "get", get)
    monkeypatch.setattr(RemoteObjects, "get_ranges", get_ranges)
    return fetched


def test_a_second_process_fetches_no_segment_and_answers_alike(s3: S3Server, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept on disk, a segment is fetched once: another Database opened on the same URL
    (as a new process would) reads it from the disk, and answers to the bit as the first
    and as the database without a disk cache (0 bytes: held in memory)."""
    config = {"fts.segment_cache_dir": str(tmp_path / "cache")}
    first = _write(fts.connect("s3://bucket/kept", storage_options=s3.options(), config=config))
    expected = _answers(fts.connect("s3://bucket/kept", storage_options=s3.options(),
                                    config={"fts.segment_cache_bytes": 0}))
    assert _answers(first) == expected
    kept = list((tmp_path / "cache").glob("*/*.bundle"))
    assert kept
    fetched = _segment_gets(monkeypatch)
    again = fts.connect("s3://bucket/kept", storage_options=s3.options(), config=config)
    assert _answers(again) == expected and fetched == []


def test_segments_of_a_directory_copied_to_the_store_are_kept_too(s3: S3Server, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A database written in a directory and copied to the store keeps its segments as
    files, each kept on disk as a bundle is: a second Database fetches none of them."""
    config = {"fts.segment_cache_dir": str(tmp_path / "cache")}
    expected = _answers(_write(fts.connect(tmp_path / "db")))
    url = s3.upload_directory(tmp_path / "db", "bucket", "copied-kept")
    assert _answers(fts.connect(url, storage_options=s3.options(), config=config)) == expected
    assert list((tmp_path / "cache").glob("*/*.arrow.bundle"))
    fetched = _segment_gets(monkeypatch)
    assert _answers(fts.connect(url, storage_options=s3.options(), config=config)) == expected
    assert fetched == []  # (not even a bundle's key: the files kept say the layout)


def test_a_damaged_segment_on_disk_is_fetched_again(s3: S3Server, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A bundle on disk that fails its crc32 is deleted and fetched from the store again:
    the answers are the store's."""
    config = {"fts.segment_cache_dir": str(tmp_path / "cache")}
    db = _write(fts.connect("s3://bucket/damaged", storage_options=s3.options(), config=config))
    expected = _answers(db)
    for path in (tmp_path / "cache").glob("*/*.bundle"):
        raw = np.fromfile(path, dtype=np.uint8)
        held = np.flatnonzero(raw)  # (a kept bundle is sparse: damage bytes it holds)
        raw[held[len(held) // 2]] ^= 0xFF
        raw.tofile(path)
    fetched = _segment_gets(monkeypatch)
    again = fts.connect("s3://bucket/damaged", storage_options=s3.options(), config=config)
    assert _answers(again) == expected and fetched


def test_the_kept_bytes_stay_within_the_limit_least_recently_used_first(tmp_path: Path) -> None:
    cache = SegmentCache(lambda: str(tmp_path), lambda: 2_500)
    fetches: list[str] = []

    def fetch(name: str) -> bytes:
        fetches.append(name)
        return name.encode() * 1_000  # (1,000 bytes a bundle here)

    paths = {name: cache.path("s3://b/db", name, 1, "bundle") for name in ("a", "b", "c")}
    for name in ("a", "b"):
        assert cache.get(paths[name], lambda n=name: fetch(n)).to_pybytes() == name.encode() * 1_000
    os.utime(paths["a"], (1, 1))  # (a: used longest ago)
    cache.get(paths["c"], lambda: fetch("c"))
    assert sorted(p.name for p in tmp_path.glob("*/*.bundle")) == ["b-1-bundle.bundle", "c-1-bundle.bundle"]
    assert cache.get(paths["b"], lambda: fetch("b")).to_pybytes() == b"b" * 1_000
    assert fetches == ["a", "b", "c"]  # (b read from the disk)


def test_no_disk_or_an_unwritable_one_holds_segments_in_memory(tmp_path: Path) -> None:
    assert SegmentCache(lambda: str(tmp_path), lambda: 0).path("s3://b/db", "s", 1, "bundle") is None
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    cache = SegmentCache(lambda: str(blocked), lambda: 1 << 20)
    assert cache.get(cache.path("s3://b/db", "s", 1, "bundle"), lambda: b"bytes").to_pybytes() == b"bytes"


def _large(db: fts.Database) -> fts.Database:
    """A table whose postings take many regions of 64 KiB (checksums.REGION_BYTES)."""
    rng = np.random.default_rng(7)
    vocabulary = np.array([f"w{i}" for i in range(3000)])
    ranks = np.minimum(rng.zipf(1.2, size=(40_000, 30)) - 1, 2999)
    bodies = [" ".join(row) for row in vocabulary[ranks]]
    db.create_table("big", pa.table({"id": np.arange(40_000), "body": bodies})).create_index("body", positions=True)
    return db


def _top(db: fts.Database, queries: list[str]) -> list:
    return [db.sql(f"SELECT id, score() AS s FROM big WHERE MATCH(body, '{q}') ORDER BY s DESC, id LIMIT 20")
            .to_pylist() for q in queries]


@pytest.mark.parametrize("layout", ["bundle", "directory"])
def test_a_cold_query_fetches_the_regions_it_reads_not_the_whole_segment(s3: S3Server, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          layout: str) -> None:
    """A kept segment is sparse (a bundle, or the postings' and positions' files of a
    directory copied to the store): opening fetches its header, checksums and the arrays
    verified whole; the postings are fetched a region at a time as queries reach them.
    Answers are those of the database held in memory, to the bit; another Database on
    the same disk fetches only regions no query read before."""
    url = f"s3://bucket/sparse-{layout}"
    if layout == "bundle":
        _large(fts.connect(url, storage_options=s3.options(), config={"fts.segment_cache_bytes": 0}))
    else:
        _large(fts.connect(tmp_path / "db"))
        url = s3.upload_directory(tmp_path / "db", "bucket", f"sparse-{layout}")
    bundle = sum(m["Size"] for m in s3.client().list_objects_v2(Bucket="bucket", Prefix=f"sparse-{layout}/index/")
                 ["Contents"])
    rare, common, phrase = ["w2900", "w2901 w2950"], ["w0 w1", "+w3 -w5"], ['"w0 w1"']
    memory = fts.connect(url, storage_options=s3.options(), config={"fts.segment_cache_bytes": 0})
    expected = _top(memory, rare + common + phrase)
    config = {"fts.segment_cache_dir": str(tmp_path / "cache")}
    sizes: list[int] = []
    fetched = _segment_gets(monkeypatch, sizes)
    cold = fts.connect(url, storage_options=s3.options(), config=config)
    assert _top(cold, rare) == expected[:2]
    assert 0 < sum(sizes) < bundle / 2, (sum(sizes), bundle)
    first = sum(sizes)
    assert _top(cold, common + phrase) == expected[2:]  # (the common terms' regions fetched now)
    assert first < sum(sizes) < bundle
    kept = list((tmp_path / "cache").glob("*/*.bundle"))
    assert kept and sum(p.stat().st_blocks * 512 for p in kept) < bundle
    fetched.clear()
    again = fts.connect(url, storage_options=s3.options(), config=config)
    assert _top(again, rare + common + phrase) == expected and fetched == []
    again.table("big").search("w77 w78 w79", limit=5)
    assert fetched  # (regions no query had read)


def test_a_full_cache_disk_is_a_clear_error_or_memory_never_a_wrong_answer(s3: S3Server, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Faults of the cache's writes: a disk full when a segment is first kept holds it in
    memory (fetched whole; the answers alike); a disk full when a region is fetched into
    a kept segment fails that query with a StorageError saying what to set, and the next
    query, the disk writable again, fetches the region and answers alike."""
    import errno

    from datafusion_fts.storage.stores import segment_cache

    url = "s3://bucket/full-disk"
    _large(fts.connect(url, storage_options=s3.options(), config={"fts.segment_cache_bytes": 0}))
    queries = ["w2900", "w0 w1", '"w0 w1"']
    expected = _top(fts.connect(url, storage_options=s3.options(), config={"fts.segment_cache_bytes": 0}), queries)
    config = {"fts.segment_cache_dir": str(tmp_path / "cache")}

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(segment_cache.KeptFile, "__init__", full)  # (nothing can be kept)
        assert _top(fts.connect(url, storage_options=s3.options(), config=config), queries) == expected
    db = fts.connect(url, storage_options=s3.options(), config=config)
    assert _top(db, queries[:1]) == expected[:1]  # (kept, sparse: the common terms not fetched yet)
    with monkeypatch.context() as patch:
        patch.setattr(segment_cache.os, "pwrite", full)
        with pytest.raises(fts.StorageError, match="No space left on device.*fts.segment_cache_bytes = 0"):
            _top(db, queries[1:])
    assert _top(db, queries) == expected


def test_threads_searching_a_cold_segment_at_once_answer_alike(s3: S3Server, tmp_path: Path) -> None:
    """Four threads search one cold sparse segment at once, fetching (some of the same)
    regions into it concurrently: every answer is the one of the database held in memory."""
    from concurrent.futures import ThreadPoolExecutor

    url = "s3://bucket/threads"
    _large(fts.connect(url, storage_options=s3.options(), config={"fts.segment_cache_bytes": 0}))
    queries = [f"w{i} w{i + 1}" for i in range(0, 40, 3)] + ['"w0 w1"', "+w2 -w9", "w2990"]
    expected = _top(fts.connect(url, storage_options=s3.options(), config={"fts.segment_cache_bytes": 0}), queries)
    cold = fts.connect(url, storage_options=s3.options(), config={"fts.segment_cache_dir": str(tmp_path / "cache")})
    order = [queries[::-1], queries, queries[1::2] + queries[::2], queries[::2] + queries[1::2]]
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda qs: dict(zip(qs, _top(cold, qs))), order))
    for answers in found:
        assert [answers[q] for q in queries if q in answers] == [e for q, e in zip(queries, expected) if q in answers]
