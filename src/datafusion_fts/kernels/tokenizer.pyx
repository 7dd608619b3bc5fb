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


# Code point classes (``kind`` table, unicode_tables.script_tables): 0 a separator, a
# character of words, a character of a script written without spaces (Han, Hiragana,
# Katakana, Hangul: runs become overlapping bigrams), a kana voicing mark.
DEF WORD = 1
DEF BIGRAM = 2
DEF VOICING = 3
# Voicing marks compose with the kana U+3040..U+30FF (``compose``: 192 dakuten forms,
# then 192 handakuten forms, 0 where none).
DEF KANA_LO = 0x3040
DEF KANA_N = 0xC0


cdef inline int64_t _intern(Tokens* t, int64_t start, int64_t cursor, uint64_t h) noexcept nogil:
    """The id of the term written at ``vocab[start:cursor]`` with hash ``h``, added when new
    (then kept in the vocabulary, else overwritten by the next one); -2 when out of memory."""
    cdef uint64_t mask = t.capacity - 1
    cdef uint64_t slot = h & mask
    cdef int64_t cand, a, length = cursor - start
    while True:
        cand = t.table[slot] - 1
        if cand < 0:
            break
        if t.hashes[cand] == h:
            a = t.vocab_offsets[cand]
            if t.vocab_offsets[cand + 1] - a == length and memcmp(t.vocab + a, t.vocab + start, length) == 0:
                return cand
        slot = (slot + 1) & mask
    cand = t.n_terms
    t.cursor = cursor
    if _add_term(t, slot, h):
        return -2
    return cand


cdef inline void _token(Tokens* t, int64_t row, int64_t term, int64_t pos, int64_t a, int64_t b,
                        bint spans) noexcept nogil:
    t.row[t.n_tok] = <int32_t>row
    t.term[t.n_tok] = <int32_t>term
    t.pos[t.n_tok] = <int32_t>pos
    if spans:
        t.start[t.n_tok] = <int32_t>a
        t.end[t.n_tok] = <int32_t>b
    t.n_tok += 1


cdef inline int64_t _gram(Tokens* t, int32_t c1, int32_t c2, int64_t max_bytes) noexcept nogil:
    """Intern the gram ``c1 c2`` (``c1`` < 0: the unigram ``c2``): its id, -1 when longer
    than ``max_bytes``, -2 when out of memory."""
    cdef int64_t start = t.cursor, cursor = t.cursor, k
    cdef uint64_t h = FNV_OFFSET
    if c1 >= 0:
        cursor = put_utf8(t.vocab, cursor, c1)
    cursor = put_utf8(t.vocab, cursor, c2)
    if cursor - start > max_bytes:
        return -1
    for k in range(start, cursor):
        h = (h ^ t.vocab[k]) * FNV_PRIME
    cdef int64_t known = t.n_terms
    cdef int64_t term = _intern(t, start, cursor, h)
    if 0 <= term < known:
        t.cursor = start  # (a known term: its bytes are dropped)
    return term


cdef inline int64_t _emit_gram(Tokens* t, int32_t c1, int32_t c2, int64_t max_bytes, int64_t row, int64_t pos,
                               int64_t a, int64_t b, bint spans) noexcept nogil:
    """Intern the gram ``c1 c2`` (``c1`` < 0: the unigram ``c2``) and add its token at
    ``pos``, spanning bytes [a, b) of its value: 1 when added, 0 when too long, -1 when
    out of memory."""
    cdef int64_t term = _gram(t, c1, c2, max_bytes)
    if term < 0:
        return -1 if term == -2 else 0
    _token(t, row, term, pos, a, b, spans)
    return 1


cdef int64_t _run_of_grams(
    Tokens* t, const uint8_t* data, int64_t i, int64_t end, int64_t base, int64_t row, const uint8_t* kind,
    const int32_t* lower, const int32_t* compose, int64_t max_bytes, bint spans, int64_t* pos, int64_t* gaps,
    int64_t* grams_end,
) noexcept nogil:
    """The tokens of the run of grams at ``data[i]`` (a BIGRAM character), from ``*pos`` on
    (the vocabulary's free tail at ``t.cursor``): where the run ends, -1 when out of memory.
    ``c1``, ``c2`` are its last two characters (``s1``, ``s2`` where they start, ``e2``
    where ``c2`` ends). Out of the words' loop, whose registers it would crowd."""
    cdef int64_t n_run = 0, s1 = 0, s2 = 0, e2 = 0, nxt, cp, folded
    cdef int32_t c1 = 0, c2 = 0
    cdef int added
    while i < end:
        if data[i] < 0x80:
            break
        cp = decode(data, i, end, &nxt)
        if kind[cp] == BIGRAM:
            if n_run >= 2:
                if n_run == 2 and grams_end[0] == pos[0]:
                    pos[0] += 1
                    gaps[0] += 1
                added = _emit_gram(t, c1, c2, max_bytes, row, pos[0], s1 - base, e2 - base, spans)
                if added < 0:
                    return -1
                pos[0] += added
            c1 = c2
            s1 = s2
            c2 = lower[cp]
            s2 = i
            e2 = nxt
            n_run += 1
            i = nxt
            continue
        if kind[cp] == VOICING and KANA_LO <= c2 < KANA_LO + KANA_N:
            folded = compose[(c2 - KANA_LO) + (KANA_N if cp == 0x309A or cp == 0xFF9F else 0)]
            if folded:
                c2 = <int32_t>folded
                e2 = nxt
                i = nxt
                continue
        break
    # The run ends: its last gram, or its one character.
    if n_run >= 2:
        if n_run == 2 and grams_end[0] == pos[0]:
            pos[0] += 1
            gaps[0] += 1
        added = _emit_gram(t, c1, c2, max_bytes, row, pos[0], s1 - base, e2 - base, spans)
    else:
        added = _emit_gram(t, -1, c2, max_bytes, row, pos[0], s2 - base, e2 - base, spans)
    if added < 0:
        return -1
    pos[0] += added
    grams_end[0] = pos[0] if n_run >= 2 else -1
    return i


cdef int _run(
    const uint8_t* data,
    const int64_t* offsets,
    int64_t n_rows,
    const uint8_t* valid,
    const uint8_t* kind,
    const int32_t* lower,
    const int32_t* compose,
    int64_t max_bytes,
    const uint8_t* seed_bytes,
    const int64_t* seed_offsets,
    int64_t n_seed,
    bint spans,
    Tokens* t,
) noexcept nogil:
    """The one tokenizer loop; ``spans`` also records each kept token's byte span.
    Returns -1 when out of memory.

    Words take the loop's hot path. A run of BIGRAM characters is read by
    ``_run_of_grams`` and yields each pair of neighbours at consecutive positions (one character alone,
    itself); a gram is written once the character after it is known (a voicing mark may
    still compose into its last one). After a run of two or more, the first gram of the
    next such run, when no other token came between, skips a position: a phrase's grams
    never join two runs ("数据，据库" does not hold "数据库")."""
    cdef uint64_t h, slot, mask
    cdef int64_t s, k, row, i, end, pos, gaps, grams_end, token_at, start, at, nxt, term, base, length, cand, a
    cdef int64_t cp
    cdef int32_t c
    cdef uint8_t b0
    cdef uint8_t* vocab = t.vocab
    cdef int64_t cursor = 0
    for s in range(n_seed):
        h = FNV_OFFSET
        for k in range(seed_offsets[s], seed_offsets[s + 1]):
            vocab[cursor] = seed_bytes[k]
            h = (h ^ seed_bytes[k]) * FNV_PRIME
            cursor += 1
        t.cursor = cursor
        if _add_term(t, _slot_of(t.table, h, t.capacity - 1), h):
            return -1
    mask = t.capacity - 1

    for row in range(n_rows):
        if not valid[row]:
            continue
        base = offsets[row]
        i = base
        end = offsets[row + 1]
        pos = gaps = 0
        grams_end = -1  # (the position after the last run of grams, while no token followed it)
        while i < end:
            b0 = data[i]
            if b0 < 0x80:
                if kind[b0] != WORD:
                    i += 1
                    continue
            else:
                cp = decode(data, i, end, &nxt)
                if kind[cp] != WORD:
                    if kind[cp] != BIGRAM:
                        i = nxt
                        continue
                    t.cursor = cursor
                    i = _run_of_grams(t, data, i, end, base, row, kind, lower, compose, max_bytes, spans,
                                      &pos, &gaps, &grams_end)
                    if i < 0:
                        return -1
                    cursor = t.cursor
                    mask = t.capacity - 1
                    continue
            # A word starts at i: lowercase it into the vocabulary's free tail and hash it.
            token_at = i
            start = cursor
            h = FNV_OFFSET
            while i < end:
                b0 = data[i]
                if b0 < 0x80:
                    if kind[b0] != WORD:
                        break
                    c = lower[b0]
                    vocab[cursor] = <uint8_t>c
                    cursor += 1
                    h = (h ^ <uint64_t>c) * FNV_PRIME
                    i += 1
                else:
                    cp = decode(data, i, end, &nxt)
                    if kind[cp] != WORD:
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
            # (_intern, in line: called here it costs 2 % more instructions on English text)
            slot = h & mask
            term = -1
            while True:
                cand = t.table[slot] - 1
                if cand < 0:
                    break
                if t.hashes[cand] == h:
                    a = t.vocab_offsets[cand]
                    if t.vocab_offsets[cand + 1] - a == length and memcmp(vocab + a, vocab + start, length) == 0:
                        term = cand
                        break
                slot = (slot + 1) & mask
            if term >= 0:
                cursor = start  # (a known term: its bytes are dropped)
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
                t.start[t.n_tok] = <int32_t>(token_at - base)
                t.end[t.n_tok] = <int32_t>(i - base)
            t.n_tok += 1
            pos += 1
        t.dl[row] = <int32_t>(pos - gaps)
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


cdef char* _laid_out(Tokens* t, int64_t max_tok, int64_t max_terms, int64_t n_span, int64_t n_rows,
                     int64_t n_vocab):
    """One allocation of scratch for a call, ``t``'s arrays laid out in it (8-byte arrays
    first, so every array is aligned) and its counts zeroed; NULL when out of memory."""
    cdef char* scratch = <char*>malloc(
        8 * (2 * max_terms + 1) + 4 * (3 * max_tok + 2 * n_span + n_rows) + n_vocab
    )
    if scratch == NULL:
        return NULL
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
    return scratch


cdef tuple _copied(Tokens* t, int64_t n_rows):
    """The tokens, lengths and vocabulary in ``t``, copied out at their sizes."""
    return (
        _array_from(t.row, t.n_tok, _INT32),
        _array_from(t.term, t.n_tok, _INT32),
        _array_from(t.pos, t.n_tok, _INT32),
        _array_from(t.dl, n_rows, _INT32),
        _array_from(t.vocab, t.cursor, _UINT8),
        _array_from(t.vocab_offsets, t.n_terms + 1, _INT64),
    )


cdef tuple _tokenize(
    const uint8_t[::1] data,
    const int64_t[::1] offsets,
    const uint8_t[::1] valid,
    const uint8_t[::1] kind,
    const int32_t[::1] lower,
    const int32_t[::1] compose,
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
    # Lowercasing grows a code point's UTF-8 by at most half (U+023A -> U+2C65); a gram
    # writes at most two characters of 3 bytes or more per character of its run.
    cdef int64_t n_vocab = 2 * n_bytes + seed_bytes.shape[0] + 16
    cdef Tokens t
    cdef char* scratch = _laid_out(&t, max_tok, max_terms, n_span, n_rows, n_vocab)
    if scratch == NULL:
        raise MemoryError()
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
                    &valid[0] if n_rows else NULL, &kind[0], &lower[0], &compose[0], max_bytes,
                    &seed_bytes[0] if seed_bytes.shape[0] else NULL, &seed_offsets[0], n_seed,
                    spans, &t,
                )
                free(t.table)
        if status:
            raise MemoryError()
        out = _copied(&t, n_rows)
        if spans:
            out += (_array_from(t.start, t.n_tok, _INT32), _array_from(t.end, t.n_tok, _INT32))
        return out
    finally:
        free(scratch)


def tokenize(
    const uint8_t[::1] data,
    const int64_t[::1] offsets,
    const uint8_t[::1] valid,
    const uint8_t[::1] kind,
    const int32_t[::1] lower,
    const int32_t[::1] compose,
    int64_t max_bytes,
    const uint8_t[::1] seed_bytes,
    const int64_t[::1] seed_offsets,
):
    """Tokenize the ``len(offsets) - 1`` UTF-8 values ``data[offsets[r]:offsets[r+1]]``.

    ``valid`` is the rows' validity (a bool array viewed as bytes); ``kind``, ``lower``
    and ``compose`` are the code point tables of ``unicode_tables.script_tables`` (or
    ``word_tables``: no character then makes grams).
    ``seed_bytes``/``seed_offsets`` hold distinct terms interned first (ids 0..n_seed-1),
    so a caller can pick out a query's terms by id without a lookup.

    Returns ``(tok_row, tok_term, tok_pos, dl, vocab_bytes, vocab_offsets)``: token i is
    term ``tok_term[i]`` at position ``tok_pos[i]`` of row ``tok_row[i]``; term t is
    ``vocab_bytes[vocab_offsets[t]:vocab_offsets[t+1]]``.
    """
    return _tokenize(
        data, offsets, valid, kind, lower, compose, max_bytes, seed_bytes, seed_offsets, False
    )


def tokenize_spans(
    const uint8_t[::1] data,
    const int64_t[::1] offsets,
    const uint8_t[::1] valid,
    const uint8_t[::1] kind,
    const int32_t[::1] lower,
    const int32_t[::1] compose,
    int64_t max_bytes,
    const uint8_t[::1] seed_bytes,
    const int64_t[::1] seed_offsets,
):
    """:func:`tokenize` plus where each kept token lies in its value: returns
    ``(tok_row, tok_term, tok_pos, dl, vocab_bytes, vocab_offsets, tok_start, tok_end)``,
    token i spanning UTF-8 bytes ``[tok_start[i], tok_end[i])`` of its row's value
    (highlighting rewrites the original text around them)."""
    return _tokenize(
        data, offsets, valid, kind, lower, compose, max_bytes, seed_bytes, seed_offsets, True
    )


def remap_tokens(const int32_t[::1] tok_row, const int32_t[::1] tok_term, const int32_t[::1] tok_pos,
                 const int32_t[::1] remap, int64_t n_rows):
    """Apply a term filter (``remap[term]`` = new id, or -1 to drop the token): a dropped
    token leaves no gap (each later position of its row moves down by one), a gap the
    tokenizer left between runs of grams stays."""
    cdef Py_ssize_t n = tok_row.shape[0], i, k = 0
    cdef int32_t* out_row = <int32_t*>malloc((3 * n + 2 * n_rows + 1) * sizeof(int32_t))
    if out_row == NULL:
        raise MemoryError()
    cdef int32_t* out_term = out_row + n
    cdef int32_t* out_pos = out_term + n
    cdef int32_t* dl = out_pos + n
    cdef int32_t* dropped = dl + n_rows
    cdef int32_t r, new
    try:
        with nogil:
            memset(dl, 0, 2 * n_rows * sizeof(int32_t))
            for i in range(n):
                r = tok_row[i]
                new = remap[tok_term[i]]
                if new < 0:
                    dropped[r] += 1
                    continue
                out_row[k] = r
                out_term[k] = new
                out_pos[k] = tok_pos[i] - dropped[r]
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


# The longest gram an n-gram index makes (``char_grams``'s ``n``).
DEF MAX_GRAM = 8


cdef inline int _push_gram(Tokens* t, int32_t* window, int64_t n, int64_t* filled, int32_t c, int64_t row,
                           int64_t* pos, int32_t* last_row) noexcept nogil:
    """Add the folded character ``c`` to the row's ``window`` of its last ``n``; once it
    holds ``n``, intern them as a gram and add its token unless the row has it already
    (``last_row[term]``: the last row that had it): 0, or -1 when out of memory."""
    cdef int64_t k, start = t.cursor, cursor = t.cursor, term
    cdef uint64_t h = FNV_OFFSET
    for k in range(n - 1):
        window[k] = window[k + 1]
    window[n - 1] = c
    filled[0] += 1
    if filled[0] < n:
        return 0
    for k in range(n):
        cursor = put_utf8(t.vocab, cursor, window[k])
    for k in range(start, cursor):
        h = (h ^ t.vocab[k]) * FNV_PRIME
    cdef int64_t known = t.n_terms
    term = _intern(t, start, cursor, h)
    if term == -2:
        return -1
    if term < known:
        t.cursor = start  # (a known term: its bytes are dropped)
    if last_row[term] == row:
        return 0
    last_row[term] = <int32_t>row
    _token(t, row, term, pos[0], 0, 0, False)
    pos[0] += 1
    return 0


def char_grams(
    const uint8_t[::1] data,
    const int64_t[::1] offsets,
    const uint8_t[::1] valid,
    const int32_t[::1] fold,
    const int32_t[:, ::1] expansions,
    int64_t n,
):
    """The distinct overlapping ``n``-grams of characters of each value after folding each
    code point (``fold``, ``expansions``: ``unicode_tables.fold_tables``), every character
    counted (spaces and punctuation too), each once, where it first stands: an n-gram
    index's tokens (whose candidates need only whether a row holds a gram: its postings'
    frequencies are then all 1, which pack in no bits). A value of fewer than ``n``
    folded characters has none. Returns what :func:`tokenize` returns, a token's
    position being its gram's place among the row's distinct grams.

    Scratch is sized for the worst case, 1.5 folded characters per UTF-8 byte (a 2-byte
    character folding to three), so callers pass pieces of a few MB."""
    if not 1 <= n <= MAX_GRAM:
        raise ValueError(f"n must be in [1, {MAX_GRAM}], got {n}")
    cdef int64_t n_rows = offsets.shape[0] - 1
    cdef int64_t n_bytes = offsets[n_rows] - offsets[0]
    cdef int64_t max_tok = n_bytes + n_bytes // 2 + 1
    cdef int64_t n_vocab = max_tok * n * 4 + 16
    cdef Tokens t
    cdef char* scratch = _laid_out(&t, max_tok, max_tok, 0, n_rows, n_vocab)
    if scratch == NULL:
        raise MemoryError()
    cdef int32_t* last_row = <int32_t*>malloc(max_tok * sizeof(int32_t))
    if last_row == NULL:
        free(scratch)
        raise MemoryError()
    cdef int32_t window[MAX_GRAM]
    cdef int64_t row, i, end, nxt, cp, filled, pos, j
    cdef int32_t f, e
    cdef int status = -1
    try:
        with nogil:
            memset(t.dl, 0, n_rows * sizeof(int32_t))
            memset(last_row, 0xFF, max_tok * sizeof(int32_t))  # (-1: no row)
            t.table = <int32_t*>calloc(t.capacity, sizeof(int32_t))
            if t.table != NULL:
                status = 0
                for row in range(n_rows):
                    if not valid[row]:
                        continue
                    i = offsets[row]
                    end = offsets[row + 1]
                    filled = pos = 0
                    while i < end and status == 0:
                        if data[i] < 0x80:
                            cp = data[i]
                            i += 1
                        else:
                            cp = decode(&data[0], i, end, &nxt)
                            i = nxt
                        f = fold[cp]
                        if f >= 0:
                            status = _push_gram(&t, window, n, &filled, f, row, &pos, last_row)
                            continue
                        for j in range(3):
                            e = expansions[-1 - f, j]
                            if e and status == 0:
                                status = _push_gram(&t, window, n, &filled, e, row, &pos, last_row)
                    t.dl[row] = <int32_t>pos
                    if status:
                        break
                free(t.table)
        if status:
            raise MemoryError()
        return _copied(&t, n_rows)
    finally:
        free(scratch)
        free(last_row)
