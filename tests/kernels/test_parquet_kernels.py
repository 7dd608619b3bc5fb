"""The Parquet kernels (kernels/parquet_thrift.pyx, parquet_values.pyx) on what the page
reader's tests do not feed them: every truncation of a real page header, nesting deeper
than the walk allows, and copies outside their buffers (refused, never done)."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from datafusion_fts.kernels.parquet_thrift import (
    DATA_PAGE_V2,
    H_FIELDS,
    H_LEN,
    H_TYPE,
    page_headers,
)
from datafusion_fts.kernels.parquet_values import gather_bytes, place_bytes


def _header() -> bytes:
    """The first page header of a file pyarrow writes (data page v2, with a CRC)."""
    out = io.BytesIO()
    pq.write_table(pa.table({"x": [1, 2, 3]}), out, data_page_version="2.0", compression="none", use_dictionary=False,
                   write_page_checksum=True)
    raw = np.frombuffer(out.getvalue()[4:], np.uint8)  # (after the magic)
    head = np.empty((1, H_FIELDS), np.int64)
    assert page_headers(raw, np.zeros(1, np.int64), np.array([len(raw)]), head) == -1
    assert head[0, H_TYPE] == DATA_PAGE_V2
    return raw[: head[0, H_LEN]].tobytes()


def _parse(data: bytes, end: int | None = None) -> int:
    buf = np.frombuffer(data, np.uint8)
    return page_headers(buf, np.zeros(1, np.int64), np.array([len(buf) if end is None else end]),
                        np.empty((1, H_FIELDS), np.int64))


def test_every_truncated_header_is_damaged():
    header = _header()
    for cut in range(len(header)):
        assert _parse(header[:cut]) == 0
    assert _parse(header, len(header) + 1) == 0  # (an end past the bytes given)


def test_nesting_past_the_limit_is_damaged():
    """An unknown field holding structs 40 deep: skipped up to 32 levels, refused past."""
    for depth, bad in ((20, -1), (40, 0)):
        nested = b"\x6c" + b"\x1c" * (depth - 1) + b"\x00" * depth  # (field 6 of the page header)
        header = _header()
        assert _parse(header[:-1] + nested + b"\x00" + bytes(1000)) == bad


def test_copies_outside_their_buffers_are_refused():
    buf = np.arange(10, dtype=np.uint8)
    offsets, data = gather_bytes(buf, np.array([True, False]), np.array([8, 50]), np.array([2, 5]))
    assert offsets.tolist() == [0, 2, 2] and data.tolist() == [8, 9]  # (a null's span is not read)
    with pytest.raises(ValueError):
        gather_bytes(buf, np.array([True]), np.array([9]), np.array([2]))
    out = np.zeros(4, np.uint8)
    with pytest.raises(ValueError):
        place_bytes(buf, np.array([0, 3, 10]), np.array([1]), np.array([0]), np.array([0, 4]), out)
    assert not out.any()  # (nothing written)
    place_bytes(buf, np.array([0, 3, 5]), np.array([1, 0]), np.array([0, 1]), np.array([0, 2, 5]), np.zeros(5, np.uint8))
