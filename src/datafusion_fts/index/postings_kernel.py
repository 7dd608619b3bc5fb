"""Compiled inversion of a token stream into postings, and per-block metadata.

Both are sequential walks (a counting sort by term, then run-length encoding of each
term's row ids), which numpy can only express through full sorts of the token stream.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..defaults import B, K1

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


# (tf, dl) points each block keeps to bound its best score (see block_metadata).
BLOCK_IMPACTS = 4
# A point's tf and dl are kept in 16 bits: a tf of IMPACT_MAX stands for any tf from it
# up (bm25.block_bound_factors bounds it by the limit of BM25's tf factor), and a longer
# length is kept as IMPACT_MAX (shorter than it was: the bound only loosens). 8 bytes a
# block instead of 16: at 1M rows with positions the index is 165 -> 157 MB.
IMPACT_MAX = 0xFFFF
# The BM25 parameters at which block_metadata judges which points to merge. Only the
# bounds' tightness depends on them: a point dominating a posting (tf at least, dl at
# most) bounds its score for every k1 >= 0, 0 <= b <= 1 and average length.
_REF_K1 = K1
_REF_B = B
# Blocks whose largest tf is below this find their frontier by bucketing tfs (no sort).
_TF_BUCKETS = 64


@njit(cache=True, nogil=True)
def block_metadata(post_offsets: np.ndarray, rows: np.ndarray, tfs: np.ndarray, dl: np.ndarray, block_size: int):
    """Per block of ``block_size`` postings of each term: ``BLOCK_IMPACTS`` (tf, dl)
    *impact points* and its last row — what block-max pruning needs to bound a block's
    best score at query time.

    Every posting of a block is dominated by one of its points (a tf at least its tf, a
    length at most its length), so the best score over the points bounds the block's,
    whatever the statistics. The points are the block's Pareto frontier of (high tf,
    short length), merged while longer than ``BLOCK_IMPACTS`` by replacing the two
    neighbours whose merge loosens the bound least (at the segment's own average length)
    with their corner (the higher tf, the shorter length). One (max tf, min length) point,
    what earlier segments kept, let a frequent term's top-10 skip 5% of its blocks on the
    benchmark corpus; these points let it skip 99%.

    Returns ``(block_offsets int64[V+1], impact_tf uint16[B*I], impact_dl uint16[B*I],
    last_row uint32[B])``, block ``j``'s points at ``[j*I, (j+1)*I)`` (repeated to fill;
    tf and dl saturated at ``IMPACT_MAX``).
    """
    n_terms = post_offsets.shape[0] - 1
    block_offsets = np.zeros(n_terms + 1, dtype=np.int64)
    for t in range(n_terms):
        n = post_offsets[t + 1] - post_offsets[t]
        block_offsets[t + 1] = block_offsets[t] + (n + block_size - 1) // block_size
    n_blocks = block_offsets[n_terms]
    impact_tf = np.zeros(n_blocks * BLOCK_IMPACTS, dtype=np.uint16)
    impact_dl = np.zeros(n_blocks * BLOCK_IMPACTS, dtype=np.uint16)
    last_row = np.zeros(n_blocks, dtype=np.uint32)
    n_docs = 0
    total = 0.0
    for i in range(dl.shape[0]):
        if dl[i] > 0:
            n_docs += 1
            total += dl[i]
    avgdl = total / n_docs if n_docs else 1.0
    keys = np.empty(block_size, dtype=np.uint64)
    by_tf = np.empty(_TF_BUCKETS, dtype=np.float64)
    ptf = np.empty(block_size, dtype=np.float64)
    pdl = np.empty(block_size, dtype=np.float64)
    for t in range(n_terms):
        b = block_offsets[t]
        start = post_offsets[t]
        end = post_offsets[t + 1]
        for s in range(start, end, block_size):
            e = min(s + block_size, end)
            top = 0
            for j in range(s, e):
                top = max(top, tfs[j])
            m = 0
            shortest = np.inf
            if top < _TF_BUCKETS:  # (the usual case: the shortest length per tf, no sort)
                by_tf[: top + 1] = np.inf
                for j in range(s, e):
                    by_tf[tfs[j]] = min(by_tf[tfs[j]], np.float64(dl[rows[j]]))
                for tf in range(top, 0, -1):  # the frontier: tf descending, length descending
                    if by_tf[tf] < shortest:
                        ptf[m] = tf
                        pdl[m] = by_tf[tf]
                        m += 1
                        shortest = by_tf[tf]
            else:
                for j in range(e - s):  # tf descending, then length ascending
                    keys[j] = (np.uint64(0xFFFFFFFF - tfs[s + j]) << np.uint64(32)) | np.uint64(dl[rows[s + j]])
                for j in np.argsort(keys[: e - s]):
                    d = np.float64(dl[rows[s + j]])
                    if d < shortest:
                        ptf[m] = tfs[s + j]
                        pdl[m] = d
                        m += 1
                        shortest = d
            while m > BLOCK_IMPACTS:
                best, at = np.inf, 0
                for j in range(m - 1):
                    loose = _factor(ptf[j], pdl[j + 1], avgdl) - max(
                        _factor(ptf[j], pdl[j], avgdl), _factor(ptf[j + 1], pdl[j + 1], avgdl)
                    )
                    if loose < best:
                        best, at = loose, j
                pdl[at] = pdl[at + 1]  # (the corner: this tf, the next point's length)
                for j in range(at + 1, m - 1):
                    ptf[j] = ptf[j + 1]
                    pdl[j] = pdl[j + 1]
                m -= 1
            for j in range(BLOCK_IMPACTS):
                impact_tf[b * BLOCK_IMPACTS + j] = np.uint16(min(ptf[min(j, m - 1)], IMPACT_MAX))
                impact_dl[b * BLOCK_IMPACTS + j] = np.uint16(min(pdl[min(j, m - 1)], IMPACT_MAX))
            last_row[b] = rows[e - 1]
            b += 1
    return block_offsets, impact_tf, impact_dl, last_row


@njit(cache=True, nogil=True, inline="always")
def _factor(tf: float, dl: float, avgdl: float) -> float:
    return tf / (tf + _REF_K1 * ((1.0 - _REF_B) + _REF_B * dl / avgdl))
