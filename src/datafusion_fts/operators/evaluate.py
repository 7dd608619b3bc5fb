"""Evaluate a bound query over one posting source: the shared core of every search
operator (docs/design.md: "Compound queries").

A node evaluates to ``Hits``: ascending row ids with their scores. Leaves score their
postings with BM25 (:mod:`..index.bm25`); compound nodes combine children with linear
merges in the canonical order (MUST clauses, then SHOULD clauses, each left to right,
starting from 0.0), so every operator and the reference add the same numbers in the same
order. Sources differ (index segments, a scanned batch, the fresh tier); the evaluation
does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

import numpy as np

from ..index.bm25 import ColumnStats, idf, term_weights
from ..index.term_postings import TermPostings, present
from ..kernels.bm25 import term_scores
from ..kernels.merge import (
    ADD_PRESENT,
    BOOST,
    NO_MARKS,
    SUBTRACT,
    UNION_ADD,
    later_occurrences,
    merge,
    phrase_tf,
    run_sums,
    sloppy_phrase_tf,
)
from ..query.bound import BoundBoolean, BoundBoost, BoundPhrase, BoundQuery, BoundTerms


class PostingSource(Protocol):
    def postings(
        self, column: str, term: str, stats: ColumnStats, positions: bool, within: np.ndarray | None = None
    ) -> TermPostings | None:
        """The term's postings, only at rows of ``within`` (ascending) when given."""
        ...

    def all_rows(self) -> np.ndarray: ...


@dataclass(frozen=True)
class QueryStats:
    """Exact collection statistics for one query: per column and per (column, term)."""

    columns: dict[str, ColumnStats]
    df: dict[tuple[str, str], int]

    def weight(self, column: str, term: str) -> float:
        return self.weights(column, (self.df[(column, term)],))[0]

    def weights(self, column: str, dfs: Sequence[int]) -> list[float]:
        """The BM25 weights of terms of ``column`` with these document frequencies."""
        return term_weights(self.columns[column], dfs)


@dataclass
class Hits:
    rows: np.ndarray  # int64, ascending, distinct
    scores: np.ndarray  # float64

    @staticmethod
    def empty() -> "Hits":
        return Hits(np.zeros(0, np.int64), np.zeros(0, np.float64))

    def __len__(self) -> int:
        return len(self.rows)


@dataclass
class EvalMetrics:
    postings_read: int = 0
    terms_read: int = 0
    extra: dict[str, int] = field(default_factory=dict)


def _combine(mode: int, a: Hits, b: Hits, weight: float = 0.0) -> Hits:
    rows, scores = merge(mode, a.rows, a.scores, b.rows, b.scores, weight)
    return Hits(rows, scores)


# Parts from which a union is sorted at once rather than merged one part at a time: each
# merge costs the union so far, so a wide OR cost its width times its rows (10,000 terms
# over 20,000 rows: 30,000 merges, a third of its time); the sort costs the parts' rows
# times their logarithm, more than a few merges.
UNION_AT_ONCE = 16


def _union_add(parts: list[Hits]) -> Hits:
    """The UNION_ADD of ``parts`` merged left to right, the same rows and sums."""
    parts = [p for p in parts if len(p)]
    if len(parts) == 1:
        return Hits(parts[0].rows, 0.0 + parts[0].scores)
    if len(parts) < UNION_AT_ONCE:
        acc = Hits.empty()
        for part in parts:
            acc = _combine(UNION_ADD, acc, part)
        return acc
    rows = np.concatenate([p.rows for p in parts])
    order = np.argsort(rows, kind="stable")  # (a row's scores stay in part order)
    rows = rows[order]
    starts = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
    return Hits(rows[starts], run_sums(np.concatenate([p.scores for p in parts])[order], starts))


def _restrict(hits: Hits, rows: np.ndarray) -> Hits:
    """``hits`` at ``rows`` (a subset of hits.rows, ascending)."""
    if len(rows) == len(hits.rows):
        return hits
    sel = np.searchsorted(hits.rows, rows)
    return Hits(rows, hits.scores[sel])


class Evaluator:
    """Evaluates bound trees against one source with fixed statistics.

    ``evaluate(node, within)`` may restrict a node to candidate rows: conjunctions
    evaluate their cheapest clause fully and probe the others only at its rows, so an
    AND with a frequent term costs a binary search per candidate instead of a pass over
    the frequent term's postings. Scores are still added in the canonical order.
    """

    def __init__(self, source: PostingSource, stats: QueryStats) -> None:
        self.source = source
        self.stats = stats
        self.metrics = EvalMetrics()
        # (id of a phrase-prefix leaf, expansion) -> the only rows where that expansion
        # counts (ascending); absent: every row. Set by callers whose rows are separate
        # collections with their own expansions (the text functions).
        self.expansion_rows: dict[tuple[int, str], np.ndarray] = {}

    # -- cost estimates (postings a full evaluation reads) ---------------------------------
    def cost(self, node: BoundQuery) -> int:
        if isinstance(node, BoundTerms):
            return sum(self.stats.df.get((node.column, t), 0) for t in node.terms())
        if isinstance(node, BoundPhrase):
            df = self.stats.df
            fixed = min((df.get((node.column, t), 0) for t in node.terms), default=1 << 62)
            if node.expansions is None:
                return 0 if fixed == 1 << 62 else fixed
            return min(fixed, sum(df.get((node.column, t), 0) for t in node.expansions))
        if isinstance(node, BoundBoolean):
            if node.must:
                return min(self.cost(c) for c in node.must)
            if node.should:
                return sum(self.cost(c) for c in node.should)
            return 1 << 62
        return self.cost(node.positive)

    def evaluate(self, node: BoundQuery, within: np.ndarray | None = None) -> Hits:
        """Rows matching ``node`` (only among ``within`` when given) with their scores."""
        if within is not None and not len(within):
            return Hits.empty()
        if isinstance(node, BoundTerms):
            return self._terms(node, within)
        if isinstance(node, BoundPhrase):
            return self._phrase(node, within)
        if isinstance(node, BoundBoolean):
            return self._boolean(node, within)
        if isinstance(node, BoundBoost):
            positive = self.evaluate(node.positive, within)
            if not len(positive):
                return positive
            negative = self.evaluate(node.negative, positive.rows)
            return _combine(BOOST, positive, negative, node.negative_boost)
        raise TypeError(f"not a bound query node: {node!r}")

    def _postings(self, column: str, term: str, within: np.ndarray | None, positions: bool = False) -> TermPostings | None:
        if self.stats.df.get((column, term), 0) == 0:
            return None
        tp = self.source.postings(column, term, self.stats.columns[column], positions, within)
        if tp is not None:
            self.metrics.terms_read += 1
            self.metrics.postings_read += len(tp.rows)
        return tp

    def _term_hits(self, column: str, term: str, within: np.ndarray | None) -> Hits:
        tp = self._postings(column, term, within)
        if tp is None or not len(tp.rows):
            return Hits.empty()
        return Hits(tp.rows, term_scores(tp.tfs, tp.norms, self.stats.weight(column, term)))

    def _group_rows(self, column: str, group: tuple[str, ...], within: np.ndarray | None) -> np.ndarray:
        rows = [self._term_hits(column, t, within).rows for t in group]
        rows = [r for r in rows if len(r)]
        if not rows:
            return np.zeros(0, dtype=np.int64)
        return rows[0] if len(rows) == 1 else np.unique(np.concatenate(rows))

    def _terms(self, node: BoundTerms, within: np.ndarray | None) -> Hits:
        if node.require_all and len(node.groups) > 1 and all(len(g) == 1 for g in node.groups):
            return self._conjunction(node, within)
        if node.require_all and len(node.groups) > 1:
            # Candidates: the cheapest group's rows, narrowed by probing the others.
            def group_cost(g: tuple[str, ...]) -> int:
                return sum(self.stats.df.get((node.column, t), 0) for t in g)

            for group in sorted(node.groups, key=group_cost):
                within = self._group_rows(node.column, group, within)
                if not len(within):
                    return Hits.empty()
        elif node.require_all and not any(node.groups):
            return Hits.empty()
        # (The first term's scores stand alone, as 0.0 + s == s for a term's s > 0.)
        acc = _union_add([self._term_hits(node.column, term, within) for term in node.terms()])
        if not len(acc):
            return acc
        if node.boost != 1.0:
            acc = Hits(acc.rows, acc.scores * node.boost)
        return acc

    def _conjunction(self, node: BoundTerms, within: np.ndarray | None) -> Hits:
        """Every term required: the rarest term's rows, narrowed by probing the others,
        each term read once; scores added in query order."""
        terms = [g[0] for g in node.groups]
        found: dict[int, Hits] = {}
        rows = within
        for i in sorted(range(len(terms)), key=lambda i: self.stats.df.get((node.column, terms[i]), 0)):
            found[i] = self._term_hits(node.column, terms[i], rows)
            rows = found[i].rows
            if not len(rows):
                return Hits.empty()
        assert rows is not None
        scores = np.zeros(len(rows), dtype=np.float64)
        for i in range(len(terms)):
            scores = scores + _restrict(found[i], rows).scores
        return Hits(rows, scores * node.boost if node.boost != 1.0 else scores)

    def _phrase(self, node: BoundPhrase, within: np.ndarray | None) -> Hits:
        """One phrase, or a phrase prefix's expanded phrases added in expansion order
        (the first stands alone, as 0.0 + s == s); then times ``boost``."""
        if node.expansions is not None and len(node.expansions) > 1:
            within = self._rows_with_all(node.column, node.terms, within)  # read once, not per expansion
            if within is not None and not len(within):
                return Hits.empty()
        stats = self.stats.columns[node.column]
        acc: Hits | None = None
        for terms in node.phrases():
            found = self.phrase_matches(node, within, terms)
            if found is None:
                continue
            rows, tf, norms = found
            hits = Hits(rows, term_scores(tf.astype(np.uint32), norms, self.phrase_idf(node, terms) * (stats.k1 + 1.0)))
            acc = hits if acc is None else _combine(UNION_ADD, acc, hits)
        if acc is None:
            return Hits.empty()
        if node.boost != 1.0:
            acc = Hits(acc.rows, acc.scores * node.boost)
        return acc

    def _rows_with_all(self, column: str, terms: tuple[str, ...], within: np.ndarray | None) -> np.ndarray | None:
        """Rows (among ``within``) holding every one of ``terms``, rarest first; ``within``
        itself for no terms."""
        for term in sorted(dict.fromkeys(terms), key=lambda t: self.stats.df.get((column, t), 0)):
            tp = self._postings(column, term, within)
            if tp is None or not len(tp.rows):
                return np.zeros(0, dtype=np.int64)
            within = tp.rows
        return within

    def phrase_idf(self, node: BoundPhrase, terms: tuple[str, ...] | None = None) -> float:
        """A phrase's idf: 0.0 plus each term's idf, one per position (docs/design.md:
        "Compound queries"); ``terms`` is one of ``node.phrases()`` (default: its first)."""
        stats = self.stats.columns[node.column]
        idf_sum = 0.0
        for term in node.phrases()[0] if terms is None else terms:
            idf_sum += idf(stats.n_docs, self.stats.df[(node.column, term)])
        return idf_sum

    def phrase_matches(
        self, node: BoundPhrase, within: np.ndarray | None, terms: tuple[str, ...] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(rows, tf, norms) where the phrase ``terms`` (one of ``node.phrases()``; default
        its first) occurs, only among ``within`` when given."""
        if terms is None:
            terms = node.phrases()[0] if node.phrases() else ()
        if not terms:
            return None
        if node.expansions is not None:
            allowed = self.expansion_rows.get((id(node), terms[-1]))
            if allowed is not None:
                within = allowed if within is None else within[present(within, allowed)]
                if not len(within):
                    return None
        distinct = sorted(dict.fromkeys(terms), key=lambda t: self.stats.df.get((node.column, t), 0))
        candidates = within
        for term in distinct:  # rarest first: each probe narrows the next
            tp = self._postings(node.column, term, candidates)
            if tp is None or not len(tp.rows):
                return None
            candidates = tp.rows
        assert candidates is not None
        postings = {}
        for term in distinct:
            tp = self._postings(node.column, term, candidates, positions=True)
            if tp is None or not len(tp.rows):
                return None
            postings[term] = tp
        n = len(terms)
        starts = np.empty((n, len(candidates)), dtype=np.int64)
        ends = np.empty((n, len(candidates)), dtype=np.int64)
        chunks, base = [], 0
        bases: dict[str, int] = {}
        for term, tp in postings.items():
            bases[term] = base
            chunks.append(tp.positions)
            base += len(tp.positions)
        for k, term in enumerate(terms):
            tp = postings[term]
            idx = np.searchsorted(tp.rows, candidates)
            starts[k] = tp.pos_offsets[idx] + bases[term]
            ends[k] = tp.pos_offsets[idx + 1] + bases[term]
        positions = np.concatenate(chunks)
        places = node.places(n)
        if node.in_order:
            tf = phrase_tf(starts, ends, positions, node.slop, places)
        else:
            tf = sloppy_phrase_tf(starts, ends, positions, node.slop, later_occurrences(terms), NO_MARKS, places)
        hit = tf > 0
        if not hit.any():
            return None
        rows = candidates[hit]
        first = postings[terms[0]]
        return rows, tf[hit], first.norms[np.searchsorted(first.rows, rows)]

    def _boolean(self, node: BoundBoolean, within: np.ndarray | None) -> Hits:
        if node.must:
            # Narrow candidates cheapest clause first, then add scores in clause order.
            order = sorted(range(len(node.must)), key=lambda i: self.cost(node.must[i]))
            results: dict[int, Hits] = {}
            rows = within
            for i in order:
                results[i] = self.evaluate(node.must[i], rows)
                rows = results[i].rows
                if not len(rows):
                    return Hits.empty()
            assert rows is not None
            acc = Hits(rows, np.zeros(len(rows), dtype=np.float64))
            for i in range(len(node.must)):
                acc = Hits(rows, acc.scores + _restrict(results[i], rows).scores)
            for clause in node.should:
                acc = _combine(ADD_PRESENT, acc, self.evaluate(clause, acc.rows))
        elif node.should:
            acc = _union_add([self.evaluate(clause, within) for clause in node.should])
        else:
            rows = self.source.all_rows()
            if within is not None:
                rows = rows[present(rows, within)]
            acc = Hits(rows, np.zeros(len(rows), dtype=np.float64))
        for clause in node.must_not:
            if not len(acc):
                return acc
            acc = _combine(SUBTRACT, acc, self.evaluate(clause, acc.rows))
        return acc
