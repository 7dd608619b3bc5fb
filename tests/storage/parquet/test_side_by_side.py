"""side_by_side: a loop over many pages cut in parts of about equal weight, run at once;
every index covered once, results in order, the first damaged item found whichever part
holds it (the CRC, ZSTD, LZ4 and ``pread`` loops cut so)."""

from __future__ import annotations

import os
import threading
import zlib

import numpy as np
import pyarrow as pa
import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.errors import StorageError
from datafusion_fts.storage.parquet import c_page_codecs, file_ranges
from datafusion_fts.storage.parquet.side_by_side import cuts, side_by_side


@given(st.lists(st.integers(0, 1000), max_size=60), st.integers(1, 5000))
def test_cuts_cover_every_index_once_in_order(weights, least):
    w = np.array(weights, dtype=np.int64)
    parts = cuts(w, least)
    assert parts[0][0] == 0 and parts[-1][1] == len(w)
    assert all(a < b for a, b in parts) or parts == [(0, len(w))]
    assert all(parts[i][1] == parts[i + 1][0] for i in range(len(parts) - 1))
    assert len(parts) <= (os.cpu_count() or 1)
    if len(parts) > 1:
        assert w.sum() >= 2 * least


def test_parts_run_on_other_threads_and_come_back_in_order():
    seen = []

    def run(a: int, b: int) -> tuple[int, int]:
        seen.append(threading.get_ident())
        return a, b

    parts = side_by_side(np.ones(100), 10, run)
    assert parts == cuts(np.ones(100), 10)
    if (os.cpu_count() or 1) > 1:
        assert len(parts) > 1 and len(set(seen)) > 1


@pytest.fixture
def small_parts(monkeypatch):
    """Every loop cut in as many parts as there are cores, whatever its size."""
    monkeypatch.setattr(c_page_codecs, "CRC_PART_BYTES", 1)
    monkeypatch.setattr(c_page_codecs, "ZSTD_PART_BYTES", 1)
    monkeypatch.setattr(c_page_codecs, "LZ4_PART_BYTES", 1)
    monkeypatch.setattr(file_ranges, "PART_WEIGHT", 1)
    monkeypatch.setattr(file_ranges, "RANGE_WEIGHT", 1)


@pytest.mark.skipif(not c_page_codecs.AVAILABLE, reason="no libz or libzstd on this system")
def test_frames_and_crcs_in_parts_find_the_first_damaged_page(small_parts):
    pages = [bytes([i]) * (100 + 37 * i) + os.urandom(50) for i in range(40)]
    compressed = [zstandard.ZstdCompressor().compress(p) for p in pages]
    sizes = np.array([len(c) for c in compressed], dtype=np.int64)
    hi = np.cumsum(sizes)
    lo = hi - sizes
    src = np.frombuffer(b"".join(compressed), np.uint8)
    plain = np.array([len(p) for p in pages])
    out, bad = c_page_codecs.decompress_frames(src, lo, hi, plain)
    assert bad == -1 and out.tobytes() == b"".join(pages)
    crc = np.array([zlib.crc32(c) for c in compressed], dtype=np.int64)
    has = np.ones(40, bool)
    assert c_page_codecs.check_crcs(src, has, lo, hi, crc) == -1
    for first in (0, 17, 39):  # (in the first part, a middle one, the last)
        longer, wrong = plain.copy(), crc.copy()
        longer[[first, 39]] += 1
        wrong[[first, 39]] ^= 1
        assert c_page_codecs.decompress_frames(src, lo, hi, longer)[1] == first
        assert c_page_codecs.check_crcs(src, has, lo, hi, wrong) == first


@pytest.mark.skipif(not c_page_codecs.LZ4_AVAILABLE, reason="no liblz4 on this system")
def test_lz4_blocks_in_parts_find_the_first_damaged_page(small_parts):
    pages = [bytes([i]) * (100 + 37 * i) + os.urandom(50) for i in range(40)]
    compressed = [pa.Codec("lz4_raw").compress(p, asbytes=True) for p in pages]
    sizes = np.array([len(c) for c in compressed], dtype=np.int64)
    hi = np.cumsum(sizes)
    plain = np.array([len(p) for p in pages])
    out, bad = c_page_codecs.decompress_lz4_blocks(np.frombuffer(b"".join(compressed), np.uint8), hi - sizes, hi,
                                                   plain)
    assert bad == -1 and out.tobytes() == b"".join(pages)
    for first in (0, 17, 39):
        longer = plain.copy()
        longer[[first, 39]] += 1
        assert c_page_codecs.decompress_lz4_blocks(np.frombuffer(b"".join(compressed), np.uint8), hi - sizes, hi,
                                                   longer)[1] == first


def test_ranges_in_parts_read_alike_and_say_which_file_is_short(small_parts, tmp_path):
    data = os.urandom(50_000)
    path = tmp_path / "f"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        offsets = np.array([0, 10, 4000, 4100, 30_000, 49_000, 7], dtype=np.int64)
        sizes = np.array([10, 3990, 100, 900, 5000, 1000, 13], dtype=np.int64)
        fds = np.full(len(sizes), fd, dtype=np.int64)
        out = file_ranges.read_ranges(fds, offsets, sizes, {fd: str(path)})
        assert out.tobytes() == b"".join(data[o : o + s] for o, s in zip(offsets, sizes))
        offsets[4] = 49_999  # (past the end: short)
        with pytest.raises(StorageError, match="damaged data file .*5000 bytes wanted at 49999"):
            file_ranges.read_ranges(fds, offsets, sizes, {fd: str(path)})
    finally:
        os.close(fd)
