"""Bit-packed postings (codec ``bp128``): a term's postings in blocks of ``BLOCK_SIZE``,
each block packed with its own bit widths, and the compiled loops that write and read
them.

A term's postings are cut in blocks of ``BLOCK_SIZE`` (the last one partial). For block
``b`` of ``n`` postings, ``block_bits[2b]`` and ``block_bits[2b + 1]`` are the bit widths
of its row gaps and of its term frequencies minus one, and ``post_words[block_words[b] :
block_words[b + 1]]`` holds, packed least significant bit first, the ``n`` row gaps (a
row minus the row before minus 1; before a term's first block the row before is -1,
before a later block it is the previous block's last row, ``block_last_row[b - 1]``,
which pruning keeps uncompressed anyway) and then the ``n`` values ``tf - 1``. With
positions, ``pos_words[block_pos_words[b] : block_pos_words[b + 1]]`` holds a width
word, then every position of the block's postings, each posting's first as is and the
others as the difference to the one before (modulo 2^32, so any uint32 positions
round-trip). Both word arrays end with ``PAD`` zero words: a value is read as the 64
bits from its first word on, one word past the block's last at most.

Block metadata stays uncompressed, so pruning passes whole blocks without decoding them;
a cursor decodes a block's rows when it enters it, as far as it needs
(``load_rows_from`` in postings_codec.pxd), and its frequencies when it scores a row of
it (``load_tfs``).

The first layout (codec ``u32``: one uint32 per row, term frequency and position, plus
int64 position offsets per posting) is read through the same loaders, which then copy
instead of decoding: segments written that way, and the in-memory segments of fresh rows
and unindexed tails (built and read within one process, where copying beats decoding).
A *source* is the tuple ``(post_words, block_words, block_bits, rows, tfs, block_last_row)``
with the arrays of the other layout empty; positions read from ``(pos_words,
block_pos_words, pos_offsets, positions)`` alike.

Decoding checks what it can for free: rows must not pass their block's stored last row
(which lies inside the segment; rows ascend, so the last decoded tells), a block decoded
to its end must end on it, and positions must fit their block's words;
:func:`check_layout` checks the offsets and widths when a segment is opened. Damage is a
:class:`DamagedPostings` error, never a read outside the arrays. (Damage a block decoded
part way hides is not found: rows are read as given, inside the segment.)
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy, memset

from datafusion_fts.kernels.buffers cimport Arrays, i64, i64_out, release, u32, u32_out
from datafusion_fts.kernels.group_codes cimport code

from datafusion_fts.errors import StorageError



class DamagedPostings(StorageError):
    """A segment's postings do not decode (raised by the compiled readers; callers name
    the segment's file)."""


class DamagedPositions(DamagedPostings):
    """A segment's positions do not decode."""


BAD_ROWS = "a postings block's rows do not run up to its stored last row"
_BAD_POSITIONS = "a block's positions do not fit its words or its term frequencies"


cdef struct PosSource:
    const uint32_t* words  # bp128 (n_words > 0): pos_words, block_pos_words
    Py_ssize_t n_words
    const int64_t* block_pos_words
    const int64_t* pos_offsets  # u32: pos_offsets, positions
    const uint32_t* positions
    Py_ssize_t n_positions


cdef PosSource _pos_source(Arrays* held, tuple psrc) except *:
    """The :class:`PosSource` of a position source tuple (see the module)."""
    cdef PosSource out
    out.words = u32(held, psrc[0], &out.n_words)
    out.block_pos_words = i64(held, psrc[1])
    out.pos_offsets = i64(held, psrc[2])
    out.positions = u32(held, psrc[3], &out.n_positions)
    return out


cdef struct Buffer:
    # A uint32 array grown (doubled) without the GIL; data NULL until first grown.
    uint32_t* data
    int64_t cap


cdef inline bint _grow(Buffer* buf, int64_t need) noexcept nogil:
    """Make ``buf`` hold at least ``need`` values (its values kept); False when out of
    memory."""
    cdef int64_t cap
    cdef uint32_t* data
    if need <= buf.cap:
        return True
    cap = max(need, 2 * buf.cap)
    data = <uint32_t*>realloc(buf.data, max(cap, 1) * sizeof(uint32_t))
    if data == NULL:
        return False
    buf.data = data
    buf.cap = cap
    return True


cdef inline int64_t _width(uint64_t x) noexcept nogil:
    """Bits needed for the unsigned value ``x``."""
    cdef int64_t w = 0
    while x:
        w += 1
        x >>= 1
    return w


cdef inline void _put(uint32_t* words, int64_t at, uint64_t width, int64_t i, uint64_t value) noexcept nogil:
    """Pack ``value`` as value ``i`` of ``width`` bits from word ``at`` (words zeroed)."""
    cdef uint64_t bit = <uint64_t>i * width
    cdef uint64_t k = <uint64_t>at + (bit >> 5)
    cdef uint64_t x = value << (bit & 31)
    words[k] |= <uint32_t>x
    words[k + 1] |= <uint32_t>(x >> 32)


cdef inline int64_t _block(int64_t start, int64_t end, int64_t blk0, int64_t b, int64_t* s) noexcept nogil:
    """First posting (``s``) and length of block ``b`` of a term's postings [start, end)."""
    s[0] = start + (b - blk0) * BLOCK_SIZE
    return min(s[0] + BLOCK_SIZE, end) - s[0]


cdef inline int64_t _block_span(int64_t start, int64_t blk0, int64_t a, int64_t z, int64_t* last) noexcept nogil:
    """The first block holding postings a..z of a term's postings from ``start`` (its first
    block ``blk0``), and (``last``) the last one: before the first where there are none."""
    cdef int64_t first = blk0 + (a - start) // BLOCK_SIZE
    last[0] = blk0 + (z - 1 - start) // BLOCK_SIZE if z > a else first - 1
    return first


# -- writing ---------------------------------------------------------------------------
def pack_postings(const int64_t[::1] post_offsets, const uint32_t[::1] rows, const uint32_t[::1] tfs,
                  const int64_t[::1] block_offsets):
    """The ``bp128`` arrays of postings given as ``rows``/``tfs`` (uint32, each term's rows
    ascending): ``(block_bits uint8[2B], block_words int64[B + 1], post_words uint32)``."""
    cdef Py_ssize_t n_terms = post_offsets.shape[0] - 1
    cdef int64_t n_blocks = block_offsets[n_terms]
    bits_a = np.zeros(2 * n_blocks, dtype=np.uint8)
    block_words_a = np.zeros(n_blocks + 1, dtype=np.int64)
    cdef uint8_t[::1] bits = bits_a
    cdef int64_t[::1] block_words = block_words_a
    cdef int64_t t, b, s, e, j, prev, at, tf_at
    cdef uint64_t gaps, extra, wr, wt
    with nogil:
        for t in range(n_terms):
            b = block_offsets[t]
            prev = -1
            s = post_offsets[t]
            while s < post_offsets[t + 1]:
                e = min(s + BLOCK_SIZE, post_offsets[t + 1])
                gaps = 0
                extra = 0
                for j in range(s, e):
                    gaps |= <uint64_t>(<int64_t>rows[j] - prev - 1)
                    prev = rows[j]
                    extra |= <uint64_t>tfs[j] - 1
                wr, wt = _width(gaps), _width(extra)
                bits[2 * b] = <uint8_t>wr
                bits[2 * b + 1] = <uint8_t>wt
                block_words[b + 1] = block_words[b] + _n_words(e - s, wr) + _n_words(e - s, wt)
                b += 1
                s += BLOCK_SIZE
    words_a = np.zeros(block_words[n_blocks] + PAD, dtype=np.uint32)
    cdef uint32_t[::1] words = words_a
    with nogil:
        for t in range(n_terms):
            b = block_offsets[t]
            prev = -1
            s = post_offsets[t]
            while s < post_offsets[t + 1]:
                e = min(s + BLOCK_SIZE, post_offsets[t + 1])
                wr, wt = bits[2 * b], bits[2 * b + 1]
                at = block_words[b]
                tf_at = at + _n_words(e - s, wr)
                for j in range(s, e):
                    _put(&words[0], at, wr, j - s, <uint64_t>(<int64_t>rows[j] - prev - 1))
                    prev = rows[j]
                    _put(&words[0], tf_at, wt, j - s, <uint64_t>tfs[j] - 1)
                b += 1
                s += BLOCK_SIZE
    return bits_a, block_words_a, words_a


def pack_positions(const int64_t[::1] post_offsets, const int64_t[::1] pos_offsets,
                   const uint32_t[::1] positions, const int64_t[::1] block_offsets):
    """The ``bp128`` position arrays of positions given per posting (``positions[
    pos_offsets[p] : pos_offsets[p + 1]]``): ``(block_pos_words int64[B + 1], pos_words
    uint32)``."""
    cdef Py_ssize_t n_terms = post_offsets.shape[0] - 1
    cdef int64_t n_blocks = block_offsets[n_terms]
    widths_a = np.zeros(n_blocks, dtype=np.int64)
    block_pos_words_a = np.zeros(n_blocks + 1, dtype=np.int64)
    cdef int64_t[::1] widths = widths_a
    cdef int64_t[::1] block_pos_words = block_pos_words_a
    cdef int64_t t, b, s, e, j, q, i, at, count
    cdef uint32_t prev
    cdef uint64_t seen
    with nogil:
        for t in range(n_terms):
            b = block_offsets[t]
            s = post_offsets[t]
            while s < post_offsets[t + 1]:
                e = min(s + BLOCK_SIZE, post_offsets[t + 1])
                seen = 0
                for j in range(s, e):
                    prev = 0
                    for q in range(pos_offsets[j], pos_offsets[j + 1]):
                        seen |= <uint32_t>(positions[q] - prev)
                        prev = positions[q]
                widths[b] = _width(seen)
                count = pos_offsets[e] - pos_offsets[s]
                block_pos_words[b + 1] = block_pos_words[b] + 1 + _n_words(count, widths[b])
                b += 1
                s += BLOCK_SIZE
    words_a = np.zeros(block_pos_words[n_blocks] + PAD, dtype=np.uint32)
    cdef uint32_t[::1] words = words_a
    with nogil:
        for t in range(n_terms):
            b = block_offsets[t]
            s = post_offsets[t]
            while s < post_offsets[t + 1]:
                e = min(s + BLOCK_SIZE, post_offsets[t + 1])
                at = block_pos_words[b]
                words[at] = <uint32_t>widths[b]
                i = 0
                for j in range(s, e):
                    prev = 0
                    for q in range(pos_offsets[j], pos_offsets[j + 1]):
                        _put(&words[0], at + 1, widths[b], i, <uint32_t>(positions[q] - prev))
                        prev = positions[q]
                        i += 1
                b += 1
                s += BLOCK_SIZE
    return block_pos_words_a, words_a


# -- reading one block's positions -------------------------------------------------------
cdef bint _load_positions(const PosSource* psrc, int64_t b, int64_t s, int64_t n, const uint32_t* tfs,
                          int64_t* offsets, Buffer* out, bint* no_memory) noexcept nogil:
    """Positions of block ``b`` (``n`` postings from posting ``s``, whose term frequencies
    are ``tfs[:n]``): posting i's are ``out[offsets[i] : offsets[i + 1]]`` (offsets from 0);
    ``out`` is grown when too short. Returns whether they are sound: positions that do
    not fit the block's words (or the array) are not read, and the caller raises."""
    cdef int64_t i, q, a, z, count, at
    cdef uint32_t width, p
    cdef uint64_t mask
    offsets[0] = 0
    if not psrc.n_words:
        a, z = psrc.pos_offsets[s], psrc.pos_offsets[s + n]
        if not 0 <= a <= z <= psrc.n_positions:
            return False
        for i in range(n):
            offsets[i + 1] = psrc.pos_offsets[s + i + 1] - a
            if not offsets[i] <= offsets[i + 1] <= z - a:
                return False
        count = offsets[n]
        if not _grow(out, count):
            no_memory[0] = True
            return False
        memcpy(out.data, psrc.positions + a, count * sizeof(uint32_t))
        return True
    for i in range(n):
        offsets[i + 1] = offsets[i] + <int64_t>tfs[i]
    count = offsets[n]
    at = psrc.block_pos_words[b]
    width = psrc.words[at]
    if width > 32 or 1 + _n_words(count, width) > psrc.block_pos_words[b + 1] - at:
        return False
    if not _grow(out, count):
        no_memory[0] = True
        return False
    mask = (<uint64_t>1 << width) - 1
    for i in range(n):
        p = 0
        for q in range(offsets[i], offsets[i + 1]):
            p = <uint32_t>(p + <uint32_t>_get(psrc.words, at + 1, mask, <uint64_t>q * width))
            out.data[q] = p
    return True


# -- reading lists ----------------------------------------------------------------------
def rank(tuple src, int64_t start, int64_t end, int64_t blk0, int64_t row):
    """The first posting of a term's postings [start, end) whose row is >= ``row``
    (``end`` if none): the block by its last row, then one block decoded."""
    cdef Arrays held
    cdef Source s
    cdef bint sound
    cdef int64_t at
    held.n = 0
    try:
        s = tuple_source(&held, src)
        with nogil:
            at = rank_in(&s, start, end, blk0, row, &sound)
    finally:
        release(&held)
    if not sound:
        raise DamagedPostings(BAD_ROWS)
    return at


def gather(tuple src, tuple psrc, int64_t start, int64_t end, int64_t blk0, int64_t a, int64_t z, within,
           bint use_within, drop, bint with_positions, bint with_tfs=True):
    """Postings [a, z) of a term's postings [start, end), only those whose row is in
    ``within`` (int64, ascending; when ``use_within``) and not in ``drop`` (int64,
    ascending): ``(rows, tfs, pos_offsets, positions)``, the position arrays empty unless
    ``with_positions``, the tfs empty unless ``with_tfs`` (rows alone: a match set needs
    no frequencies, and their blocks are not decoded).

    Blocks holding no row of ``within`` are passed by their last rows, undecoded: probing
    a long list at a few rows decodes a block per row at most."""
    cdef Arrays held
    cdef Source s_
    cdef PosSource ps
    cdef const int64_t* within_
    cdef const int64_t* drop_
    cdef Py_ssize_t n_within, n_drop
    cdef uint32_t* rows
    cdef uint32_t* tfs
    cdef int64_t* pos_offsets
    cdef uint32_t brows[BLOCK_SIZE]
    cdef uint32_t btfs[BLOCK_SIZE]
    cdef int64_t boffs[BLOCK_SIZE + 1]
    cdef Buffer bpos = Buffer(NULL, 0)
    cdef Buffer positions = Buffer(NULL, 0)
    cdef const uint32_t* blk_last
    cdef int64_t cap, m = 0, wi = 0, di = 0, b, last_block, s, n, i, r, k, at
    cdef bint ok = True, positions_ok = True, no_memory = False
    held.n = 0
    memset(&ps, 0, sizeof(ps))
    try:
        s_ = tuple_source(&held, src)
        blk_last = s_.blk_last
        if with_positions:
            ps = _pos_source(&held, psrc)
        within_ = i64(&held, within, &n_within)
        drop_ = i64(&held, drop, &n_drop)
        with_tfs = with_tfs or with_positions  # (a block's positions are found by its tfs)
        cap = z - a
        if use_within:
            cap = min(cap, n_within)
        rows_a = np.empty(cap, dtype=np.uint32)
        tfs_a = np.empty(cap if with_tfs else 0, dtype=np.uint32)
        pos_offsets_a = np.zeros(cap + 1 if with_positions else 0, dtype=np.int64)
        rows = u32_out(&held, rows_a)
        tfs = u32_out(&held, tfs_a)
        pos_offsets = i64_out(&held, pos_offsets_a)
        b = _block_span(start, blk0, a, z, &last_block)
        with nogil:
            while b <= last_block:
                n = _block(start, end, blk0, b, &s)
                if use_within:
                    while wi < n_within and within_[wi] <= (<int64_t>blk_last[b - 1] if b > blk0 else -1):
                        wi += 1
                    if wi == n_within:
                        break
                    if within_[wi] > <int64_t>blk_last[b]:
                        b += 1
                        continue
                ok &= load_rows(&s_, blk0, b, s, n, brows)
                if with_tfs:
                    load_tfs(&s_, b, s, n, btfs)
                if with_positions and not _load_positions(&ps, b, s, n, btfs, boffs, &bpos, &no_memory):
                    positions_ok = False
                    break
                if not ok:  # (it raises: rows read as a block's last could match ``within`` past ``cap``)
                    b += 1
                    continue
                i = max(a - s, 0)
                k = min(z - s, n)
                if not use_within and not with_positions and k > i and (di == n_drop or drop_[di] > <int64_t>brows[k - 1]):
                    # (no row to look up or drop: the block's postings as they are; a loop
                    # testing each row costs twice the decoding)
                    memcpy(rows + m, brows + i, (k - i) * sizeof(uint32_t))
                    if with_tfs:
                        memcpy(tfs + m, btfs + i, (k - i) * sizeof(uint32_t))
                    m += k - i
                    b += 1
                    continue
                for i in range(max(a - s, 0), min(z - s, n)):
                    r = brows[i]
                    if use_within:
                        while wi < n_within and within_[wi] < r:
                            wi += 1
                        if wi == n_within or within_[wi] != r:
                            continue
                    while di < n_drop and drop_[di] < r:
                        di += 1
                    if di < n_drop and drop_[di] == r:
                        continue
                    rows[m] = brows[i]
                    if with_tfs:
                        tfs[m] = btfs[i]
                    if with_positions:
                        k = boffs[i + 1] - boffs[i]
                        at = pos_offsets[m]
                        if not _grow(&positions, at + k):
                            no_memory = True
                            break
                        memcpy(positions.data + at, bpos.data + boffs[i], k * sizeof(uint32_t))
                        pos_offsets[m + 1] = at + k
                    m += 1
                if no_memory:
                    break
                b += 1
        if no_memory:
            raise MemoryError()
        if not positions_ok:
            raise DamagedPositions(_BAD_POSITIONS)
        if not ok:
            raise DamagedPostings(BAD_ROWS)
        if not with_positions:
            return rows_a[:m], tfs_a[:m] if with_tfs else tfs_a, pos_offsets_a, np.empty(0, dtype=np.uint32)
        out_a = np.empty(pos_offsets[m], dtype=np.uint32)
        if pos_offsets[m]:
            memcpy(u32_out(&held, out_a), positions.data, pos_offsets[m] * sizeof(uint32_t))
        return rows_a[:m], tfs_a[:m], pos_offsets_a[: m + 1], out_a
    finally:
        free(bpos.data)
        free(positions.data)
        release(&held)


def live_counts(tuple src, const int64_t[::1] post_offsets, const int64_t[::1] block_offsets, int64_t lo,
                int64_t hi, const int64_t[::1] drop):
    """Per term, its postings whose row is in [lo, hi) and not in ``drop`` (ascending)."""
    cdef Arrays held
    cdef Source s_
    cdef const uint32_t* blk_last
    cdef Py_ssize_t n_terms = post_offsets.shape[0] - 1
    counts_a = np.zeros(n_terms, dtype=np.int64)
    cdef int64_t[::1] counts = counts_a
    cdef uint32_t buf[BLOCK_SIZE]
    cdef bint ok = True
    cdef int64_t t, start, end, blk0, di, b, s, n, i, r
    cdef int64_t n_drop = drop.shape[0]
    held.n = 0
    try:
        s_ = tuple_source(&held, src)
        blk_last = s_.blk_last
        with nogil:
            for t in range(n_terms):
                start, end, blk0 = post_offsets[t], post_offsets[t + 1], block_offsets[t]
                di = 0
                for b in range(blk0, block_offsets[t + 1]):
                    if <int64_t>blk_last[b] < lo:
                        continue
                    if b > blk0 and <int64_t>blk_last[b - 1] >= hi - 1:
                        break
                    n = _block(start, end, blk0, b, &s)
                    ok &= load_rows(&s_, blk0, b, s, n, buf)
                    for i in range(n):
                        r = buf[i]
                        if r < lo or r >= hi:
                            continue
                        while di < n_drop and drop[di] < r:
                            di += 1
                        if di == n_drop or drop[di] != r:
                            counts[t] += 1
        if not ok:
            raise DamagedPostings(BAD_ROWS)
        return counts_a
    finally:
        release(&held)


cdef inline bint _count_block(const Source* src, int64_t blk0, int64_t b, int64_t n, const code* codes,
                              int64_t n_codes, int64_t shift, int64_t* counts) noexcept nogil:
    """``count_postings`` of the whole bit-packed block ``b`` (``n`` rows, none dropped):
    each row unpacked and counted at once. False (nothing more counted) at a row past
    the block's stored last row or outside ``codes``, or if the rows do not end on it."""
    cdef const uint32_t* words = src.words
    cdef uint64_t width = src.block_bits[2 * b]
    cdef uint64_t mask = (<uint64_t>1 << width) - 1
    cdef int64_t at = src.block_words[b]
    cdef uint64_t bit = 0
    cdef uint64_t last = src.blk_last[b]
    cdef uint64_t row = <uint64_t>(<int64_t>src.blk_last[b - 1] + 1) if b > blk0 else 0
    cdef uint64_t got = row - 1
    cdef uint64_t top = <uint64_t>(n_codes - shift) if n_codes > shift else 0  # (rows below it are in codes)
    cdef int64_t j
    if last >= top or <int64_t>row + shift < 0:
        return False
    cdef uint32_t gaps[BLOCK_SIZE]
    cdef uint64_t d0, d1, d2, d3
    if row + <uint64_t>n * (mask + 1) <= top:  # (no gaps of this width reach past the codes: no check a row)
        if n == BLOCK_SIZE:
            # (the gaps unpacked by a function of their width, then as _whole_block, each
            # row counted as it is made rather than stored and read back: 115,945 rows
            # counted by a column 0.15 -> 0.14 ms)
            _unpack128(words + at, width, gaps)
            codes += shift
            for j in range(0, BLOCK_SIZE, 4):
                d0 = <uint64_t>gaps[j] + 1
                d1 = d0 + gaps[j + 1] + 1
                d2 = d1 + gaps[j + 2] + 1
                d3 = d2 + gaps[j + 3] + 1
                counts[codes[got + d0]] += 1
                counts[codes[got + d1]] += 1
                counts[codes[got + d2]] += 1
                counts[codes[got + d3]] += 1
                got += d3
            return got == last
        for j in range(n):
            got = row + _get(words, at, mask, bit)
            counts[codes[<int64_t>got + shift]] += 1
            row = got + 1
            bit += width
        return got == last
    for j in range(n):
        got = row + _get(words, at, mask, bit)
        if got > last:
            return False
        counts[codes[<int64_t>got + shift]] += 1
        row = got + 1
        bit += width
    return got == last


def count_postings(tuple src, int64_t start, int64_t end, int64_t blk0, int64_t a, int64_t z, const int64_t[::1] drop,
                const code[::1] codes, int64_t shift, int64_t[::1] counts, uint8_t[::1] seen):
    """Count postings a..z of a term's postings [start, end) whose row is not in ``drop``
    (ascending) by a column's codes: one more in ``counts[codes[row + shift]]`` for each
    (every code in ``counts``: the caller's). A match set counted by a column without its
    rows made: no row id is written or read again (storage/coded_rows.py). A row counted
    must have a place in ``codes`` (rows past them, of ids no file holds, are deleted
    ones, dropped): one without is damage, as a row past its block's stored last row.
    With ``seen`` (one byte a code, else empty), a row whose place is marked there is not
    counted again, and is marked: the terms of a union counted one after another."""
    cdef Arrays held
    cdef Source s_
    cdef uint32_t brows[BLOCK_SIZE]
    cdef bint ok = True, sound
    cdef int64_t b, last_block, s, n, i, k, r, di = 0
    cdef int64_t n_drop = drop.shape[0]
    cdef int64_t n_codes = codes.shape[0]
    cdef bint once = seen.shape[0] > 0
    if once and seen.shape[0] != n_codes:
        raise ValueError("seen must hold one byte a code")
    held.n = 0
    try:
        s_ = tuple_source(&held, src)
        b = _block_span(start, blk0, a, z, &last_block)
        with nogil:
            while b <= last_block:
                n = _block(start, end, blk0, b, &s)
                i = max(a - s, 0)
                k = min(z - s, n)
                if not once and s_.n_words and not s_.n_ords and i == 0 and k == n \
                        and <int64_t>s_.blk_last[b] + shift < n_codes and (di == n_drop or drop[di] > <int64_t>s_.blk_last[b]):
                    # (a whole bit-packed block inside ``codes``, nothing to drop: its rows
                    # counted as they are unpacked, each checked against the block's
                    # stored last row, the block checked to end on it)
                    ok &= _count_block(&s_, blk0, b, n, &codes[0], n_codes, shift, &counts[0])
                    b += 1
                    continue
                sound = load_rows(&s_, blk0, b, s, n, brows)
                ok &= sound
                while sound and i < k:  # (an unsound block's rows may lie anywhere: it raises)
                    r = brows[i]
                    i += 1
                    while di < n_drop and drop[di] < r:
                        di += 1
                    if di < n_drop and drop[di] == r:
                        continue
                    if r + shift < 0 or r + shift >= n_codes:
                        ok = False
                        break
                    if once:
                        if seen[r + shift]:
                            continue
                        seen[r + shift] = 1
                    counts[codes[r + shift]] += 1
                b += 1
        if not ok:
            raise DamagedPostings(BAD_ROWS)
    finally:
        release(&held)


def scatter_postings(tuple src, const int64_t[::1] post_offsets, const int64_t[::1] block_offsets,
                     const int64_t[::1] gid, int64_t row_shift, const int64_t[::1] dst_offsets,
                     int64_t[::1] written, uint32_t[::1] dst_rows, uint32_t[::1] dst_tfs):
    """Copy one segment's postings into a merged segment's ``dst_rows``/``dst_tfs``: term
    t's postings go after what earlier segments wrote for merged term ``gid[t]``, rows
    shifted by ``row_shift``. Returns where each term's postings start in the merged
    arrays."""
    cdef Arrays held
    cdef Source s_
    cdef Py_ssize_t n_terms = post_offsets.shape[0] - 1
    starts_a = np.empty(n_terms, dtype=np.int64)
    cdef int64_t[::1] starts = starts_a
    cdef bint ok = True
    cdef int64_t t, g, start, end, blk0, d, b, s, n, at, i
    cdef uint32_t shift = <uint32_t>row_shift
    held.n = 0
    try:
        s_ = tuple_source(&held, src)
        with nogil:
            for t in range(n_terms):
                g = gid[t]
                start, end, blk0 = post_offsets[t], post_offsets[t + 1], block_offsets[t]
                d = dst_offsets[g] + written[g]
                starts[t] = d
                for b in range(blk0, block_offsets[t + 1]):
                    n = _block(start, end, blk0, b, &s)
                    at = d + s - start
                    ok &= load_rows(&s_, blk0, b, s, n, &dst_rows[at])
                    load_tfs(&s_, b, s, n, &dst_tfs[at])
                    for i in range(at, at + n):
                        dst_rows[i] += shift
                written[g] += end - start
        if not ok:
            raise DamagedPostings(BAD_ROWS)
        return starts_a
    finally:
        release(&held)


def scatter_positions(tuple src, tuple psrc, const int64_t[::1] post_offsets, const int64_t[::1] block_offsets,
                      const int64_t[::1] starts, const int64_t[::1] dst_pos_offsets, uint32_t[::1] dst_positions):
    """The positions of the postings :func:`scatter_postings` placed (``dst_pos_offsets``
    already made from the merged term frequencies)."""
    cdef Arrays held
    cdef Source s_
    cdef PosSource ps
    cdef uint32_t tfs[BLOCK_SIZE]
    cdef int64_t offsets[BLOCK_SIZE + 1]
    cdef Buffer out = Buffer(NULL, 0)
    cdef bint ok = True, no_memory = False
    cdef int64_t t, start, end, blk0, b, s, n, at, d
    held.n = 0
    try:
        s_ = tuple_source(&held, src)
        ps = _pos_source(&held, psrc)
        with nogil:
            for t in range(post_offsets.shape[0] - 1):
                start, end, blk0 = post_offsets[t], post_offsets[t + 1], block_offsets[t]
                for b in range(blk0, block_offsets[t + 1]):
                    n = _block(start, end, blk0, b, &s)
                    load_tfs(&s_, b, s, n, tfs)
                    ok = _load_positions(&ps, b, s, n, tfs, offsets, &out, &no_memory)
                    at = starts[t] + s - start
                    d = dst_pos_offsets[at]
                    if not ok or dst_pos_offsets[at + n] - d != offsets[n]:
                        ok = False
                        break
                    if offsets[n]:
                        memcpy(&dst_positions[d], out.data, offsets[n] * sizeof(uint32_t))
                if not ok:
                    break
        if no_memory:
            raise MemoryError()
        if not ok:
            raise DamagedPositions(_BAD_POSITIONS)
    finally:
        free(out.data)
        release(&held)


# -- checking a segment when it is opened ---------------------------------------------------
_LAYOUT_PROBLEMS = (
    ("", ""),
    ("posting offsets do not run from 0 to the postings", "post_offsets"),
    ("term offsets lie outside the terms, or are not one per term", "terms"),
    ("block offsets are not one per term from 0", "block_offsets"),
    ("term offsets are not ascending", "terms"),
    ("posting offsets are not ascending", "post_offsets"),
    ("a term's block offsets disagree with its postings", "block_offsets"),
    ("not one last row per block", "block_last_row"),
    ("a block's last row is outside the segment or not ascending", "block_last_row"),
    ("not two widths per block", "block_bits"),
    ("block offsets into the packed postings are not one per block from 0", "block_words"),
    ("a block's width is above 32 bits", "block_bits"),
    ("a packed block's size disagrees with its widths", "block_words"),
    ("the packed blocks run past the end of the postings", "post_words"),
)


cdef int _layout_problem(
    const int64_t[::1] post_offsets, const int64_t[::1] block_offsets, const uint32_t[::1] blk_last, int64_t count,
    int64_t n_postings, const uint8_t[::1] block_bits, const int64_t[::1] block_words, int64_t n_words,
    const int64_t[::1] term_offsets, int64_t n_term_bytes,
) noexcept nogil:
    """:func:`check_layout`'s problem, as its index in ``_LAYOUT_PROBLEMS`` (0: none)."""
    cdef int64_t n_terms = post_offsets.shape[0] - 1
    cdef int64_t t, n, n_blocks, b, s, wr, wt
    if n_terms < 0 or post_offsets[0] != 0 or post_offsets[n_terms] != n_postings:
        return 1
    if term_offsets.shape[0] != n_terms + 1 or term_offsets[0] < 0 or term_offsets[n_terms] > n_term_bytes:
        return 2
    if block_offsets.shape[0] != n_terms + 1 or block_offsets[0] != 0:
        return 3
    for t in range(n_terms):
        if term_offsets[t + 1] < term_offsets[t]:
            return 4
        n = post_offsets[t + 1] - post_offsets[t]
        if n < 0:
            return 5
        if block_offsets[t + 1] - block_offsets[t] != (n + BLOCK_SIZE - 1) // BLOCK_SIZE:
            return 6
    n_blocks = block_offsets[n_terms]
    if blk_last.shape[0] != n_blocks:
        return 7
    for t in range(n_terms):
        for b in range(block_offsets[t], block_offsets[t + 1]):
            if <int64_t>blk_last[b] >= count or (b > block_offsets[t] and blk_last[b] <= blk_last[b - 1]):
                return 8
    if block_words.shape[0] == 0:
        return 0
    if block_bits.shape[0] != 2 * n_blocks:
        return 9
    if block_words.shape[0] != n_blocks + 1 or block_words[0] != 0:
        return 10
    for t in range(n_terms):
        for b in range(block_offsets[t], block_offsets[t + 1]):
            s = post_offsets[t] + (b - block_offsets[t]) * BLOCK_SIZE
            n = min(s + BLOCK_SIZE, post_offsets[t + 1]) - s
            wr, wt = block_bits[2 * b], block_bits[2 * b + 1]
            if wr > 32 or wt > 32:
                return 11
            if block_words[b + 1] - block_words[b] != _n_words(n, wr) + _n_words(n, wt):
                return 12
    if block_words[n_blocks] + PAD > n_words:
        return 13
    return 0


def check_layout(const int64_t[::1] post_offsets, const int64_t[::1] block_offsets, const uint32_t[::1] blk_last,
                 int64_t count, int64_t n_postings, const uint8_t[::1] block_bits, const int64_t[::1] block_words,
                 int64_t n_words, const int64_t[::1] term_offsets, int64_t n_term_bytes):
    """The first problem found in a segment's offsets and widths and the array it is in,
    or ("", "") (checked once, when it is opened: every offset a kernel follows, and the
    packed blocks' sizes)."""
    cdef int problem
    with nogil:
        problem = _layout_problem(post_offsets, block_offsets, blk_last, count, n_postings, block_bits, block_words,
                                  n_words, term_offsets, n_term_bytes)
    return _LAYOUT_PROBLEMS[problem]


def check_positions(int64_t n_blocks, const int64_t[::1] block_pos_words, int64_t n_pos_words):
    """The first problem found in a packed segment's position offsets and the array it is
    in, or ("", "")."""
    cdef int64_t b
    cdef bint ascending = True
    if block_pos_words.shape[0] != n_blocks + 1 or block_pos_words[0] != 0:
        return "position block offsets are not one per block from 0", "block_pos_words"
    with nogil:
        for b in range(n_blocks):
            if block_pos_words[b + 1] <= block_pos_words[b]:
                ascending = False
                break
    if not ascending:
        return "position block offsets are not ascending", "block_pos_words"
    if block_pos_words[n_blocks] + PAD > n_pos_words:
        return "the position blocks run past the end of the positions", "pos_words"
    return "", ""
