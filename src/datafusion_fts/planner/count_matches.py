"""How many rows a search matches, where the index's statistics tell it exactly
(docs/design.md: "Direct answers"): ``count(*)`` of a search needs no scores, and a query that
binds to one term needs no postings either.

The rule: a request the planner answers from the index alone (choice ``indexed``: no
unindexed tail), on this process, without a prefilter, whose tree binds to a single term
(one group of one term: a word, a fuzzy or prefix word that expands to itself alone),
matches exactly the live rows holding that term; ``SegmentSet.lookup`` counts them from
each part's postings offsets, the rows deleted inside a part taken out (``SegmentPart.df``).
Anything else is counted by running the search (the general path, which every count
could take: ``tests/planner/test_count_matches.py`` holds both to the same number).
"""

from __future__ import annotations

from ..query.bind import bind
from ..query.bound import BoundTerms
from ..storage.snapshot import TableSnapshot
from .plan_search import Catalog, apply_rules, index_context, simplified
from .run_search import run_search
from .search_request import SearchRequest, evolve


def counted_from_statistics(req: SearchRequest, catalog: Catalog) -> int | None:
    """The number of rows ``req`` matches, read from document frequencies; None where the
    rule above does not hold."""
    req = apply_rules(simplified(req))
    snap = req.snapshot
    if req.choice != "indexed" or req.include is not None or req.executor != "local" or not isinstance(snap, TableSnapshot):
        return None
    ctx = snap.derived(("index_context", req.columns), index_context, snap, catalog, req.columns)
    bound = bind(req.query, ctx)
    if not isinstance(bound, BoundTerms) or len(bound.groups) != 1 or len(bound.groups[0]) != 1:
        return None
    return ctx.sets[bound.column].lookup([bound.groups[0][0]])[0][0]


def count_matches(req: SearchRequest, catalog: Catalog) -> int:
    """The number of rows ``req`` matches (its limit and offset ignored)."""
    counted = counted_from_statistics(req, catalog)
    return counted if counted is not None else run_search(evolve(req, k=None, offset=0, by_score=False), catalog).num_rows
