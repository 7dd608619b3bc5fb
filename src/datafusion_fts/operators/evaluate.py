"""Evaluate a bound query over one posting source: the shared core of every search
operator (DESIGN §5.3).

A node evaluates to ``Hits``: ascending row ids with their scores. Leaves score their
postings with BM25 (:mod:`..index.bm25`); compound nodes combine children with linear
merges in the canonical order (MUST clauses, then SHOULD clauses, each left to right,
starting from 0.0), so every operator and the reference add the same numbers in the same
order. Sources differ (index segments, a scanned batch, the fresh tier); the evaluation
does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..index.bm25 import ColumnStats, idf, term_scores
from ..index.term_postings import TermPostings
from ..query.bound import BoundBoolean, BoundBoost, BoundPhrase, BoundQuery, BoundTerms
from .merge_kernels import ADD_PRESENT, BOOST, INTERSECT_ADD, SUBTRACT, UNION_ADD, merge, phrase_tf


class PostingSource(Protocol):
    def postings(self, column: str, term: str, stats: ColumnStats, positions: bool) -> TermPostings | None: ...
    def all_rows(self) -> np.ndarray: ...


@dataclass(frozen=True)
class QueryStats:
    """Exact collection statistics for one query: per column and per (column, term)."""

    columns: dict[str, ColumnStats]
    df: dict[tuple[str, str], int]

    def weight(self, column: str, term: str) -> float:
        stats = self.columns[column]
        return idf(stats.n_docs, self.df[(column, term)]) * (stats.k1 + 1.0)


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


class Evaluator:
    """Evaluates bound trees against one source with fixed statistics."""

    def __init__(self, source: PostingSource, stats: QueryStats) -> None:
        self.source = source
        self.stats = stats
        self.metrics = EvalMetrics()

    def evaluate(self, node: BoundQuery) -> Hits:
        if isinstance(node, BoundTerms):
            return self._terms(node)
        if isinstance(node, BoundPhrase):
            return self._phrase(node)
        if isinstance(node, BoundBoolean):
            return self._boolean(node)
        if isinstance(node, BoundBoost):
            positive = self.evaluate(node.positive)
            if not len(positive):
                return positive
            return _combine(BOOST, positive, self.evaluate(node.negative), node.negative_boost)
        raise TypeError(f"not a bound query node: {node!r}")

    def _postings(self, column: str, term: str, positions: bool = False) -> TermPostings | None:
        if self.stats.df.get((column, term), 0) == 0:
            return None
        tp = self.source.postings(column, term, self.stats.columns[column], positions)
        if tp is not None:
            self.metrics.terms_read += 1
            self.metrics.postings_read += len(tp.rows)
        return tp

    def _term_hits(self, column: str, term: str) -> Hits:
        tp = self._postings(column, term)
        if tp is None or not len(tp.rows):
            return Hits.empty()
        return Hits(tp.rows, term_scores(tp.tfs, tp.norms, self.stats.weight(column, term)))

    def _terms(self, node: BoundTerms) -> Hits:
        acc: Hits | None = None
        group_rows: list[np.ndarray] = []
        for group in node.groups:
            matched: Hits | None = None
            for term in group:
                hits = self._term_hits(node.column, term)
                if not len(hits):
                    continue
                # The first term's scores stand alone (0.0 + s == s for s > 0).
                acc = hits if acc is None else _combine(UNION_ADD, acc, hits)
                matched = hits if matched is None else _combine(UNION_ADD, matched, hits)
            if node.require_all:
                if matched is None:
                    return Hits.empty()
                group_rows.append(matched.rows)
        if acc is None:
            return Hits.empty()
        if node.require_all and len(group_rows) > 1:
            keep = group_rows[0]
            for rows in group_rows[1:]:
                keep = np.intersect1d(keep, rows, assume_unique=True)
            mask = np.isin(acc.rows, keep, assume_unique=True)
            acc = Hits(acc.rows[mask], acc.scores[mask])
        if node.boost != 1.0:
            acc = Hits(acc.rows, acc.scores * node.boost)
        return acc

    def _phrase(self, node: BoundPhrase) -> Hits:
        if not node.terms:
            return Hits.empty()
        distinct = list(dict.fromkeys(node.terms))
        postings = {}
        for term in distinct:
            tp = self._postings(node.column, term, positions=True)
            if tp is None or not len(tp.rows):
                return Hits.empty()
            postings[term] = tp
        candidates = postings[distinct[0]].rows
        for term in distinct[1:]:
            candidates = np.intersect1d(candidates, postings[term].rows, assume_unique=True)
        if not len(candidates):
            return Hits.empty()
        n = len(node.terms)
        starts = np.empty((n, len(candidates)), dtype=np.int64)
        ends = np.empty((n, len(candidates)), dtype=np.int64)
        chunks, base = [], 0
        bases: dict[str, int] = {}
        for term, tp in postings.items():
            bases[term] = base
            chunks.append(tp.positions)
            base += len(tp.positions)
        for k, term in enumerate(node.terms):
            tp = postings[term]
            idx = np.searchsorted(tp.rows, candidates)
            starts[k] = tp.pos_offsets[idx] + bases[term]
            ends[k] = tp.pos_offsets[idx + 1] + bases[term]
        tf = phrase_tf(starts, ends, np.concatenate(chunks), node.slop)
        hit = tf > 0
        if not hit.any():
            return Hits.empty()
        rows = candidates[hit]
        first = postings[node.terms[0]]
        norms = first.norms[np.searchsorted(first.rows, rows)]
        stats = self.stats.columns[node.column]
        idf_sum = 0.0
        for term in node.terms:
            idf_sum += idf(stats.n_docs, self.stats.df[(node.column, term)])
        scores = term_scores(tf[hit].astype(np.uint32), norms, idf_sum * (stats.k1 + 1.0))
        if node.boost != 1.0:
            scores = scores * node.boost
        return Hits(rows, scores)

    def _boolean(self, node: BoundBoolean) -> Hits:
        if node.must:
            first = self.evaluate(node.must[0])
            acc = Hits(first.rows, 0.0 + first.scores)
            for clause in node.must[1:]:
                if not len(acc):
                    return acc
                acc = _combine(INTERSECT_ADD, acc, self.evaluate(clause))
            for clause in node.should:
                if not len(acc):
                    return acc
                acc = _combine(ADD_PRESENT, acc, self.evaluate(clause))
        elif node.should:
            acc = Hits.empty()
            for clause in node.should:
                acc = _combine(UNION_ADD, acc, self.evaluate(clause))
        else:
            rows = self.source.all_rows()
            acc = Hits(rows, np.zeros(len(rows), dtype=np.float64))
        for clause in node.must_not:
            if not len(acc):
                return acc
            acc = _combine(SUBTRACT, acc, self.evaluate(clause))
        return acc
