"""CRC-32 through libdeflate (storage/files/crc32.py): the value is zlib's for every input
the callers pass, and the compiled page loops find the same bad page whichever library
they call."""

from __future__ import annotations

import os
import zlib

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from datafusion_fts.kernels.page_codecs import first_bad_crc
from datafusion_fts.storage.files import crc32 as crc_module
from datafusion_fts.storage.files.c_libraries import address, load
from datafusion_fts.storage.files.crc32 import DEFLATE_MIN_BYTES, LIBDEFLATE_CRC, LIBZ_CRC, crc32

_LIBZ = load("z", ("crc32",), "libz.so.1")
_DEFLATE = load("deflate", ("libdeflate_crc32",), "libdeflate.so.0")


@settings(max_examples=200, deadline=None)
@given(size=st.integers(0, 3 * DEFLATE_MIN_BYTES), start=st.integers(0, 64), value=st.integers(0, 2**32 - 1))
def test_crc32_is_zlibs_for_every_input_kind(size: int, start: int, value: int) -> None:
    data = os.urandom(start + size)
    array = np.frombuffer(data, dtype=np.uint8)[start:]  # (an unaligned start too)
    want = zlib.crc32(data[start:], value)
    assert crc32(data[start:], value) == want
    assert crc32(memoryview(data)[start:], value) == want
    assert crc32(array, value) == want
    assert crc32(pa.py_buffer(data).slice(start), value) == want


def test_a_file_summed_in_pieces_is_summed_whole() -> None:
    data = os.urandom(5 << 20)
    assert crc32(data[3_000_000:], crc32(data[:3_000_000])) == zlib.crc32(data)


def test_without_libdeflate_it_is_zlib(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(crc_module, "_DEFLATE", None)
    data = os.urandom(3 * DEFLATE_MIN_BYTES)
    assert crc32(data, 7) == zlib.crc32(data, 7)


def _kinds() -> list[tuple[int, int]]:
    kinds = []
    if _LIBZ is not None:
        kinds.append((address(_LIBZ.crc32), LIBZ_CRC))
    if _DEFLATE is not None:
        kinds.append((address(_DEFLATE.libdeflate_crc32), LIBDEFLATE_CRC))
    return kinds


@pytest.mark.skipif(_LIBZ is None or _DEFLATE is None, reason="needs both libz and libdeflate to compare them")
def test_the_page_loops_find_the_same_bad_page_through_either_library() -> None:
    rng = np.random.default_rng(5)
    sizes = rng.integers(0, 9000, 300)
    src = rng.integers(0, 256, int(sizes.sum()), dtype=np.uint8)
    hi = np.cumsum(sizes)
    lo = hi - sizes
    crc = np.array([zlib.crc32(src[a:b]) for a, b in zip(lo, hi)], dtype=np.int64)
    has = np.ones(len(sizes), dtype=np.uint8)
    has[::7] = 0
    for bad in (-1, 0, 41, 150, 299):
        wrong = crc.copy()
        if bad >= 0:
            wrong[bad] ^= 1 << 31
            has[bad] = 1
        found = [first_bad_crc(fn, kind, src, has, lo, hi, wrong) for fn, kind in _kinds()]
        assert found == [bad, bad]


def test_an_unknown_kind_of_crc_function_is_refused() -> None:
    src = np.zeros(8, dtype=np.uint8)
    one = np.ones(1, dtype=np.int64)
    with pytest.raises(ValueError, match="kind 0 or 1"):
        first_bad_crc(1, 2, src, np.ones(1, dtype=np.uint8), one * 0, one, one)


def test_the_kernels_call_libdeflate_where_the_system_has_it() -> None:
    assert crc_module.KERNEL_CRC32 is not None
    assert crc_module.KERNEL_CRC32[1] == (LIBDEFLATE_CRC if _DEFLATE is not None else LIBZ_CRC)


@pytest.mark.parametrize("compiled", [True, False])
def test_the_first_bad_region_of_those_asked(monkeypatch: pytest.MonkeyPatch, compiled: bool) -> None:
    if not compiled:
        monkeypatch.setattr(crc_module, "KERNEL_CRC32", None)
    region = 1000
    data = np.frombuffer(os.urandom(10 * region + 321), dtype=np.uint8).copy()
    crcs = np.array([zlib.crc32(data[r * region : (r + 1) * region]) for r in range(11)], dtype=np.uint32)
    every = np.arange(11)
    assert crc_module.first_bad_region(data, crcs, region, every) == -1
    data[7 * region + 5] ^= 1
    data[10 * region + 300] ^= 1  # (the short last region)
    assert crc_module.first_bad_region(data, crcs, region, every) == 7
    assert crc_module.first_bad_region(data, crcs, region, np.array([0, 3, 10])) == 10
    assert crc_module.first_bad_region(data, crcs, region, np.array([2, 4])) == -1
    assert crc_module.first_bad_region(data, crcs, region, np.array([], dtype=np.int64)) == -1
