"""IndexedSearch: evaluate a bound query over the columns' index segments (DESIGN §6)."""

from __future__ import annotations

from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

from ..index.bm25 import ColumnStats, norms
from ..index.segment import Segment
from ..index.segment_set import RankedPart, SegmentSet
from ..index.term_postings import TermPostings
from ..query.bound import BoundQuery, BoundTerms
from ..query.tree import Phrase, Query, leaves
from ..storage.snapshot import TableSnapshot
from .base import ExecutionPlan, search_batch
from .evaluate import Evaluator, Hits, QueryStats
from .ordering import ordered
from .pruned_or_kernel import pruned_or_topk


_NO_MASK = np.zeros(0, dtype=np.uint8)
# Disjunctions reading fewer postings than this are scored exhaustively.
PRUNE_MIN_POSTINGS = 4096
# Relative slack on block bounds: far above float64 rounding in the score formula, so a
# bound computed in floating point never falls below a score it must bound.
_BOUND_MARGIN = 1.0 + 1e-9


def _block_bounds(seg: Segment, a: int, b: int, weight: float, stats: ColumnStats) -> np.ndarray:
    """Upper bounds of a term's blocks a..b: the score at the block's max tf and min length
    (score grows with tf and shrinks with length), computed with the query's statistics."""
    tf = seg.block_max_tf[a:b].astype(np.float64)
    return (weight * tf) / (tf + norms(seg.block_min_dl[a:b], stats)) * _BOUND_MARGIN


def _allowed(part: RankedPart, include: np.ndarray | None) -> np.ndarray | None:
    """uint8 mask over a part's local rows of rows that may be returned (None: all)."""
    if not len(part.deleted) and include is None:
        return None
    mask = np.zeros(part.segment.meta.count, dtype=np.uint8)
    if include is None:
        mask[part.lo : part.hi] = 1
    else:
        base = part.segment.meta.base
        lo, hi = np.searchsorted(include, [base + part.lo, base + part.hi])
        mask[include[lo:hi] - base] = 1
    mask[part.deleted] = 0
    return mask


class _IndexSource:
    def __init__(self, sets: dict[str, SegmentSet], all_rows: Callable[[], np.ndarray]) -> None:
        self.sets = sets
        self._all_rows = all_rows

    def postings(
        self, column: str, term: str, stats: ColumnStats, positions: bool, within: np.ndarray | None = None
    ) -> TermPostings | None:
        return self.sets[column].postings(term, stats, positions, within)

    def all_rows(self) -> np.ndarray:
        return self._all_rows()


class IndexedSearch(ExecutionPlan):
    """Top-k of a bound query over index segments, with exact global statistics."""

    ordered_distinct = True
    CHOSEN_BECAUSE = "every column's index covers every committed row"

    @staticmethod
    def unmet(table: object, query: Query, columns: tuple[str, ...], residual_row_limit: int = 0) -> list[str]:
        """What keeps this operator from answering ``query`` on ``table`` exactly: it
        needs, per column, an index covering every committed row, with positions for
        phrases."""
        if not isinstance(table, TableSnapshot):
            return [f"{getattr(table, 'name', table)} is not a managed table"]
        out = []
        last = table.row_count - 1
        phrase_columns = {leaf.column for leaf in leaves(query) if isinstance(leaf, Phrase)}
        for column in columns:
            index = table.meta.indexes.get(column)
            if index is None:
                out.append(f"{column}: no index")
            elif index.covered_until < last:
                out.append(f"{column}: index covers rows ..{index.covered_until} of ..{last}")
            elif column in phrase_columns and not index.positions:
                out.append(f"{column}: phrase query but the index has no positions")
        return out

    def __init__(
        self,
        bound: BoundQuery,
        sets: dict[str, SegmentSet],
        stats: QueryStats,
        all_rows: Callable[[], np.ndarray],
        k: int | None,
        include: np.ndarray | None = None,
        label: str = "",
        pruning: bool = True,
    ) -> None:
        super().__init__()
        self.pruning = pruning
        self.bound = bound
        self.sets = sets
        self.stats = stats
        self.all_rows = all_rows
        self.k = k
        self.include = include
        self.label = label

    def display(self) -> str:
        limit = "all" if self.k is None else str(self.k)
        segs = ", ".join(
            f"{column}[" + " ".join(
                f"{p.segment.meta.id}:{p.segment.meta.base + p.lo}..{p.segment.meta.base + p.hi - 1}"
                for p in s.parts
            ) + "]"
            for column, s in self.sets.items()
        )
        return f"IndexedSearch: table={self.label}, k={limit}, segments={segs}"

    def _prunable(self) -> BoundTerms | None:
        """A top-k disjunction of one column's terms with a positive boost, long enough
        that skipping blocks pays for setting the bounds up (short ones score faster
        exhaustively)."""
        node = self.bound
        if (
            self.pruning and self.k is not None and isinstance(node, BoundTerms)
            and not node.require_all and node.boost > 0
            and sum(self.stats.df.get((node.column, t), 0) for t in node.terms()) >= PRUNE_MIN_POSTINGS
        ):
            return node
        return None

    def _pruned(self, node: BoundTerms) -> Hits:
        """Per segment part: the block-max pruned top-k (DESIGN §5.4: each segment is asked
        for k rows); the merge keeps the global top-k."""
        assert self.k is not None
        segment_set = self.sets[node.column]
        stats = self.stats.columns[node.column]
        slots = [t for t in node.terms() if self.stats.df.get((node.column, t), 0) > 0]
        weights = np.array([self.stats.weight(node.column, t) for t in slots], dtype=np.float64)
        rows_out, scores_out = [], []
        for part, norm in zip(segment_set.parts, segment_set.part_norms(stats)):
            seg = part.segment
            base = seg.meta.base
            allowed = _allowed(part, self.include)
            if allowed is not None and not allowed.any():
                self.metrics.add("segments_skipped", 1)
                continue
            starts, ends, blk_starts, ubs, lasts = [], [], [], [], []
            n_blocks = 0
            for term, weight in zip(slots, weights):
                tid = seg.term_id(term)
                a, b = (int(seg.post_offsets[tid]), int(seg.post_offsets[tid + 1])) if tid >= 0 else (0, 0)
                starts.append(a)
                ends.append(b)
                blk_starts.append(n_blocks)
                if a < b:
                    ba, bb = int(seg.block_offsets[tid]), int(seg.block_offsets[tid + 1])
                    ubs.append(_block_bounds(seg, ba, bb, weight, stats))
                    lasts.append(seg.block_last_row[ba:bb])
                    n_blocks += bb - ba
            if not any(a < b for a, b in zip(starts, ends)):
                continue
            local_rows, scores, scored, skipped = pruned_or_topk(
                seg.rows, seg.tfs, np.array(starts, np.int64), np.array(ends, np.int64),
                np.array(blk_starts, np.int64), np.concatenate(ubs), np.concatenate(lasts),
                norm, weights, node.boost, self.k,
                allowed if allowed is not None else _NO_MASK, part.lo, part.hi,
            )
            self.metrics.add("postings_scored", int(scored))
            self.metrics.add("blocks_skipped", int(skipped))
            rows_out.append(local_rows + base)
            scores_out.append(scores)
        if not rows_out:
            return Hits.empty()
        rows = np.concatenate(rows_out)
        scores = np.concatenate(scores_out)
        idx = ordered(rows, scores, self.k)
        order = np.argsort(rows[idx], kind="stable")
        return Hits(rows[idx][order], scores[idx][order])

    def execute(self) -> Iterator[pa.RecordBatch]:
        with self.metrics.timer():
            node = self._prunable()
            if node is not None:
                hits = self._pruned(node)
            else:
                evaluator = Evaluator(_IndexSource(self.sets, self.all_rows), self.stats)
                include = self.include
                if include is not None and len(include) <= evaluator.cost(self.bound):
                    # A selective prefilter: probe only the included rows (DESIGN §5.6).
                    hits = evaluator.evaluate(self.bound, within=include)
                else:
                    hits = evaluator.evaluate(self.bound)
                    if include is not None and len(hits):
                        keep = np.isin(hits.rows, include)
                        hits = Hits(hits.rows[keep], hits.scores[keep])
                self.metrics.add("postings_read", evaluator.metrics.postings_read)
            idx = ordered(hits.rows, hits.scores, self.k)
            self.metrics.add("rows_out", len(idx))
        yield search_batch(hits.rows[idx], hits.scores[idx])
