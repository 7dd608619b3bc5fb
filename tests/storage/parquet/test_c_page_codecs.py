"""c_page_codecs: CRCs, ZSTD frames and LZ4 blocks through the C libraries, equal to
zlib's, zstandard's and pyarrow's, every damaged or out-of-bounds page found, never read
past its buffer."""

from __future__ import annotations

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
