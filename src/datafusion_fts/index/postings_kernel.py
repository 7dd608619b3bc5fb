"""Compiled inversion of a token stream into postings, and per-block metadata.

Both are sequential walks (a counting sort by term, then run-length encoding of each
term's row ids), which numpy can only express through full sorts of the token stream.
"""

from __future__ import annotations

import numpy as np
from numba import njit

BLOCK_SIZE = 128


@njit(cache=True, nogil=True)
def invert(local_rows: np.ndarray, term: np.ndarray, pos: np.ndarray, n_terms: int, with_positions: bool):
    """Postings of tokens given in (row, position) order.

    Returns ``(post_offsets int64[V+1], rows uint32[P], tfs uint32[P], pos_offsets
    int64[P+1], positions uint32[T])``; the position arrays are empty without positions.
    Within a term, postings are in ascending row order and positions ascending.
    """
    n_tok = term.shape[0]
    tok_offsets = np.zeros(n_terms + 1, dtype=np.int64)
    for i in range(n_tok):
        tok_offsets[term[i] + 1] += 1
    for t in range(n_terms):
        tok_offsets[t + 1] += tok_offsets[t]
    fill = tok_offsets[:-1].copy()
    order = np.empty(n_tok, dtype=np.int64)
    for i in range(n_tok):
        t = term[i]
        order[fill[t]] = i
        fill[t] += 1
    rows = np.empty(n_tok, dtype=np.uint32)
    tfs = np.empty(n_tok, dtype=np.uint32)
    post_offsets = np.zeros(n_terms + 1, dtype=np.int64)
    positions = np.empty(n_tok if with_positions else 0, dtype=np.uint32)
    pos_offsets = np.zeros(n_tok + 1 if with_positions else 0, dtype=np.int64)
    p = -1
    for t in range(n_terms):
        prev = -1
        for k in range(tok_offsets[t], tok_offsets[t + 1]):
            i = order[k]
            r = local_rows[i]
            if r != prev:
                p += 1
                rows[p] = r
                tfs[p] = 1
                prev = r
                if with_positions:
                    pos_offsets[p] = k
            else:
                tfs[p] += 1
            if with_positions:
                positions[k] = pos[i]
        post_offsets[t + 1] = p + 1
    n_post = p + 1
    if with_positions:
        pos_offsets[n_post] = n_tok
        return post_offsets, rows[:n_post].copy(), tfs[:n_post].copy(), pos_offsets[: n_post + 1].copy(), positions
    return post_offsets, rows[:n_post].copy(), tfs[:n_post].copy(), pos_offsets, positions


@njit(cache=True, nogil=True)
def block_metadata(post_offsets: np.ndarray, rows: np.ndarray, tfs: np.ndarray, dl: np.ndarray, block_size: int):
    """Per block of ``block_size`` postings of each term: max tf, min document length and
    last row — what block-max pruning needs to bound a block's best score at query time.

    Returns ``(block_offsets int64[V+1], max_tf uint32[B], min_dl uint32[B], last_row uint32[B])``.
    """
    n_terms = post_offsets.shape[0] - 1
    block_offsets = np.zeros(n_terms + 1, dtype=np.int64)
    for t in range(n_terms):
        n = post_offsets[t + 1] - post_offsets[t]
        block_offsets[t + 1] = block_offsets[t] + (n + block_size - 1) // block_size
    n_blocks = block_offsets[n_terms]
    max_tf = np.zeros(n_blocks, dtype=np.uint32)
    min_dl = np.zeros(n_blocks, dtype=np.uint32)
    last_row = np.zeros(n_blocks, dtype=np.uint32)
    for t in range(n_terms):
        b = block_offsets[t]
        start = post_offsets[t]
        end = post_offsets[t + 1]
        for s in range(start, end, block_size):
            e = min(s + block_size, end)
            mt = np.uint32(0)
            md = np.uint32(0xFFFFFFFF)
            for j in range(s, e):
                if tfs[j] > mt:
                    mt = tfs[j]
                d = dl[rows[j]]
                if d < md:
                    md = d
            max_tf[b] = mt
            min_dl[b] = md
            last_row[b] = rows[e - 1]
            b += 1
    return block_offsets, max_tf, min_dl, last_row
