"""The tokenizer: one pass over a UTF-8 column that splits, lowercases, drops over-long
tokens and interns every token to a dense term id.

Splitting is sequential by nature (each byte's meaning depends on the previous ones), so
this is a compiled loop rather than a chain of pyarrow calls (``split_pattern_regex`` plus
``dictionary_encode`` measured ~12 s for 60M tokens; this kernel ~0.4 s per 6M tokens).
Interning happens in the same pass with an open-addressing hash table over the token bytes
(FNV-1a, compared byte for byte, so ids are exact). Callers feed it pieces of at most 65,536
rows: the per-token cost grows with the size of one call, and pieces run in parallel threads.
"""

import numpy as np

from cpython.buffer cimport PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy, memset

cdef uint64_t FNV_OFFSET = 0xCBF29CE484222325
cdef uint64_t FNV_PRIME = 0x100000001B3
_INT32, _INT64, _UINT8 = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.uint8)


cdef struct Tokens:
    # the results, in scratch sized for the worst case
    int32_t* row
    int32_t* term
    int32_t* pos
    int32_t* start  # (spans only)
    int32_t* end
    int32_t* dl
    uint8_t* vocab
    int64_t* vocab_offsets
    uint64_t* hashes
    # the hash table (capacity a power of two, slot = term id + 1, 0 empty) and counts
    int32_t* table
    uint64_t capacity
    int64_t n_tok
    int64_t n_terms
    int64_t cursor


cdef inline uint64_t _slot_of(const int32_t* table, uint64_t h, uint64_t mask) noexcept nogil:
    """The first empty slot on ``h``'s probe sequence."""
    cdef uint64_t slot = h & mask
    while table[slot] != 0:
        slot = (slot + 1) & mask
    return slot


cdef int _grow(Tokens* t) noexcept nogil:
    """Double the hash table and re-insert every term; -1 when out of memory."""
    cdef uint64_t capacity = t.capacity * 2
    cdef int32_t* table = <int32_t*>calloc(capacity, sizeof(int32_t))
    cdef int64_t term
    if table == NULL:
        return -1
    for term in range(t.n_terms):
        table[_slot_of(table, t.hashes[term], capacity - 1)] = <int32_t>(term + 1)
    free(t.table)
    t.table = table
    t.capacity = capacity
    return 0


cdef inline int _add_term(Tokens* t, uint64_t slot, uint64_t h) noexcept nogil:
    """Intern the term just written at the vocabulary's end into empty ``slot``."""
    t.hashes[t.n_terms] = h
    t.n_terms += 1
    t.vocab_offsets[t.n_terms] = t.cursor
    t.table[slot] = <int32_t>t.n_terms
    if <uint64_t>t.n_terms * 2 > t.capacity:
        return _grow(t)
    return 0


cdef int _run(
    const uint8_t* data,
    const int64_t* offsets,
    int64_t n_rows,
    const uint8_t* valid,
    const uint8_t* is_word,
    const int32_t* lower,
    int64_t max_bytes,
    const uint8_t* seed_bytes,
    const int64_t* seed_offsets,
    int64_t n_seed,
    bint spans,
    Tokens* t,
) noexcept nogil:
    """The one tokenizer loop; ``spans`` also records each kept token's byte span.
    Returns -1 when out of memory."""
    cdef uint64_t h, slot, mask = t.capacity - 1
    cdef int64_t s, k, row, i, end, pos, token_at, start, length, at, a, nxt
    cdef int64_t cp, cand, term
    cdef uint8_t b0
    cdef int32_t c
    cdef uint8_t* vocab = t.vocab
    cdef int64_t cursor = 0
    for s in range(n_seed):
        h = FNV_OFFSET
        for k in range(seed_offsets[s], seed_offsets[s + 1]):
            vocab[cursor] = seed_bytes[k]
            h = (h ^ seed_bytes[k]) * FNV_PRIME
            cursor += 1
        t.cursor = cursor
        if _add_term(t, _slot_of(t.table, h, mask), h):
            return -1
        mask = t.capacity - 1

    for row in range(n_rows):
        if not valid[row]:
            continue
        i = offsets[row]
        end = offsets[row + 1]
        pos = 0
        while i < end:
            b0 = data[i]
            if b0 < 0x80:
                if not is_word[b0]:
                    i += 1
                    continue
            else:
                cp = decode(data, i, end, &nxt)
                if not is_word[cp]:
                    i = nxt
                    continue
            # A token starts at i: lowercase it into the vocabulary's free tail and hash it.
            token_at = i
            start = cursor
            h = FNV_OFFSET
            while i < end:
                b0 = data[i]
                if b0 < 0x80:
                    if not is_word[b0]:
                        break
                    c = lower[b0]
                    vocab[cursor] = <uint8_t>c
                    cursor += 1
                    h = (h ^ <uint64_t>c) * FNV_PRIME
                    i += 1
                else:
                    cp = decode(data, i, end, &nxt)
                    if not is_word[cp]:
                        break
                    i = nxt
                    at = cursor
                    cursor = put_utf8(vocab, cursor, lower[cp])
                    for k in range(at, cursor):
                        h = (h ^ vocab[k]) * FNV_PRIME
            length = cursor - start
            if length > max_bytes:
                cursor = start
                continue
            slot = h & mask
            term = -1
            while True:
                cand = t.table[slot] - 1
                if cand < 0:
                    break
                if t.hashes[cand] == h:
                    a = t.vocab_offsets[cand]
                    if (t.vocab_offsets[cand + 1] - a == length
                            and memcmp(vocab + a, vocab + start, length) == 0):
                        term = cand
                        break
                slot = (slot + 1) & mask
            if term >= 0:
                cursor = start
            else:
                term = t.n_terms
                t.cursor = cursor
                if _add_term(t, slot, h):
                    return -1
                mask = t.capacity - 1
            t.row[t.n_tok] = <int32_t>row
            t.term[t.n_tok] = <int32_t>term
            t.pos[t.n_tok] = <int32_t>pos
            if spans:
                t.start[t.n_tok] = <int32_t>(token_at - offsets[row])
                t.end[t.n_tok] = <int32_t>(i - offsets[row])
            t.n_tok += 1
            pos += 1
        t.dl[row] = <int32_t>pos
    t.cursor = cursor
    return 0


cdef object _array_from(const void* src, Py_ssize_t n, object dtype):
    """A new numpy array of ``n`` items of ``dtype``, a copy of those at ``src``."""
    out = np.empty(n, dtype=dtype)
    cdef Py_buffer view
    if n:
        PyObject_GetBuffer(out, &view, PyBUF_WRITABLE)
        with nogil:
            memcpy(view.buf, src, view.len)
        PyBuffer_Release(&view)
    return out


cdef tuple _tokenize(
    const uint8_t[::1] data,
    const int64_t[::1] offsets,
    const uint8_t[::1] valid,
    const uint8_t[::1] is_word,
    const int32_t[::1] lower,
    int64_t max_bytes,
    const uint8_t[::1] seed_bytes,
    const int64_t[::1] seed_offsets,
    bint spans,
):
    """Run the loop without the GIL into scratch sized for the worst case, then copy the
    results out at their size (one allocation of scratch: small calls, such as a query's
    text, cost little more than the loop)."""
    cdef int64_t n_rows = offsets.shape[0] - 1
    cdef int64_t n_bytes = offsets[n_rows] - offsets[0]
    cdef int64_t n_seed = seed_offsets.shape[0] - 1
    cdef int64_t max_tok = n_bytes // 2 + n_rows + 1
    cdef int64_t max_terms = max_tok + n_seed
    cdef int64_t n_span = max_tok if spans else 0
    # Lowercasing grows a code point's UTF-8 by at most half (U+023A -> U+2C65).
    cdef int64_t n_vocab = n_bytes + n_bytes // 2 + seed_bytes.shape[0] + 16
    # (8-byte arrays first, so every array is aligned)
    cdef char* scratch = <char*>malloc(
        8 * (2 * max_terms + 1) + 4 * (3 * max_tok + 2 * n_span + n_rows) + n_vocab
    )
    if scratch == NULL:
        raise MemoryError()
    cdef Tokens t
    t.vocab_offsets = <int64_t*>scratch
    t.hashes = <uint64_t*>(t.vocab_offsets + max_terms + 1)
    t.row = <int32_t*>(t.hashes + max_terms)
    t.term = t.row + max_tok
    t.pos = t.term + max_tok
    t.start = t.pos + max_tok
    t.end = t.start + n_span
    t.dl = t.end + n_span
    t.vocab = <uint8_t*>(t.dl + n_rows)
    t.vocab_offsets[0] = 0
    t.n_tok = t.n_terms = t.cursor = 0
    t.capacity = 1 << 12
    while t.capacity < <uint64_t>(2 * n_seed + 2):
        t.capacity *= 2
    cdef int status = -1
    try:
        with nogil:
            memset(t.dl, 0, n_rows * sizeof(int32_t))
            t.table = <int32_t*>calloc(t.capacity, sizeof(int32_t))
            if t.table != NULL:
                status = _run(
                    &data[0] if data.shape[0] else NULL, &offsets[0], n_rows,
                    &valid[0] if n_rows else NULL, &is_word[0], &lower[0], max_bytes,
                    &seed_bytes[0] if seed_bytes.shape[0] else NULL, &seed_offsets[0], n_seed,
                    spans, &t,
                )
                free(t.table)
        if status:
            raise MemoryError()
        out = (
            _array_from(t.row, t.n_tok, _INT32),
            _array_from(t.term, t.n_tok, _INT32),
            _array_from(t.pos, t.n_tok, _INT32),
            _array_from(t.dl, n_rows, _INT32),
            _array_from(t.vocab, t.cursor, _UINT8),
            _array_from(t.vocab_offsets, t.n_terms + 1, _INT64),
        )
        if spans:
            out += (_array_from(t.start, t.n_tok, _INT32), _array_from(t.end, t.n_tok, _INT32))
        return out
    finally:
        free(scratch)


def tokenize(
    const uint8_t[::1] data,
    const int64_t[::1] offsets,
    const uint8_t[::1] valid,
    const uint8_t[::1] is_word,
    const int32_t[::1] lower,
    int64_t max_bytes,
    const uint8_t[::1] seed_bytes,
    const int64_t[::1] seed_offsets,
):
    """Tokenize the ``len(offsets) - 1`` UTF-8 values ``data[offsets[r]:offsets[r+1]]``.

    ``valid`` is the rows' validity (a bool array viewed as bytes); ``is_word`` and
    ``lower`` are the code point tables of ``unicode_tables.word_and_lower_tables``.
    ``seed_bytes``/``seed_offsets`` hold distinct terms interned first (ids 0..n_seed-1),
    so a caller can pick out a query's terms by id without a lookup.

    Returns ``(tok_row, tok_term, tok_pos, dl, vocab_bytes, vocab_offsets)``: token i is
    term ``tok_term[i]`` at position ``tok_pos[i]`` of row ``tok_row[i]``; term t is
    ``vocab_bytes[vocab_offsets[t]:vocab_offsets[t+1]]``.
    """
    return _tokenize(
        data, offsets, valid, is_word, lower, max_bytes, seed_bytes, seed_offsets, False
    )


def tokenize_spans(
    const uint8_t[::1] data,
    const int64_t[::1] offsets,
    const uint8_t[::1] valid,
    const uint8_t[::1] is_word,
    const int32_t[::1] lower,
    int64_t max_bytes,
    const uint8_t[::1] seed_bytes,
    const int64_t[::1] seed_offsets,
):
    """:func:`tokenize` plus where each kept token lies in its value: returns
    ``(tok_row, tok_term, tok_pos, dl, vocab_bytes, vocab_offsets, tok_start, tok_end)``,
    token i spanning UTF-8 bytes ``[tok_start[i], tok_end[i])`` of its row's value
    (highlighting rewrites the original text around them)."""
    return _tokenize(
        data, offsets, valid, is_word, lower, max_bytes, seed_bytes, seed_offsets, True
    )


def remap_tokens(const int32_t[::1] tok_row, const int32_t[::1] tok_term, const int32_t[::1] remap,
                 int64_t n_rows):
    """Apply a term filter (``remap[term]`` = new id, or -1 to drop the token) and renumber
    positions so they stay consecutive within each row (dropped tokens leave no gap)."""
    cdef Py_ssize_t n = tok_row.shape[0], i, k = 0
    cdef int32_t* out_row = <int32_t*>malloc((3 * n + n_rows + 1) * sizeof(int32_t))
    if out_row == NULL:
        raise MemoryError()
    cdef int32_t* out_term = out_row + n
    cdef int32_t* out_pos = out_term + n
    cdef int32_t* dl = out_pos + n
    cdef int32_t r, new
    try:
        with nogil:
            memset(dl, 0, n_rows * sizeof(int32_t))
            for i in range(n):
                new = remap[tok_term[i]]
                if new < 0:
                    continue
                r = tok_row[i]
                out_row[k] = r
                out_term[k] = new
                out_pos[k] = dl[r]
                dl[r] += 1
                k += 1
        return (
            _array_from(out_row, k, _INT32),
            _array_from(out_term, k, _INT32),
            _array_from(out_pos, k, _INT32),
            _array_from(dl, n_rows, _INT32),
        )
    finally:
        free(out_row)
