"""c_page_codecs: CRCs, ZSTD frames and LZ4 blocks through the C libraries, equal to
zlib's, zstandard's and pyarrow's, every damaged or out-of-bounds page found, never read
past its buffer."""

from __future__ import annotations

import os
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from datafusion_fts.storage.parquet import c_page_codecs, page_reader
from datafusion_fts.storage.parquet.c_page_codecs import check_crcs, decompress_frames, decompress_lz4_blocks

pytestmark = pytest.mark.skipif(not c_page_codecs.AVAILABLE, reason="no libz or libzstd on this system")


needs_lz4 = pytest.mark.skipif(not c_page_codecs.LZ4_AVAILABLE, reason="no liblz4 on this system")
LZ4 = pa.Codec("lz4_raw")


def _frames(pages: list[bytes], lz4: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    compressed = [LZ4.compress(p, asbytes=True) if lz4 else zstandard.ZstdCompressor(level=3).compress(p)
                  for p in pages]
    sizes = np.array([len(c) for c in compressed], dtype=np.int64)
    hi = np.cumsum(sizes)
    return np.frombuffer(b"".join(compressed), np.uint8), hi - sizes, hi, np.array([len(p) for p in pages])


@settings(max_examples=40)
@given(st.lists(st.binary(max_size=3000), max_size=12), st.data())
def test_frames_and_crcs_equal_the_python_libraries(pages, data):
    src, lo, hi, sizes = _frames(pages)
    out, bad = decompress_frames(src, lo, hi, sizes)
    assert bad == -1 and out.tobytes() == b"".join(pages)
    crc = np.array([zlib.crc32(src[a:b].tobytes()) for a, b in zip(lo, hi)], dtype=np.int64)
    has = np.array(data.draw(st.lists(st.booleans(), min_size=len(pages), max_size=len(pages))), dtype=bool)
    assert check_crcs(src, has, lo, hi, crc) == -1
    if len(pages):
        i = data.draw(st.integers(0, len(pages) - 1))
        wrong = crc.copy()
        wrong[i] ^= 1 << data.draw(st.integers(0, 31))
        first = next((j for j in range(len(pages)) if has[j] and wrong[j] != crc[j]), -1)
        assert check_crcs(src, has, lo, hi, wrong) == first
        longer = sizes.copy()
        longer[i] += 1  # (a page header claiming another size)
        assert decompress_frames(src, lo, hi, longer)[1] == i


def test_damaged_and_out_of_bounds_pages_are_found():
    pages = [bytes(range(256)) * 20, b"abc" * 999, b""]
    src, lo, hi, sizes = _frames(pages)
    damaged = src.copy()
    damaged[lo[1] + 6 : hi[1] - 4] ^= 0x5A
    assert decompress_frames(damaged, lo, hi, sizes)[1] == 1
    assert decompress_frames(src, lo, hi + len(src), sizes)[1] == 0
    assert decompress_frames(src, lo - 10**9, hi, sizes)[1] == 0
    assert check_crcs(src, np.ones(3, bool), lo, hi + len(src), np.zeros(3, np.int64)) == 0


@needs_lz4
@settings(max_examples=40)
@given(st.lists(st.one_of(st.binary(max_size=3000), st.integers(0, 70_000).map(lambda n: b"ab" * (n // 2))),
                max_size=12), st.data())
def test_lz4_blocks_equal_pyarrows(pages, data):
    src, lo, hi, sizes = _frames(pages, lz4=True)
    out, bad = decompress_lz4_blocks(src, lo, hi, sizes)
    assert bad == -1 and out.tobytes() == b"".join(pages)
    if len(pages):
        i = data.draw(st.integers(0, len(pages) - 1))
        for wrong in (1, -1):
            other = sizes.copy()
            other[i] += wrong  # (a page header claiming another size)
            if other[i] >= 0:
                assert decompress_lz4_blocks(src, lo, hi, other)[1] == i


@needs_lz4
@given(st.binary(min_size=1, max_size=2000), st.data())
def test_damaged_lz4_blocks_fail_or_decode_never_read_outside(page, data):
    src, lo, hi, sizes = _frames([page, b"tail" * 50], lz4=True)
    damaged = src.copy()
    at = data.draw(st.integers(int(lo[0]), int(hi[0]) - 1))
    damaged[at] ^= data.draw(st.integers(1, 255))
    out, bad = decompress_lz4_blocks(damaged, lo, hi, sizes)
    assert bad in (-1, 0)  # (a flipped literal byte still decodes, to other bytes of the same size)
    assert decompress_lz4_blocks(src, lo, hi + len(src), sizes)[1] == 0
    assert decompress_lz4_blocks(src, lo - 10**9, hi, sizes)[1] == 0


@pytest.mark.parametrize("codec", ["zstd", "lz4"])
def test_the_page_reader_reads_alike_with_and_without_them(tmp_path, monkeypatch, codec):
    """A fetch through the compiled calls equals one through zlib, zstandard and the
    package's own LZ4 decoder."""
    if codec == "lz4" and not c_page_codecs.LZ4_AVAILABLE:
        pytest.skip("no liblz4 on this system")
    path = tmp_path / "f.parquet"
    table = pa.table({"body": [f"row {i} " + "word " * (i % 40) for i in range(3000)], "n": np.arange(3000)})
    pq.write_table(table, path, compression=codec, data_page_size=2048, write_page_index=True,
                   write_page_checksum=True)
    rows = np.arange(0, 3000, 7)
    fast = page_reader.PageReader(path, page_reader.DecodedCache()).take(rows, ["body", "n"])
    monkeypatch.setattr(c_page_codecs, "AVAILABLE", False)
    monkeypatch.setattr(c_page_codecs, "LZ4_AVAILABLE", False)
    slow = page_reader.PageReader(path, page_reader.DecodedCache()).take(rows, ["body", "n"])
    assert fast.equals(slow) and fast.equals(table.take(pa.array(rows)))


def test_a_codec_the_kernel_does_not_know_is_refused():
    from datafusion_fts.kernels.page_codecs import bad_frame

    empty = np.zeros(0, np.int64)
    with pytest.raises(ValueError, match="codec 7"):
        bad_frame(7, 0, 0, np.zeros(1, np.uint8), empty, empty, empty, np.zeros(1, np.uint8))


def _outcome(path, rows: np.ndarray) -> pa.Table | str:
    try:
        return page_reader.PageReader(path, page_reader.DecodedCache()).take(rows, ["body", "n"])
    except page_reader.StorageError as exc:
        return str(exc)


@pytest.mark.parametrize("codec", ["zstd", "lz4", "none"])
@pytest.mark.parametrize("seed", range(16))
def test_small_pieces_read_alike_in_one_call_and_in_separate_loops(tmp_path, monkeypatch, codec, seed):
    """A small piece is checked and decompressed by one compiled call
    (``check_and_inflate``): the same values, and on a damaged file the same error
    naming the same page's fault, as the separate CRC and decompression loops."""
    if codec == "lz4" and not c_page_codecs.LZ4_AVAILABLE:
        pytest.skip("no liblz4 on this system")
    rng = np.random.default_rng(seed)
    path = tmp_path / "f.parquet"
    table = pa.table({"body": [f"row {i} " + "word " * int(rng.integers(0, 60)) for i in range(3000)],
                      "n": np.arange(3000)})
    # (damaged files without CRCs: their decompression finds the damage, or reads other values)
    pq.write_table(table, path, compression=codec, data_page_size=1024, write_page_index=True,
                   write_page_checksum=seed % 4 != 3, data_page_version=str(rng.choice(["1.0", "2.0"])))
    rows = np.unique(rng.integers(0, 3000, int(rng.integers(1, 40))))
    if seed % 2:  # (bytes changed somewhere in the pages of the rows fetched)
        data = bytearray(path.read_bytes())
        pages = page_reader.PageReader(path, page_reader.DecodedCache())._pages_of(0)
        page = int(np.searchsorted(pages.first_rows, rows[int(rng.integers(len(rows)))], side="right") - 1)
        lo = int(pages.offsets[page])
        for at in rng.integers(lo, lo + int(pages.sizes[page]), int(rng.integers(1, 4))):
            data[int(at)] ^= int(rng.integers(1, 256))
        path.write_bytes(bytes(data))
    one = _outcome(path, rows)
    monkeypatch.setattr(c_page_codecs, "FUSED_BYTES", -1)
    loops = _outcome(path, rows)
    assert type(one) is type(loops)
    assert one == loops if isinstance(one, str) else one.equals(loops)
    if not seed % 2:
        assert one.equals(table.take(pa.array(rows)))


def test_a_piece_past_the_fused_size_takes_the_separate_loops(monkeypatch):
    assert c_page_codecs.check_and_inflate("ZSTD", np.zeros(c_page_codecs.FUSED_BYTES + 1, np.uint8),
                                           np.zeros((0, 13), np.int64)) is None
    assert c_page_codecs.check_and_inflate("SNAPPY", np.zeros(10, np.uint8), np.zeros((0, 13), np.int64)) is None


@pytest.mark.parametrize("lz4", [False, True])
def test_one_call_finds_the_first_bad_crc_before_any_bad_frame(lz4):
    """``checked_and_inflated`` checks every CRC first (as the separate loops do), then
    decompresses, moving each compressed page's span after the raw pages."""
    from datafusion_fts.kernels.page_codecs import LZ4 as LZ4_KIND
    from datafusion_fts.kernels.page_codecs import ZSTD as ZSTD_KIND
    from datafusion_fts.kernels.page_codecs import checked_and_inflated
    from datafusion_fts.kernels.parquet_thrift import (
        S_CRC, S_CRC_HI, S_CRC_LO, S_FIELDS, S_HAS_CRC, S_PACKED, S_USIZE, S_VAL_HI, S_VAL_LO)

    if lz4 and not c_page_codecs.LZ4_AVAILABLE:
        pytest.skip("no liblz4 on this system")
    pages = [b"alpha " * 50, b"beta " * 70, os.urandom(300), b"gamma"]
    src, lo, hi, sizes = _frames(pages, lz4=lz4)

    def table() -> np.ndarray:
        spans = np.zeros((4, S_FIELDS), np.int64)
        spans[:, S_VAL_LO], spans[:, S_VAL_HI], spans[:, S_USIZE] = lo, hi, sizes
        spans[:, S_PACKED] = [1, 1, 1, 0]  # (the last page's values stored as they are)
        spans[:, S_HAS_CRC], spans[:, S_CRC_LO], spans[:, S_CRC_HI] = 1, lo, hi
        spans[:, S_CRC] = [zlib.crc32(src[a:b].tobytes()) for a, b in zip(lo, hi)]
        return spans

    kind, address = (LZ4_KIND, c_page_codecs._LZ4_DECOMPRESS) if lz4 else (ZSTD_KIND, c_page_codecs._DECOMPRESS_DCTX)
    context = 0 if lz4 else c_page_codecs._zstd_context()
    spans = table()
    buf, bad, why = checked_and_inflated(kind, *c_page_codecs._CRC32, address, context, src, spans)
    assert (bad, why) == (-1, 0)
    assert [buf[a:b].tobytes() for a, b in spans[:3, [S_VAL_LO, S_VAL_HI]]] == pages[:3]
    assert buf[: len(src)].tobytes() == src.tobytes()
    wrong = table()
    wrong[1, S_USIZE] += 1  # (a header claiming another size: found while decompressing)
    assert checked_and_inflated(kind, *c_page_codecs._CRC32, address, context, src, wrong)[1:] == (1, 1)
    wrong[3, S_CRC] ^= 1  # (and a later page's CRC: CRCs are checked first)
    assert checked_and_inflated(kind, *c_page_codecs._CRC32, address, context, src, wrong)[1:] == (3, 0)
    for size in (-5, 1 << 41):  # (a size out of range: that page fails, but after every CRC)
        wrong = table()
        wrong[0, S_USIZE] = size
        assert checked_and_inflated(kind, *c_page_codecs._CRC32, address, context, src, wrong)[1:] == (0, 1)
        wrong[3, S_CRC] ^= 1
        assert checked_and_inflated(kind, *c_page_codecs._CRC32, address, context, src, wrong)[1:] == (3, 0)


@pytest.mark.parametrize("lz4", [False, True])
def test_one_call_keeps_only_the_levels_where_every_page_is_compressed(lz4):
    """Where every page's values are compressed, ``checked_and_inflated`` keeps, before
    the decompressed values, only the data pages v2's levels (moving their spans there),
    not the raw pages; a level span out of bounds keeps the raw pages whole."""
    from datafusion_fts.kernels.page_codecs import LZ4 as LZ4_KIND
    from datafusion_fts.kernels.page_codecs import ZSTD as ZSTD_KIND
    from datafusion_fts.kernels.page_codecs import checked_and_inflated
    from datafusion_fts.kernels.parquet_thrift import (
        S_FIELDS, S_LEV_HI, S_LEV_LO, S_PACKED, S_USIZE, S_VAL_HI, S_VAL_LO)

    if lz4 and not c_page_codecs.LZ4_AVAILABLE:
        pytest.skip("no liblz4 on this system")
    pages = [b"alpha " * 50, b"beta " * 70, os.urandom(300), b"gamma"]
    src, lo, hi, sizes = _frames(pages, lz4=lz4)
    kind, address = (LZ4_KIND, c_page_codecs._LZ4_DECOMPRESS) if lz4 else (ZSTD_KIND, c_page_codecs._DECOMPRESS_DCTX)
    context = 0 if lz4 else c_page_codecs._zstd_context()
    levels = [(int(lo[0]), int(lo[0]) + 3), (-1, -1), (int(lo[2]), int(lo[2])), (int(lo[3]), int(lo[3]) + 2)]

    def table(levels: list[tuple[int, int]]) -> np.ndarray:
        spans = np.zeros((4, S_FIELDS), np.int64)
        spans[:, S_VAL_LO], spans[:, S_VAL_HI], spans[:, S_USIZE], spans[:, S_PACKED] = lo, hi, sizes, 1
        spans[:, [S_LEV_LO, S_LEV_HI]] = levels
        return spans

    spans = table(levels)
    buf, bad, why = checked_and_inflated(kind, *c_page_codecs._CRC32, address, context, src, spans)
    assert (bad, why) == (-1, 0)
    kept = b"".join(src[a:b].tobytes() for a, b in levels if a >= 0)
    assert len(buf) == len(kept) + sum(map(len, pages)) and buf[: len(kept)].tobytes() == kept
    assert [buf[a:b].tobytes() for a, b in spans[:, [S_VAL_LO, S_VAL_HI]]] == pages
    assert spans[:, [S_LEV_LO, S_LEV_HI]].tolist() == [[0, 3], [-1, -1], [3, 3], [3, 5]]
    spans = table([*levels[:3], (int(lo[3]), len(src) + 1)])  # (out of bounds: the raw pages kept)
    buf, bad, why = checked_and_inflated(kind, *c_page_codecs._CRC32, address, context, src, spans)
    assert (bad, why) == (-1, 0) and buf[: len(src)].tobytes() == src.tobytes()
    assert [buf[a:b].tobytes() for a, b in spans[:, [S_VAL_LO, S_VAL_HI]]] == pages
