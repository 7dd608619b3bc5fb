"""The compiled tokenizer: one pass over a UTF-8 column that splits, lowercases, drops
over-long tokens and interns every token to a dense term id.

Splitting is sequential by nature (each byte's meaning depends on the previous ones), so
this is a numba kernel rather than a chain of pyarrow calls (``split_pattern_regex`` plus
``dictionary_encode`` measured ~12 s for 60M tokens; this kernel ~0.5 s per 6M tokens).
Interning happens in the same pass with an open-addressing hash table over the token bytes
(compared byte for byte, so ids are exact). Callers feed it pieces of at most 65,536 rows: the
per-token cost grows with the size of one call, and pieces run in parallel threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(cache=True, nogil=True)
def _rehash(hashes: np.ndarray, n_terms: int, capacity: int) -> np.ndarray:
    table = np.zeros(capacity, dtype=np.int32)
    mask = np.uint64(capacity - 1)
    for term in range(n_terms):
        slot = hashes[term] & mask
        while table[slot] != 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = term + 1
    return table


@njit(cache=True, nogil=True)
def _put_utf8(buf: np.ndarray, at: int, cp: int) -> int:
    """Write code point ``cp`` as UTF-8 at ``buf[at]``; return the new end."""
    if cp < 0x80:
        buf[at] = cp
        return at + 1
    if cp < 0x800:
        buf[at] = 0xC0 | (cp >> 6)
        buf[at + 1] = 0x80 | (cp & 0x3F)
        return at + 2
    if cp < 0x10000:
        buf[at] = 0xE0 | (cp >> 12)
        buf[at + 1] = 0x80 | ((cp >> 6) & 0x3F)
        buf[at + 2] = 0x80 | (cp & 0x3F)
        return at + 3
    buf[at] = 0xF0 | (cp >> 18)
    buf[at + 1] = 0x80 | ((cp >> 12) & 0x3F)
    buf[at + 2] = 0x80 | ((cp >> 6) & 0x3F)
    buf[at + 3] = 0x80 | (cp & 0x3F)
    return at + 4


@njit(cache=True, nogil=True)
def _decode(data: np.ndarray, i: int, end: int):
    """The code point at ``data[i]`` (0 for malformed input) and the index after it."""
    b0 = np.int64(data[i])
    if b0 < 0xE0:
        n = 2
        cp = (b0 & 0x1F) << 6
    elif b0 < 0xF0:
        n = 3
        cp = (b0 & 0x0F) << 12
    else:
        n = 4
        cp = (b0 & 0x07) << 18
    if i + n > end:
        return 0, end
    for k in range(1, n):
        cp |= (np.int64(data[i + k]) & 0x3F) << (6 * (n - 1 - k))
    if cp >= 0x110000:
        cp = 0
    return cp, i + n


@njit(cache=True, nogil=True)
def tokenize(
    data: np.ndarray,
    offsets: np.ndarray,
    valid: np.ndarray,
    is_word: np.ndarray,
    lower: np.ndarray,
    max_bytes: int,
    seed_bytes: np.ndarray,
    seed_offsets: np.ndarray,
):
    """Tokenize the ``len(offsets) - 1`` UTF-8 values ``data[offsets[r]:offsets[r+1]]``.

    ``seed_bytes``/``seed_offsets`` hold distinct terms interned first (ids 0..n_seed-1),
    so a caller can pick out a query's terms by id without a lookup.

    Returns ``(tok_row, tok_term, tok_pos, dl, vocab_bytes, vocab_offsets)``: token i is
    term ``tok_term[i]`` at position ``tok_pos[i]`` of row ``tok_row[i]``; term t is
    ``vocab_bytes[vocab_offsets[t]:vocab_offsets[t+1]]``.
    """
    out = _tokenize(data, offsets, valid, is_word, lower, max_bytes, seed_bytes, seed_offsets, False)
    return out[0], out[1], out[2], out[3], out[4], out[5]


@njit(cache=True, nogil=True)
def tokenize_spans(
    data: np.ndarray,
    offsets: np.ndarray,
    valid: np.ndarray,
    is_word: np.ndarray,
    lower: np.ndarray,
    max_bytes: int,
    seed_bytes: np.ndarray,
    seed_offsets: np.ndarray,
):
    """:func:`tokenize` plus where each kept token lies in its value: returns
    ``(tok_row, tok_term, tok_pos, dl, vocab_bytes, vocab_offsets, tok_start, tok_end)``,
    token i spanning UTF-8 bytes ``[tok_start[i], tok_end[i])`` of its row's value
    (highlighting rewrites the original text around them)."""
    return _tokenize(data, offsets, valid, is_word, lower, max_bytes, seed_bytes, seed_offsets, True)


@njit(cache=True, nogil=True, inline="always")
def _tokenize(
    data: np.ndarray,
    offsets: np.ndarray,
    valid: np.ndarray,
    is_word: np.ndarray,
    lower: np.ndarray,
    max_bytes: int,
    seed_bytes: np.ndarray,
    seed_offsets: np.ndarray,
    spans: bool,
):
    """The one tokenizer loop; ``spans`` also records each kept token's byte span. Inlined
    into both kernels with ``spans`` constant, so the plain one compiles without it."""
    n_rows = offsets.shape[0] - 1
    n_bytes = offsets[n_rows] - offsets[0]
    n_seed = seed_offsets.shape[0] - 1
    max_tok = n_bytes // 2 + n_rows + 1
    max_terms = max_tok + n_seed
    tok_row = np.empty(max_tok, dtype=np.int32)
    tok_term = np.empty(max_tok, dtype=np.int32)
    tok_pos = np.empty(max_tok, dtype=np.int32)
    n_span = max_tok if spans else 0
    tok_start = np.empty(n_span, dtype=np.int32)
    tok_end = np.empty(n_span, dtype=np.int32)
    dl = np.zeros(n_rows, dtype=np.int32)
    # Lowercasing grows a code point's UTF-8 by at most half (U+023A -> U+2C65).
    vocab = np.empty(n_bytes + n_bytes // 2 + seed_bytes.shape[0] + 16, dtype=np.uint8)
    vocab_offsets = np.zeros(max_terms + 1, dtype=np.int64)
    hashes = np.empty(max_terms, dtype=np.uint64)
    capacity = 1 << 12
    while capacity < 2 * n_seed + 2:
        capacity *= 2
    table = np.zeros(capacity, dtype=np.int32)
    mask = np.uint64(capacity - 1)
    n_terms = 0
    cursor = 0
    for s in range(n_seed):
        h = _FNV_OFFSET
        for k in range(seed_offsets[s], seed_offsets[s + 1]):
            vocab[cursor] = seed_bytes[k]
            h = (h ^ np.uint64(seed_bytes[k])) * _FNV_PRIME
            cursor += 1
        slot = h & mask
        while table[slot] != 0:
            slot = (slot + np.uint64(1)) & mask
        hashes[n_terms] = h
        n_terms += 1
        vocab_offsets[n_terms] = cursor
        table[slot] = n_terms

    n_tok = 0
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
                cp, nxt = _decode(data, i, end)
                if not is_word[cp]:
                    i = nxt
                    continue
            # A token starts at i: lowercase it into the vocabulary's free tail and hash it.
            token_at = i
            start = cursor
            h = _FNV_OFFSET
            while i < end:
                b0 = data[i]
                if b0 < 0x80:
                    if not is_word[b0]:
                        break
                    c = lower[b0]
                    vocab[cursor] = c
                    cursor += 1
                    h = (h ^ np.uint64(c)) * _FNV_PRIME
                    i += 1
                else:
                    cp, nxt = _decode(data, i, end)
                    if not is_word[cp]:
                        break
                    i = nxt
                    at = cursor
                    cursor = _put_utf8(vocab, cursor, lower[cp])
                    for k in range(at, cursor):
                        h = (h ^ np.uint64(vocab[k])) * _FNV_PRIME
            length = cursor - start
            if length > max_bytes:
                cursor = start
                continue
            slot = h & mask
            term = -1
            while True:
                cand = table[slot] - 1
                if cand < 0:
                    break
                if hashes[cand] == h:
                    a = vocab_offsets[cand]
                    if vocab_offsets[cand + 1] - a == length:
                        same = True
                        for j in range(length):
                            if vocab[a + j] != vocab[start + j]:
                                same = False
                                break
                        if same:
                            term = cand
                            break
                slot = (slot + np.uint64(1)) & mask
            if term >= 0:
                cursor = start
            else:
                term = n_terms
                hashes[n_terms] = h
                n_terms += 1
                vocab_offsets[n_terms] = cursor
                table[slot] = n_terms
                if n_terms * 2 > capacity:
                    capacity *= 2
                    mask = np.uint64(capacity - 1)
                    table = _rehash(hashes, n_terms, capacity)
            tok_row[n_tok] = row
            tok_term[n_tok] = term
            tok_pos[n_tok] = pos
            if spans:
                tok_start[n_tok] = token_at - offsets[row]
                tok_end[n_tok] = i - offsets[row]
            n_tok += 1
            pos += 1
        dl[row] = pos
    return (
        tok_row[:n_tok].copy(),
        tok_term[:n_tok].copy(),
        tok_pos[:n_tok].copy(),
        dl,
        vocab[:cursor].copy(),
        vocab_offsets[: n_terms + 1].copy(),
        tok_start[: min(n_tok, n_span)].copy(),
        tok_end[: min(n_tok, n_span)].copy(),
    )


@njit(cache=True, nogil=True)
def remap_tokens(tok_row: np.ndarray, tok_term: np.ndarray, remap: np.ndarray, n_rows: int):
    """Apply a term filter (``remap[term]`` = new id, or -1 to drop the token) and renumber
    positions so they stay consecutive within each row (dropped tokens leave no gap)."""
    n = tok_row.shape[0]
    out_row = np.empty(n, dtype=np.int32)
    out_term = np.empty(n, dtype=np.int32)
    out_pos = np.empty(n, dtype=np.int32)
    dl = np.zeros(n_rows, dtype=np.int32)
    k = 0
    for i in range(n):
        t = remap[tok_term[i]]
        if t < 0:
            continue
        r = tok_row[i]
        out_row[k] = r
        out_term[k] = t
        out_pos[k] = dl[r]
        dl[r] += 1
        k += 1
    return out_row[:k].copy(), out_term[:k].copy(), out_pos[:k].copy(), dl
