"""empty_bytes: large buffers aligned to huge pages, alive as long as what wraps them."""

from __future__ import annotations

import gc
import mmap

import numpy as np
import pyarrow as pa
import pytest

from datafusion_fts.storage.parquet.huge_pages import HUGE_PAGE, empty_bytes


@pytest.mark.parametrize("n", [0, 1, 4096, HUGE_PAGE - 1, HUGE_PAGE, 3 * HUGE_PAGE + 5])
def test_empty_bytes_size_and_alignment(n):
    out = empty_bytes(n)
    assert out.dtype == np.uint8 and out.shape == (n,) and out.flags.writeable
    out[:] = 7
    assert int(out.sum()) == 7 * n
    if n >= HUGE_PAGE and hasattr(mmap, "MADV_HUGEPAGE"):
        assert out.ctypes.data % HUGE_PAGE == 0


def test_a_buffer_keeps_its_mapping_alive():
    out = empty_bytes(HUGE_PAGE + 10)
    out[:] = np.arange(len(out)) % 251
    buffer = pa.py_buffer(out)
    del out
    gc.collect()
    assert np.array_equal(np.frombuffer(buffer, np.uint8), np.arange(HUGE_PAGE + 10) % 251)
