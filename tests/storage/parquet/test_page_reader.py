"""PageReader: rows of any Parquet file by position, page by page, equal to pyarrow's own
reading of the same rows; damaged pages are StorageErrors."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from whole_columns import whole_columns

from datafusion_fts.errors import StorageError
from datafusion_fts.storage.parquet import page_reader
from datafusion_fts.storage.parquet.page_reader import (
    CHUNK_PAGES,
    DecodedCache,
    PageReader,
    take_rows,
)

# Types read page by page, and types the reader leaves to pyarrow's row-group reads.
PAGED = {
    "bool": pa.bool_(), "i8": pa.int8(), "i16": pa.int16(), "i32": pa.int32(), "i64": pa.int64(),
    "u8": pa.uint8(), "u16": pa.uint16(), "u32": pa.uint32(), "u64": pa.uint64(),
    "f32": pa.float32(), "f64": pa.float64(), "date": pa.date32(),
    "ts_ms": pa.timestamp("ms"), "ts_us_utc": pa.timestamp("us", tz="UTC"), "ts_ns": pa.timestamp("ns"),
    "str": pa.string(), "lstr": pa.large_string(), "bin": pa.binary(), "lbin": pa.large_binary(),
}
# Parquet stores these as date32 and timestamp[ms], and pyarrow reads them back so: pages too.
COERCED = {"date64": pa.date64(), "ts_s": pa.timestamp("s")}
OTHER = {"dec": pa.decimal128(12, 3), "ints": pa.list_(pa.int32()), "dict": pa.dictionary(pa.int32(), pa.string())}
WORDS = ["", "a", "alpha", "beta gamma", "δέλτα", "x" * 300, "東京"]


def _values(rng: np.random.Generator, t: pa.DataType, n: int) -> pa.Array:
    """``n`` values of type ``t`` with extremes, repeats (for dictionaries) and nulls."""
    nulls = rng.random(n) < rng.choice([0.0, 0.2, 0.9])
    if pa.types.is_timestamp(t):
        return pa.array([None if z else int(v) for z, v in zip(nulls, rng.integers(-(10**12), 10**12, n))],
                        pa.int64()).cast(t)
    if pa.types.is_dictionary(t):
        return pa.array([None if z else WORDS[int(i)] for z, i in zip(nulls, rng.integers(0, len(WORDS), n))],
                        pa.string()).dictionary_encode()
    if pa.types.is_boolean(t):
        vals: list = (rng.random(n) < 0.5).tolist()
    elif pa.types.is_integer(t):
        info = np.iinfo(t.to_pandas_dtype())
        vals = [[int(info.min), int(info.max), 0, 1][int(rng.integers(4))] if rng.random() < 0.5
                else int(rng.integers(info.min, info.max, endpoint=True, dtype=t.to_pandas_dtype()))
                for _ in range(n)]
    elif pa.types.is_floating(t):
        vals = rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -1e300], n).tolist()
    elif pa.types.is_date32(t) or pa.types.is_date64(t):
        vals = [dt.date(1970, 1, 1) + dt.timedelta(days=int(d)) for d in rng.integers(-5000, 50000, n)]
    elif pa.types.is_decimal(t):
        vals = [decimal.Decimal(int(v)).scaleb(-3) for v in rng.integers(-(10**8), 10**8, n)]
    elif pa.types.is_list(t):
        vals = [list(range(int(k))) for k in rng.integers(0, 4, n)]
    else:
        vals = [WORDS[int(i)] + ("" if rng.random() < 0.7 else str(int(rng.integers(1000))))
                for i in rng.integers(0, len(WORDS), n)]
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            vals = [v.encode() for v in vals]
    return pa.array([None if z else v for z, v in zip(nulls, vals)], t)


def _table(seed: int, n: int, types: dict[str, pa.DataType]) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({name: _values(rng, t, n) for name, t in types.items()})


def _reader(path: Path) -> PageReader:
    return PageReader(path, DecodedCache())


WRITERS = st.fixed_dictionaries({
    "data_page_version": st.sampled_from(["1.0", "2.0"]),
    "use_dictionary": st.booleans(),
    "compression": st.sampled_from(["zstd", "snappy", "gzip", "none", "lz4", "brotli"]),
    "data_page_size": st.sampled_from([64, 512, 1 << 20]),
    "write_batch_size": st.sampled_from([1, 7, 64, 1024]),
    "write_page_checksum": st.booleans(),
    "dictionary_pagesize_limit": st.sampled_from([64, 1 << 20]),
})


@settings(max_examples=max(settings.default.max_examples // 2, 1))  # (a file written per example)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 400), options=WRITERS,
       group_rows=st.sampled_from([1, 33, 128, 100_000]), data=st.data())
def test_take_equals_pyarrow(tmp_path_factory, seed, n, options, group_rows, data):
    path = tmp_path_factory.mktemp("pages") / "t.parquet"
    table = _table(seed, n, {**PAGED, **COERCED, **OTHER})
    if data.draw(st.booleans()):  # integers and times delta-encoded, as data fragments have them
        integral = [f.name for f in table.schema if pa.types.is_integer(f.type) or pa.types.is_temporal(f.type)]
        options = {**options, "use_dictionary": False, "column_encoding": dict.fromkeys(integral, "DELTA_BINARY_PACKED")}
    pq.write_table(table, path, row_group_size=group_rows, write_page_index=True, **options)
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=0, max_size=n))), dtype=np.int64)
    names = data.draw(st.lists(st.sampled_from(table.column_names), min_size=1, max_size=5, unique=True))
    # (and in an order asked: a search's rows by score, repeats allowed; past CHUNK_PAGES
    # rows the fetch is reordered after, below it the values are picked in that order)
    order = _an_order(data, len(rows))
    with whole_columns(data.draw(st.booleans())):  # (every column read by whole row groups, or as it comes)
        got = _reader(path).take(rows, names)
        ordered = _reader(path).take(rows, names, order=order) if order is not None else None
    expected = pq.read_table(path).select(names).take(pa.array(rows))  # (date64 reads back as date32)
    assert _decoded(got).equals(_decoded(expected))
    if ordered is not None:
        assert _decoded(ordered).equals(_decoded(expected.take(pa.array(order))))


def _an_order(data: st.DataObject, n: int) -> np.ndarray | None:
    """None, or an order of ``n`` fetched rows: a permutation, or indexes with repeats."""
    if not n or not data.draw(st.booleans()):
        return None
    if data.draw(st.booleans()):
        return np.array(data.draw(st.permutations(range(n))), dtype=np.int64)
    return np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2 * n)), dtype=np.int64)


def test_a_narrow_column_fetched_for_many_rows_is_decoded_once_whole(tmp_path: Path) -> None:
    """A GROUP BY over many matches fetches its key for every match: a narrow column
    fetched for at least as many rows as it has pages is decoded once, whole, and kept,
    and later fetches of it take their rows from it; wide columns, and fetches of few rows
    before, go page by page."""
    path = tmp_path / "t.parquet"
    n = 50_000
    rng = np.random.default_rng(3)
    table = pa.table({"cat": pa.array([f"cat{i}" if i else None for i in rng.integers(0, 20, n)]),
                      "year": pa.array(rng.integers(1990, 2026, n), pa.int32()),
                      "body": pa.array(["word " * 20 + str(i) for i in range(n)])})
    pq.write_table(table, path, row_group_size=8192, write_page_index=True, data_page_size=512, write_batch_size=64)
    reader = _reader(path)

    def kept() -> list[str]:
        return sorted(key[-1] for key in reader._cache._items if "whole column" in key)

    pages = len(reader._pages_of(reader._column("year").leaf).first_rows)
    assert pages > 2 * page_reader.WHOLE_MIN_ROWS
    few = np.sort(rng.choice(n, 5, replace=False))
    assert not reader._reads_whole(reader._column("year"), len(few), few)  # (fewer rows than pages, small pages)
    assert reader.take(few, ["year"]).column(0).equals(table.column("year").take(pa.array(few)))
    assert kept() == []
    many = np.sort(rng.choice(n, 6000, replace=False))
    got = reader.take(many, ["cat", "year", "body"])
    assert got.equals(table.take(pa.array(many)))
    assert kept() == ["cat", "year"]  # (not body: 100 bytes a row)
    again = np.sort(rng.choice(n, 5000, replace=False))
    assert reader.take(again, ["cat"]).column(0).equals(table.column("cat").take(pa.array(again)))
    assert kept() == ["cat", "year"]  # (read again: none)
    assert reader._reads_whole(reader._column("year"), len(few))  # (kept whole: taken from it now)
    assert reader._reads_whole(reader._column("year"), 1)  # (however few the rows)
    scattered = np.sort(rng.choice(n, pages - 1, replace=False))  # (touching most pages: whole)
    assert _reader(path)._reads_whole(reader._column("cat"), len(scattered), scattered)
    assert not reader._reads_whole(reader._column("body"), len(many))  # (wide: never whole)
    one = np.array([n - 1])
    assert reader.take_codes(one, "cat").places is not None  # (its places in the kept codes)
    assert reader.take(few, ["year"]).column(0).equals(table.column("year").take(pa.array(few)))


def test_a_few_rows_of_large_pages_read_the_narrow_column_whole(tmp_path: Path) -> None:
    """A page is decoded from its start: once the pages a narrow column's fetches decoded
    hold half the file's rows (a few rows of a file written with a page a row group, as
    many writers do; or fetch after fetch), it is read whole, for at most about twice that
    work, and later rows are taken from it; rows of one page of four do not."""
    path = tmp_path / "t.parquet"
    n = 40_000
    table = pa.table({"id": pa.array(np.arange(n), pa.int64()), "body": pa.array([f"word {i} " * 20 for i in range(n)])})
    pq.write_table(table, path, row_group_size=10_000, write_page_index=True)  # (a page a row group)
    reader = _reader(path)
    assert len(reader._pages_of(reader._column("id").leaf).first_rows) == 4
    one = np.array([12_345])
    assert not reader._reads_whole(reader._column("id"), 1, one)  # (a quarter of the rows)
    two = np.array([5, 25_000])
    assert reader._reads_whole(reader._column("id"), 2, two)
    assert not reader._reads_whole(reader._column("body"), 2, two)  # (wide: page by page)
    assert reader.take(two, ["id", "body"]).equals(table.take(pa.array(two)))
    assert reader._reads_whole(reader._column("id"), 1, one)  # (kept: any rows from it)
    assert reader.take(one, ["id"]).column(0).to_pylist() == [12_345]
    again = _reader(path)  # (rows of one page a fetch, fetch after fetch: whole once they add up)
    assert not again._reads_whole(again._column("id"), 1, one)
    assert again._reads_whole(again._column("id"), 1, one)


@settings(max_examples=max(settings.default.max_examples // 2, 1))
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), options=WRITERS,
       group_rows=st.sampled_from([1, 33, 100_000]), whole=st.booleans(), data=st.data())
def test_take_codes_are_the_column_taken(tmp_path_factory, seed, n, options, group_rows, whole, data):
    """A text or integer column's codes at some rows (counting by the column needs no
    values): their keys at the codes are the values ``take`` gives, from the whole
    column's codes (places in them) or encoded from its pages; NULL coded as the number
    of keys."""
    path = tmp_path_factory.mktemp("codes") / "t.parquet"
    table = _table(seed, n, {"s": pa.string(), "l": pa.large_string(), "i": pa.int64(), "j": pa.int32()})
    pq.write_table(table, path, row_group_size=group_rows, write_page_index=True, **options)
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n))), dtype=np.int64)
    reader = _reader(path)
    with whole_columns(whole):
        for name in ("s", "l", "i", "j"):
            got = reader.take_codes(rows, name)
            assert (got.places is not None) == (whole and reader._reads_whole(reader._column(name), len(rows)))
            codes = got.row_codes()
            assert len(got) == len(rows) and len(set(got.keys.to_pylist())) == len(got.keys)
            values = got.keys.take(pa.array(codes, mask=codes == len(got.keys)))
            assert values.cast(table.schema.field(name).type).equals(table.column(name).take(pa.array(rows)).combine_chunks())
            assert got.counts().tolist() == np.bincount(codes, minlength=len(got.keys) + 1).tolist()


MULTI = {"i64": pa.int64(), "i32": pa.int32(), "f64": pa.float64(), "bool": pa.bool_(), "str": pa.string(),
         "ts_ms": pa.timestamp("ms"), "dec": pa.decimal128(12, 3)}


@given(files=st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(1, 300), WRITERS), min_size=2, max_size=4),
       data=st.data())
def test_rows_of_several_files_equal_each_files_own(tmp_path_factory, files, data):
    """take_rows over files written with different options (codecs, encodings, page
    versions; one file's string column perhaps large) gives each file's rows in turn."""
    root = tmp_path_factory.mktemp("files")
    parts, expected = [], []
    for i, (seed, n, options) in enumerate(files):
        types = dict(MULTI)
        if data.draw(st.booleans()):
            types["str"] = pa.large_string()  # (decodes otherwise: that column is fetched file by file)
        table = _table(seed, n, types)
        path = root / f"{i}.parquet"
        pq.write_table(table, path, row_group_size=data.draw(st.sampled_from([17, 100_000])), write_page_index=True,
                       **options)
        most = data.draw(st.sampled_from([CHUNK_PAGES, n]))  # (large fetches go file by file)
        rows = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=most))), dtype=np.int64)
        parts.append((_reader(path), rows))
        expected.append(pq.read_table(path).take(pa.array(rows)))
    if not any(len(rows) for _, rows in parts):
        return
    names = data.draw(st.lists(st.sampled_from(list(MULTI)), min_size=1, max_size=4, unique=True))
    first = next(t for t, (_, rows) in zip(expected, parts) if len(rows))
    want = pa.concat_tables([t.select(names).cast(first.select(names).schema) for t in expected])
    assert _decoded(take_rows(parts, names)).equals(_decoded(want))
    order = _an_order(data, want.num_rows)
    if order is not None:
        assert _decoded(take_rows(parts, names, order)).equals(_decoded(want.take(pa.array(order))))


def test_a_damaged_page_in_a_later_file_names_that_file(tmp_path: Path) -> None:
    paths = []
    for i in range(3):
        (tmp_path / str(i)).mkdir()
        path, _ = _paged_file(tmp_path / str(i))
        paths.append(path)
    pages = _reader(paths[2])._pages_of(1)
    assert pages is not None
    data = bytearray(paths[2].read_bytes())
    data[int(pages.offsets[3] + pages.sizes[3] - 3)] ^= 0x10
    paths[2].write_bytes(bytes(data))
    rows = np.array([int(pages.first_rows[3])])
    with pytest.raises(StorageError, match=f"{paths[2]}: a page of column .body. has a checksum mismatch"):
        take_rows([(_reader(p), rows) for p in paths], ["id", "body"])
    assert take_rows([(_reader(p), rows) for p in paths[:2]], ["body"]).num_rows == 2


def _decoded(table: pa.Table) -> pa.Table:
    """Dictionary columns as their values (two dictionaries may encode the same values),
    floats as their bits (NaN is not equal to itself)."""
    out = {}
    for name, col in zip(table.column_names, table.columns):
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        elif pa.types.is_floating(col.type):
            bits = pa.int32() if col.type == pa.float32() else pa.int64()
            col = pa.chunked_array([c.view(bits) for c in col.chunks], bits)
        out[name] = col
    return pa.table(out)


def test_every_paged_type_is_read_by_pages(tmp_path: Path) -> None:
    """The types the reader claims are decoded from pages, not left to pyarrow."""
    path = tmp_path / "t.parquet"
    table = _table(1, 200, {**PAGED, **COERCED, **OTHER})
    pq.write_table(table, path, write_page_index=True, data_page_version="2.0")
    reader = _reader(path)
    assert {n for n in table.column_names if reader._column(n) is not None} == set(PAGED) | set(COERCED)


def test_without_offset_index_rows_come_by_row_group(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    table = _table(2, 300, PAGED)
    pq.write_table(table, path, row_group_size=50)  # no page index
    reader = _reader(path)
    rows = np.array([0, 49, 50, 299])
    assert reader.take(rows, list(PAGED)).equals(table.take(pa.array(rows)))
    assert reader._column("i64") is None


def test_row_groups_of_many_pages(tmp_path: Path) -> None:
    """Pages and row groups of every size, first and last rows of each included."""
    path = tmp_path / "t.parquet"
    table = _table(3, 5000, {"id": pa.int64(), "body": pa.string(), "flag": pa.bool_()})
    pq.write_table(table, path, row_group_size=1234, data_page_size=256, write_batch_size=16,
                   write_page_index=True, data_page_version="2.0", compression="zstd")
    reader = _reader(path)
    edges = sorted({0, 4999} | {g * 1234 + d for g in range(5) for d in (-1, 0, 1) if 0 <= g * 1234 + d < 5000})
    rows = np.array(edges)
    assert reader.take(rows, ["id", "body", "flag"]).equals(table.take(pa.array(rows)))
    every = np.arange(5000)
    assert reader.take(every, ["body"]).equals(table.select(["body"]))


def test_no_rows(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    table = _table(4, 10, PAGED)
    pq.write_table(table, path, write_page_index=True)
    got = _reader(path).take(np.zeros(0, np.int64), ["str", "i64"])
    assert got.num_rows == 0 and got.schema == table.select(["str", "i64"]).schema


def _paged_file(tmp_path: Path) -> tuple[Path, pa.Table]:
    path = tmp_path / "t.parquet"
    table = _table(5, 3000, {"id": pa.int64(), "body": pa.string()})
    pq.write_table(table, path, data_page_size=512, write_batch_size=8, write_page_index=True,
                   write_page_checksum=True, data_page_version="2.0", compression="zstd", use_dictionary=False)
    return path, table


def test_a_flipped_bit_in_a_page_is_a_storage_error(tmp_path: Path) -> None:
    path, table = _paged_file(tmp_path)
    reader = _reader(path)
    pages = reader._pages_of(1)
    assert pages is not None
    page = len(pages.offsets) // 2
    at = int(pages.offsets[page] + pages.sizes[page] - 3)  # inside the page's values
    data = bytearray(path.read_bytes())
    data[at] ^= 0x10
    path.write_bytes(bytes(data))
    rows = np.arange(pages.first_rows[page], pages.first_rows[page] + 2)
    with pytest.raises(StorageError, match="checksum mismatch"):
        _reader(path).take(rows, ["body"])


@pytest.mark.parametrize("seed", range(40))
def test_damaged_pages_never_crash(tmp_path: Path, seed: int) -> None:
    """Random bytes over a page (its header included, so the CRC may be gone too):
    a StorageError or the right values, never a crash or other values."""
    path, table = _paged_file(tmp_path)
    pages = _reader(path)._pages_of(1)
    assert pages is not None
    rng = np.random.default_rng(seed)
    page = int(rng.integers(len(pages.offsets)))
    data = bytearray(path.read_bytes())
    lo = int(pages.offsets[page])
    for at in rng.integers(lo, lo + int(pages.sizes[page]), int(rng.integers(1, 6))):
        data[int(at)] = int(rng.integers(256))
    path.write_bytes(bytes(data))
    rows = np.arange(max(0, pages.first_rows[page] - 3), min(3000, pages.first_rows[page] + 12))
    try:
        got = _reader(path).take(rows, ["body"])
    except StorageError:
        return
    assert got.equals(table.select(["body"]).take(pa.array(rows)))


def test_rows_past_the_end_are_refused(tmp_path: Path) -> None:
    path, _ = _paged_file(tmp_path)
    with pytest.raises(StorageError, match="rows"):
        _reader(path).take(np.array([2999, 3000]), ["id"])
