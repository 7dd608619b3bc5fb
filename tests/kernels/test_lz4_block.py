"""The compiled LZ4 block decompression equals pyarrow's, and damaged blocks fail cleanly."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.kernels.lz4_block import decompress_blocks

LZ4 = pa.Codec("lz4_raw")


def _compress(data: bytes) -> bytes:
    return LZ4.compress(data, asbytes=True)


PAYLOADS = st.one_of(
    st.binary(max_size=3000),  # mostly incompressible
    st.lists(st.sampled_from([b"alpha ", b"beta ", b"\x00" * 40, b"gamma\n"]), max_size=400).map(b"".join),
    st.integers(0, 5000).map(lambda n: np.arange(n, dtype=np.int64).tobytes()),
    st.integers(0, 70_000).map(lambda n: b"x" * n),  # long runs: length bytes of 255
)


@given(st.lists(PAYLOADS, min_size=1, max_size=6))
def test_blocks_decompress_as_pyarrow_compressed_them(payloads):
    blocks = [_compress(p) for p in payloads]
    src = np.frombuffer(b"".join(blocks), dtype=np.uint8)
    ends = np.cumsum([len(b) for b in blocks])
    sizes = np.array([len(p) for p in payloads], dtype=np.int64)
    out, bad = decompress_blocks(src, ends - [len(b) for b in blocks], ends, sizes)
    assert bad == -1
    assert out.tobytes() == b"".join(payloads)


@given(PAYLOADS.filter(len), st.data())
def test_damaged_blocks_fail_or_decode_never_crash(payload, data):
    block = bytearray(_compress(payload))
    for _ in range(data.draw(st.integers(1, 4))):
        block[data.draw(st.integers(0, len(block) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(block)))
    src = np.frombuffer(bytes(block[:cut]), dtype=np.uint8)
    size = data.draw(st.sampled_from([len(payload), len(payload) - 1, len(payload) + 7, 0]))
    out, bad = decompress_blocks(src, np.array([0]), np.array([len(src)]), np.array([max(size, 0)]))
    assert bad in (-1, 0)
    if bad == -1:
        assert len(out) == max(size, 0)


def test_spans_outside_the_source_are_refused():
    src = np.frombuffer(_compress(b"abc" * 10), dtype=np.uint8)
    for lo, hi in ((0, len(src) + 1), (-1, 3), (5, 2)):
        assert decompress_blocks(src, np.array([lo]), np.array([hi]), np.array([30]))[1] == 0
