"""DistributedSearch: phase two of a search whose segments are spread over workers.

Phase one (planning) gathered the query's exact global statistics from every worker and
the driver (:mod:`..index.term_statistics`) and bound the query with them. Here every
worker whose share can hold a result scores its parts with those numbers — the same
``IndexedSearch`` a single process runs, over fewer parts — and returns its top-k; the
GlobalTopK above merges them with the driver's own parts (docs/design.md: "Order, top-k and paging";
"6. Distributed execution"). A share's answer is all of its rows or an error, never a part: the
executor retries a failed worker, then raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa

from ..index.shares import Share, clip_rows
from ..query.bound import BoundQuery
from .base import ExecutionPlan, Metrics, search_batch
from .evaluate import QueryStats


@dataclass(frozen=True)
class ShareSearch:
    """What a worker is asked in phase two (its share travels by key)."""

    bound: BoundQuery
    stats: QueryStats
    k: int | None
    include: np.ndarray | None
    pruning: bool


class ShareExecutor(Protocol):
    """Runs a call on the worker of each share (retrying failed workers) and counts the
    messages and bytes it exchanged into ``metrics``."""

    name: str
    workers: int

    def search(
        self, shares: list[Share], requests: list[ShareSearch], metrics: Metrics
    ) -> list[tuple[np.ndarray, np.ndarray]]: ...


class DistributedSearch(ExecutionPlan):
    """Each share's top-k from its worker, with global statistics fixed at planning."""

    def __init__(
        self,
        executor: ShareExecutor,
        shares: tuple[Share, ...],
        bound: BoundQuery,
        stats: QueryStats,
        k: int | None,
        include: np.ndarray | None = None,
        label: str = "",
        pruning: bool = True,
        metrics: Metrics | None = None,
    ) -> None:
        super().__init__()
        self.executor = executor
        self.shares = shares
        self.bound = bound
        self.stats = stats
        self.k = k
        self.include = include
        self.label = label
        self.pruning = pruning
        if metrics is not None:
            self.metrics = metrics  # phase one's counts, taken while planning

    def display(self) -> str:
        limit = "all" if self.k is None else str(self.k)
        shares = ", ".join(f"[{s.display()} ~{s.postings} postings]" for s in self.shares)
        return (
            f"DistributedSearch: table={self.label}, executor={self.executor.name}, "
            f"actors={self.executor.workers}, k={limit}, shares={shares}"
        )

    def execute(self) -> Iterator[pa.RecordBatch]:
        with self.metrics.timer("phase2_ms"):
            asked, requests = [], []
            for share in self.shares:
                include = None if self.include is None else clip_rows(self.include, share.runs)
                if include is not None and not len(include):
                    self.metrics.add("shares_skipped", 1)  # nothing it holds may be returned
                    continue
                asked.append(share)
                requests.append(ShareSearch(self.bound, self.stats, self.k, include, self.pruning))
            results = self.executor.search(asked, requests, self.metrics) if asked else []
            # One batch of every share's top-k: the merge above then costs one pass.
            rows = np.concatenate([r for r, _ in results]) if results else np.zeros(0, np.int64)
            scores = np.concatenate([s for _, s in results]) if results else np.zeros(0, np.float64)
            self.metrics.add("rows_out", len(rows))
        yield search_batch(rows, scores)
