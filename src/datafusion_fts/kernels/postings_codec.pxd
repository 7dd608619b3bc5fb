"""Bit-packed postings (codec ``bp128``): the layout and the loops that read one block of
it, compiled in line where the readers and the search kernels call them (the layout is
described in postings_codec.pyx)."""

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

from datafusion_fts.kernels.buffers cimport Arrays, i64, u8, u32
from datafusion_fts.kernels.invert cimport BLOCK_SIZE

cpdef enum:
    # Zero words after the packed data: reading a value takes 64 bits from its first word.
    PAD = 2


cdef struct Source:
    # A segment's postings in either layout, the arrays of the other empty: bit-packed
    # (``n_words > 0``: post_words, block_words, block_bits) or one uint32 a row and
    # frequency (rows, tfs); and every block's last row. A bit-packed segment whose rows
    # are mostly deleted (codec ``bp128-ordinals``) packs its rows as ordinals among the
    # rows holding text: ``ords[o]`` is the row of ordinal o (``n_ords`` > 0; 0 in others).
    const uint32_t* words
    Py_ssize_t n_words
    const int64_t* block_words
    const uint8_t* block_bits
    const uint32_t* rows
    const uint32_t* tfs
    const uint32_t* blk_last
    const uint32_t* ords
    Py_ssize_t n_ords


cdef inline Source source_of(Arrays* held, object words, object block_words, object block_bits, object rows,
                             object tfs, object blk_last, object ords) except *:
    """The source of a segment's arrays (``Segment.source``, in its order), their buffers
    ``held`` while it is read."""
    cdef Source src
    src.words = u32(held, words, &src.n_words)
    src.block_words = i64(held, block_words)
    src.block_bits = u8(held, block_bits)
    src.rows = u32(held, rows)
    src.tfs = u32(held, tfs)
    src.blk_last = u32(held, blk_last)
    src.ords = u32(held, ords, &src.n_ords)
    return src


cdef inline Source tuple_source(Arrays* held, tuple src) except *:
    """:func:`source_of` a tuple ``(post_words, block_words, block_bits, rows, tfs,
    block_last_row, ords)``."""
    return source_of(held, src[0], src[1], src[2], src[3], src[4], src[5], src[6])


cdef inline int64_t _n_words(int64_t n, int64_t width) noexcept nogil:
    """Words holding ``n`` values of ``width`` bits."""
    return (n * width + 31) >> 5


cdef extern from *:
    """
    #include <string.h>
    /* words[k] | words[k + 1] << 32: one unaligned load where the words are little-endian */
    static inline uint64_t fts_word_pair(const uint32_t* words, uint64_t k) {
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        uint64_t x;
        memcpy(&x, words + k, sizeof(x));
        return x;
    #else
        return (uint64_t)words[k] | ((uint64_t)words[k + 1] << 32);
    #endif
    }
    """
    uint64_t _word_pair "fts_word_pair"(const uint32_t* words, uint64_t k) noexcept nogil


cdef extern from *:
    """
    /* A whole block's 128 values of ``W`` bits (``W`` * 4 words) into ``out``; inlined in
       one case of a switch a width, so its shifts and masks are constants the compiler
       unrolls (the generic loop computes them per value). */
    static inline __attribute__((always_inline)) void fts_unpack128_w(
            const uint32_t* words, uint32_t* out, const int W) {
        for (int g = 0; g < 4; g++) {  /* 32 values of W bits: W words */
            const uint32_t* in = words + g * W;
            uint32_t* o = out + 32 * g;
            _Pragma("GCC unroll 32")
            for (int j = 0; j < 32; j++)
                o[j] = (uint32_t)((fts_word_pair(in, (j * W) >> 5) >> ((j * W) & 31)) & ((1ULL << W) - 1));
        }
    }
    static void fts_unpack128(const uint32_t* words, uint64_t width, uint32_t* out) {
        switch (width) {
        #define FTS_WIDTH(W) case W: fts_unpack128_w(words, out, W); return;
        FTS_WIDTH(1) FTS_WIDTH(2) FTS_WIDTH(3) FTS_WIDTH(4) FTS_WIDTH(5) FTS_WIDTH(6) FTS_WIDTH(7) FTS_WIDTH(8)
        FTS_WIDTH(9) FTS_WIDTH(10) FTS_WIDTH(11) FTS_WIDTH(12) FTS_WIDTH(13) FTS_WIDTH(14) FTS_WIDTH(15)
        FTS_WIDTH(16) FTS_WIDTH(17) FTS_WIDTH(18) FTS_WIDTH(19) FTS_WIDTH(20) FTS_WIDTH(21) FTS_WIDTH(22)
        FTS_WIDTH(23) FTS_WIDTH(24) FTS_WIDTH(25) FTS_WIDTH(26) FTS_WIDTH(27) FTS_WIDTH(28) FTS_WIDTH(29)
        FTS_WIDTH(30) FTS_WIDTH(31) FTS_WIDTH(32)
        #undef FTS_WIDTH
        default: memset(out, 0, 128 * sizeof(uint32_t)); return;  /* width 0: every gap 0 */
        }
    }
    """
    void _unpack128 "fts_unpack128"(const uint32_t* words, uint64_t width, uint32_t* out) noexcept nogil


cdef inline uint64_t _get(const uint32_t* words, int64_t at, uint64_t mask, uint64_t bit) noexcept nogil:
    """The value at bit ``bit`` (of as many bits as ``mask`` has) from word ``at``."""
    return (_word_pair(words, <uint64_t>at + (bit >> 5)) >> (bit & 31)) & mask


# -- reading one block -----------------------------------------------------------------
# (No loader raises: a loader returns whether the block was sound, and replaces rows it
# cannot trust by the block's last row, which lies inside the segment; its caller raises
# once it is done, holding the GIL.)
cdef inline int64_t load_rows_from(
    const Source* src, int64_t blk0, int64_t b, int64_t s, int64_t n, uint32_t* out, int64_t i0,
    int64_t upto, int64_t target, bint* sound,
) noexcept nogil:
    """Rows ``i0``.. of block ``b`` (``n`` postings from posting ``s``; ``blk0`` is the
    term's first block; ``out[:i0]`` already decoded) through index ``upto``, then on to
    the first row >= ``target`` or the block's end: a cursor seeking a row decodes no
    further than it. Returns the rows decoded in all; ``sound``: whether they are sound so
    far. Rows must not pass the block's stored last row (else they are all read as it,
    inside the segment), and a block decoded to its end must end on it."""
    cdef uint64_t row, got, last
    cdef int64_t i, j, stop
    cdef bint ok = True
    if i0:
        row = <uint64_t>(<int64_t>out[i0 - 1] + 1)
    elif b > blk0:
        row = <uint64_t>(<int64_t>src.blk_last[b - 1] + 1)
    else:
        row = 0
    stop = min(upto + 1, n)
    if src.n_ords:
        i = _unpack_ordinals(src, b, n, out, i0, stop, target, row, &got, &ok)
    elif src.n_words:
        i = _unpack_rows(src, b, n, out, i0, stop, target, row, &got)
    else:
        i = _copy_rows(src, s, n, out, i0, stop, target, row, &got, &ok)
    last = src.blk_last[b]
    ok = ok and got <= last and (i < n or i == i0 or got == last)
    if not ok:
        for j in range(i):
            out[j] = <uint32_t>last
    sound[0] = ok
    return i


cdef inline bint load_rows(const Source* src, int64_t blk0, int64_t b, int64_t s, int64_t n,
                           uint32_t* out) noexcept nogil:
    """Rows of block ``b`` (``n`` postings from posting ``s``; ``blk0`` is the term's first
    block) into ``out[:n]``; False if they do not run up to the block's stored last row."""
    cdef bint ok
    load_rows_from(src, blk0, b, s, n, out, 0, n - 1, 0, &ok)
    return ok


cdef inline uint64_t _whole_block(const uint32_t* words, uint64_t width, uint64_t got, uint32_t* out) noexcept nogil:
    """The rows of a whole bit-packed block (gaps of ``width`` bits from ``words``) after
    row ``got`` into ``out[:BLOCK_SIZE]``; the last. Each row is the one before plus its
    gap plus one, four a step: their offsets added off the chain, so one addition in four
    waits on the last (the per-row loop waited on two a row; a term's 115,945 rows read
    0.19 -> 0.17 ms)."""
    cdef uint64_t d0, d1, d2, d3, bit = 0
    cdef uint64_t mask = (<uint64_t>1 << width) - 1
    cdef int64_t j
    for j in range(0, BLOCK_SIZE, 4):
        d0 = _get(words, 0, mask, bit) + 1
        d1 = d0 + _get(words, 0, mask, bit + width) + 1
        d2 = d1 + _get(words, 0, mask, bit + 2 * width) + 1
        d3 = d2 + _get(words, 0, mask, bit + 3 * width) + 1
        out[j] = <uint32_t>(got + d0)
        out[j + 1] = <uint32_t>(got + d1)
        out[j + 2] = <uint32_t>(got + d2)
        out[j + 3] = <uint32_t>(got + d3)
        got += d3
        bit += 4 * width
    return got


cdef inline int64_t _unpack_rows(
    const Source* src, int64_t b, int64_t n, uint32_t* out, int64_t i0, int64_t stop, int64_t target,
    uint64_t row, uint64_t* last,
) noexcept nogil:
    """:func:`load_rows_from` for bit-packed blocks: the next index (``last``: the last row
    decoded, the largest, rows ascending)."""
    cdef const uint32_t* words = src.words
    cdef uint64_t width = src.block_bits[2 * b]
    cdef uint64_t mask = (<uint64_t>1 << width) - 1
    cdef int64_t at = src.block_words[b]
    cdef uint64_t bit = <uint64_t>i0 * width
    cdef uint64_t got = row - 1
    cdef int64_t i, j
    if i0 == 0 and stop == BLOCK_SIZE:  # (a whole block: see _whole_block)
        last[0] = _whole_block(words + at, width, got, out)
        return BLOCK_SIZE
    for j in range(i0, stop):
        got = row + _get(words, at, mask, bit)
        out[j] = <uint32_t>got
        row = got + 1
        bit += width
    i = max(stop, i0)
    while i < n and got < <uint64_t>target:
        got = row + _get(words, at, mask, bit)
        out[i] = <uint32_t>got
        row = got + 1
        bit += width
        i += 1
    last[0] = got
    return i


cdef inline int64_t _unpack_ordinals(
    const Source* src, int64_t b, int64_t n, uint32_t* out, int64_t i0, int64_t stop, int64_t target,
    uint64_t row, uint64_t* last, bint* inside,
) noexcept nogil:
    """:func:`_unpack_rows` for rows packed as ordinals (``src.ords``): the first ordinal
    is that of ``row`` (the row after the one before), found by binary search; an ordinal
    past the last is damage (``inside`` False; read as the last)."""
    cdef const uint32_t* words = src.words
    cdef const uint32_t* ords = src.ords
    cdef uint64_t width = src.block_bits[2 * b]
    cdef uint64_t mask = (<uint64_t>1 << width) - 1
    cdef int64_t at = src.block_words[b]
    cdef uint64_t bit = <uint64_t>i0 * width
    cdef uint64_t top = <uint64_t>src.n_ords - 1
    cdef uint64_t got = row - 1
    cdef uint64_t o = _first_at_least(ords, src.n_ords, row)
    cdef bint ok = True
    cdef int64_t i, j
    for j in range(i0, stop):
        got = _ordinal_row(ords, &o, _get(words, at, mask, bit), top, &ok)
        out[j] = <uint32_t>got
        bit += width
    i = max(stop, i0)
    while i < n and got < <uint64_t>target:
        got = _ordinal_row(ords, &o, _get(words, at, mask, bit), top, &ok)
        out[i] = <uint32_t>got
        bit += width
        i += 1
    last[0] = got
    inside[0] = ok
    return i


cdef inline uint64_t _ordinal_row(const uint32_t* ords, uint64_t* o, uint64_t gap, uint64_t top,
                                  bint* ok) noexcept nogil:
    """The row of the ordinal ``gap`` past ``o[0]`` (then ``o[0]`` the ordinal after it);
    an ordinal past ``top`` is damage (``ok`` False; read as ``top``)."""
    cdef uint64_t at = o[0] + gap
    if at > top:
        ok[0] = False
        at = top
    o[0] = at + 1
    return ords[at]


cdef inline uint64_t _first_at_least(const uint32_t* values, Py_ssize_t n, uint64_t x) noexcept nogil:
    """The index of the first of ascending ``values[:n]`` >= ``x`` (``n`` if none)."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if <uint64_t>values[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return <uint64_t>lo


cdef inline int64_t _copy_rows(
    const Source* src, int64_t s, int64_t n, uint32_t* out, int64_t i0, int64_t stop, int64_t target,
    uint64_t row, uint64_t* last, bint* ascending,
) noexcept nogil:
    """:func:`load_rows_from` for blocks of one uint32 a row: the next index (``last``: the
    last row read; ``ascending``: whether they ascend)."""
    cdef const uint32_t* rows = src.rows + s
    cdef uint64_t got = row - 1
    cdef bint ok = True
    cdef int64_t i, j
    for j in range(i0, stop):
        got = rows[j]
        ok &= got >= row
        out[j] = <uint32_t>got
        row = got + 1
    i = max(stop, i0)
    while i < n and got < <uint64_t>target:
        got = rows[i]
        ok &= got >= row
        out[i] = <uint32_t>got
        row = got + 1
        i += 1
    last[0] = got
    ascending[0] = ok
    return i


cdef inline void load_tfs(const Source* src, int64_t b, int64_t s, int64_t n, uint32_t* out) noexcept nogil:
    """Term frequencies of block ``b`` (``n`` postings from posting ``s``) into ``out[:n]``."""
    cdef uint64_t width, mask, bit
    cdef int64_t at, i
    if src.n_words:
        width = src.block_bits[2 * b + 1]
        if width == 0:  # (every frequency 1: most blocks of most terms)
            for i in range(n):
                out[i] = 1
            return
        mask = (<uint64_t>1 << width) - 1
        at = src.block_words[b] + _n_words(n, src.block_bits[2 * b])
        bit = 0
        for i in range(n):
            out[i] = <uint32_t>(_get(src.words, at, mask, bit) + 1)
            bit += width
    else:
        for i in range(n):
            out[i] = src.tfs[s + i]


cdef inline int64_t rank_in(const Source* src, int64_t start, int64_t end, int64_t blk0, int64_t row,
                            bint* sound) noexcept nogil:
    """The first posting of a term's postings [start, end) whose row is >= ``row``
    (``end`` if none): the block by its last row, then one block decoded (``sound``: it
    decoded)."""
    cdef uint32_t buf[BLOCK_SIZE]
    cdef int64_t lo = blk0, mid, i, s
    cdef int64_t hi = blk0 + (end - start + BLOCK_SIZE - 1) // BLOCK_SIZE
    cdef int64_t n_blocks_end = hi
    sound[0] = True
    while lo < hi:
        mid = (lo + hi) >> 1
        if <int64_t>src.blk_last[mid] < row:
            lo = mid + 1
        else:
            hi = mid
    if lo == n_blocks_end:
        return end
    s = start + (lo - blk0) * BLOCK_SIZE
    if not load_rows(src, blk0, lo, s, min(s + BLOCK_SIZE, end) - s, buf):
        sound[0] = False
        return end
    i = 0
    while <int64_t>buf[i] < row:
        i += 1
    return s + i
