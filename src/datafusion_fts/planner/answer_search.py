"""One search as every door asks it, and its answer (docs/design.md: "One search from every
door"): the Python API (``Table.search``, ``find``, ``count``, ``matching_rows``,
``facets``, ``search_page``), SQL's searches (sql/search/execute.py), ``fts_search`` and the
search of a statement's relation each build a :class:`Search` and :func:`answer` it over a
managed table's snapshot or a table of the session (a ``SearchedTable``).

What may be asked beside ranked rows (a total, counts by a column, the rows unscored) is
chosen here, in one place, among the planner's ways to find them: the top k and the
total from the index's statistics, every match ranked once and cut, the matches' ids read
from postings without scores, counts read from postings by a column's codes
(planner/count_matches.py); every one of them answers as the general plan does (the
tests hold each to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa

from ..errors import InvalidArgument
from ..operators.base import SEARCH_SCHEMA, ExecutionPlan
from ..operators.grouped_counts import GroupedCounts
from ..operators.ordering import ordered
from ..query.parser import parse
from ..query.tree import QUERY_TYPES, Query
from ..settings import INT64_MAX, Settings
from .count_matches import count_matches, counted_by, counted_from_statistics, matching_rows
from .plan_search import Catalog, plan_search
from .run_search import executed, run_search
from .search_request import SearchedTable, SearchRequest, evolve

# Rows found without their scores (``Search.scored`` False): ``_score`` NULL.
UNSCORED_SCHEMA = pa.schema([SEARCH_SCHEMA.field(0), SEARCH_SCHEMA.field(1).with_nullable(True)])


@dataclass(frozen=True, eq=False)
class Search:
    """What a door asks of one search: the query and the page of ranked rows (``rows``),
    and what else to answer over the same matches of the same snapshot: their number
    (``total``), counts by columns (``groups``), the plan that ran (``explained``)."""

    query: Query | str  # a query string is parsed over ``default_columns``
    limit: int | None = 10  # None: every match
    offset: int = 0
    include_row_ids: Iterable[int] | np.ndarray | None = None  # only among these rows (a prefilter)
    default_columns: Sequence[str] | None = None  # (None: the indexed columns, else the text ones)
    rows: bool = True  # False: no rows (a count, counts by a column)
    # With ``limit`` None: every match in the total order (else in row-id order, for a
    # caller that orders rows itself: operators/ordering.py ``ordered``).
    by_score: bool = True
    # False: the caller reads no score; every match (``limit`` None) may come in row-id
    # order with ``_score`` NULL, found without scoring where the index allows.
    scored: bool = True
    total: bool = False  # also how many rows match
    groups: tuple[GroupedCounts, ...] = ()  # also these counts by a column over the matches
    explained: bool = False  # also the plan the rows came from (EXPLAIN), planned anew


@dataclass(frozen=True, eq=False)
class Answer:
    """A :class:`Search`'s answer, every part read from one ``snapshot``."""

    rows: pa.Table  # ``_rowid``, ``_score``: the page (no rows unless asked)
    ranked: bool  # whether ``rows`` come in the total order (else in row-id order)
    total: int | None  # (asked: how many rows match)
    groups: tuple[pa.Table | None, ...]  # per ``Search.groups``; None: DataFusion must add values up
    snapshot: SearchedTable
    plan: ExecutionPlan | None = None  # (explained)
    request: SearchRequest | None = None  # (explained: as the rules made it)


def request_for(search: Search, table: SearchedTable, settings: Settings) -> SearchRequest:
    """``search``'s arguments, checked (a bad one raises ``InvalidArgument`` before anything
    runs), as the planner's request on ``table`` under ``settings``."""
    query = search.query
    if query is None:
        raise InvalidArgument("query must not be None")
    if isinstance(query, str):
        query = parse(query, list(search.default_columns or ()) or table.searched_columns(),
                      max_terms=settings.get("fts.max_query_terms"))
    if not isinstance(query, QUERY_TYPES):
        raise InvalidArgument(f"query must be a query tree or a string, got {type(query).__name__}")
    limit, offset = search.limit, search.offset
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit <= INT64_MAX):
        raise InvalidArgument(f"limit must be a positive integer up to 2^63-1 or None, got {limit!r}")
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= INT64_MAX - (limit or 0):
        raise InvalidArgument(f"offset must be a non-negative integer, limit plus offset at most 2^63-1, got {offset!r}")
    include = None
    if search.include_row_ids is not None:
        given = search.include_row_ids
        array = np.asarray(given if isinstance(given, np.ndarray) else list(given))
        if array.size and not np.issubdtype(array.dtype, np.integer):
            raise InvalidArgument(f"include_row_ids must be integers, got {array.dtype} values")
        include = np.unique(array.astype(np.int64))
    if search.groups and not table.managed:
        raise InvalidArgument(f"counts by a column are answered over a database's tables; {table.name!r} is the session's")
    return SearchRequest(table, query, limit, offset, include, *settings.search_options(), search.by_score)


def answer(search: Search, table: SearchedTable, catalog: Catalog | None, settings: Settings) -> Answer:
    """``search`` over ``table`` (``catalog``: the database's segments; None for a table of
    the session, which is scanned), every part from the same snapshot."""
    req = request_for(search, table, settings)
    every = evolve(req, k=None, offset=0, by_score=False)  # (a total, groups: every match)
    matches: np.ndarray | None = None  # (every match's id, ascending, where found)
    total = plan = planned = None
    rows, ranked = _NO_ROWS, True
    if not search.rows:
        total = count_matches(every, catalog) if search.total else None
    elif search.total:
        if req.k is not None and not search.explained:
            total = counted_from_statistics(req, catalog)
            if total is not None:  # the page alone is found
                rows = run_search(req, catalog)
        if total is None:  # every match found once (in row-id order), counted, then cut
            found, plan, planned = _run(every, catalog, search.explained)
            matches, total = found.column(0).to_numpy(), found.num_rows
            k = None if req.k is None else req.k + req.offset
            rows = found.take(ordered(matches, found.column(1).to_numpy(), k)[req.offset:])
    elif not search.scored and req.k is None and not search.explained:
        matches = matching_rows(every, catalog)
        rows = pa.table([pa.array(matches, pa.int64()), pa.nulls(len(matches), pa.float64())], schema=UNSCORED_SCHEMA)
        ranked = False
    else:
        rows, plan, planned = _run(req, catalog, search.explained)
        ranked = req.by_score or req.k is not None
    groups = []
    for grouped in search.groups:  # (a database's table: request_for)
        counted = None
        if grouped.counts_only and settings.get("fts.counts_from_postings"):
            counted = counted_by(every, catalog, grouped.key)
        if counted is not None:
            groups.append(grouped.from_counts(counted, table.sql_schema))
            continue
        if matches is None:
            matches = matching_rows(every, catalog)
        groups.append(grouped.over(matches, table))
    return Answer(rows, ranked, total, tuple(groups), table, plan, planned)


_NO_ROWS = SEARCH_SCHEMA.empty_table()


def _run(req: SearchRequest, catalog: Catalog | None,
         explained: bool) -> tuple[pa.Table, ExecutionPlan | None, SearchRequest | None]:
    """``req``'s ranked rows, as ``run_search`` finds them (a prepared search where it
    can), or ``explained``: from its plan, planned anew, with the plan and the request
    as the rules made it."""
    if not explained:
        return run_search(req, catalog), None, None
    plan, ruled = plan_search(req, catalog)
    return executed(plan), plan, ruled
