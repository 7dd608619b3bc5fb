# distutils: extra_compile_args = -fwrapv
"""Picking some values out of decoded Parquet pages: the compiled half of a row fetch.

A fetch gathers, per column, the pages its rows sit in (their decompressed bytes laid
end to end in one buffer) and asks :func:`select_values` for the wanted positions of
each page. Flat columns only (definition levels 0 or 1, no repetition); the encodings
are those Arrow's writer uses for them: PLAIN, RLE (booleans, levels) and the
dictionary encodings. Each page is walked once, front to back, up to its last wanted
value; bit-packed runs are read at the wanted offsets without unpacking the rest.

Every offset is checked against the page's bounds before it is read: damaged bytes
give an error code (the index of the page), never a read outside the buffer. The int64
arithmetic of DELTA_BINARY_PACKED wraps around as the writer's (``-fwrapv``).

The picked byte arrays are then copied end to end (:func:`gather_bytes`), and a
reordered fetch's copied into their places (:func:`place_bytes`).
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.string cimport memcpy

from datafusion_fts.kernels.parquet_thrift cimport (
    S_ENCODING,
    S_FIELDS,
    S_LEV_HI,
    S_LEV_LO,
    S_V1,
    S_VAL_HI,
    S_VAL_LO,
    S_VALUES,
    uvarint,
    zigzag,
)

cdef enum:
    # Physical kinds a column decodes as.
    BOOLEAN = 0
    FIXED = 1
    BYTES = 2

cdef enum:
    # Value encodings (parquet.thrift ``Encoding``).
    PLAIN = 0
    PLAIN_DICTIONARY = 2
    RLE = 3
    DELTA_BINARY_PACKED = 5
    RLE_DICTIONARY = 8

# For Python callers (the page reader) too.
globals().update(
    BOOLEAN=BOOLEAN, FIXED=FIXED, BYTES=BYTES, PLAIN=PLAIN, PLAIN_DICTIONARY=PLAIN_DICTIONARY, RLE=RLE,
    DELTA_BINARY_PACKED=DELTA_BINARY_PACKED, RLE_DICTIONARY=RLE_DICTIONARY,
)


cdef inline int64_t _le(const uint8_t* buf, int64_t pos, int64_t width) noexcept nogil:
    """The ``width``-byte little-endian value at ``pos``, as int64 bits."""
    cdef uint64_t value = 0
    cdef int64_t j
    for j in range(width):
        value |= (<uint64_t>buf[pos + j]) << (8 * j)
    return <int64_t>value


cdef inline int64_t _bits64(const uint8_t* buf, int64_t bit, int64_t width) noexcept nogil:
    """The ``width``-bit value (LSB first, width <= 64) at bit ``bit``, as int64 bits;
    the caller has checked its bytes are in the buffer."""
    if width == 0:
        return 0
    cdef int64_t first = bit >> 3, j
    cdef int shift = bit & 7
    cdef int64_t n = ((bit + width - 1) >> 3) - first + 1  # bytes it spans: at most 9
    cdef uint64_t word = 0
    for j in range(n if n < 8 else 8):
        word |= (<uint64_t>buf[first + j]) << (8 * j)
    word >>= shift
    if n == 9:
        word |= (<uint64_t>buf[first + 8]) << (64 - shift)
    if width < 64:
        word &= ((<uint64_t>1) << width) - 1
    return <int64_t>word


cdef bint _delta_pick(const uint8_t* buf, int64_t lo, int64_t hi, const uint8_t* valid, const int64_t* index,
                      int64_t w0, int64_t w1, int64_t* out) noexcept nogil:
    """Values ``index[w]`` (ascending over valid w) of a DELTA_BINARY_PACKED stream into
    ``out[w]``, decoding up to the last one (int64 arithmetic, wrapping as the writer's)."""
    cdef int64_t block, minis, count, first, per_mini, value, i, w, m, j, min_delta, widths, width, size
    cdef int64_t pos = uvarint(buf, lo, hi, &block)
    pos = uvarint(buf, pos, hi, &minis)
    pos = uvarint(buf, pos, hi, &count)  # (the count: the page header's bounds the wanted)
    pos = uvarint(buf, pos, hi, &first)
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
        pos = uvarint(buf, pos, hi, &min_delta)
        if pos < 0 or minis > hi - pos:
            return False
        min_delta = zigzag(min_delta)
        widths = pos
        pos += minis
        for m in range(minis):
            width = buf[widths + m]
            # (a miniblock of more than the bytes left: per_mini * width / 8 > hi - pos,
            # per_mini a multiple of 8, compared without overflowing)
            if width > 64 or (width and per_mini > (hi - pos) * 8 // width):
                return False
            size = per_mini * width // 8
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


cdef inline int64_t _run(const uint8_t* buf, int64_t pos, int64_t end, int64_t width, bint* packed,
                         int64_t* count, int64_t* x) noexcept nogil:
    """The next run of an RLE / bit-packed hybrid stream at ``pos``: whether it is packed,
    its count of values, and its value (an RLE run) or first byte (a packed run) into
    ``packed``, ``count``, ``x``; returns the next position, or -1 if damaged."""
    cdef int64_t header = 0, b, size, j
    cdef int shift = 0
    packed[0], count[0], x[0] = False, 0, 0
    while True:
        if pos >= end or shift > 35:
            return -1
        b = buf[pos]
        pos += 1
        header |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    if header & 1:
        size = (header >> 1) * width
        if size > end - pos:
            return -1
        packed[0], count[0], x[0] = True, (header >> 1) * 8, pos
        return pos + size
    size = (width + 7) >> 3
    if size > end - pos:
        return -1
    for j in range(size):
        x[0] |= (<int64_t>buf[pos + j]) << (8 * j)
    count[0] = header >> 1
    return pos + size


cdef bint _levels(const uint8_t* buf, int64_t lo, int64_t hi, int64_t width, int64_t max_def, int64_t n_values,
                  const int64_t* wanted, int64_t w0, int64_t w1, uint8_t* valid, int64_t* index) noexcept nogil:
    """Definition levels of one page: for each wanted position ``wanted[w0:w1]``
    (ascending), whether it holds a value and which non-null value it is."""
    cdef int64_t base = 0, nonnull = 0, w = w0, pos = lo, count, x, stop, i
    cdef bint packed, full, present
    while w < w1:
        pos = _run(buf, pos, hi, width, &packed, &count, &x)
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


cdef bint _pick(const uint8_t* buf, int64_t lo, int64_t hi, int64_t width, const uint8_t* valid,
                const int64_t* index, int64_t w0, int64_t w1, int64_t* out) noexcept nogil:
    """Values ``index[w]`` (ascending over valid w) of a hybrid stream into ``out[w]``."""
    cdef int64_t base = 0, pos = lo, w = w0, count, x, stop
    cdef bint packed
    while w < w1:
        if not valid[w]:
            w += 1
            continue
        pos = _run(buf, pos, hi, width, &packed, &count, &x)
        if pos < 0:
            return False
        stop = base + count
        while w < w1 and (not valid[w] or index[w] < stop):
            if valid[w]:
                out[w] = _bits64(buf, x * 8 + (index[w] - base) * width, width) if packed else x
            w += 1
        base = stop
    return True


cdef int64_t _select(const uint8_t* buf, int64_t n_buf, const int64_t* spans, const int64_t* dict_n,
                     const int64_t* page_of, const int64_t* wanted, int64_t n, int64_t kind, int64_t width,
                     int64_t max_def, uint8_t* valid, int64_t* index, int64_t* a, int64_t* b,
                     uint8_t* coded) noexcept nogil:
    """:func:`select_values` on raw pointers (``index``: room for ``n`` positions)."""
    cdef int64_t level_width = 1 if max_def > 0 else 0
    cdef int64_t w0 = 0, w1, w, p, lo, hi, n_values, l_lo, l_hi, enc, at, pos, i
    cdef const int64_t* span
    while w0 < n:
        p = page_of[w0]
        w1 = w0
        while w1 < n and page_of[w1] == p:
            w1 += 1
        span = spans + p * S_FIELDS
        lo, hi, n_values = span[S_VAL_LO], span[S_VAL_HI], span[S_VALUES]
        if wanted[w1 - 1] >= n_values or lo < 0 or hi > n_buf or lo > hi:
            return p
        if max_def > 0:
            l_lo, l_hi = span[S_LEV_LO], span[S_LEV_HI]
            if span[S_V1]:  # levels inside the values region, behind their length
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
        enc = span[S_ENCODING]
        if enc == PLAIN_DICTIONARY or enc == RLE_DICTIONARY:
            if lo >= hi or buf[lo] > 32:
                return p
            if not _pick(buf, lo + 1, hi, buf[lo], valid, index, w0, w1, a):
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


def select_values(const uint8_t[::1] buf, const int64_t[:, ::1] spans, const int64_t[::1] dict_n,
                  const int64_t[::1] page_of, const int64_t[::1] wanted, int64_t kind, int64_t width,
                  int64_t max_def, uint8_t[::1] valid, int64_t[::1] a, int64_t[::1] b, uint8_t[::1] coded) -> int:
    """The wanted values of a column's pages. Page p's definition levels are
    ``buf[spans[p, S_LEV_LO]:spans[p, S_LEV_HI]]`` (a data page v2's; a v1 page's open
    its values region, behind their 4-byte length) and its values ``buf[spans[p,
    S_VAL_LO]:spans[p, S_VAL_HI]]`` (see :func:`.parquet_thrift.page_spans`); a
    dictionary-encoded page's dictionary has ``dict_n[p]`` entries.

    Wanted row w is position ``wanted[w]`` of page ``page_of[w]`` (ascending, each page
    a row of ``spans``). Out: ``valid[w]`` (a bool array), and its value as ``a[w]``
    (BOOLEAN: 0/1; FIXED: its ``width`` bytes' value as int64 bits; BYTES: the offset of
    its bytes) and ``b[w]`` (BYTES: their length); for a row of a dictionary-encoded
    page, ``coded[w]`` (a bool array) and its entry as ``a[w]``, which the caller looks up
    in the page's dictionary (never copied into ``buf``: a dictionary page is up to a
    MiB, a fetch wants a few of its entries).
    Returns -1, or the index of the first damaged page."""
    cdef int64_t n = wanted.shape[0], bad
    if spans.shape[1] != S_FIELDS or dict_n.shape[0] != spans.shape[0]:
        raise ValueError("a span table and a dictionary size per page wanted")
    if not page_of.shape[0] == valid.shape[0] == a.shape[0] == b.shape[0] == coded.shape[0] == n:
        raise ValueError("as many pages, valid flags, values and coded flags as wanted rows wanted")
    index_array = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] index = index_array
    with nogil:
        bad = _select(&buf[0], buf.shape[0], &spans[0, 0], &dict_n[0], &page_of[0], &wanted[0], n, kind, width,
                      max_def, &valid[0], &index[0], &a[0], &b[0], &coded[0])
    return bad


def plain_entries(const uint8_t[::1] buf, int64_t lo, int64_t hi, int64_t n) -> tuple[np.ndarray, np.ndarray, bool]:
    """Offsets and lengths of the ``n`` PLAIN byte arrays in ``buf[lo:hi]`` (a
    dictionary page); ok False if they do not fit (each takes 4 bytes at least)."""
    if not 0 <= lo <= hi <= buf.shape[0]:
        raise ValueError(f"bytes {lo}..{hi} of {buf.shape[0]}")
    if not 0 <= n <= (hi - lo) // 4:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), False
    starts_array = np.empty(n, dtype=np.int64)
    lens_array = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] starts = starts_array, lens = lens_array
    cdef const uint8_t* data = &buf[0]
    cdef int64_t pos = lo, i
    cdef bint ok = True
    with nogil:
        for i in range(n):
            if hi - pos < 4 or _le(data, pos, 4) > hi - pos - 4:
                ok = False
                break
            starts[i] = pos + 4
            lens[i] = _le(data, pos, 4)
            pos += 4 + lens[i]
    return starts_array, lens_array, ok


def locate_rows(const int64_t[::1] first_rows, const int64_t[::1] rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For ascending ``rows``: the distinct pages they sit in (indexes into the pages'
    ``first_rows``), the index of each row's page among those, and its row in the page.
    A row before the first page is in page -1, counted from the last (as numpy indexes)."""
    cdef int64_t n = rows.shape[0], n_pages = first_rows.shape[0], m = 0, i, lo, hi, mid, page
    if n and not n_pages:
        raise ValueError("rows of no pages")
    found = np.empty((3, n), dtype=np.int64)  # (one allocation: used, page_of, wanted)
    cdef int64_t[:, ::1] out = found
    with nogil:
        for i in range(n):
            lo, hi = 0, n_pages  # (numpy's binary search for side="right")
            while lo < hi:
                mid = lo + ((hi - lo) >> 1)
                if first_rows[mid] <= rows[i]:
                    lo = mid + 1
                else:
                    hi = mid
            page = lo - 1
            if m == 0 or out[0, m - 1] != page:
                out[0, m] = page
                m += 1
            out[1, i] = m - 1
            out[2, i] = rows[i] - first_rows[page if page >= 0 else page + n_pages]
    return found[0, :m], found[1], found[2]


def gather_bytes(const uint8_t[::1] buf, const uint8_t[::1] valid, const int64_t[::1] starts,
                 const int64_t[::1] lens) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (``n + 1``) and bytes of values ``i`` = ``buf[starts[i]:][:lens[i]]``
    laid end to end, a null (``valid[i]`` False; a bool array) taking none."""
    cdef int64_t n = starts.shape[0], i, size
    if not valid.shape[0] == lens.shape[0] == n:
        raise ValueError("a valid flag, start and length per value wanted")
    offsets_array = np.empty(n + 1, dtype=np.int64)
    cdef int64_t[::1] offsets = offsets_array
    cdef bint outside = False
    with nogil:
        offsets[0] = 0
        for i in range(n):
            size = lens[i] if valid[i] else 0
            outside |= size < 0 or size > 0 and (starts[i] < 0 or starts[i] > buf.shape[0] - size)
            offsets[i + 1] = offsets[i] + size
    if outside:
        raise ValueError("a value outside the buffer")
    out_array = np.empty(offsets[n], dtype=np.uint8)
    cdef uint8_t[::1] out = out_array
    with nogil:
        for i in range(n):
            memcpy(&out[offsets[i]], &buf[starts[i]], offsets[i + 1] - offsets[i])
    return offsets_array, out_array


def place_bytes(const uint8_t[::1] data, const int64_t[::1] offsets, const int64_t[::1] rows,
                const int64_t[::1] targets, const int64_t[::1] out_offsets, uint8_t[::1] out) -> None:
    """Value ``rows[i]`` of a chunk of a text or binary column (bytes
    ``data[offsets[r]:offsets[r + 1]]``) to output position ``targets[i]`` (bytes
    ``out[out_offsets[t]:]``): a reordering's copies, one call per chunk."""
    cdef int64_t n = rows.shape[0], i, r, t, size
    cdef bint outside = False
    if targets.shape[0] != n:
        raise ValueError("a target per row wanted")
    with nogil:
        for i in range(n):  # (every copy checked first: nothing is written if one is outside)
            r, t = rows[i], targets[i]
            if not (0 <= r < offsets.shape[0] - 1 and 0 <= t < out_offsets.shape[0]):
                outside = True
                break
            size = offsets[r + 1] - offsets[r]
            outside |= size < 0 or offsets[r] < 0 or offsets[r + 1] > data.shape[0]
            outside |= out_offsets[t] < 0 or out_offsets[t] > out.shape[0] - size
        if not outside:
            for i in range(n):
                r = rows[i]
                memcpy(&out[out_offsets[targets[i]]], &data[offsets[r]], offsets[r + 1] - offsets[r])
    if outside:
        raise ValueError("a value outside its chunk or the output")
