"""Plan a search over one managed table: check the tree, pick an operator, record why.

Rules run in order over a ``SearchRequest``; each is a small pure function returning the
request with its decision (and reason) filled in, so EXPLAIN can show every choice.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Protocol, TypeVar

import pyarrow as pa

from ..analysis import Analyzer, AnalyzerConfig, analyzer_for
from ..defaults import K1, B
from ..errors import CatalogError, InvalidArgument, PlanError
from ..index.segment_set import SegmentSet
from ..operators.base import ExecutionPlan
from ..operators.flat_scan_search import FlatScanSearch
from ..operators.global_topk import GlobalTopK
from ..operators.hybrid_residual_search import HybridResidualSearch, TailInfo
from ..operators.indexed_search import IndexedSearch
from ..query.bind import bind
from ..query.tree import Phrase, Query, leaves, shape
from ..storage.files.manifest import IndexMeta
from ..storage.snapshot import TableSnapshot
from .advise_index import advise_index
from .plan_distributed import DistributedExecutor, plan_distributed
from .search_request import DECIDED, SearchedTable, SearchRequest, evolve
from .simplify_query import simplify_query

DEFAULT_ANALYZER = AnalyzerConfig()


def _text_columns(schema: pa.Schema) -> frozenset[str]:
    """The names of the schema's text columns (that occur once)."""
    names = [f.name for f in schema]
    return frozenset(
        f.name for f in schema
        if names.count(f.name) == 1
        and (pa.types.is_string(f.type) or pa.types.is_large_string(f.type) or pa.types.is_string_view(f.type))
    )


def _text_columns_of(snapshot: SearchedTable) -> frozenset[str]:
    """:func:`_text_columns` of the table, once per version of it (every query reads it)."""
    return snapshot.derived(("text_columns",), _text_columns, snapshot.schema)


def check_columns(req: SearchRequest) -> SearchRequest:
    """Every leaf names an existing text column of the table; records the columns read,
    and those phrases read (what the operators' requirements depend on)."""
    names: dict[str, None] = {}
    phrases: set[str] = set()
    schema = req.snapshot.schema
    text = _text_columns_of(req.snapshot)
    for leaf in leaves(req.query):
        column = leaf.column
        if column is None:
            raise PlanError(f"{type(leaf).__name__} leaf {leaf!r} is bound to no column")
        if isinstance(leaf, Phrase):
            phrases.add(column)
        if column in names:
            continue
        if column not in text:
            if schema.get_field_index(column) < 0:
                raise CatalogError(f"table {req.snapshot.name!r} has no column {column!r}; columns: {schema.names}")
            ftype = schema.field(column).type
            raise InvalidArgument(f"column {column!r} is {ftype}, not text: it cannot be searched")
        names[column] = None
    return evolve(req, columns=tuple(names), phrase_columns=frozenset(phrases))


# The search operators in order of preference; each declares what it cannot do
# (``unmet``), and the planner reads those declarations (fail closed: the last one, the
# flat scan, can answer everything).
CANDIDATES: tuple[tuple[str, Any], ...] = (
    ("indexed", IndexedSearch),
    ("hybrid", HybridResidualSearch),
    ("flat_scan", FlatScanSearch),
)


def choose_search_operator(req: SearchRequest) -> SearchRequest:
    """The first operator whose requirements the table and query meet, with the reasons
    the better ones were passed over; or the forced one (a PlanError if impossible).
    Operators after the chosen one are not consulted."""
    def unmet(op: Any) -> list[str]:
        return op.unmet(req.snapshot, req.columns, req.phrase_columns, req.residual_row_limit)

    if req.force_plan != "auto":
        forced = dict(CANDIDATES).get(req.force_plan)
        if forced is None:
            raise PlanError(
                f"fts.force_plan = {req.force_plan!r} is impossible: no such operator is available "
                f"(available: {[name for name, _ in CANDIDATES]})"
            )
        reasons = unmet(forced)
        if reasons:
            raise PlanError(f"fts.force_plan = {req.force_plan!r} is impossible: " + "; ".join(reasons))
        return evolve(req, choice=req.force_plan, reasons=("forced",))
    passed_over: list[str] = []
    for name, op in CANDIDATES:
        reasons = unmet(op)
        if not reasons:
            return evolve(req, choice=name, reasons=tuple(passed_over) or (op.CHOSEN_BECAUSE,))
        passed_over.append(f"not {op.__name__}: " + "; ".join(reasons))
    raise PlanError("no search operator can answer this query: " + "; ".join(passed_over))


RULES: tuple[Callable[[SearchRequest], SearchRequest], ...] = (check_columns, choose_search_operator, advise_index)


_SHAPES_PER_SNAPSHOT = 1024


def apply_rules(req: SearchRequest, query_shape: tuple | None = None) -> SearchRequest:
    """``req`` through every rule. The rules read the query only through its shape (the
    leaves' kinds and columns) and the snapshot only through its schema and coverage, so
    on a managed table their decisions are made once per snapshot, query shape
    (``query_shape``, if the caller has it) and the settings they read."""
    memo = req.snapshot.derived(("rules",), dict)
    key = (shape(req.query) if query_shape is None else query_shape, req.force_plan, req.residual_row_limit)
    decided = memo.get(key)
    if decided is None:
        decided = kept(memo, key, _decisions(req))
    return tuple.__new__(SearchRequest, req[:-DECIDED] + decided)


T = TypeVar("T")


def kept(memo: dict, key: Hashable, value: T) -> T:
    """``memo[key] = value`` in a per-snapshot memo keyed by query shapes, which come
    from users: past ``_SHAPES_PER_SNAPSHOT`` entries it starts again."""
    if len(memo) >= _SHAPES_PER_SNAPSHOT:
        memo.clear()
    memo[key] = value
    return value


def _decide(req: SearchRequest) -> SearchRequest:
    for rule in RULES:
        req = rule(req)
    return req


def _decisions(req: SearchRequest) -> tuple[tuple[str, ...], frozenset[str], str, tuple[str, ...], str]:
    return _decide(req)[-DECIDED:]


class IndexBindContext:
    """The query columns' analyzers and segment sets."""

    def __init__(self, analyzers: dict[str, Analyzer], sets: dict[str, SegmentSet]) -> None:
        self.analyzers = analyzers
        self.sets = sets

    def analyzer(self, column: str) -> Analyzer:
        return self.analyzers[column]

    def fuzzy_candidates(self, column: str, term: str, fuzziness: int, prefix_length: int, max_expansions: int):
        return self.sets[column].fuzzy_candidates(term, fuzziness, prefix_length, max_expansions)

    def prefix_candidates(self, column: str, prefix: str, max_expansions: int):
        return self.sets[column].prefix_candidates(prefix, max_expansions)

    def gram_candidates(self, column: str, char: str):
        return self.sets[column].gram_candidates(char)


def column_analyzer(snapshot: SearchedTable, column: str) -> Analyzer:
    # (once per version of the table: hashing the config per query costs more)
    return snapshot.derived(("analyzer", column), _analyzer_of, snapshot.index(column))


def _analyzer_of(index: IndexMeta | None) -> Analyzer:
    return analyzer_for(index.analyzer if index else DEFAULT_ANALYZER)


def _analyzers(snapshot: SearchedTable, columns: tuple[str, ...]) -> dict[str, Analyzer]:
    return {c: column_analyzer(snapshot, c) for c in columns}


def index_context(
    snapshot: TableSnapshot, catalog: Catalog, columns: tuple[str, ...]
) -> IndexBindContext:
    sets = {c: catalog.segment_set(snapshot, c) for c in columns}
    return IndexBindContext(_analyzers(snapshot, columns), sets)


def column_params(index: IndexMeta | None) -> tuple[float, float]:
    return (index.k1, index.b) if index else (K1, B)


class Catalog(Protocol):
    """Where the planner gets a column's searchable segments."""

    def segment_set(self, snapshot: TableSnapshot, column: str) -> SegmentSet: ...

    def hybrid_segment_set(
        self, snapshot: TableSnapshot, column: str, query: Query | None = None
    ) -> tuple[SegmentSet, TailInfo]: ...

    def caches_tails(self) -> bool:
        """Whether an unindexed tail's index is kept per snapshot (the tail cache is on)."""
        ...

    def distributed_executor(self) -> DistributedExecutor: ...


def simplified(req: SearchRequest) -> SearchRequest:
    """``req`` with its tree simplified (:func:`.simplify_query.simplify_query`: the same
    rows and scores): the first step of every search, planned here or prepared
    (:mod:`.prepared_search`), so the rules, their per-shape memo and the kernels all see
    the simplified tree. ``req`` itself when no rewrite applies."""
    query = simplify_query(req.query)
    return req if query is req.query else evolve(req, query=query)


def plan_search(req: SearchRequest, catalog: Catalog | None) -> tuple[ExecutionPlan, SearchRequest]:
    """The physical plan for ``req`` (a GlobalTopK over one search operator); the request
    returned carries the simplified tree the plan answers."""
    req = apply_rules(simplified(req))
    snap = req.snapshot
    k = None if req.k is None else req.k + req.offset
    operator: ExecutionPlan
    if req.choice in ("indexed", "hybrid"):
        assert isinstance(snap, TableSnapshot) and catalog is not None
        tails: dict[str, TailInfo] = {}
        if req.choice == "indexed":  # (the same for every query on these columns)
            key = ("index_context", req.columns)
            ctx = snap.derived(key, index_context, snap, catalog, req.columns)
        else:
            sets = {}
            for c in req.columns:
                sets[c], tails[c] = catalog.hybrid_segment_set(snap, c, req.query)
            ctx = IndexBindContext(_analyzers(snap, req.columns), sets)
        sets = ctx.sets
        if req.executor != "local":
            executor = catalog.distributed_executor()
            return plan_distributed(req, executor, sets, tails, ctx.analyzers, k), req
        operator = IndexedSearch(
            bind(req.query, ctx), sets, None, snap.live_rows, k, req.include, label=snap.name, pruning=req.pruning,
            by_score=req.by_score,
        )
        if tails:
            operator = HybridResidualSearch(operator, tails)
    else:
        operator = FlatScanSearch(
            req.query,
            snap.scan,
            _analyzers(snap, req.columns),
            {c: column_params(snap.index(c)) for c in req.columns},
            k,
            req.include,
            label=snap.name,
            reason="; ".join(req.reasons),
            advice=req.advice,
            notice_rows=req.residual_row_limit,
            by_score=req.by_score,
        )
    return GlobalTopK([operator], req.k, req.offset, req.by_score), req
