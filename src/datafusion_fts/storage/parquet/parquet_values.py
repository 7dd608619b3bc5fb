"""Picking some values out of decoded Parquet pages: the compiled half of a row fetch.

A fetch gathers, per column, the pages its rows sit in (their decompressed bytes laid
end to end in one buffer) and asks :func:`select_values` for the wanted positions of
each page. Flat columns only (definition levels 0 or 1, no repetition); the encodings
are those Arrow's writer uses for them: PLAIN, RLE (booleans, levels) and the
dictionary encodings. Each page is walked once, front to back, up to its last wanted
value; bit-packed runs are read at the wanted offsets without unpacking the rest.

Every offset is checked against the page's bounds before it is read: damaged bytes
give an error code (the index of the page), never a read outside the buffer.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from numba import njit

from ...errors import StorageError
from .parquet_thrift import (
    S_ENCODING,
    S_LEV_HI,
    S_LEV_LO,
    S_V1,
    S_VAL_HI,
    S_VAL_LO,
    S_VALUES,
    uvarint,
    zigzag,
)

# Physical kinds a column decodes as.
BOOLEAN, FIXED, BYTES = 0, 1, 2
# Value encodings (parquet.thrift ``Encoding``).
PLAIN, PLAIN_DICTIONARY, RLE, DELTA_BINARY_PACKED, RLE_DICTIONARY = 0, 2, 3, 5, 8


@njit(cache=True, nogil=True)
def _le(buf, pos, width):
    """The ``width``-byte little-endian value at ``pos``, as int64 bits."""
    value = np.uint64(0)
    for j in range(width):
        value |= np.uint64(buf[pos + j]) << np.uint64(8 * j)
    return np.int64(value)


@njit(cache=True, nogil=True)
def _bits64(buf, bit, width):
    """The ``width``-bit value (LSB first, width <= 64) at bit ``bit``, as int64 bits;
    the caller has checked its bytes are in the buffer."""
    if width == 0:
        return np.int64(0)
    first = bit >> 3
    shift = np.uint64(bit & 7)
    n = ((bit + width - 1) >> 3) - first + 1  # bytes it spans: at most 9
    word = np.uint64(0)
    for j in range(min(n, 8)):
        word |= np.uint64(buf[first + j]) << np.uint64(8 * j)
    word >>= shift
    if n == 9:
        word |= np.uint64(buf[first + 8]) << (np.uint64(64) - shift)
    if width < 64:
        word &= (np.uint64(1) << np.uint64(width)) - np.uint64(1)
    return np.int64(word)


@njit(cache=True, nogil=True)
def _delta_pick(buf, lo, hi, valid, index, w0, w1, out):
    """Values ``index[w]`` (ascending over valid w) of a DELTA_BINARY_PACKED stream into
    ``out[w]``, decoding up to the last one (int64 arithmetic, wrapping as the writer's)."""
    block, pos = uvarint(buf, lo, hi)
    minis, pos = uvarint(buf, pos, hi)
    _, pos = uvarint(buf, pos, hi)  # (the count: the page header's bounds the wanted)
    first, pos = uvarint(buf, pos, hi)
    if pos < 0 or block <= 0 or minis <= 0 or block % minis != 0 or (block // minis) % 8 != 0:
        return False
    per_mini = block // minis
    value = zigzag(first)
    i = 0
    w = w0
    while w < w1 and (not valid[w] or index[w] == 0):
        if valid[w]:
            out[w] = value
        w += 1
    while w < w1:
        min_delta, pos = uvarint(buf, pos, hi)
        if pos < 0 or minis > hi - pos:
            return False
        min_delta = zigzag(min_delta)
        widths = pos
        pos += minis
        for m in range(minis):
            width = np.int64(buf[widths + m])
            size = per_mini * width // 8
            if width > 64 or size > hi - pos:
                return False
            if w >= w1:
                return True
            if width == 0 and index[w] > i + per_mini:  # (every delta is min_delta: skip it)
                value += per_mini * min_delta
                i += per_mini
                pos += size
                continue
            for j in range(per_mini):
                value = value + min_delta + _bits64(buf, pos * 8 + j * width, width)
                i += 1
                while w < w1 and (not valid[w] or index[w] == i):
                    if valid[w]:
                        out[w] = value
                    w += 1
                if w >= w1:
                    return True
            pos += size
    return True


@njit(cache=True, nogil=True)
def _run(buf, pos, end, width):
    """The next run of an RLE / bit-packed hybrid stream at ``pos``: (packed, count,
    value (an RLE run) or first byte (a packed run), next position); position -1 if
    damaged."""
    header = np.int64(0)
    shift = 0
    while True:
        if pos >= end or shift > 35:
            return False, 0, 0, -1
        b = np.int64(buf[pos])
        pos += 1
        header |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    if header & 1:
        count = (header >> 1) * 8
        size = (header >> 1) * width
        if size > end - pos:
            return False, 0, 0, -1
        return True, count, pos, pos + size
    size = (width + 7) >> 3
    if size > end - pos:
        return False, 0, 0, -1
    value = np.int64(0)
    for j in range(size):
        value |= np.int64(buf[pos + j]) << (8 * j)
    return False, header >> 1, value, pos + size


@njit(cache=True, nogil=True)
def _levels(buf, lo, hi, width, max_def, n_values, wanted, w0, w1, valid, index):
    """Definition levels of one page: for each wanted position ``wanted[w0:w1]``
    (ascending), whether it holds a value and which non-null value it is."""
    base = 0
    nonnull = 0
    w = w0
    pos = lo
    while w < w1:
        packed, count, x, pos = _run(buf, pos, hi, width)
        if pos < 0:
            return False
        stop = min(base + count, n_values)  # (a packed run pads to a multiple of 8)
        if not packed:
            full = x == max_def
            while w < w1 and wanted[w] < stop:
                valid[w] = full
                index[w] = nonnull + wanted[w] - base if full else -1
                w += 1
            if full:
                nonnull += stop - base
        else:
            for i in range(base, stop):
                present = _bits64(buf, x * 8 + (i - base) * width, width) == max_def
                if i == wanted[w]:
                    valid[w] = present
                    index[w] = nonnull if present else -1
                    w += 1
                    if w == w1:
                        break
                nonnull += present
        base = stop
        if base >= n_values and w < w1:
            return False
    return True


@njit(cache=True, nogil=True)
def _pick(buf, lo, hi, width, valid, index, w0, w1, out):
    """Values ``index[w]`` (ascending over valid w) of a hybrid stream into ``out[w]``."""
    base = 0
    pos = lo
    w = w0
    while w < w1:
        if not valid[w]:
            w += 1
            continue
        packed, count, x, pos = _run(buf, pos, hi, width)
        if pos < 0:
            return False
        stop = base + count
        while w < w1 and (not valid[w] or index[w] < stop):
            if valid[w]:
                out[w] = _bits64(buf, x * 8 + (index[w] - base) * width, width) if packed else x
            w += 1
        base = stop
    return True


@njit(cache=True, nogil=True)
def select_values(buf, spans, dict_n, page_of, wanted, kind, width, max_def, valid, a, b, coded):
    """The wanted values of a column's pages. Page p's definition levels are
    ``buf[spans[p, S_LEV_LO]:spans[p, S_LEV_HI]]`` (a data page v2's; a v1 page's open
    its values region, behind their 4-byte length) and its values ``buf[spans[p,
    S_VAL_LO]:spans[p, S_VAL_HI]]`` (see :func:`.parquet_thrift.page_spans`); a
    dictionary-encoded page's dictionary has ``dict_n[p]`` entries.

    Wanted row w is position ``wanted[w]`` of page ``page_of[w]`` (ascending). Out:
    ``valid[w]``, and its value as ``a[w]`` (BOOLEAN: 0/1; FIXED: its ``width`` bytes'
    value as int64 bits; BYTES: the offset of its bytes) and ``b[w]`` (BYTES: their length);
    for a row of a dictionary-encoded page, ``coded[w]`` and its entry as ``a[w]``, which
    the caller looks up in the page's dictionary (never copied into ``buf``: a dictionary
    page is up to a MiB, a fetch wants a few of its entries).
    Returns -1, or the index of the first damaged page."""
    n = wanted.shape[0]
    index = np.empty(n, dtype=np.int64)
    level_width = 1 if max_def > 0 else 0
    w0 = 0
    while w0 < n:
        p = page_of[w0]
        w1 = w0
        while w1 < n and page_of[w1] == p:
            w1 += 1
        lo, hi, n_values = spans[p, S_VAL_LO], spans[p, S_VAL_HI], spans[p, S_VALUES]
        if wanted[w1 - 1] >= n_values or lo < 0 or hi > buf.shape[0] or lo > hi:
            return p
        if max_def > 0:
            l_lo, l_hi = spans[p, S_LEV_LO], spans[p, S_LEV_HI]
            if spans[p, S_V1]:  # levels inside the values region, behind their length
                if hi - lo < 4:
                    return p
                l_lo = lo + 4
                l_hi = l_lo + _le(buf, lo, 4)
                lo = l_hi
                if l_hi > hi:
                    return p
            if not _levels(buf, l_lo, l_hi, level_width, max_def, n_values, wanted, w0, w1, valid, index):
                return p
        else:
            for w in range(w0, w1):
                valid[w] = True
                index[w] = wanted[w]
        enc = spans[p, S_ENCODING]
        if enc == PLAIN_DICTIONARY or enc == RLE_DICTIONARY:
            if lo >= hi or buf[lo] > 32:
                return p
            if not _pick(buf, lo + 1, hi, np.int64(buf[lo]), valid, index, w0, w1, a):
                return p
            if kind == BOOLEAN:
                return p  # (no writer dictionary-encodes booleans)
            for w in range(w0, w1):
                if not valid[w]:
                    continue
                if a[w] < 0 or a[w] >= dict_n[p]:
                    return p
                coded[w] = True
        elif enc == DELTA_BINARY_PACKED and kind == FIXED:
            if not _delta_pick(buf, lo, hi, valid, index, w0, w1, a):
                return p
        elif enc == RLE and kind == BOOLEAN:
            if hi - lo < 4 or _le(buf, lo, 4) > hi - lo - 4:
                return p
            if not _pick(buf, lo + 4, lo + 4 + _le(buf, lo, 4), 1, valid, index, w0, w1, a):
                return p
        elif enc != PLAIN:
            return p
        elif kind == BOOLEAN:
            for w in range(w0, w1):
                if valid[w]:
                    at = lo + (index[w] >> 3)
                    if at >= hi:
                        return p
                    a[w] = (buf[at] >> (index[w] & 7)) & 1
        elif kind == FIXED:
            for w in range(w0, w1):
                if valid[w]:
                    at = lo + index[w] * width
                    if at + width > hi:
                        return p
                    a[w] = _le(buf, at, width)
        else:
            pos = lo
            i = 0
            for w in range(w0, w1):
                if not valid[w]:
                    continue
                while i < index[w]:  # step over the values before it
                    if hi - pos < 4:
                        return p
                    pos += 4 + _le(buf, pos, 4)
                    i += 1
                if hi - pos < 4 or _le(buf, pos, 4) > hi - pos - 4:
                    return p
                a[w] = pos + 4
                b[w] = _le(buf, pos, 4)
        w0 = w1
    return -1


@njit(cache=True, nogil=True)
def plain_entries(buf, lo, hi, n):
    """Offsets and lengths of the ``n`` PLAIN byte arrays in ``buf[lo:hi]`` (a
    dictionary page); ok False if they do not fit."""
    starts = np.empty(n, dtype=np.int64)
    lens = np.empty(n, dtype=np.int64)
    pos = lo
    for i in range(n):
        if hi - pos < 4 or _le(buf, pos, 4) > hi - pos - 4:
            return starts, lens, False
        starts[i] = pos + 4
        lens[i] = _le(buf, pos, 4)
        pos += 4 + lens[i]
    return starts, lens, True


@njit(cache=True, nogil=True)
def locate_rows(first_rows, rows):
    """For ascending ``rows``: the distinct pages they sit in (indexes into the pages'
    ``first_rows``), the index of each row's page among those, and its row in the page."""
    n = rows.shape[0]
    used = np.empty(n, dtype=np.int64)
    page_of = np.empty(n, dtype=np.int64)
    wanted = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        page = np.searchsorted(first_rows, rows[i], side="right") - 1
        if m == 0 or used[m - 1] != page:
            used[m] = page
            m += 1
        page_of[i] = m - 1
        wanted[i] = rows[i] - first_rows[page]
    return used[:m], page_of, wanted


@njit(cache=True, nogil=True)
def gather_bytes(buf, valid, starts, lens):
    """The offsets (``n + 1``) and bytes of values ``i`` = ``buf[starts[i]:][:lens[i]]``
    laid end to end, a null (``valid[i]`` False) taking none."""
    n = starts.shape[0]
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    for i in range(n):
        offsets[i + 1] = offsets[i] + (lens[i] if valid[i] else 0)
    out = np.empty(offsets[n], dtype=np.uint8)
    for i in range(n):
        s, o = starts[i], offsets[i]
        out[o : offsets[i + 1]] = buf[s : s + offsets[i + 1] - o]  # (a slice copies faster than a byte loop)
    return offsets, out


def validity(valid: np.ndarray) -> tuple[pa.Buffer | None, int]:
    """An Arrow validity bitmap of ``valid`` (None when nothing is null) and the null count."""
    nulls = int(len(valid) - np.count_nonzero(valid))
    return (pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None), nulls


def bytes_array(arrow_type: pa.DataType, valid: np.ndarray, offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """A string or binary array of ``arrow_type`` from int64 ``offsets`` (``n + 1``) into
    ``data``; more than 2 GiB refused where the type's offsets are 32-bit."""
    large = pa.types.is_large_string(arrow_type) or pa.types.is_large_binary(arrow_type)
    if not large and offsets[-1] >= 2**31:
        raise StorageError("a fetch of more than 2 GiB of one string column: fetch fewer rows at a time")
    mask, nulls = validity(valid)
    buffers = [mask, pa.py_buffer(offsets if large else offsets.astype(np.int32)), pa.py_buffer(data)]
    return pa.Array.from_buffers(arrow_type, len(valid), buffers, null_count=nulls)
