"""IndexedSearch: evaluate a bound query over the columns' index segments (docs/design.md: "The
operators")."""

from __future__ import annotations

import time
from functools import cached_property
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from ..index.bm25 import ColumnStats
from ..index.segment_set import SegmentSet
from ..index.term_postings import TermPostings
from ..query.bound import BoundQuery, query_terms
from .base import ExecutionPlan, search_batch
from .evaluate import Evaluator, Hits, QueryStats
from .ordering import ordered, shown_k
from .terms.term_slots import TermSlots, term_slots
from .terms.term_topk import term_topk

# Off only in tests, to compare the kernels with the general evaluator.
TERM_KERNELS = True


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
    def unmet(
        table: Any, columns: tuple[str, ...], phrase_columns: frozenset[str] = frozenset(),
        residual_row_limit: int = 0,
    ) -> list[str]:
        """What keeps this operator from answering a query on ``columns`` of ``table``
        exactly: it needs, per column, an index covering every committed row, with
        positions for the ``phrase_columns``."""
        if not table.managed:
            return [f"{table.name} is not a managed table"]
        out = []
        last = table.row_count - 1
        for column in columns:
            index = table.index(column)
            if index is None:
                out.append(f"{column}: no index")
            elif table.covered_until(column) < last:
                out.append(f"{column}: index covers rows ..{table.covered_until(column)} of ..{last}")
            elif column in phrase_columns and not index.positions:
                out.append(f"{column}: phrase query but the index has no positions")
        return out

    def __init__(
        self,
        bound: BoundQuery,
        sets: dict[str, SegmentSet],
        stats: QueryStats | None,
        all_rows: Callable[[], np.ndarray],
        k: int | None,
        include: np.ndarray | None = None,
        label: str = "",
        pruning: bool = True,
        by_score: bool = True,
    ) -> None:
        super().__init__()
        self.pruning = pruning
        self.by_score = by_score  # (False, with k all: in row-id order, see ordering.ordered)
        self.bound = bound
        self.sets = sets
        if stats is not None:  # (else exact over ``sets``, made when first needed)
            self.stats = stats
        self.all_rows = all_rows
        self.k = k
        self.include = include
        self.label = label

    @cached_property
    def stats(self) -> QueryStats:
        """The query's statistics over ``sets`` (unless given, as a distributed share is)."""
        found = {c: (terms, self.sets[c].lookup(terms)[0]) for c, terms in query_terms(self.bound).items()}
        return self._exact_stats(found)

    def _exact_stats(self, found: dict[str, tuple[Sequence[str], list[int]]]) -> QueryStats:
        """The statistics over ``sets`` of each column's terms with their frequencies there."""
        df = {}
        for c, (terms, dfs) in found.items():
            for t, d in zip(terms, dfs):
                df[(c, t)] = d
        return QueryStats({c: s.column_stats for c, s in self.sets.items()}, df)

    def display(self) -> str:
        limit = shown_k(self.k, self.by_score)
        segs = ", ".join(
            f"{column}[" + " ".join(
                f"{p.segment.meta.id}:{p.segment.meta.base + p.lo}..{p.segment.meta.base + p.hi - 1}"
                for p in s.parts
            ) + "]"
            for column, s in self.sets.items()
        )
        return f"IndexedSearch: table={self.label}, k={limit}, segments={segs}"

    def _term_kernels(self, slots: TermSlots) -> tuple[np.ndarray, np.ndarray]:
        """The kernels' top-k of ``slots`` (:func:`.term_topk.term_topk`), with the
        statistics gathered from their term lookups unless given."""
        assert self.k is not None
        column, terms = slots.column, slots.terms
        segment_set = self.sets[column]
        dfs, part_ids = segment_set.lookup(terms)
        stats = self.__dict__.get("stats")
        if stats is None:  # exact over the sets (the slots' terms are all the query's)
            stats = self.stats = self._exact_stats({column: (terms, dfs)})
            weights = stats.weights(column, dfs)
        else:
            weights = stats.weights(column, [stats.df.get((column, term), 0) for term in terms])
        return term_topk(
            slots, segment_set, stats.columns[column], dfs, part_ids, weights, self.k, self.include,
            self.pruning, self.metrics,
        )

    def execute(self) -> Iterator[pa.RecordBatch]:
        start = time.perf_counter()
        slots = term_slots(self.bound) if TERM_KERNELS and self.k is not None else None
        if slots is not None:
            rows, scores = self._term_kernels(slots)
        else:
            evaluator = Evaluator(_IndexSource(self.sets, self.all_rows), self.stats)
            include = self.include
            if include is not None and len(include) <= evaluator.cost(self.bound):
                # A selective prefilter: probe only the included rows (docs/design.md:
                # "Prefilters").
                hits = evaluator.evaluate(self.bound, within=include)
            else:
                hits = evaluator.evaluate(self.bound)
                if include is not None and len(hits):
                    keep = np.isin(hits.rows, include)
                    hits = Hits(hits.rows[keep], hits.scores[keep])
            self.metrics.add("postings_read", evaluator.metrics.postings_read)
            idx = ordered(hits.rows, hits.scores, self.k, self.by_score)
            rows, scores = hits.rows[idx], hits.scores[idx]
        self.metrics.add("rows_out", len(rows))
        self.metrics.add("elapsed_ms", (time.perf_counter() - start) * 1e3)
        yield search_batch(rows, scores)
