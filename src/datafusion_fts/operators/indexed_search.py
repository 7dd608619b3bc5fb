"""IndexedSearch: evaluate a bound query over the columns' index segments (DESIGN §6)."""

from __future__ import annotations

from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

from ..index.bm25 import ColumnStats
from ..index.segment_set import SegmentSet
from ..index.term_postings import TermPostings
from ..query.bound import BoundQuery
from .base import ExecutionPlan, search_batch
from .evaluate import Evaluator, Hits, QueryStats
from .ordering import ordered


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

    def __init__(
        self,
        bound: BoundQuery,
        sets: dict[str, SegmentSet],
        stats: QueryStats,
        all_rows: Callable[[], np.ndarray],
        k: int | None,
        include: np.ndarray | None = None,
        label: str = "",
    ) -> None:
        super().__init__()
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

    def execute(self) -> Iterator[pa.RecordBatch]:
        with self.metrics.timer():
            evaluator = Evaluator(_IndexSource(self.sets, self.all_rows), self.stats)
            hits = evaluator.evaluate(self.bound)
            self.metrics.add("postings_read", evaluator.metrics.postings_read)
            if self.include is not None and len(hits):
                keep = np.isin(hits.rows, self.include)
                hits = Hits(hits.rows[keep], hits.scores[keep])
            idx = ordered(hits.rows, hits.scores, self.k)
            self.metrics.add("rows_out", len(idx))
        yield search_batch(hits.rows[idx], hits.scores[idx])
