"""The bit-packed postings codec (``bp128``): what it writes reads back as it was given,
at the edges of its blocks and bit widths, through every reader (whole lists, probes at
rows, and the kernels' cursors) and in every layout (``bp128-ordinals`` too: rows packed
as ordinals); segments written before it (``u32``) still open and search the same; damage
is a StorageError naming the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import datafusion_fts as fts
from datafusion_fts.kernels.invert import BLOCK_SIZE
from datafusion_fts.kernels.posting_cursor import cursor_moves
from datafusion_fts.kernels.postings_codec import DamagedPostings, count_postings, gather, pack_positions, pack_postings, rank
from datafusion_fts.query import Boolean, Match, Phrase

ROW_MAX = 2**32 - 1  # the largest local row a segment can hold (rows are uint32)
NONE = np.zeros(0, np.int64)
UNSEEN = np.zeros(0, np.uint8)  # (count_postings without marking rows seen)
EDGE_LENGTHS = [0, 1, 2, BLOCK_SIZE - 1, BLOCK_SIZE, BLOCK_SIZE + 1, 2 * BLOCK_SIZE, 2 * BLOCK_SIZE + 1]


@st.composite
def posting_lists(draw, with_positions: bool):
    """Terms' postings: ascending uint32 rows (the largest ones and gaps of 32 bits
    included), tfs >= 1 (up to 2^32 - 1 without positions), ascending uint32 positions."""
    lists = []
    for _ in range(draw(st.integers(0, 4))):
        n = draw(st.sampled_from(EDGE_LENGTHS) | st.integers(0, 3 * BLOCK_SIZE))
        style = draw(st.sampled_from(["dense", "sparse", "edges"]))
        if style == "dense":
            lo = draw(st.integers(0, ROW_MAX - n))
            rows = lo + np.arange(n, dtype=np.int64) * draw(st.integers(1, 3))
            rows = rows[rows <= ROW_MAX]
        elif style == "sparse":
            rows = np.unique(np.array(draw(st.lists(st.integers(0, ROW_MAX), min_size=n, max_size=n)), np.int64))
        else:  # the first and the last row a segment holds: a gap of 32 bits
            middle = draw(st.lists(st.integers(1, ROW_MAX - 1), min_size=max(n - 2, 0), max_size=max(n - 2, 0)))
            rows = np.unique(np.array([0, *middle, ROW_MAX] if n > 1 else [ROW_MAX] * n, np.int64))
        m = len(rows)
        top = 5 if with_positions else ROW_MAX
        tfs = np.array(draw(st.lists(st.integers(1, 2) | st.integers(1, top), min_size=m, max_size=m)), np.int64)
        positions = []
        if with_positions:
            for tf in tfs:
                far = draw(st.lists(st.integers(0, ROW_MAX), min_size=int(tf), max_size=int(tf), unique=True))
                positions.append(np.sort(np.array(far, np.int64)))
        lists.append((rows.astype(np.uint32), tfs.astype(np.uint32), positions))
    return lists


def _rows_or_any(rows: np.ndarray) -> st.SearchStrategy[int]:
    """A row of ``rows`` or any row a segment can hold."""
    anywhere = st.integers(0, ROW_MAX)
    return st.sampled_from(rows.tolist()) | anywhere if len(rows) else anywhere


def _raw(lists: list) -> tuple[np.ndarray, ...]:
    """The u32 layout of ``lists``: post_offsets, rows, tfs, pos_offsets, positions,
    block_offsets, block_last_row (what the builder and block_metadata give)."""
    counts = [len(r) for r, _, _ in lists]
    post_offsets = np.zeros(len(lists) + 1, np.int64)
    np.cumsum(counts, out=post_offsets[1:])
    rows = np.concatenate([r for r, _, _ in lists]) if lists else np.zeros(0, np.uint32)
    tfs = np.concatenate([t for _, t, _ in lists]) if lists else np.zeros(0, np.uint32)
    flat = [p for _, _, ps in lists for p in ps]
    pos_offsets = np.zeros(len(flat) + 1, np.int64)
    np.cumsum([len(p) for p in flat], out=pos_offsets[1:])
    positions = np.concatenate(flat).astype(np.uint32) if flat else np.zeros(0, np.uint32)
    block_offsets = np.zeros(len(lists) + 1, np.int64)
    np.cumsum([(c + BLOCK_SIZE - 1) // BLOCK_SIZE for c in counts], out=block_offsets[1:])
    last = [rows[min(s + BLOCK_SIZE, post_offsets[t + 1]) - 1]
            for t in range(len(lists)) for s in range(post_offsets[t], post_offsets[t + 1], BLOCK_SIZE)]
    return post_offsets, rows, tfs, pos_offsets, positions, block_offsets, np.array(last, np.uint32)


def _sources(lists: list, with_positions: bool):
    """Every layout of ``lists`` as the readers take them: [(source, position source)]:
    bit-packed, bit-packed as ordinals among rows holding text (theirs and as many
    others, which no term of ``lists`` holds), one uint32 a row."""
    post_offsets, rows, tfs, pos_offsets, positions, block_offsets, last = _raw(lists)
    bits, words_at, words = pack_postings(post_offsets, rows, tfs, block_offsets)
    ords = np.unique(np.concatenate([rows, rows // 2])).astype(np.uint32)
    o_bits, o_words_at, o_words = pack_postings(post_offsets, np.searchsorted(ords, rows).astype(np.uint32), tfs,
                                                block_offsets)
    u32 = np.zeros(0, np.uint32)
    i64 = np.zeros(0, np.int64)
    if with_positions:
        pos_at, pos_words = pack_positions(post_offsets, pos_offsets, positions, block_offsets)
    else:
        pos_at, pos_words, pos_offsets, positions = i64, u32, i64, u32
    packed = ((words, words_at, bits, u32, u32, last, u32), (pos_words, pos_at, i64, u32))
    ordinals = ((o_words, o_words_at, o_bits, u32, u32, last, ords), (pos_words, pos_at, i64, u32))
    plain = ((u32, i64, np.zeros(0, np.uint8), rows, tfs, last, u32), (u32, i64, pos_offsets, positions))
    return post_offsets, block_offsets, [packed, ordinals, plain]


@given(posting_lists(with_positions=False))
def test_whole_lists_read_back_as_written(lists):
    post_offsets, block_offsets, layouts = _sources(lists, False)
    for src, psrc in layouts:
        for t, (rows, tfs, _) in enumerate(lists):
            start, end, blk0 = post_offsets[t], post_offsets[t + 1], block_offsets[t]
            got = gather(src, psrc, start, end, blk0, start, end, NONE, False, NONE, False)
            assert np.array_equal(got[0], rows) and np.array_equal(got[1], tfs)
            alone = gather(src, psrc, start, end, blk0, start, end, NONE, False, NONE, False, False)
            assert np.array_equal(alone[0], rows) and len(alone[1]) == 0  # (rows only: no tfs decoded)


@settings(max_examples=max(settings.default.max_examples // 2, 1))  # (~0.13 s an example)
@given(posting_lists(with_positions=True))
def test_positions_read_back_as_written(lists):
    post_offsets, block_offsets, layouts = _sources(lists, True)
    for src, psrc in layouts:
        for t, (rows, tfs, positions) in enumerate(lists):
            start, end, blk0 = post_offsets[t], post_offsets[t + 1], block_offsets[t]
            got_rows, got_tfs, offsets, got = gather(src, psrc, start, end, blk0, start, end, NONE, False, NONE, True)
            assert np.array_equal(got_rows, rows) and np.array_equal(got_tfs, tfs)
            assert [got[offsets[i]:offsets[i + 1]].tolist() for i in range(len(rows))] == [p.tolist() for p in positions]


@given(posting_lists(with_positions=False), st.data())
def test_probes_and_ranks_decode_only_what_they_need_and_agree(lists, data):
    post_offsets, block_offsets, layouts = _sources(lists, False)
    for t, (rows, tfs, _) in enumerate(lists):
        start, end, blk0 = post_offsets[t], post_offsets[t + 1], block_offsets[t]
        probes = np.unique(np.array(data.draw(st.lists(_rows_or_any(rows), max_size=20)), np.int64))
        drop = np.unique(np.array(data.draw(st.lists(_rows_or_any(rows), max_size=5)), np.int64))
        a = start + data.draw(st.integers(0, end - start))
        b = data.draw(st.integers(a, end))
        keep = (np.isin(rows[a - start:b - start], probes)) & ~np.isin(rows[a - start:b - start], drop)
        for src, psrc in layouts:
            got = gather(src, psrc, start, end, blk0, a, b, probes, True, drop, False)
            assert np.array_equal(got[0], rows[a - start:b - start][keep])
            assert np.array_equal(got[1], tfs[a - start:b - start][keep])
            alone = gather(src, psrc, start, end, blk0, a, b, probes, True, drop, False, False)  # (rows only)
            assert np.array_equal(alone[0], got[0]) and len(alone[1]) == 0
            for p in probes[:5]:
                assert rank(src, start, end, blk0, int(p)) == start + int(np.searchsorted(rows, p))


@st.composite
def near_lists(draw):
    """Terms' postings over rows 0..5,000 (a column's codes can cover them): block edges
    included, sparse or dense."""
    lists = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.sampled_from(EDGE_LENGTHS) | st.integers(0, 3 * BLOCK_SIZE))
        if draw(st.booleans()):
            rows = np.arange(n, dtype=np.int64) * draw(st.integers(1, 3)) + draw(st.integers(0, 100))
        else:
            rows = np.unique(np.array(draw(st.lists(st.integers(0, 5_000), min_size=n, max_size=n)), np.int64))
        lists.append((rows.astype(np.uint32), np.ones(len(rows), np.uint32), []))
    return lists


@given(near_lists(), st.sampled_from([np.uint8, np.uint16, np.int32]), st.data())
def test_counts_by_codes_are_the_codes_of_the_rows_read(lists, code_type, data):
    """``count_postings`` (a match set counted by a column's codes as its postings are
    unpacked) over any range of a term's postings, with rows dropped or not, every layout:
    the counts of the codes at the rows ``gather`` reads."""
    post_offsets, block_offsets, layouts = _sources(lists, False)
    n_keys = data.draw(st.integers(1, 300 if code_type != np.uint8 else 255))
    shift = data.draw(st.integers(0, 7))
    codes = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).integers(0, n_keys, 5_400 + shift).astype(code_type)
    for t, (rows, _, _) in enumerate(lists):
        start, end, blk0 = post_offsets[t], post_offsets[t + 1], block_offsets[t]
        a = start + data.draw(st.integers(0, end - start))
        b = data.draw(st.integers(a, end))
        drop = np.unique(np.array(data.draw(st.lists(_rows_or_any(rows), max_size=5)), np.int64))
        for src, psrc in layouts:
            read = gather(src, psrc, start, end, blk0, a, b, NONE, False, drop, False, False)[0]
            counts = np.zeros(n_keys, np.int64)
            count_postings(src, start, end, blk0, a, b, drop, codes, shift, counts, UNSEEN)
            assert counts.tolist() == np.bincount(codes[read.astype(np.int64) + shift], minlength=n_keys).tolist()
    # Every term's postings counted in turn, each row once (a union of the terms):
    for src, _ in layouts:
        seen, counts, union = np.zeros(len(codes), np.uint8), np.zeros(n_keys, np.int64), set()
        for t, (rows, _, _) in enumerate(lists):
            count_postings(src, post_offsets[t], post_offsets[t + 1], block_offsets[t], post_offsets[t], post_offsets[t + 1],
                        NONE, codes, shift, counts, seen)
            union.update(rows.tolist())
        assert counts.tolist() == np.bincount(codes[np.array(sorted(union), np.int64) + shift],
                                              minlength=n_keys).tolist()


def test_counting_damaged_postings_raises_and_reads_no_code_past_the_column():
    """Row gaps that no longer add up to a block's stored last row: DamagedPostings, and
    no row past the column is looked up (codes sized to the rows written)."""
    rows = np.arange(0, 3 * BLOCK_SIZE, 1, dtype=np.uint32) * 2
    post_offsets, block_offsets, layouts = _sources([(rows, np.ones(len(rows), np.uint32), [])], False)
    (words, words_at, bits, u32, _, last, ords), _ = layouts[0]
    damaged = (words ^ np.uint32(0x5A5A5A5A), words_at, bits, u32, u32, last, ords)
    codes = np.zeros(int(rows[-1]) + 1, np.uint8)
    with pytest.raises(DamagedPostings):
        count_postings(damaged, 0, len(rows), 0, 0, len(rows), NONE, codes, 0, np.zeros(1, np.int64), UNSEEN)


@pytest.mark.parametrize("layout", [0, 1, 2])
def test_rows_past_the_codes_are_counted_only_if_dropped(layout):
    """Ids past a fragment's file (rows deleted before it was written) have no code: such
    rows are dropped, and counting one that is not is damage, never a read past the codes."""
    rows = np.arange(0, 3 * BLOCK_SIZE, dtype=np.uint32)
    post_offsets, block_offsets, layouts = _sources([(rows, np.ones(len(rows), np.uint32), [])], False)
    src, _ = layouts[layout]
    codes = np.arange(2 * BLOCK_SIZE + 10, dtype=np.int32) % 7
    past = np.arange(len(codes), len(rows), dtype=np.int64)
    counts = np.zeros(7, np.int64)
    count_postings(src, 0, len(rows), 0, 0, len(rows), past, codes, 0, counts, UNSEEN)
    assert counts.tolist() == np.bincount(codes, minlength=7).tolist()
    with pytest.raises(DamagedPostings):
        count_postings(src, 0, len(rows), 0, 0, len(rows), past[1:], codes, 0, np.zeros(7, np.int64), UNSEEN)


@given(posting_lists(with_positions=False), st.data())
def test_cursors_seek_and_advance_to_the_first_row_at_or_past_their_target(lists, data):
    post_offsets, block_offsets, layouts = _sources(lists, False)
    starts, ends, blk0s = post_offsets[:-1].copy(), post_offsets[1:].copy(), block_offsets[:-1].copy()
    for t, (rows, _, _) in enumerate(lists):
        targets = np.array(sorted(data.draw(st.lists(_rows_or_any(rows), max_size=30))), np.int64)
        by_advance = np.arange(len(targets), dtype=np.uint8) % 2  # (seek, advance, seek, ...)
        skip = data.draw(st.booleans())
        for src, _ in layouts:
            curs, got, damaged = cursor_moves(src, starts, ends, blk0s, t, targets, by_advance, skip, 0)
            assert np.array_equal(curs, starts[t] + np.searchsorted(rows, targets))
            inside = curs < ends[t]
            assert np.array_equal(got[inside], rows[curs[inside] - starts[t]])
            assert damaged == 0  # (no block reported damaged)


@pytest.mark.parametrize("skip", [False, True])
def test_advance_past_postings_it_did_not_decode_lands_on_the_first_row_at_or_past_the_target(skip):
    """An advance steps past postings whose block ends below the target without decoding
    them; the seek it then hands over to must not read the row of such a posting (it read
    whatever the cursor's buffer held: a stale row at or past the target stopped it
    there, 95 postings short)."""
    lists = [(np.arange(127, dtype=np.uint32), np.ones(127, np.uint32), [])]
    post_offsets, block_offsets, layouts = _sources(lists, False)
    starts, ends, blk0s = post_offsets[:-1].copy(), post_offsets[1:].copy(), block_offsets[:-1].copy()
    for src, _ in layouts:
        # (buffers of bytes 0x80, rows 2^31 + ...: what a buffer may hold before its rows are decoded)
        curs, _, _ = cursor_moves(src, starts, ends, blk0s, 0, np.array([24, 127]), np.array([0, 1], np.uint8), skip, 0x80)
        assert curs.tolist() == [24, 127] and ends[0] == 127


def _library(path: Path) -> fts.Database:
    """The rows of the u32 fixture, indexed now (bp128)."""
    old = fts.connect(path)
    rows = old.table("docs").to_arrow()
    db = fts.connect()
    t = db.create_table("docs", pa.table({"id": rows.column("id"), "body": rows.column("body")}))
    t.create_index("body", positions=True)
    return db


QUERIES = [
    Match("body", "alpha"), Match("body", "rare"), Match("body", "beta gamma"),
    Match("body", "alpha kappa", operator="and"), Boolean(must=[Match("body", "delta")], must_not=[Match("body", "beta")]),
    Phrase("body", "alpha beta"), Phrase("body", "gamma alpha", slop=2), Match("body", "epsilo", fuzziness=1),
    "alp*", '+beta -"alpha alpha"',
]


def test_a_database_written_with_u32_segments_opens_and_searches_the_same(tmp_path):
    fixture = Path(__file__).parent / "fixtures" / "u32-database"
    path = tmp_path / "old"
    shutil.copytree(fixture, path)
    manifest = json.loads((path / "manifest.json").read_text())
    segments = manifest["tables"]["docs"]["indexes"]["body"]["segments"]
    assert segments and all("codec" not in s for s in segments)  # (written before there was one)
    old = fts.connect(path).table("docs")
    assert {s.codec for s in old.snapshot().meta.indexes["body"].segments} == {"u32"}
    new = _library(path).table("docs")
    for query in QUERIES:
        for limit in (3, None):
            got, want = old.search(query, limit=limit, columns=["id"]), new.search(query, limit=limit, columns=["id"])
            assert got.column("id").to_pylist() == want.column("id").to_pylist(), query
            assert got.column("_score").to_pylist() == want.column("_score").to_pylist(), query


def test_optimize_rewrites_u32_segments_as_bp128_with_the_same_answers(tmp_path):
    path = tmp_path / "old"
    shutil.copytree(Path(__file__).parent / "fixtures" / "u32-database", path)
    db = fts.connect(path)
    t = db.table("docs")
    before = [t.search(q, limit=5, columns=[]) for q in QUERIES]
    t.optimize()
    assert {s.codec for s in t.snapshot().meta.indexes["body"].segments} == {"bp128"}
    assert [t.search(q, limit=5, columns=[]) for q in QUERIES] == before


def _indexed(path: Path, codec: str = "bp128") -> Path:
    """The directory of the one segment of a table of 700 rows, in ``codec``: most rows
    deleted before OPTIMIZE for ``bp128-ordinals``."""
    db = fts.connect(path, config={"fts.gc_grace_seconds": 0})
    words = ["alpha", "beta", "gamma", "delta"]
    body = [" ".join(words[: 1 + i % 4] * (1 + i % 3)) for i in range(2800 if codec != "bp128" else 700)]
    t = db.create_table("docs", pa.table({"id": range(len(body)), "body": body}))
    t.create_index("body", positions=True)
    if codec != "bp128":
        t.delete("id % 4 <> 0")
        t.optimize()
    (seg,) = t.snapshot().meta.indexes["body"].segments
    assert seg.codec == codec
    return path / "index" / seg.id


def _search_error(path: Path) -> str:
    with pytest.raises(fts.StorageError) as err:
        fts.connect(path).table("docs").search('alpha "beta gamma"', limit=10, columns=[])
    return str(err.value)


def test_a_truncated_index_file_is_a_storage_error_naming_it(tmp_path):
    seg = _indexed(tmp_path / "db")
    data = (seg / "post_words.arrow").read_bytes()
    (seg / "post_words.arrow").write_bytes(data[: len(data) // 2])
    assert "post_words.arrow" in _search_error(tmp_path / "db")


@pytest.mark.parametrize("name, damage", [
    ("block_words", lambda a: a + np.arange(len(a)) * 3),  # offsets past the packed blocks
    ("block_bits", lambda a: np.full_like(a, 40)),  # widths above 32 bits
    ("post_offsets", lambda a: a[::-1].copy()),  # not ascending
    ("block_last_row", lambda a: a + np.uint32(10_000)),  # rows outside the segment
    ("post_words", lambda a: a ^ np.uint32(0x5A5A5A5A)),  # row gaps that no longer add up
])
@pytest.mark.parametrize("codec", ["bp128", "bp128-ordinals"])
def test_a_damaged_index_file_is_a_storage_error_naming_it(tmp_path, name, damage, codec):
    seg = _indexed(tmp_path / "db", codec)
    path = seg / f"{name}.arrow"
    array = pa.ipc.open_file(pa.memory_map(str(path))).read_all().column(0).to_numpy()
    batch = pa.record_batch([pa.array(damage(array))], names=[name])
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, batch.schema) as writer:
        writer.write_batch(batch)
    assert f"{name}.arrow" in _search_error(tmp_path / "db")
