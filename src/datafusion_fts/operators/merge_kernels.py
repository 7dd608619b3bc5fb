"""Linear merges of sorted row-id lists carrying scores: the algebra the query tree is
evaluated with. One compiled merge walks both lists once; ``mode`` picks what survives
and how scores combine, always in the canonical order "left, then right"."""

from __future__ import annotations

import numpy as np
from numba import njit

from .topk_heap import heap_drain, heap_push, java_key

UNION_ADD = 0  # rows of either; left + right where both, 0.0 + right where only right
ADD_PRESENT = 2  # rows of left; left + right where right has the row
SUBTRACT = 3  # rows of left that right lacks
BOOST = 4  # rows of left; left - weight * right where right has the row



@njit(cache=True, nogil=True, inline="always")
def _first_above(arr, lo, hi, value):
    """The first index in [lo, hi) with ``arr[i] > value`` (``hi`` if none), by binary
    search: a phrase's next position past another term's."""
    while lo < hi:
        mid = (lo + hi) // 2
        if arr[mid] <= value:
            lo = mid + 1
        else:
            hi = mid
    return lo

@njit(cache=True, nogil=True)
def merge(mode: int, a_rows: np.ndarray, a_sc: np.ndarray, b_rows: np.ndarray, b_sc: np.ndarray, weight: float):
    na = a_rows.shape[0]
    nb = b_rows.shape[0]
    cap = na + nb if mode == UNION_ADD else na
    rows = np.empty(cap, dtype=np.int64)
    sc = np.empty(cap, dtype=np.float64)
    i = 0
    j = 0
    k = 0
    while i < na or j < nb:
        if j >= nb or (i < na and a_rows[i] < b_rows[j]):
            rows[k] = a_rows[i]
            sc[k] = a_sc[i]
            k += 1
            i += 1
        elif i >= na or b_rows[j] < a_rows[i]:
            if mode == UNION_ADD:
                rows[k] = b_rows[j]
                sc[k] = 0.0 + b_sc[j]
                k += 1
            elif i >= na:
                break
            j += 1
        else:
            if mode != SUBTRACT:
                rows[k] = a_rows[i]
                if mode == BOOST:
                    sc[k] = a_sc[i] - weight * b_sc[j]
                else:
                    sc[k] = a_sc[i] + b_sc[j]
                k += 1
            i += 1
            j += 1
    return rows[:k].copy(), sc[:k].copy()


@njit(cache=True, nogil=True)
def run_sums(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The sum of each run ``values[starts[i]:starts[i + 1]]`` (the last to the end), as
    successive UNION_ADD merges add it: 0.0 plus its first value, then each next, left to
    right."""
    n = values.shape[0]
    out = np.empty(starts.shape[0], dtype=np.float64)
    for i in range(starts.shape[0]):
        end = starts[i + 1] if i + 1 < starts.shape[0] else n
        acc = 0.0 + values[starts[i]]
        for j in range(starts[i] + 1, end):
            acc = acc + values[j]
        out[i] = acc
    return out


@njit(cache=True, nogil=True)
def phrase_tf(starts: np.ndarray, ends: np.ndarray, positions: np.ndarray, slop: int) -> np.ndarray:
    """Matching start positions per candidate row.

    ``starts[k, c]:ends[k, c]`` is the ascending slice of ``positions`` holding term k's
    positions in candidate c. A start p1 of term 0 matches if later terms occur at
    p1 < p2 < ... < pn with pn - p1 - (n - 1) <= slop; taking each next position as early
    as possible minimises pn, so the greedy walk decides every start exactly.
    """
    n_terms, n_cand = starts.shape
    tf = np.zeros(n_cand, dtype=np.int64)
    for c in range(n_cand):
        count = 0
        for s in range(starts[0, c], ends[0, c]):
            p1 = positions[s]
            cur = p1
            ok = True
            for t in range(1, n_terms):
                lo = _first_above(positions, starts[t, c], ends[t, c], cur)
                if lo >= ends[t, c]:
                    ok = False
                    break
                cur = positions[lo]
            if not ok:
                break  # later starts need even later positions: none match
            if cur - p1 - (n_terms - 1) <= slop:
                count += 1
        tf[c] = count
    return tf


@njit(cache=True, nogil=True)
def sloppy_phrase_tf(
    starts: np.ndarray, ends: np.ndarray, positions: np.ndarray, slop: int, later: np.ndarray, marks: np.ndarray
) -> np.ndarray:
    """Sloppy matches per candidate row, the terms in any order (Lucene's sloppy scan;
    docs/design.md: "Compound queries").

    ``starts``/``ends``/``positions`` as for :func:`phrase_tf`; term k is read at its
    positions shifted by its offset (p - k). ``later[k]`` is the next phrase offset holding
    the same term as k (-1 for none): those occurrences share one slice and take distinct
    positions in phrase order. Each step, the term with the smallest shifted position
    (ties: the smaller offset) leads; it moves to its last shifted position not past the
    next smallest, and a match is counted when the largest shifted position minus the
    lead's is at most ``slop``; then the lead steps once more (pushing a later occurrence
    of its term past it). The row ends when a term runs out. ``marks`` is empty, or one
    flag per entry of ``positions``, set for the positions of every counted match.
    """
    n_terms, n_cand = starts.shape
    tf = np.zeros(n_cand, dtype=np.int64)
    record = marks.shape[0] > 0
    cur = np.empty(n_terms, dtype=np.int64)
    for c in range(n_cand):
        if n_terms == 1:
            tf[c] = ends[0, c] - starts[0, c]
            if record:
                marks[starts[0, c] : ends[0, c]] = True
            continue
        for k in range(n_terms):
            cur[k] = starts[k, c]
        alive = True
        for k in range(n_terms):  # each repeat of a term one position after the previous
            j = later[k]
            if j >= 0 and cur[j] <= cur[k]:
                cur[j] = cur[k] + 1
            if cur[k] >= ends[k, c]:
                alive = False
        count = 0
        while alive:
            lead = 0
            lead_at = positions[cur[0]]
            for k in range(1, n_terms):
                if positions[cur[k]] - k < lead_at - lead:
                    lead = k
                    lead_at = positions[cur[k]]
            following = np.int64(0)
            top = np.int64(0)
            first = True
            for k in range(n_terms):
                if k != lead:
                    shifted = positions[cur[k]] - k
                    if first or shifted < following:
                        following = shifted
                    if first or shifted > top:
                        top = shifted
                    first = False
            # the lead's last position whose shifted value is <= following
            cur[lead] = _first_above(positions, cur[lead] + 1, ends[lead, c], following + lead) - 1
            if top - (positions[cur[lead]] - lead) <= slop:
                count += 1
                if record:
                    for k in range(n_terms):
                        marks[cur[k]] = True
            cur[lead] += 1
            if cur[lead] >= ends[lead, c]:
                break
            k = lead
            j = later[k]
            while j >= 0 and cur[j] <= cur[k]:
                cur[j] = cur[k] + 1
                if cur[j] >= ends[j, c]:
                    alive = False
                    break
                k = j
                j = later[k]
        tf[c] = count
    return tf


def later_occurrences(terms: tuple[str, ...] | list[str]) -> np.ndarray:
    """``later`` of :func:`sloppy_phrase_tf`: per phrase offset, the next offset with the
    same term, or -1."""
    out = np.full(len(terms), -1, dtype=np.int64)
    last: dict[str, int] = {}
    for k in range(len(terms) - 1, -1, -1):
        out[k] = last.get(terms[k], -1)
        last[terms[k]] = k
    return out


NO_MARKS = np.zeros(0, dtype=np.bool_)


@njit(cache=True, nogil=True)
def top_k(rows: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the best ``k`` entries, best first, in the total order of docs/design.md: "Order,
    top-k and paging" (the shared bounded heap of :mod:`.topk_heap`, keyed by Java-order score
    keys)."""
    k = min(k, rows.shape[0])
    keys = np.empty(k, dtype=np.int64)
    heap_rows = np.empty(k, dtype=np.int64)
    index = np.empty(k, dtype=np.int64)
    size = 0
    for i in range(rows.shape[0]):
        size = heap_push(keys, heap_rows, index, size, java_key(scores[i]), np.int64(rows[i]), i)
    heap_drain(keys, heap_rows, index, size)
    return index[:size]
