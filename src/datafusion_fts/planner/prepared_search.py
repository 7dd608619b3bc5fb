"""A prepared search: the plan of one query shape on one snapshot, run with each query's
words.

Searches on a table version repeat a few shapes with new words (``Match(body, <text>,
operator="and")``). When the rules choose the indexed plan for a shape whose leaves are
plain (not fuzzy) Match leaves of one column (or the hybrid plan, while the tail cache
keeps the tail's index), all the plan does but for the words is fixed: the column's
analyzer and segment set, and, for each count of terms per leaf, the kernels' slot
layout (:func:`..operators.term_slots.term_slots` of the bound tree). A prepared search
keeps those per snapshot and shape. A search then analyzes its texts, looks the terms
up and runs :func:`..operators.term_topk.term_topk`, which is what IndexedSearch under
GlobalTopK runs, without binding the tree or building the plan (on a short query that
is a third of the time). ``Table.plan``, EXPLAIN and SQL build the plan
(:func:`.plan_search.plan_search`).
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from ..analysis import Analyzer
from ..index.bm25 import term_weights
from ..index.segment_set import SegmentSet
from ..operators import indexed_search
from ..operators.terms.term_slots import TermSlots, term_slots
from ..operators.terms.term_topk import term_topk
from ..query.bind import bind
from ..query.tree import Match, leaves, shape
from .plan_search import (
    Catalog,
    IndexBindContext,
    SearchRequest,
    apply_rules,
    column_analyzer,
    index_context,
    kept,
    simplified,
)

# A layout: the slots but for the column and terms (kinds, mults, boost, conjunctive,
# prunable), or None when the bound tree is no shape the kernels answer.
Layout = tuple | None


class PreparedSearch:
    """What the plan of one shape fixes on one snapshot (see the module)."""

    __slots__ = ("column", "ctx", "tail", "analyzer", "segment_set", "layouts")

    def __init__(self, column: str, ctx: IndexBindContext, tail: bool) -> None:
        self.column = column
        self.ctx = ctx
        self.tail = tail  # the set holds the cached index of an unindexed tail
        self.analyzer: Analyzer = ctx.analyzers[column]
        self.segment_set: SegmentSet = ctx.sets[column]
        # per count of distinct terms per leaf (a handful: bounded all the same)
        self.layouts: dict[tuple, Layout] = {}

    def run(self, req: SearchRequest) -> tuple[np.ndarray, np.ndarray] | None:
        """The rows ``[offset, offset + k)`` of ``req`` and their scores, in the total order;
        None when its words make a tree the kernels do not answer (a MUST clause of two
        words, a lone character of a script cut into bigrams), which the plan's general
        evaluator then answers."""
        analyzer = self.analyzer
        found = []
        counts: list[int | tuple[int, ...]] = []
        for leaf in leaves(req.query):  # (bind keeps each leaf's distinct terms, in order)
            words = analyzer.match_groups(leaf.text, leaf.language)
            if analyzer.lone(chain.from_iterable(words)) is not None:
                return None  # (a character alone stands for the grams holding it: bind expands it)
            found.extend(words)
            # (words of several terms, per row language, make other layouts than one each)
            counts.append(len(words) if all(len(w) == 1 for w in words) else tuple(map(len, words)))
        terms = tuple(chain.from_iterable(found))
        layout = self.layouts.get(tuple(counts), False)
        if layout is False:
            layout = self._layout(req, tuple(counts), terms)
        if layout is None:
            return None
        slots = tuple.__new__(TermSlots, (self.column, terms, *layout))
        segment_set = self.segment_set
        stats = segment_set.column_stats
        dfs, part_ids = segment_set.lookup(terms)
        k = req.k + req.offset
        rows, scores = term_topk(
            slots, segment_set, stats, dfs, part_ids, term_weights(stats, dfs), k, req.include, req.pruning, None
        )
        if req.offset:
            return rows[req.offset :], scores[req.offset :]
        return rows, scores

    def _layout(self, req: SearchRequest, counts: tuple, terms: tuple[str, ...]) -> Layout:
        """The layout of the trees of ``req``'s shape with these term counts, from the
        slots of ``req``'s bound tree (whose terms are the leaves' in order: else none)."""
        slots = term_slots(bind(req.query, self.ctx))
        layout = None if slots is None or slots.terms != terms else tuple(slots[2:])
        kept(self.layouts, counts, layout)
        return layout


def search_prepared(req: SearchRequest, catalog: Catalog) -> tuple[np.ndarray, np.ndarray] | None:
    """``req``'s rows and scores by its shape's prepared search; None when the search has
    none (another plan, another executor, no limit, a shape the kernels do not answer):
    then it is planned (:func:`.plan_search.plan_search`)."""
    snap = req.snapshot
    if req.k is None or req.executor != "local" or not indexed_search.TERM_KERNELS or not snap.managed:
        return None
    req = simplified(req)  # (as plan_search does: the shapes kept are the simplified trees')
    memo = snap.derived(("prepared",), dict)
    query_shape = shape(req.query)
    key = (query_shape, req.force_plan, req.residual_row_limit)  # (what the rules read)
    prepared = memo.get(key, False)
    if prepared is False:
        prepared = kept(memo, key, _prepare(apply_rules(req, query_shape), catalog))
    if prepared is None or (prepared.tail and not catalog.caches_tails()):
        return None
    return prepared.run(req)


def _prepare(req: SearchRequest, catalog: Catalog) -> PreparedSearch | None:
    """The prepared search of ``req``'s shape (``req`` through the rules), if it has one:
    on the indexed plan, or on the hybrid one while the tail cache keeps the tail's index
    (then the set is the same for every query on the snapshot)."""
    if req.choice not in ("indexed", "hybrid") or len(req.columns) != 1:
        return None
    if not all(type(leaf) is Match and not leaf.fuzziness for leaf in leaves(req.query)):
        return None  # (fuzzy, prefix and phrase leaves take their terms from the index)
    snap = req.snapshot
    (column,) = req.columns
    if req.choice == "indexed":
        ctx = snap.derived(("index_context", req.columns), index_context, snap, catalog, req.columns)
    elif catalog.caches_tails():
        segment_set, _ = catalog.hybrid_segment_set(snap, column, req.query)
        ctx = IndexBindContext({column: column_analyzer(snap, column)}, {column: segment_set})
    else:
        return None
    return PreparedSearch(column, ctx, req.choice == "hybrid")
