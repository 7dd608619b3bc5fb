"""How many rows a search matches, and which, where the index tells it without scoring
them (docs/design.md: "Direct answers"): ``count(*)`` of a search needs no scores, and a
query that binds to one term needs no postings either; a GROUP BY that reads no score needs
the matching rows only.

The rule: a request the planner answers from the index alone (choice ``indexed``: no
unindexed tail), on this process, whose tree binds to a single term (one group of one
term: a word, a fuzzy or prefix word that expands to itself alone), matches exactly the
live rows holding that term. Without a prefilter, ``SegmentSet.lookup`` counts them from
each part's postings offsets, the rows deleted inside a part taken out (``SegmentPart.df``);
``SegmentSet.rows_of`` reads them (among a prefilter's rows, if any) without frequencies or
norms. Anything else is counted, or its rows found, by running the search (the general
path, which every request could take: ``tests/planner/test_count_matches.py`` holds both
to the same answer).
"""

from __future__ import annotations

import numpy as np

from ..index.segment_set import SegmentSet
from ..query.bind import bind
from ..query.bound import BoundTerms
from ..storage.snapshot import TableSnapshot
from .plan_search import Catalog, apply_rules, index_context, simplified
from .run_search import run_search
from .search_request import SearchRequest, evolve


def _one_term(req: SearchRequest, catalog: Catalog) -> tuple[SegmentSet, str, SearchRequest] | None:
    """The segment set and the one term ``req`` binds to where the rule above holds
    (with the request the rules made), else None."""
    req = apply_rules(simplified(req))
    snap = req.snapshot
    if req.choice != "indexed" or req.executor != "local" or not isinstance(snap, TableSnapshot):
        return None
    ctx = snap.derived(("index_context", req.columns), index_context, snap, catalog, req.columns)
    bound = bind(req.query, ctx)
    if not isinstance(bound, BoundTerms) or len(bound.groups) != 1 or len(bound.groups[0]) != 1:
        return None
    return ctx.sets[bound.column], bound.groups[0][0], req


def counted_from_statistics(req: SearchRequest, catalog: Catalog) -> int | None:
    """The number of rows ``req`` matches, read from document frequencies; None where the
    rule above does not hold, or a prefilter's rows narrow the search."""
    found = _one_term(req, catalog) if req.include is None else None
    return None if found is None else found[0].lookup([found[1]])[0][0]


def count_matches(req: SearchRequest, catalog: Catalog) -> int:
    """The number of rows ``req`` matches (its limit and offset ignored)."""
    counted = counted_from_statistics(req, catalog)
    return counted if counted is not None else len(matching_rows(req, catalog))


def matching_rows(req: SearchRequest, catalog: Catalog) -> np.ndarray:
    """The row ids ``req`` matches (its limit and offset ignored), ascending, unscored."""
    found = _one_term(req, catalog)
    if found is not None:
        terms, term, ruled = found
        return terms.rows_of(term, ruled.include)
    return run_search(evolve(req, k=None, offset=0, by_score=False), catalog).column(0).to_numpy()
