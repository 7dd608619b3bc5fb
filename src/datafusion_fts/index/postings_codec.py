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
(:func:`load_rows_from`), and its frequencies when it scores a row of it
(:func:`load_tfs`).

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

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import StorageError
from ..kernels.invert import BLOCK_SIZE

# Zero words after the packed data: reading a value takes 64 bits from its first word.
PAD = 2

# Functions called per block (or per candidate row) that allocate nothing are compiled
# without numba's reference counting (``_nrt=False``: private, but numba's own tests and
# benchmarks have used it for years). With it, a function given arrays counts a reference
# to each on entry whenever its branches end their lives apart (a call in a branch does
# that): ten arrays, a cursor's source and buffers, cost ~150 ns a call, more than
# decoding a block.
no_refcounts = njit(cache=True, nogil=True, _nrt=False)

_U = np.uint64


class DamagedPostings(StorageError):
    """A segment's postings do not decode (raised by the compiled readers; callers name
    the segment's file)."""


class DamagedPositions(DamagedPostings):
    """A segment's positions do not decode."""


@njit(cache=True, nogil=True, inline="always")
def _n_words(n, width):
    """Words holding ``n`` values of ``width`` bits."""
    return (n * width + 31) >> 5


@njit(cache=True, nogil=True)
def _width(x):
    """Bits needed for the unsigned value ``x``."""
    w = 0
    while x:
        w += 1
        x >>= 1
    return w


@njit(cache=True, nogil=True, inline="always")
def _put(words, at, width, i, value):
    """Pack ``value`` as value ``i`` of ``width`` bits from word ``at`` (words zeroed)."""
    bit = _U(i) * _U(width)
    k = _U(at) + (bit >> _U(5))
    x = _U(value) << (bit & _U(31))
    words[k] |= np.uint32(x & _U(0xFFFFFFFF))
    words[k + _U(1)] |= np.uint32(x >> _U(32))


@njit(cache=True, nogil=True, inline="always")
def _get(words, at, mask, bit):
    """The value at bit ``bit`` (of as many bits as ``mask`` has) from word ``at``, as
    uint64 (unsigned indices: numba checks signed ones for wrapping around)."""
    k = _U(at) + (_U(bit) >> _U(5))
    return ((_U(words[k]) | (_U(words[k + _U(1)]) << _U(32))) >> (_U(bit) & _U(31))) & mask


# -- writing ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def pack_postings(post_offsets, rows, tfs, block_offsets):
    """The ``bp128`` arrays of postings given as ``rows``/``tfs`` (uint32, each term's rows
    ascending): ``(block_bits uint8[2B], block_words int64[B + 1], post_words uint32)``."""
    n_terms = post_offsets.shape[0] - 1
    n_blocks = block_offsets[n_terms]
    bits = np.zeros(2 * n_blocks, dtype=np.uint8)
    block_words = np.zeros(n_blocks + 1, dtype=np.int64)
    for t in range(n_terms):
        b = block_offsets[t]
        prev = np.int64(-1)
        for s in range(post_offsets[t], post_offsets[t + 1], BLOCK_SIZE):
            e = min(s + BLOCK_SIZE, post_offsets[t + 1])
            gaps = _U(0)
            extra = _U(0)
            for j in range(s, e):
                gaps |= _U(np.int64(rows[j]) - prev - 1)
                prev = np.int64(rows[j])
                extra |= _U(tfs[j] - np.uint32(1))
            wr, wt = _width(gaps), _width(extra)
            bits[2 * b] = wr
            bits[2 * b + 1] = wt
            block_words[b + 1] = block_words[b] + _n_words(e - s, wr) + _n_words(e - s, wt)
            b += 1
    words = np.zeros(block_words[n_blocks] + PAD, dtype=np.uint32)
    for t in range(n_terms):
        b = block_offsets[t]
        prev = np.int64(-1)
        for s in range(post_offsets[t], post_offsets[t + 1], BLOCK_SIZE):
            e = min(s + BLOCK_SIZE, post_offsets[t + 1])
            wr, wt = bits[2 * b], bits[2 * b + 1]
            at = block_words[b]
            tf_at = at + _n_words(e - s, wr)
            for j in range(s, e):
                _put(words, at, wr, j - s, np.int64(rows[j]) - prev - 1)
                prev = np.int64(rows[j])
                _put(words, tf_at, wt, j - s, tfs[j] - np.uint32(1))
            b += 1
    return bits, block_words, words


@njit(cache=True, nogil=True)
def pack_positions(post_offsets, pos_offsets, positions, block_offsets):
    """The ``bp128`` position arrays of positions given per posting (``positions[
    pos_offsets[p] : pos_offsets[p + 1]]``): ``(block_pos_words int64[B + 1], pos_words
    uint32)``."""
    n_terms = post_offsets.shape[0] - 1
    n_blocks = block_offsets[n_terms]
    widths = np.zeros(n_blocks, dtype=np.int64)
    block_pos_words = np.zeros(n_blocks + 1, dtype=np.int64)
    for t in range(n_terms):
        b = block_offsets[t]
        for s in range(post_offsets[t], post_offsets[t + 1], BLOCK_SIZE):
            e = min(s + BLOCK_SIZE, post_offsets[t + 1])
            seen = _U(0)
            for j in range(s, e):
                prev = np.uint32(0)
                for q in range(pos_offsets[j], pos_offsets[j + 1]):
                    seen |= _U(np.uint32(positions[q] - prev))
                    prev = positions[q]
            widths[b] = _width(seen)
            count = pos_offsets[e] - pos_offsets[s]
            block_pos_words[b + 1] = block_pos_words[b] + 1 + _n_words(count, widths[b])
            b += 1
    words = np.zeros(block_pos_words[n_blocks] + PAD, dtype=np.uint32)
    for t in range(n_terms):
        b = block_offsets[t]
        for s in range(post_offsets[t], post_offsets[t + 1], BLOCK_SIZE):
            e = min(s + BLOCK_SIZE, post_offsets[t + 1])
            at = block_pos_words[b]
            words[at] = widths[b]
            i = 0
            for j in range(s, e):
                prev = np.uint32(0)
                for q in range(pos_offsets[j], pos_offsets[j + 1]):
                    _put(words, at + 1, widths[b], i, np.uint32(positions[q] - prev))
                    prev = positions[q]
                    i += 1
            b += 1
    return block_pos_words, words


# -- reading one block -------------------------------------------------------------------
# (No loader raises: a function that can raise makes numba count references to every
# array it is given, on every call, and a cursor reads a row per call. A loader returns
# whether the block was sound instead, and replaces rows it cannot trust by the block's
# last row, which lies inside the segment; its caller raises once it is done.)
@njit(cache=True, nogil=True, inline="always")
def load_rows(src, blk0, b, s, n, out):
    """Rows of block ``b`` (``n`` postings from posting ``s``; ``blk0`` is the term's first
    block) into ``out[:n]``; False if they do not run up to the block's stored last row."""
    return load_rows_from(src, blk0, b, s, n, out, 0, n - 1, 0)[1]


@njit(cache=True, nogil=True, inline="always")
def load_rows_from(src, blk0, b, s, n, out, i0, upto, target):
    """Rows ``i0``.. of block ``b`` (as :func:`load_rows`; ``out[:i0]`` already decoded)
    through index ``upto``, then on to the first row >= ``target`` or the block's end:
    a cursor seeking a row decodes no further than it. Returns (rows decoded in all,
    sound so far). Rows must not pass the block's stored last row (else they are all
    read as it, inside the segment), and a block decoded to its end must end on it."""
    blk_last = src[5]
    if i0:
        first = np.int64(out[i0 - 1]) + 1
    else:
        first = np.int64(blk_last[b - 1]) + 1 if b > blk0 else np.int64(0)
    stop = min(upto + 1, n)
    if src[0].shape[0]:
        i, got, ok = _unpack_rows(src, b, n, out, i0, stop, target, _U(first))
    else:
        i, got, ok = _copy_rows(src, s, n, out, i0, stop, target, _U(first))
    last = _U(blk_last[b])
    ok &= got <= last and (i < n or i == i0 or got == last)
    if not ok:
        for j in range(i):
            out[_U(j)] = np.uint32(last)
    return i, ok


# (Each loop below is written as is, and called, not in line: other spellings of it ran
# half as fast.)
@no_refcounts
def _unpack_rows(src, b, n, out, i0, stop, target, row):
    """:func:`load_rows_from` for bit-packed blocks: (next index, last row, True)."""
    words, block_words, block_bits = src[0], src[1], src[2]
    width = _U(block_bits[2 * b])
    mask = (_U(1) << width) - _U(1)
    at = block_words[b]
    bit = _U(i0) * width
    got = row - _U(1)  # (the last row decoded: the largest, rows ascending)
    for j in range(i0, stop):
        got = row + _get(words, at, mask, bit)
        out[_U(j)] = np.uint32(got)
        row = got + _U(1)
        bit += width
    i = max(stop, i0)
    while i < n and got < _U(target):
        got = row + _get(words, at, mask, bit)
        out[_U(i)] = np.uint32(got)
        row = got + _U(1)
        bit += width
        i += 1
    return i, got, True


@no_refcounts
def _copy_rows(src, s, n, out, i0, stop, target, row):
    """:func:`load_rows_from` for blocks of one uint32 a row: (next index, last row,
    whether they ascend)."""
    rows = src[3]
    got = row - _U(1)
    ok = True
    for j in range(i0, stop):
        got = _U(rows[s + j])
        ok &= got >= row
        out[_U(j)] = np.uint32(got)
        row = got + _U(1)
    i = max(stop, i0)
    while i < n and got < _U(target):
        got = _U(rows[s + i])
        ok &= got >= row
        out[_U(i)] = np.uint32(got)
        row = got + _U(1)
        i += 1
    return i, got, ok


@njit(cache=True, nogil=True, inline="always")
def load_tfs(src, b, s, n, out):
    """Term frequencies of block ``b`` (``n`` postings from posting ``s``) into ``out[:n]``."""
    words, block_words, block_bits, _, tfs, _ = src
    if words.shape[0]:
        width = _U(block_bits[2 * b + 1])
        if width == 0:  # (every frequency 1: most blocks of most terms)
            for i in range(n):
                out[_U(i)] = 1
            return
        mask = (_U(1) << width) - _U(1)
        at = block_words[b] + _n_words(n, block_bits[2 * b])
        bit = _U(0)
        for i in range(n):
            out[_U(i)] = np.uint32(_get(words, at, mask, bit) + _U(1))
            bit += width
    else:
        for i in range(n):
            out[_U(i)] = tfs[s + i]


@njit(cache=True, nogil=True)
def load_positions(psrc, b, s, n, tfs, offsets, out):
    """Positions of block ``b`` (``n`` postings from posting ``s``, whose term frequencies
    are ``tfs[:n]``): posting i's are ``out[offsets[i] : offsets[i + 1]]`` (offsets from 0);
    ``out`` is grown when too short. Returns ``(out, sound)``; positions that do not fit
    the block's words are read as 0."""
    pos_words, block_pos_words, pos_offsets, positions = psrc
    offsets[0] = 0
    ok = True
    if pos_words.shape[0]:
        for i in range(n):
            offsets[i + 1] = offsets[i] + np.int64(tfs[i])
    else:
        a, z = pos_offsets[s], pos_offsets[s + n]
        ok = 0 <= a <= z <= positions.shape[0]
        for i in range(n):
            offsets[i + 1] = pos_offsets[s + i + 1] - a if ok else 0
            ok &= offsets[i] <= offsets[i + 1] <= z - a
        if not ok:
            offsets[: n + 1] = 0
    count = offsets[n]
    if out.shape[0] < count:
        out = np.empty(max(count, 2 * out.shape[0]), dtype=np.uint32)
    if not pos_words.shape[0]:
        if count:
            out[:count] = positions[pos_offsets[s] : pos_offsets[s] + count]
        return out, ok
    at = block_pos_words[b]
    width = pos_words[at]
    if width > 32 or 1 + _n_words(count, np.int64(width)) > block_pos_words[b + 1] - at:
        out[:count] = 0
        return out, False
    mask = (_U(1) << _U(width)) - _U(1)
    for i in range(n):
        p = np.uint32(0)
        for q in range(offsets[i], offsets[i + 1]):
            p = np.uint32(p + np.uint32(_get(pos_words, at + 1, mask, _U(q) * _U(width))))
            out[q] = p
    return out, True


# -- reading lists ----------------------------------------------------------------------
_BAD_ROWS = "a postings block's rows do not run up to its stored last row"
_BAD_POSITIONS = "a block's positions do not fit its words or its term frequencies"


@njit(cache=True, nogil=True, inline="always")
def _block(start, end, blk0, b):
    """First posting and length of block ``b`` of a term's postings [start, end)."""
    s = start + (b - blk0) * BLOCK_SIZE
    return s, min(s + BLOCK_SIZE, end) - s


@njit(cache=True, nogil=True)
def rank(src, start, end, blk0, row):
    """The first posting of a term's postings [start, end) whose row is >= ``row``
    (``end`` if none): the block by its last row, then one block decoded."""
    blk_last = src[5]
    lo, hi = blk0, blk0 + (end - start + BLOCK_SIZE - 1) // BLOCK_SIZE
    while lo < hi:
        mid = (lo + hi) >> 1
        if np.int64(blk_last[mid]) < row:
            lo = mid + 1
        else:
            hi = mid
    if lo == blk0 + (end - start + BLOCK_SIZE - 1) // BLOCK_SIZE:
        return end
    s, n = _block(start, end, blk0, lo)
    buf = np.empty(BLOCK_SIZE, dtype=np.uint32)
    if not load_rows(src, blk0, lo, s, n, buf):
        raise DamagedPostings(_BAD_ROWS)
    i = 0
    while np.int64(buf[i]) < row:
        i += 1
    return s + i


@njit(cache=True, nogil=True)
def gather(src, psrc, start, end, blk0, a, z, within, use_within, drop, with_positions):
    """Postings [a, z) of a term's postings [start, end), only those whose row is in
    ``within`` (ascending; when ``use_within``) and not in ``drop`` (ascending): ``(rows,
    tfs, pos_offsets, positions)``, the position arrays empty unless ``with_positions``.

    Blocks holding no row of ``within`` are passed by their last rows, undecoded: probing
    a long list at a few rows decodes a block per row at most."""
    blk_last = src[5]
    cap = z - a
    if use_within:
        cap = min(cap, within.shape[0])
    rows = np.empty(cap, dtype=np.uint32)
    tfs = np.empty(cap, dtype=np.uint32)
    pos_offsets = np.zeros(cap + 1 if with_positions else 0, dtype=np.int64)
    positions = np.empty(cap if with_positions else 0, dtype=np.uint32)
    brows = np.empty(BLOCK_SIZE, dtype=np.uint32)
    btfs = np.empty(BLOCK_SIZE, dtype=np.uint32)
    boffs = np.empty(BLOCK_SIZE + 1, dtype=np.int64)
    bpos = np.empty(BLOCK_SIZE, dtype=np.uint32)
    m = 0
    wi = 0
    di = 0
    ok = True
    b = blk0 + (a - start) // BLOCK_SIZE
    last_block = blk0 + (z - 1 - start) // BLOCK_SIZE if z > a else b - 1
    while b <= last_block:
        s, n = _block(start, end, blk0, b)
        if use_within:
            while wi < within.shape[0] and np.int64(within[wi]) <= (np.int64(blk_last[b - 1]) if b > blk0 else -1):
                wi += 1
            if wi == within.shape[0]:
                break
            if np.int64(within[wi]) > np.int64(blk_last[b]):
                b += 1
                continue
        ok &= load_rows(src, blk0, b, s, n, brows)
        load_tfs(src, b, s, n, btfs)
        if with_positions:
            bpos, sound = load_positions(psrc, b, s, n, btfs, boffs, bpos)
            if not sound:
                raise DamagedPositions(_BAD_POSITIONS)
        for i in range(max(a - s, 0), min(z - s, n)):
            r = np.int64(brows[i])
            if use_within:
                while wi < within.shape[0] and np.int64(within[wi]) < r:
                    wi += 1
                if wi == within.shape[0] or np.int64(within[wi]) != r:
                    continue
            while di < drop.shape[0] and np.int64(drop[di]) < r:
                di += 1
            if di < drop.shape[0] and np.int64(drop[di]) == r:
                continue
            rows[m] = brows[i]
            tfs[m] = btfs[i]
            if with_positions:
                k = boffs[i + 1] - boffs[i]
                at = pos_offsets[m]
                if positions.shape[0] < at + k:
                    grown = np.empty(max(at + k, 2 * positions.shape[0]), dtype=np.uint32)
                    grown[:at] = positions[:at]
                    positions = grown
                positions[at : at + k] = bpos[boffs[i] : boffs[i + 1]]
                pos_offsets[m + 1] = at + k
            m += 1
        b += 1
    if not ok:
        raise DamagedPostings(_BAD_ROWS)
    if with_positions:
        return rows[:m], tfs[:m], pos_offsets[: m + 1], positions[: pos_offsets[m]]
    return rows[:m], tfs[:m], pos_offsets, positions


@njit(cache=True, nogil=True)
def live_counts(src, post_offsets, block_offsets, lo, hi, drop):
    """Per term, its postings whose row is in [lo, hi) and not in ``drop`` (ascending)."""
    blk_last = src[5]
    n_terms = post_offsets.shape[0] - 1
    counts = np.zeros(n_terms, dtype=np.int64)
    buf = np.empty(BLOCK_SIZE, dtype=np.uint32)
    ok = True
    for t in range(n_terms):
        start, end, blk0 = post_offsets[t], post_offsets[t + 1], block_offsets[t]
        di = 0
        for b in range(blk0, block_offsets[t + 1]):
            if np.int64(blk_last[b]) < lo:
                continue
            if b > blk0 and np.int64(blk_last[b - 1]) >= hi - 1:
                break
            s, n = _block(start, end, blk0, b)
            ok &= load_rows(src, blk0, b, s, n, buf)
            for i in range(n):
                r = np.int64(buf[i])
                if r < lo or r >= hi:
                    continue
                while di < drop.shape[0] and np.int64(drop[di]) < r:
                    di += 1
                if di == drop.shape[0] or np.int64(drop[di]) != r:
                    counts[t] += 1
    if not ok:
        raise DamagedPostings(_BAD_ROWS)
    return counts


@njit(cache=True, nogil=True)
def scatter_postings(src, post_offsets, block_offsets, gid, row_shift, dst_offsets, written, dst_rows, dst_tfs):
    """Copy one segment's postings into a merged segment's ``dst_rows``/``dst_tfs``: term
    t's postings go after what earlier segments wrote for merged term ``gid[t]``, rows
    shifted by ``row_shift``. Returns where each term's postings start in the merged
    arrays."""
    n_terms = post_offsets.shape[0] - 1
    starts = np.empty(n_terms, dtype=np.int64)
    ok = True
    for t in range(n_terms):
        g = gid[t]
        start, end, blk0 = post_offsets[t], post_offsets[t + 1], block_offsets[t]
        d = dst_offsets[g] + written[g]
        starts[t] = d
        for b in range(blk0, block_offsets[t + 1]):
            s, n = _block(start, end, blk0, b)
            at = d + s - start
            ok &= load_rows(src, blk0, b, s, n, dst_rows[at : at + n])
            load_tfs(src, b, s, n, dst_tfs[at : at + n])
            for i in range(at, at + n):
                dst_rows[i] += np.uint32(row_shift)
        written[g] += end - start
    if not ok:
        raise DamagedPostings(_BAD_ROWS)
    return starts


@njit(cache=True, nogil=True)
def scatter_positions(src, psrc, post_offsets, block_offsets, starts, dst_pos_offsets, dst_positions):
    """The positions of the postings :func:`scatter_postings` placed (``dst_pos_offsets``
    already made from the merged term frequencies)."""
    tfs = np.empty(BLOCK_SIZE, dtype=np.uint32)
    offsets = np.empty(BLOCK_SIZE + 1, dtype=np.int64)
    out = np.empty(BLOCK_SIZE, dtype=np.uint32)
    for t in range(post_offsets.shape[0] - 1):
        start, end, blk0 = post_offsets[t], post_offsets[t + 1], block_offsets[t]
        for b in range(blk0, block_offsets[t + 1]):
            s, n = _block(start, end, blk0, b)
            load_tfs(src, b, s, n, tfs)
            out, sound = load_positions(psrc, b, s, n, tfs, offsets, out)
            at = starts[t] + s - start
            d = dst_pos_offsets[at]
            if not sound or dst_pos_offsets[at + n] - d != offsets[n]:
                raise DamagedPositions(_BAD_POSITIONS)
            dst_positions[d : d + offsets[n]] = out[: offsets[n]]


# -- checking a segment when it is opened ---------------------------------------------------
@njit(cache=True, nogil=True)
def check_layout(post_offsets, block_offsets, blk_last, count, n_postings, block_bits, block_words, n_words,
                 term_offsets, n_term_bytes):
    """The first problem found in a segment's offsets and widths and the array it is in,
    or ("", "") (checked once, when it is opened: every offset a kernel follows, and the
    packed blocks' sizes)."""
    n_terms = post_offsets.shape[0] - 1
    if n_terms < 0 or post_offsets[0] != 0 or post_offsets[n_terms] != n_postings:
        return "posting offsets do not run from 0 to the postings", "post_offsets"
    if term_offsets.shape[0] != n_terms + 1 or term_offsets[0] < 0 or term_offsets[n_terms] > n_term_bytes:
        return "term offsets lie outside the terms, or are not one per term", "terms"
    if block_offsets.shape[0] != n_terms + 1 or block_offsets[0] != 0:
        return "block offsets are not one per term from 0", "block_offsets"
    for t in range(n_terms):
        if term_offsets[t + 1] < term_offsets[t]:
            return "term offsets are not ascending", "terms"
        n = post_offsets[t + 1] - post_offsets[t]
        if n < 0:
            return "posting offsets are not ascending", "post_offsets"
        if block_offsets[t + 1] - block_offsets[t] != (n + BLOCK_SIZE - 1) // BLOCK_SIZE:
            return "a term's block offsets disagree with its postings", "block_offsets"
    n_blocks = block_offsets[n_terms]
    if blk_last.shape[0] != n_blocks:
        return "not one last row per block", "block_last_row"
    for t in range(n_terms):
        for b in range(block_offsets[t], block_offsets[t + 1]):
            if np.int64(blk_last[b]) >= count or (b > block_offsets[t] and blk_last[b] <= blk_last[b - 1]):
                return "a block's last row is outside the segment or not ascending", "block_last_row"
    if block_words.shape[0] == 0:
        return "", ""
    if block_bits.shape[0] != 2 * n_blocks:
        return "not two widths per block", "block_bits"
    if block_words.shape[0] != n_blocks + 1 or block_words[0] != 0:
        return "block offsets into the packed postings are not one per block from 0", "block_words"
    for t in range(n_terms):
        for b in range(block_offsets[t], block_offsets[t + 1]):
            s = post_offsets[t] + (b - block_offsets[t]) * BLOCK_SIZE
            n = min(s + BLOCK_SIZE, post_offsets[t + 1]) - s
            wr, wt = np.int64(block_bits[2 * b]), np.int64(block_bits[2 * b + 1])
            if wr > 32 or wt > 32:
                return "a block's width is above 32 bits", "block_bits"
            if block_words[b + 1] - block_words[b] != _n_words(n, wr) + _n_words(n, wt):
                return "a packed block's size disagrees with its widths", "block_words"
    if block_words[n_blocks] + PAD > n_words:
        return "the packed blocks run past the end of the postings", "post_words"
    return "", ""


@njit(cache=True, nogil=True)
def check_positions(n_blocks, block_pos_words, n_pos_words):
    """The first problem found in a packed segment's position offsets and the array it is
    in, or ("", "")."""
    if block_pos_words.shape[0] != n_blocks + 1 or block_pos_words[0] != 0:
        return "position block offsets are not one per block from 0", "block_pos_words"
    for b in range(n_blocks):
        if block_pos_words[b + 1] <= block_pos_words[b]:
            return "position block offsets are not ascending", "block_pos_words"
    if block_pos_words[n_blocks] + PAD > n_pos_words:
        return "the position blocks run past the end of the positions", "pos_words"
    return "", ""
