"""Plan an indexed or hybrid search on a distributed executor (``fts.executor``).

The single-process plan computes the query's statistics while planning; so does this
one, in phase one: the query is bound once to learn its terms and expansion requests,
every worker and the driver report their part, and the query is bound again with the
global expansion choice (docs/design.md: "Statistics and BM25"; "Compound queries"). Phase two is
the plan: a DistributedSearch over the workers' shares and, for rows some column ranks from an
in-memory segment (the unindexed tail, fresh rows), an IndexedSearch on the driver, merged by
GlobalTopK.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from ..analysis import Analyzer
from ..index.segment_set import SegmentSet
from ..index.shares import Partition, Share, clip_rows
from ..index.term_statistics import Expansion, StatsReply, StatsRequest, collect, merge
from ..operators.base import ExecutionPlan, Metrics
from ..operators.distributed_search import DistributedSearch, ShareExecutor
from ..operators.evaluate import QueryStats
from ..operators.global_topk import GlobalTopK
from ..operators.hybrid_residual_search import HybridResidualSearch, TailInfo
from ..operators.indexed_search import IndexedSearch
from ..query.bound import query_terms
from ..storage.snapshot import TableSnapshot
from ..query.bind import bind
from ..settings import INT64_MAX
from .search_request import SearchRequest


class DistributedExecutor(ShareExecutor, Protocol):
    def partition(self, snapshot: TableSnapshot, sets: dict[str, SegmentSet]) -> Partition: ...

    def statistics(self, shares: list[Share], request: StatsRequest, metrics: Metrics) -> list[StatsReply]: ...


class _Expansions:
    """A bind context answering fuzzy and prefix leaves from ``chosen``; with ``chosen``
    None it records the requests and expands to nothing (the first, term-finding bind)."""

    def __init__(self, analyzers: dict[str, Analyzer], chosen: dict[Expansion, list[tuple[int, str]]] | None) -> None:
        self.analyzers = analyzers
        self.chosen = chosen
        self.requests: dict[Expansion, None] = {}

    def analyzer(self, column: str) -> Analyzer:
        return self.analyzers[column]

    def _expand(self, request: Expansion) -> list[tuple[int, str]]:
        if self.chosen is None:
            self.requests.setdefault(request, None)
            return []
        return self.chosen[request]

    def fuzzy_candidates(self, column: str, term: str, fuzziness: int, prefix_length: int, max_expansions: int):
        return self._expand(Expansion(column, term, fuzziness, prefix_length, max_expansions))

    def prefix_candidates(self, column: str, prefix: str, max_expansions: int):
        return self._expand(Expansion(column, prefix, -1, 0, max_expansions))

    def gram_candidates(self, column: str, char: str):
        return self._expand(Expansion(column, char, -2, 0, INT64_MAX))


def _outside(rows: np.ndarray, runs: tuple[tuple[int, int], ...]) -> np.ndarray:
    """``rows`` (ascending) not in ``runs``."""
    inside = clip_rows(rows, runs)
    return rows[~np.isin(rows, inside, assume_unique=True)] if len(inside) else rows


def plan_distributed(
    req: SearchRequest,
    executor: DistributedExecutor,
    sets: dict[str, SegmentSet],
    tails: dict[str, TailInfo],
    analyzers: dict[str, Analyzer],
    k: int | None,
) -> ExecutionPlan:
    """Phase one now; phase two as the returned plan."""
    snap = req.snapshot
    assert isinstance(snap, TableSnapshot)
    split = executor.partition(snap, sets)
    recorder = _Expansions(analyzers, None)
    terms = query_terms(bind(req.query, recorder))
    request = StatsRequest({c: tuple(terms.get(c, ())) for c in req.columns}, tuple(recorder.requests))
    metrics = Metrics()
    replies = executor.statistics(list(split.shares), request, metrics) if split.shares else []
    replies.append(collect(split.local, request))
    found = merge(replies, request, {c: (s.k1, s.b) for c, s in sets.items()})
    bound = bind(req.query, _Expansions(analyzers, found.expansions))
    used = query_terms(bound)
    stats = QueryStats(found.columns, {(c, t): found.df[(c, t)] for c in used for t in used[c]})
    inputs: list[ExecutionPlan] = [
        DistributedSearch(executor, split.shares, bound, stats, k, req.include, snap.name, req.pruning, metrics)
    ]
    remote_rows = sum(b - a for a, b in split.remote_runs)
    if any(s.parts for s in split.local.values()) or remote_rows < snap.row_count:
        local_rows: Callable[[], np.ndarray] = lambda: _outside(snap.live_rows(), split.remote_runs)
        local: ExecutionPlan = IndexedSearch(
            bound, split.local, stats, local_rows, k, req.include, label=snap.name, pruning=req.pruning
        )
        inputs.append(HybridResidualSearch(local, tails) if tails else local)
    return GlobalTopK(inputs, req.k, req.offset, req.by_score)
