"""TableSnapshot.take: the columns of any row ids, in the order asked, whatever tier,
fragment or page holds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import datafusion_fts as fts


def _rows(start: int, n: int) -> pa.Table:
    ids = np.arange(start, start + n)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "title": [None if i % 7 == 0 else f"title {i}" for i in ids],
        "body": [" ".join(["word"] * int(i % 50)) + f" row{i}" for i in ids],
        "score": pa.array(np.where(ids % 5 == 0, np.nan, ids / 3.0)),
    })


@pytest.fixture(scope="module", params=["directory", "memory"])
def table(request, tmp_path_factory):
    db = fts.connect(tmp_path_factory.mktemp("take") / "db" if request.param == "directory" else None)
    docs = db.create_table("docs", _rows(0, 3000))
    docs.bulk_insert(_rows(3000, 2000))  # a second fragment
    docs.bulk_insert(_rows(5000, 10))  # a small third one
    docs.delete("id % 97 = 3")
    docs.insert(_rows(5010, 40))  # fresh rows
    yield docs


def _expected(docs, ids: np.ndarray, columns: list[str]) -> pa.Table:
    every = docs.to_arrow()
    position = {rowid: i for i, rowid in enumerate(every.column("_rowid").to_pylist())}
    return every.select(columns).take(pa.array([position[i] for i in ids.tolist()], pa.int64()))


def _assert_same(got: pa.Table, expected: pa.Table) -> None:
    for name in expected.column_names:  # (NaN scores compare by bits)
        a, b = got.column(name).combine_chunks(), expected.column(name).combine_chunks()
        if pa.types.is_floating(a.type):
            a, b = a.view(pa.int64()), b.view(pa.int64())
        assert a.equals(b), name


@settings(max_examples=40)
@given(data=st.data())
def test_take_any_rows_in_the_order_asked(table, data):
    live = table.snapshot().live_rows()
    ids = np.array(data.draw(st.lists(st.sampled_from(live.tolist()), max_size=60)), dtype=np.int64)
    columns = data.draw(st.lists(st.sampled_from(["id", "title", "body", "score"]), min_size=1, max_size=4, unique=True))
    got = table.snapshot().take(ids, columns)
    assert got.column_names == columns and got.num_rows == len(ids)
    _assert_same(got, _expected(table, ids, columns))


def test_take_duplicates_every_tier_and_no_ids(table):
    snap = table.snapshot()
    ids = np.array([5049, 0, 2999, 3000, 5009, 5010, 0, 4999, 5049], dtype=np.int64)
    got = snap.take(ids, ["id", "body"])
    assert got.column("id").to_pylist() == ids.tolist()
    assert snap.take(np.zeros(0, np.int64), ["id"]).num_rows == 0
    assert snap.take(ids, []).num_rows == len(ids)


def test_data_files_have_small_pages(tmp_path: Path):
    """A fetched row costs one small page per column: the body pages of the written
    files hold a few rows each (see store.PAGE_ROW_BYTES)."""
    db = fts.connect(tmp_path / "db")
    docs = db.create_table("docs", pa.table({"body": ["x" * 400 + str(i) for i in range(5000)]}))
    frag = docs.snapshot().meta.fragments[0]
    reader = db.store._pages(frag.id)
    pages = reader._pages_of(reader._column("body").leaf)
    assert pages is not None and 200 < len(pages.first_rows) < 1000  # 16 rows a page, about


@pytest.mark.parametrize("two_passes", [False, True])
def test_take_many_out_of_order_in_bounded_memory(table, monkeypatch, two_passes):
    """Many rows asked for out of order are fetched in slices of the asked order or in
    two passes (storage/parquet/large_take.py): the same rows either way."""
    from datafusion_fts.storage.parquet import large_take
    from datafusion_fts.storage import snapshot as snapshot_module

    monkeypatch.setattr(snapshot_module, "TAKE_BATCH_ROWS", 100)
    monkeypatch.setattr(large_take, "_two_passes_read_less", lambda keys, step: two_passes)
    live = table.snapshot().live_rows()
    ids = np.random.default_rng(7).choice(live, size=1050, replace=True)  # (repeats, every tier)
    columns = ["id", "title", "body", "score"]
    got = table.snapshot().take(ids, columns)
    assert got.column("body").num_chunks == (1 if two_passes else 11)
    _assert_same(got, _expected(table, ids, columns))
    ascending = np.sort(ids)  # (in row order: one fetch)
    assert table.snapshot().take(ascending, ["id"]).column("id").to_pylist() == (
        _expected(table, ascending, ["id"]).column("id").to_pylist())


def test_two_passes_chosen_when_rows_crowd_their_pages():
    """Two passes read every page twice; slices read a page once per slice with rows in it."""
    from datafusion_fts.storage.parquet.large_take import _two_passes_read_less

    rng = np.random.default_rng(3)
    crowded = rng.integers(0, 50, size=4000)  # 80 rows a page, over 40 slices of 100
    sparse = rng.permutation(4000)  # a row a page
    assert _two_passes_read_less(crowded, 100) and not _two_passes_read_less(sparse, 100)
    assert not _two_passes_read_less(None, 100) and not _two_passes_read_less(np.full(500, -1), 100)
