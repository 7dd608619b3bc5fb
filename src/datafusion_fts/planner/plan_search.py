"""Plan a search over one managed table: check the tree, pick an operator, record why.

Rules run in order over a ``SearchRequest``; each is a small pure function returning the
request with its decision (and reason) filled in, so EXPLAIN can show every choice.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pyarrow as pa

from ..analysis import Analyzer, AnalyzerConfig, analyzer_for
from ..errors import CatalogError, InvalidArgument, PlanError
from ..index.segment_set import SegmentSet
from ..operators.base import ExecutionPlan
from ..operators.evaluate import QueryStats
from ..operators.flat_scan_search import FlatScanSearch
from ..operators.global_topk import GlobalTopK
from ..operators.indexed_search import IndexedSearch
from ..query.bound import query_terms
from ..query.tree import Phrase, Query, leaves
from ..storage.manifest import IndexMeta
from ..storage.foreign import ForeignTable
from ..storage.snapshot import TableSnapshot
from .bind_query import bind

DEFAULT_ANALYZER = AnalyzerConfig()


def _evolve(req: "SearchRequest", **changes: object) -> "SearchRequest":
    """``dataclasses.replace`` without its per-call field introspection (hot path)."""
    new = copy.copy(req)
    for name, value in changes.items():
        object.__setattr__(new, name, value)
    return new


@dataclass(frozen=True)
class SearchRequest:
    snapshot: TableSnapshot | ForeignTable
    query: Query
    k: int | None
    offset: int = 0
    include: np.ndarray | None = None
    force_plan: str = "auto"
    pruning: bool = True
    columns: tuple[str, ...] = ()
    choice: str = ""
    reasons: tuple[str, ...] = field(default_factory=tuple)


def check_columns(req: SearchRequest) -> SearchRequest:
    """Every leaf names an existing text column of the table."""
    names: dict[str, None] = {}
    schema = req.snapshot.schema
    for leaf in leaves(req.query):
        if leaf.column is None:
            raise PlanError(f"{type(leaf).__name__} leaf {leaf!r} is bound to no column")
        if leaf.column in names:
            continue
        if schema.get_field_index(leaf.column) < 0:
            raise CatalogError(
                f"table {req.snapshot.name!r} has no column {leaf.column!r}; columns: {schema.names}"
            )
        ftype = schema.field(leaf.column).type
        if not (pa.types.is_string(ftype) or pa.types.is_large_string(ftype) or pa.types.is_string_view(ftype)):
            raise InvalidArgument(f"column {leaf.column!r} is {ftype}, not text: it cannot be searched")
        names.setdefault(leaf.column, None)
    return _evolve(req, columns=tuple(names))


def _index_gap(req: SearchRequest, column: str) -> str | None:
    """Why ``column``'s index cannot answer this query alone (None if it can)."""
    if isinstance(req.snapshot, ForeignTable):
        return f"{req.snapshot.name} is not a managed table"
    index = req.snapshot.meta.indexes.get(column)
    if index is None:
        return f"{column}: no index"
    last = req.snapshot.committed_rows - 1
    if index.covered_until < last:
        return f"{column}: index covers rows ..{index.covered_until} of ..{last}"
    if not index.positions and any(
        isinstance(leaf, Phrase) and leaf.column == column for leaf in leaves(req.query)
    ):
        return f"{column}: phrase query but the index has no positions"
    return None


def choose_search_operator(req: SearchRequest) -> SearchRequest:
    """IndexedSearch when every column's index covers every committed row and supports
    the query's leaves; FlatScanSearch otherwise (fail closed)."""
    gaps = [g for g in (_index_gap(req, c) for c in req.columns) if g]
    if req.force_plan == "indexed":
        if gaps:
            raise PlanError("fts.force_plan = 'indexed' is impossible: " + "; ".join(gaps))
        return _evolve(req, choice="indexed", reasons=("forced",))
    if req.force_plan == "hybrid":
        raise PlanError(
            "fts.force_plan = 'hybrid' is impossible: no HybridResidualSearch is available for "
            + (("; ".join(gaps)) if gaps else "a table whose index covers every row")
        )
    if req.force_plan == "flat_scan":
        return _evolve(req, choice="flat_scan", reasons=("forced",))
    if gaps:
        return _evolve(req, choice="flat_scan", reasons=tuple(gaps))
    return _evolve(req, choice="indexed", reasons=("every column's index covers every committed row",))


RULES: tuple[Callable[[SearchRequest], SearchRequest], ...] = (check_columns, choose_search_operator)


class _IndexBindContext:
    def __init__(self, analyzers: dict[str, Analyzer], sets: dict[str, SegmentSet]) -> None:
        self.analyzers = analyzers
        self.sets = sets

    def analyzer(self, column: str) -> Analyzer:
        return self.analyzers[column]

    def fuzzy_candidates(self, column: str, term: str, fuzziness: int, prefix_length: int, max_expansions: int):
        return self.sets[column].fuzzy_candidates(term, fuzziness, prefix_length, max_expansions)

    def prefix_candidates(self, column: str, prefix: str, max_expansions: int):
        return self.sets[column].prefix_candidates(prefix, max_expansions)


def _index(snapshot: TableSnapshot | ForeignTable, column: str) -> IndexMeta | None:
    return snapshot.meta.indexes.get(column) if isinstance(snapshot, TableSnapshot) else None


def column_analyzer(snapshot: TableSnapshot | ForeignTable, column: str) -> Analyzer:
    index = _index(snapshot, column)
    return analyzer_for(index.analyzer if index else DEFAULT_ANALYZER)


def column_params(index: IndexMeta | None) -> tuple[float, float]:
    return (index.k1, index.b) if index else (1.2, 0.75)


def plan_search(
    req: SearchRequest, segment_sets: Callable[[TableSnapshot, str], SegmentSet]
) -> tuple[ExecutionPlan, SearchRequest]:
    """The physical plan for ``req`` (a GlobalTopK over one search operator)."""
    for rule in RULES:
        req = rule(req)
    snap = req.snapshot
    analyzers = {c: column_analyzer(snap, c) for c in req.columns}
    k = None if req.k is None else req.k + req.offset
    operator: ExecutionPlan
    if req.choice == "indexed":
        assert isinstance(snap, TableSnapshot)
        sets = {c: segment_sets(snap, c) for c in req.columns}
        bound = bind(req.query, _IndexBindContext(analyzers, sets))
        terms = query_terms(bound)
        stats = QueryStats(
            columns={c: sets[c].column_stats for c in req.columns},
            df={(c, t): sets[c].df(t) for c in terms for t in terms[c]},
        )
        operator = IndexedSearch(
            bound, sets, stats, snap.live_rows, k, req.include, label=snap.name, pruning=req.pruning
        )
    else:
        operator = FlatScanSearch(
            req.query,
            snap.scan,
            analyzers,
            {c: column_params(_index(snap, c)) for c in req.columns},
            k,
            req.include,
            label=snap.name,
            reason="; ".join(req.reasons),
        )
    return GlobalTopK([operator], req.k, req.offset), req
