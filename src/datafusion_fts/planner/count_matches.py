"""How many rows a search matches, and which, where the index tells it without scoring
them (docs/design.md: "Direct answers"): ``count(*)`` of a search needs no scores, and a
query that binds to one term needs no postings either; a GROUP BY that reads no score needs
the matching rows only.

The rule: a request the planner answers from the index alone (choice ``indexed``: no
unindexed tail), on this process. Its rows are those its bound tree matches, found as the
evaluator finds them (``operators/evaluate.py``) but without scores: a term's rows from
its postings alone (``SegmentSet.rows_of``: no frequencies or norms, the rows deleted
inside a part taken out), unions merged, conjunctions narrowed clause by clause, a
prefilter's rows as the first narrowing. A tree of one term (one group of one term: a
word, a fuzzy or prefix word that expands to itself alone) without a prefilter is
counted from each part's postings offsets (``SegmentSet.lookup``, ``SegmentPart.df``):
no postings read. The matches of an OR of terms without a prefilter, counted by a
column, are counted as the terms' postings are read, by the column's codes
(``counted_by``: no row id made). A phrase, or a clause that matches every row, and any
request the rule leaves out, is counted or its rows found by running the search (the
general path, which every request could take: ``tests/planner/test_count_matches.py``
holds both to the same answer).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pyarrow as pa

from ..index.segment_set import SegmentSet
from ..kernels.merge import SUBTRACT, UNION_ADD, merge_rows
from ..query.bind import bind
from ..query.bound import BoundBoolean, BoundBoost, BoundQuery, BoundTerms
from .plan_search import Catalog, apply_rules, index_context, simplified
from .run_search import run_search
from .search_request import SearchRequest, evolve


def _bound(req: SearchRequest, catalog: Catalog) -> tuple[dict[str, SegmentSet], BoundQuery, SearchRequest] | None:
    """The segment sets of the columns ``req`` searches and its bound tree, where the
    planner answers it from the index alone on this process (with the request the rules
    made); else None."""
    req = apply_rules(simplified(req))
    snap = req.snapshot
    if req.choice != "indexed" or req.executor != "local" or not snap.managed:
        return None
    ctx = snap.derived(("index_context", req.columns), index_context, snap, catalog, req.columns)
    return ctx.sets, bind(req.query, ctx), req


def counted_from_statistics(req: SearchRequest, catalog: Catalog) -> int | None:
    """The number of rows ``req`` matches, read from document frequencies; None where the
    rule above does not hold, or a prefilter's rows narrow the search."""
    found = _bound(req, catalog) if req.include is None else None
    return None if found is None else _from_statistics(*found)


def count_matches(req: SearchRequest, catalog: Catalog) -> int:
    """The number of rows ``req`` matches (its limit and offset ignored)."""
    found = _bound(req, catalog)
    counted = _from_statistics(*found) if found is not None else None
    return counted if counted is not None else len(_matching_rows(req, catalog, found))


def matching_rows(req: SearchRequest, catalog: Catalog) -> np.ndarray:
    """The row ids ``req`` matches (its limit and offset ignored), ascending, unscored."""
    return _matching_rows(req, catalog, _bound(req, catalog))


def counted_by(req: SearchRequest, catalog: Catalog, column: str) -> list[tuple[pa.Array, np.ndarray]] | None:
    """Per fragment holding some of the rows ``req`` matches (and for its fresh rows), the
    keys of ``column`` and how many of those rows hold each (the last: NULL), counted from
    the terms' postings and the column's codes (``SegmentSet.count_by``): no row id made
    where a fragment's store keeps the column's codes (``TableSnapshot.whole_codes``);
    the other parts' rows (fresh rows, a store keeping none) taken as codes and counted.
    Where the rule above holds for a tree of terms any of which a row holds to match (an
    OR of words, or one word and its expansions) without a prefilter; else None, and the
    caller counts :func:`matching_rows` by the column (the same counts:
    tests/planner/test_count_matches.py)."""
    found = _bound(req, catalog) if req.include is None else None
    if found is None:
        return None
    sets, bound, ruled = found
    if ruled.include is not None or not isinstance(bound, BoundTerms) or (bound.require_all and len(bound.groups) > 1):
        return None
    snap = ruled.snapshot
    counted, rest = sets[bound.column].count_by(list(dict.fromkeys(bound.terms())), partial(snap.whole_codes, column))
    return counted + [(part.keys, part.counts()) for part in snap.take_codes(rest, column)] if len(rest) else counted


def _from_statistics(sets: dict[str, SegmentSet], bound: BoundQuery, ruled: SearchRequest) -> int | None:
    """A tree of one term's count without a prefilter, from document frequencies."""
    one = _one_term(bound, ruled)
    return None if one is None else sets[one[0]].lookup([one[1]])[0][0]


def _one_term(bound: BoundQuery, ruled: SearchRequest) -> tuple[str, str] | None:
    """The column and term of a tree of one term (one group of one term) without a
    prefilter."""
    if ruled.include is None and isinstance(bound, BoundTerms) and len(bound.groups) == 1 and len(bound.groups[0]) == 1:
        return bound.column, bound.groups[0][0]
    return None


def _matching_rows(req: SearchRequest, catalog: Catalog,
                   found: tuple[dict[str, SegmentSet], BoundQuery, SearchRequest] | None) -> np.ndarray:
    rows = _rows(found[1], found[0], found[2].include) if found is not None else None
    if rows is not None:
        return rows
    return run_search(evolve(req, k=None, offset=0, by_score=False), catalog).column(0).to_numpy()


def _rows(node: BoundQuery, sets: dict[str, SegmentSet], within: np.ndarray | None) -> np.ndarray | None:
    """The live rows ``node`` matches, only among ``within`` (ascending) when given, as
    ``operators/evaluate.Evaluator`` matches them, without scores: a term's rows from its
    postings alone (``SegmentSet.rows_of``), unions merged, conjunctions narrowed clause
    by clause. None where a leaf needs positions (a phrase) or a clause matches every
    row (a Boolean of MUST NOTs only): the search finds those."""
    if isinstance(node, BoundTerms):
        terms = sets[node.column]
        if not node.require_all:
            return _union([terms.rows_of(t, within) for t in node.terms()])
        if not any(node.groups):
            return _NONE
        rows = within
        for group in node.groups:
            rows = _union([terms.rows_of(t, rows) for t in group])
            if not len(rows):
                break
        return rows
    if isinstance(node, BoundBoost):
        return _rows(node.positive, sets, within)
    if not isinstance(node, BoundBoolean) or not (node.must or node.should):
        return None
    found: np.ndarray | None = within
    if node.must:
        for clause in node.must:
            found = _rows(clause, sets, found)
            if found is None or not len(found):
                return found
    else:
        parts = [_rows(clause, sets, within) for clause in node.should]
        found = None if any(p is None for p in parts) else _union(parts)  # type: ignore[arg-type]
    for clause in node.must_not:
        if found is None or not len(found):
            return found
        out = _rows(clause, sets, found)
        found = None if out is None else merge_rows(SUBTRACT, found, out)
    return found


def _union(parts: list[np.ndarray]) -> np.ndarray:
    """The union of ascending row lists, ascending (linear merges, the shortest first)."""
    parts = sorted((p for p in parts if len(p)), key=len)
    if not parts:
        return _NONE
    rows = parts[0]
    for part in parts[1:]:
        rows = merge_rows(UNION_ADD, rows, part)
    return rows


_NONE = np.zeros(0, dtype=np.int64)
