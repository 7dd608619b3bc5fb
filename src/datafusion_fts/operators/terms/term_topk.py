"""The top-k of one column's term slots over its segment parts, by the document-at-a-time
kernels: what :class:`..indexed_search.IndexedSearch` runs for the shapes
:func:`.term_slots.term_slots` recognizes, and what a prepared search runs without
building the plan (:mod:`...planner.prepared_search`)."""

from __future__ import annotations

import numpy as np

from ...index.bm25 import BOUND_MARGIN, ColumnStats
from ...index.segment_set import SegmentSet
from ...kernels.accumulated_or import accumulated_or_topk
from ...kernels.conjunction import EXCLUDED, REQUIRED, conjunction_topk
from ...kernels.postings_codec import DamagedPostings
from ...kernels.pruned_or import pruned_or_topk
from ..base import Metrics
from ..ordering import ordered
from .term_slots import TermSlots

NONE = np.zeros(0, dtype=np.int64)
NO_SCORES = np.zeros(0, dtype=np.float64)
# Scored slots from which a disjunction is accumulated (kernels/accumulated_or.pyx)
# rather than walked by MaxScore (kernels/pruned_or.pyx). Top 10 on 200,000 rows of 10
# words (a Zipf vocabulary of 20,000), MaxScore against accumulating: 32 rare terms 1.0
# against 2.0 ms, the 32 most frequent 62 against 54 ms; 64 terms 1.1 against 1.6 ms and
# 126 against 65 ms; 1,024 terms 253 against 15 ms and 2.6 s against 0.10 s; 4,096 terms
# 5.5 s against 77 ms and 13.7 s against 0.15 s.
ACCUMULATE_SLOTS = 64


def term_topk(
    slots: TermSlots,
    segment_set: SegmentSet,
    column_stats: ColumnStats,
    dfs: list[int],
    part_ids: list[np.ndarray],
    weights: list[float],
    k: int,
    include: np.ndarray | None,
    pruning: bool,
    metrics: Metrics | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per segment part, the top ``k`` rows of ``slots`` (docs/design.md: "Segment sets and ranked
    parts": each segment is asked for k rows); the merge keeps the global top-k. Returns rows and
    scores in the total order.

    ``dfs`` and ``part_ids`` are the slots' terms looked up in ``segment_set``
    (:meth:`.SegmentSet.lookup`); ``weights`` their BM25 weights under the statistics the
    scores use, ``column_stats`` (those of the whole table, which a distributed share's
    set is only part of). ``include``: ascending row ids a row must be among.

    Parts are disjoint row ranges in ascending order, so with pruning a part needs only
    rows beating the best k-th score an earlier part returned (``floor``): those parts'
    rows win ties. A tail or fresh segment after a large one then skips most of its
    postings."""
    column, terms, kinds, mults, boost, conjunctive, prunable = slots
    if not dfs or 0 in dfs:  # (else every slot's term occurs, and one adds to scores)
        scored = False  # some term that adds to scores occurs here: else no row matches
        for df, kind in zip(dfs, kinds.tolist()):
            if df == 0 and kind == REQUIRED:
                return NONE, NO_SCORES
            scored = scored or (df > 0 and kind != EXCLUDED)
        if not scored:
            return NONE, NO_SCORES
    # (an absent term's weight is never used)
    weights_a = np.array(weights, dtype=np.float64)
    prune = pruning and prunable
    part_norms = segment_set.part_norms(column_stats)
    accumulate = not conjunctive and int(np.count_nonzero(kinds != EXCLUDED)) >= ACCUMULATE_SLOTS
    bounds = segment_set.part_block_bounds(column_stats) if prune and not conjunctive and not accumulate else None
    out: list[tuple[np.ndarray, np.ndarray]] = []
    n_total = n_scored = n_skipped = n_parts_skipped = 0
    floor = -np.inf
    parts = segment_set.parts
    last_part = len(parts) - 1
    for i, part in enumerate(parts):
        seg = part.segment
        base = seg.meta.base
        local_include = NONE
        if include is not None:
            lo, hi = np.searchsorted(include, (base + part.lo, base + part.hi))
            if lo == hi:
                n_parts_skipped += 1
                continue
            local_include = include[lo:hi] - base
        try:
            seg.verify(part_ids[i], False)
            if conjunctive:
                rows, scores, sc, sk, total = conjunction_topk(
                    *seg.source, seg.post_offsets, seg.block_offsets, part_norms[i],
                    part_ids[i], kinds, weights_a, mults, boost, k, part.lo, part.hi, base,
                    local_include, include is not None, part.deleted, pruning, prune, floor, BOUND_MARGIN,
                )
            elif accumulate:
                rows, scores, sc, sk, total = accumulated_or_topk(
                    *seg.source, seg.post_offsets, seg.block_offsets, part_norms[i],
                    part_ids[i], kinds, weights_a, mults, boost, k, part.lo, part.hi, base,
                    local_include, include is not None, part.deleted, floor,
                )
            else:
                rows, scores, sc, sk, total = pruned_or_topk(
                    *seg.source, seg.post_offsets, seg.block_offsets,
                    NO_SCORES if bounds is None else bounds[i], part_norms[i],
                    part_ids[i], kinds, weights_a, mults, boost, k, part.lo, part.hi, base,
                    local_include, include is not None, part.deleted, prune, floor,
                )
        except DamagedPostings as exc:
            raise seg.damaged(exc) from exc
        n_total += total
        n_scored += sc
        n_skipped += sk
        if len(rows):
            out.append((rows, scores))
            if prune and len(rows) == k and i < last_part and scores[-1] > floor:
                floor = float(scores[-1])
    if metrics is not None:
        metrics.add("postings_total", n_total)
        metrics.add("postings_scored", n_scored)
        metrics.add("blocks_skipped", n_skipped)
        if n_parts_skipped:
            metrics.add("segments_skipped", n_parts_skipped)
    if not out:
        return NONE, NO_SCORES
    if len(out) == 1:
        return out[0]
    rows = np.concatenate([r for r, _ in out])
    scores = np.concatenate([s for _, s in out])
    idx = ordered(rows, scores, k)
    return rows[idx], scores[idx]
