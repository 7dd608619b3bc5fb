"""Fuzzy and prefix expansion over a vocabulary (docs/design.md: "Compound queries").

A fuzzy or prefix leaf stands for the vocabulary terms it reaches, at most
``max_expansions`` of them chosen by (distance, term) ascending. The choice is a property
of each term alone, so the global choice is the best of the per-source choices: a source
(segment or scanned batch) only ever needs to report its own best ``max_expansions``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from ..analysis.tokenizer_kernel import _decode


@njit(cache=True, nogil=True)
def _code_points(data: np.ndarray, start: int, end: int) -> np.ndarray:
    out = np.empty(end - start, dtype=np.int64)
    n = 0
    i = start
    while i < end:
        b0 = data[i]
        if b0 < 0x80:
            out[n] = b0
            i += 1
        else:
            cp, i = _decode(data, i, end)
            out[n] = cp
        n += 1
    return out[:n]


@njit(cache=True, nogil=True)
def levenshtein_within(data: np.ndarray, offsets: np.ndarray, query: np.ndarray, max_dist: int) -> np.ndarray:
    """Levenshtein distance (code points) from ``query`` to each UTF-8 string, or -1 where
    it exceeds ``max_dist`` (rows of the DP stop early once every cell is over)."""
    n = offsets.shape[0] - 1
    out = np.full(n, -1, dtype=np.int64)
    m = query.shape[0]
    prev = np.empty(m + 1, dtype=np.int64)
    cur = np.empty(m + 1, dtype=np.int64)
    for s in range(n):
        cand = _code_points(data, offsets[s], offsets[s + 1])
        if abs(cand.shape[0] - m) > max_dist:
            continue
        for j in range(m + 1):
            prev[j] = j
        over = False
        for i in range(1, cand.shape[0] + 1):
            cur[0] = i
            best = cur[0]
            for j in range(1, m + 1):
                cost = 0 if cand[i - 1] == query[j - 1] else 1
                v = prev[j - 1] + cost
                if prev[j] + 1 < v:
                    v = prev[j] + 1
                if cur[j - 1] + 1 < v:
                    v = cur[j - 1] + 1
                cur[j] = v
                if v < best:
                    best = v
            if best > max_dist:
                over = True
                break
            for j in range(m + 1):
                prev[j] = cur[j]
        if not over and prev[m] <= max_dist:
            out[s] = prev[m]
    return out


def _buffers(terms: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    terms = terms.cast(pa.large_string())
    bufs = terms.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64, count=terms.offset + len(terms) + 1)[terms.offset :]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return data, offsets


def fuzzy_candidates(
    vocab: pa.Array, term: str, fuzziness: int, prefix_length: int, max_expansions: int
) -> list[tuple[int, str]]:
    """The best ``max_expansions`` (distance, term) of ``vocab`` within ``fuzziness`` of
    ``term`` sharing its first ``prefix_length`` code points."""
    if len(vocab) == 0:
        return []
    fixed = term[:prefix_length]
    if fixed:
        vocab = vocab.filter(pc.starts_with(vocab, fixed))
    n_cp = len(term)
    lengths = pc.utf8_length(vocab)
    vocab = vocab.filter(
        pc.and_(pc.greater_equal(lengths, n_cp - fuzziness), pc.less_equal(lengths, n_cp + fuzziness))
    )
    if len(vocab) == 0:
        return []
    data, offsets = _buffers(vocab)
    query = np.array([ord(c) for c in term], dtype=np.int64)
    dist = levenshtein_within(data, offsets, query, fuzziness)
    hit = np.flatnonzero(dist >= 0)
    found = sorted(zip(dist[hit].tolist(), vocab.take(pa.array(hit)).to_pylist()))
    return found[:max_expansions]


def prefix_candidates(vocab: pa.Array, prefix: str, max_expansions: int) -> list[tuple[int, str]]:
    """The smallest ``max_expansions`` terms of ``vocab`` starting with ``prefix`` (distance 0)."""
    if len(vocab) == 0:
        return []
    matches = vocab.filter(pc.starts_with(vocab, prefix))
    if len(matches) > max_expansions:
        matches = matches.take(pc.sort_indices(matches)[:max_expansions])
    return sorted((0, t) for t in matches.to_pylist())[:max_expansions]
