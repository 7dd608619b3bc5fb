"""One suite for every backend of storage/objects (issue 32): a local directory, and an
object store reached over the S3 protocol on loopback (moto's server, a real HTTP server
the tests start: tests/s3_server.py). Each backend must keep the interface's promises
(storage/objects/interface.py): whole objects, exact ranges, listing by directory,
atomic writes, and conditional writes of which exactly one of two racing writers wins."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from datafusion_fts.errors import ConflictError, InvalidArgument, StorageError
from datafusion_fts.storage.objects import ObjectChanged, ObjectMissing, ObjectStore, open_objects
from s3_server import S3Server, s3_server


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.client().create_bucket(Bucket="bucket")
        yield server


@pytest.fixture(params=["local", "s3"])
def objects(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    if request.param == "local":
        return open_objects(str(tmp_path / "store"))
    server: S3Server = request.getfixturevalue("s3")
    return open_objects(f"s3://bucket/{uuid.uuid4().hex}", server.options())


def test_an_object_reads_back_whole_and_its_version_changes_when_written(objects: ObjectStore) -> None:
    first = objects.put("a/b/c.bin", b"hello")
    assert objects.get("a/b/c.bin") == b"hello"
    meta = objects.head("a/b/c.bin")
    assert meta is not None and (meta.key, meta.size, meta.version) == ("a/b/c.bin", 5, first)
    assert abs(meta.modified - time.time()) < 300  # (when it was written, by the store's clock)
    assert objects.list("a")[0].modified == meta.modified
    second = objects.put("a/b/c.bin", b"hello again")
    assert second != first and objects.get("a/b/c.bin") == b"hello again"
    assert objects.head("a/b/c.bin").version == second


def test_ranges_are_exact_including_empty_and_final_ones(objects: ObjectStore) -> None:
    data = bytes(range(256)) * 1000
    objects.put("big", data)
    starts, ends = [0, 10, 5000, 255_990, 7, 100_000], [3, 12, 5000, 256_000, 7, 200_000]
    got = objects.get_ranges("big", starts, ends)
    assert [bytes(b) for b in got] == [data[s:e] for s, e in zip(starts, ends)]
    assert objects.get_ranges("big", [], []) == []


def test_a_range_outside_the_object_is_an_error(objects: ObjectStore) -> None:
    objects.put("small", b"0123456789")
    with pytest.raises(StorageError, match="outside the object's 10 bytes"):
        objects.get_ranges("small", [5], [11])


def test_ranges_of_a_version_read_it_and_a_rewritten_or_deleted_object_is_changed(objects: ObjectStore) -> None:
    """A reader of a listed version never gets another version's bytes: the object store
    checks the version with each request (If-Match), so pages of a rewritten file are
    never decoded as the file that was indexed."""
    data = bytes(range(256)) * 2000  # (ranges far apart: several requests on an object store)
    version = objects.put("v", data)
    starts, ends = [0, 300_000, 10, 500_000], [5, 300_100, 20, 512_000]
    got = objects.get_ranges("v", starts, ends, version)
    assert [bytes(b) for b in got] == [data[s:e] for s, e in zip(starts, ends)]
    objects.put("v", data[::-1])
    with pytest.raises(ObjectChanged, match="rewritten"):
        objects.get_ranges("v", starts, ends, version)
    objects.delete("v")
    with pytest.raises(ObjectChanged, match="deleted"):
        objects.get_ranges("v", starts, ends, version)


def test_a_missing_object_is_named(objects: ObjectStore) -> None:
    assert objects.head("nothing/here") is None
    with pytest.raises(ObjectMissing, match="nothing/here"):
        objects.get("nothing/here")
    with pytest.raises(ObjectMissing, match="nothing/here"):
        objects.get_ranges("nothing/here", [0], [1])


def test_listing_is_by_directory_and_in_key_order(objects: ObjectStore) -> None:
    for key in ["d/2", "d/1", "d/sub/3", "d2/4", "e"]:
        objects.put(key, key.encode())
    assert [m.key for m in objects.list("d")] == ["d/1", "d/2", "d/sub/3"]
    assert [(m.key, m.size) for m in objects.list()] == [("d/1", 3), ("d/2", 3), ("d/sub/3", 7), ("d2/4", 4), ("e", 1)]
    assert objects.list("nowhere") == []


def test_keys_round_trip_spaces_and_unicode(objects: ObjectStore) -> None:
    objects.put("dir with space/ünïcødé €.bin", b"x")
    assert objects.get("dir with space/ünïcødé €.bin") == b"x"
    assert [m.key for m in objects.list("dir with space")] == ["dir with space/ünïcødé €.bin"]


@pytest.mark.parametrize("key", ["", "/abs", "a//b", "../up", "a/../b", "a/./b", "trailing/"])
def test_a_key_outside_the_location_is_refused_and_nothing_written(objects: ObjectStore, key: str) -> None:
    with pytest.raises(InvalidArgument, match="not a relative path"):
        objects.put(key, b"x")
    assert objects.list() == []


def test_a_create_of_an_existing_key_loses_and_keeps_the_first(objects: ObjectStore) -> None:
    version = objects.put_if_absent("manifest", b"first")
    with pytest.raises(ConflictError, match="exists already"):
        objects.put_if_absent("manifest", b"second")
    assert objects.get("manifest") == b"first" and objects.head("manifest").version == version


def test_a_replace_of_a_changed_object_loses(objects: ObjectStore) -> None:
    v1 = objects.put("manifest", b"v1")
    v2 = objects.put_if_version("manifest", b"v2", v1)
    with pytest.raises(ConflictError, match="changed since"):
        objects.put_if_version("manifest", b"stale", v1)
    assert objects.get("manifest") == b"v2" and objects.head("manifest").version == v2
    objects.delete("manifest")
    with pytest.raises(ConflictError):
        objects.put_if_version("manifest", b"gone", v2)
    assert objects.head("manifest") is None


def test_of_racing_replaces_from_one_version_exactly_one_wins(objects: ObjectStore) -> None:
    """Writers who read the same version replace it at once: one commits, the others
    are refused, and the object is the winner's (never a mix, never two winners)."""
    for round_ in range(3):
        start = objects.put("manifest", b"base")
        barrier = threading.Barrier(4)
        outcomes: list[tuple[int, str]] = []

        def write(i: int) -> None:
            barrier.wait()
            try:
                objects.put_if_version("manifest", f"writer {i}".encode(), start)
                outcomes.append((i, "won"))
            except ConflictError:
                outcomes.append((i, "lost"))

        threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [i for i, outcome in outcomes if outcome == "won"]
        assert len(outcomes) == 4 and len(winners) == 1, (round_, outcomes)
        assert objects.get("manifest") == f"writer {winners[0]}".encode()


def test_delete_removes_and_a_second_delete_is_nothing(objects: ObjectStore) -> None:
    objects.put("x/y", b"1")
    objects.delete("x/y")
    objects.delete("x/y")
    assert objects.head("x/y") is None and objects.list("x") == []


def test_the_environment_reaches_the_store_with_no_options(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in s3.environment().items():
        monkeypatch.setenv(name, value)
    objects = open_objects(f"s3://bucket/{uuid.uuid4().hex}")
    objects.put("k", b"v")
    assert objects.get("k") == b"v"


def test_an_unreachable_store_is_a_storage_error_naming_it() -> None:
    options = {"endpoint": "http://127.0.0.1:9", "access_key_id": "k", "secret_access_key": "s",
               "region": "us-east-1", "allow_http": "true", "timeout": "2s", "connect_timeout": "1s"}
    objects = open_objects("s3://bucket/nowhere", options)
    with pytest.raises(StorageError, match="s3://bucket/nowhere/k"):
        objects.put("k", b"v")


def test_bad_options_are_a_storage_error_saying_what_to_configure() -> None:
    with pytest.raises(StorageError, match="storage_options"):
        open_objects("s3://bucket/x", {"no_such_option": "1"})


def test_a_write_to_a_missing_bucket_is_a_storage_error_not_a_missing_object_or_a_conflict(s3: S3Server) -> None:
    objects = open_objects("s3://no-such-bucket/db", s3.options())
    for write in (lambda: objects.put("k", b"v"), lambda: objects.put_if_absent("k", b"v")):
        with pytest.raises(StorageError) as caught:
            write()
        assert not isinstance(caught.value, (ObjectMissing, ConflictError)), caught.value
        assert "s3://no-such-bucket/db/k" in str(caught.value)


def test_retries_are_bounded_by_the_options(s3: S3Server) -> None:
    """max_retries and retry_timeout reach the client: a store that refuses connections is
    an error after the retries asked (none here), and the options are not sent to the
    store as its configuration."""
    options = {"endpoint": "http://127.0.0.1:9", "access_key_id": "k", "secret_access_key": "s",
               "region": "us-east-1", "allow_http": "true", "max_retries": "0", "retry_timeout": "1"}
    with pytest.raises(StorageError, match="s3://bucket/nowhere/k") as caught:
        open_objects("s3://bucket/nowhere", options).get("k")
    assert "retries" not in str(caught.value)  # (object_store says "after N retries" when it retried)
    with pytest.raises(StorageError, match="max_retries is a count"):
        open_objects("s3://bucket/x", {**options, "max_retries": "many"})
