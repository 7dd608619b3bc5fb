"""score_explain(): why a returned row has its score, as one JSON document per row.

Like Lucene's explain, but exact: the numbers come from the search's own pieces — the
bound query and :class:`QueryStats` the search used, :func:`term_scores`, :func:`norms`,
:func:`idf` and the :class:`Evaluator` for every node's score — evaluated only at the
rows the statement returns, vectorized per node over those rows. Re-adding them in the
canonical order of :mod:`.evaluate` gives ``score()`` bit for bit:

- ``terms`` (Match, Prefix, fuzzy Match): ``groups`` of terms, one group per query term
  (a fuzzy or prefix term's group holds its expansions). Each term has ``tf``, ``df``,
  ``idf``, ``weight = idf * (k1 + 1)`` and ``contribution = (weight * tf) / (tf + norm)``
  where ``norm = k1 * ((1 - b) + (b * dl) / avgdl)`` (``N``, ``avgdl``, ``k1``, ``b``, ``dl``
  on the node). ``sum`` = 0.0 + each contribution with tf > 0, group by group, in order;
  ``score = sum * boost``. With ``operator`` "and" every group needs a term with tf > 0.
- ``phrase``: ``tf`` = the phrase's matches (docs/design.md: "Compound queries"; ``in_order``
  says which rule); ``idf_sum`` = 0.0 + each term's idf (one per position); ``weight =
  idf_sum * (k1 + 1)``; ``score = (weight * tf) / (tf + norm) * boost``. A phrase prefix
  (``query_term`` ``wo*``) has one entry in ``phrases`` per expansion, each with those
  fields and ``contribution = (weight * tf) / (tf + norm)``; ``sum`` = 0.0 + each
  contribution with tf > 0, in order; ``score = sum * boost``.
- ``boolean``: ``score`` = 0.0 + each MUST clause's score + each matched SHOULD clause's
  score, in order; a matched MUST_NOT clause would have excluded the row.
- ``boost``: ``score = positive - negative_boost * negative`` if ``negative`` matched, else
  ``positive``.

Every node has ``matched`` and ``score`` (0.0 when not matched). The document is
``{"score": ..., "matched": ..., "explanation": <node>}``; ``score`` is the row's score()
(0.0 for a row kept only by a relational OR).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..analysis import Analyzer
from ..analysis.analyzer import columns_read, split_last_word
from ..errors import PlanError
from ..index.bm25 import idf, norms
from ..index.transient import TransientIndex
from ..kernels.bm25 import term_scores
from ..query.bound import (
    BoundBoolean,
    BoundPhrase,
    BoundQuery,
    BoundTerms,
    bound_leaves,
    query_terms,
)
from ..query.tree import Match, MultiMatch, Phrase, Prefix, Query, leaves
from ..storage.snapshot import TableSnapshot
from ..storage.sources.foreign import ForeignTable
from .base import ExecutionPlan
from .evaluate import Evaluator, QueryStats
from .flat_scan_search import _BatchSource

Part = str | pa.Array  # a JSON document under construction: constants and per-row strings


def _q(text: str) -> str:
    """A JSON string literal (ensure_ascii off: terms stay readable)."""
    return json.dumps(text, ensure_ascii=False)


def _float(value: float) -> str:
    """One float as JSON: Python's shortest round-trip repr (``-0.0`` keeps its sign)."""
    return json.dumps(float(value))


def _floats(values: np.ndarray) -> pa.Array:
    """Shortest round-trip decimal text of float64 values (parsed back bit for bit)."""
    text = pc.cast(pa.array(values, pa.float64()), pa.string())
    if len(values):
        special = np.signbit(values) & (values == 0.0) | ~np.isfinite(values)
        if special.any():
            spelled = np.where(np.isnan(values), "NaN", np.where(values > 0, "Infinity", "-Infinity"))
            spelled = np.where(values == 0.0, "-0.0", spelled)
            text = pc.if_else(pa.array(special), pa.array(spelled.tolist(), pa.string()), text)
    return text


def _ints(values: np.ndarray) -> pa.Array:
    return pc.cast(pa.array(values, pa.int64()), pa.string())


def _bools(values: np.ndarray) -> pa.Array:
    return pc.if_else(pa.array(values, pa.bool_()), "true", "false")


class _Document:
    """Parts of one JSON document per row; adjacent constants are merged."""

    def __init__(self) -> None:
        self.parts: list[Part] = []

    def add(self, part: Part) -> None:
        if isinstance(part, str) and self.parts and isinstance(self.parts[-1], str):
            self.parts[-1] += part
        else:
            self.parts.append(part)

    def field(self, name: str, value: Part, first: bool = False) -> None:
        self.add(("" if first else ", ") + _q(name) + ": ")
        self.add(value)

    def render(self, n_rows: int) -> pa.Array:
        if not n_rows:
            return pa.array([], pa.string())
        parts = [pa.scalar(p, pa.string()) if isinstance(p, str) else p for p in self.parts]
        if len(parts) == 1:
            return pa.array([self.parts[0]] * n_rows, pa.string()) if isinstance(self.parts[0], str) else parts[0]
        return pc.binary_join_element_wise(*parts, "")


class _Explainer:
    """Explains ``bound`` at ``rows`` (ascending, distinct) over ``evaluator``'s source."""

    def __init__(
        self,
        evaluator: Evaluator,
        rows: np.ndarray,
        dl: dict[str, np.ndarray],
        query_terms_of: dict[int, tuple[str, ...]],
    ) -> None:
        self.evaluator = evaluator
        self.stats = evaluator.stats
        self.rows = rows
        self.dl = dl
        self.query_terms_of = query_terms_of
        self.doc = _Document()

    def _scores(self, node: BoundQuery) -> tuple[np.ndarray, np.ndarray]:
        """(matched bool, score float64) of ``node`` at every row, from the evaluator."""
        hits = self.evaluator.evaluate(node, within=self.rows)
        matched = np.zeros(len(self.rows), dtype=np.bool_)
        scores = np.zeros(len(self.rows), dtype=np.float64)
        at = np.searchsorted(self.rows, hits.rows)
        matched[at] = True
        scores[at] = hits.scores
        return matched, scores

    def _column_fields(self, column: str) -> np.ndarray:
        stats = self.stats.columns[column]
        doc = self.doc
        doc.field("column", _q(column))
        doc.field("N", str(stats.n_docs))
        doc.field("avgdl", _float(stats.avgdl))
        doc.field("k1", _float(stats.k1))
        doc.field("b", _float(stats.b))
        dl = self.dl[column]
        doc.field("dl", _ints(dl))
        row_norms = norms(dl, stats)
        doc.field("norm", _floats(row_norms))
        return row_norms

    def node(self, node: BoundQuery) -> np.ndarray:
        """Write ``node``'s explanation; returns its matched mask."""
        matched, scores = self._scores(node)
        doc = self.doc
        doc.add("{")
        if isinstance(node, BoundTerms):
            doc.field("type", '"terms"', first=True)
            self._terms(node)
        elif isinstance(node, BoundPhrase):
            doc.field("type", '"phrase"', first=True)
            self._phrase(node)
        elif isinstance(node, BoundBoolean):
            doc.field("type", '"boolean"', first=True)
            for name, clauses in (("must", node.must), ("should", node.should), ("must_not", node.must_not)):
                doc.field(name, "[")
                for i, clause in enumerate(clauses):
                    if i:
                        doc.add(", ")
                    self.node(clause)
                doc.add("]")
        else:
            doc.field("type", '"boost"', first=True)
            doc.field("negative_boost", _float(node.negative_boost))
            doc.field("positive", "")
            self.node(node.positive)
            doc.field("negative", "")
            self.node(node.negative)
        doc.field("matched", _bools(matched))
        doc.field("score", _floats(scores))
        doc.add("}")
        return matched

    def _terms(self, node: BoundTerms) -> None:
        doc = self.doc
        doc.field("operator", '"and"' if node.require_all else '"or"')
        doc.field("boost", _float(node.boost))
        row_norms = self._column_fields(node.column)
        stats = self.stats.columns[node.column]
        total = np.zeros(len(self.rows), dtype=np.float64)
        labels = self.query_terms_of.get(id(node), ())
        doc.field("groups", "[")
        for g, group in enumerate(node.groups):
            doc.add(", {" if g else "{")
            doc.field("query_term", _q(labels[g]) if g < len(labels) else "null", first=True)
            doc.field("terms", "[")
            for t, term in enumerate(group):
                tf = np.zeros(len(self.rows), dtype=np.int64)
                contribution = np.zeros(len(self.rows), dtype=np.float64)
                df = self.stats.df.get((node.column, term), 0)
                weight = self.stats.weight(node.column, term) if df else 0.0
                tp = self.evaluator.source.postings(node.column, term, stats, False, self.rows) if df else None
                if tp is not None and len(tp.rows):
                    at = np.searchsorted(self.rows, tp.rows)
                    tf[at] = tp.tfs
                    contribution[at] = term_scores(tp.tfs, row_norms[at], weight)
                    total = np.where(tf > 0, total + contribution, total)
                doc.add(", {" if t else "{")
                doc.field("term", _q(term), first=True)
                doc.field("tf", _ints(tf))
                doc.field("df", str(df))
                doc.field("idf", _float(idf(stats.n_docs, df) if df else 0.0))
                doc.field("weight", _float(weight))
                doc.field("contribution", _floats(contribution))
                doc.add("}")
            doc.add("]}")
        doc.add("]")
        doc.field("sum", _floats(total))

    def _phrase(self, node: BoundPhrase) -> None:
        doc = self.doc
        doc.field("terms", "[" + ", ".join(_q(t) for t in node.terms) + "]")
        doc.field("slop", str(node.slop))
        doc.field("in_order", "true" if node.in_order else "false")
        doc.field("boost", _float(node.boost))
        row_norms = self._column_fields(node.column)
        if node.expansions is None:
            self._one_phrase(node, node.terms, row_norms)
            return
        labels = self.query_terms_of.get(id(node), ())
        doc.field("query_term", _q(labels[0]) if labels else "null")
        total = np.zeros(len(self.rows), dtype=np.float64)
        doc.field("phrases", "[")
        for i, terms in enumerate(node.phrases()):
            doc.add(", {" if i else "{")
            doc.field("terms", "[" + ", ".join(_q(t) for t in terms) + "]", first=True)
            tf, contribution = self._one_phrase(node, terms, row_norms)
            doc.field("contribution", _floats(contribution))
            total = np.where(tf > 0, total + contribution, total)
            doc.add("}")
        doc.add("]")
        doc.field("sum", _floats(total))

    def _one_phrase(
        self, node: BoundPhrase, terms: tuple[str, ...], row_norms: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Write one phrase's df, idf, weight and tf; returns (tf, unboosted score) per row."""
        doc = self.doc
        stats = self.stats.columns[node.column]
        dfs = [self.stats.df.get((node.column, t), 0) for t in terms]
        doc.field("df", "[" + ", ".join(str(d) for d in dfs) + "]")
        doc.field("idf", "[" + ", ".join(_float(idf(stats.n_docs, d)) for d in dfs) + "]")
        idf_sum = self.evaluator.phrase_idf(node, terms)
        doc.field("idf_sum", _float(idf_sum))
        weight = idf_sum * (stats.k1 + 1.0)
        doc.field("weight", _float(weight))
        tf = np.zeros(len(self.rows), dtype=np.int64)
        contribution = np.zeros(len(self.rows), dtype=np.float64)
        found = self.evaluator.phrase_matches(node, self.rows, terms) if all(dfs) and terms else None
        if found is not None:
            at = np.searchsorted(self.rows, found[0])
            tf[at] = found[1]
            contribution[at] = term_scores(found[1].astype(np.uint32), row_norms[at], weight)
        doc.field("tf", _ints(tf))
        return tf, contribution


def _query_terms(tree: Query, bound: BoundQuery, analyzers: dict[str, Analyzer]) -> dict[int, tuple[str, ...]]:
    """Per bound terms leaf, the query term each group stands for (``alpah~1``, ``alph*``);
    per phrase prefix, its prefix (``wo*``)."""
    out: dict[int, tuple[str, ...]] = {}
    bound_iter = iter(bound_leaves(bound))
    for leaf in leaves(tree):
        analyzer = analyzers.get(leaf.column) if leaf.column is not None else None
        count = 1
        if isinstance(leaf, Phrase) and analyzer is not None:  # (one bound phrase per analysis)
            text = split_last_word(leaf.text)[0] if leaf.prefix else leaf.text
            count = len(analyzer.variants(text, leaf.language))
        bs = [next(bound_iter) for _ in range(count)]
        if analyzer is None:
            continue
        if isinstance(leaf, Phrase) and leaf.prefix:
            word = split_last_word(leaf.text)[1]
            label = ((analyzer.normalize(word) + "*") if word is not None else "*",)
            out.update((id(b), label) for b in bs)
        elif isinstance(leaf, Prefix):
            out[id(bs[0])] = (analyzer.normalize(leaf.prefix) + "*",)
        elif isinstance(leaf, Match):
            suffix = f"~{leaf.fuzziness}" if leaf.fuzziness else ""
            out[id(bs[0])] = tuple("|".join(word) + suffix for word in analyzer.match_groups(leaf.text, leaf.language))
    return out


def explain_search(
    plan: ExecutionPlan,
    snapshot: TableSnapshot | ForeignTable,
    query: Query,
    analyzers: dict[str, Analyzer],
    row_ids: Sequence[int] | np.ndarray,
) -> pa.Array:
    """score_explain() of rows a plan (already run) returned for ``query`` on ``snapshot``,
    each column analyzed by ``analyzers[column]`` as the search analyzed it."""
    bound, stats = search_basis(plan)

    return explain_rows(query, bound, stats, analyzers, snapshot.take, row_ids)


def search_basis(plan: ExecutionPlan) -> tuple[BoundQuery, QueryStats]:
    """The bound query and statistics a plan's search operator scored with (after it ran)."""
    pending = [plan]
    while pending:
        node = pending.pop(0)
        bound, stats = getattr(node, "bound", None), getattr(node, "stats", None)
        if isinstance(stats, QueryStats) and bound is not None:
            return bound, stats
        pending.extend(node.children())
    raise PlanError(f"no search operator under {plan.display()} has scored yet")


def explain_rows(
    tree: Query,
    bound: BoundQuery,
    stats: QueryStats,
    analyzers: dict[str, Analyzer],
    fetch: Callable[[np.ndarray, list[str]], pa.Table],
    row_ids: Sequence[int] | np.ndarray,
) -> pa.Array:
    """One JSON explanation per entry of ``row_ids`` (any order, repeats allowed).

    ``fetch(rows, columns)`` returns the query columns' values at ``rows`` (ascending):
    they are analyzed again (the index holds what the analyzer made of them), so the
    rows' postings are exactly the search's. A row the query does not match (one kept
    by a relational OR) explains as unmatched, with score 0.0.
    """
    if isinstance(tree, MultiMatch):
        tree = tree.expand()
    requested = np.asarray(row_ids, dtype=np.int64)
    rows = np.unique(requested)
    terms = query_terms(bound)
    columns = list(terms)
    values = fetch(rows, columns_read(analyzers, columns)) if columns else None
    positions = {leaf.column for leaf in bound_leaves(bound) if isinstance(leaf, BoundPhrase)}
    indexes, dl = {}, {}
    for column in columns:
        assert values is not None
        stream = analyzers[column].analyze_rows(values, column, seed=terms[column])
        indexes[column] = TransientIndex(stream, rows, terms[column], column in positions)
        dl[column] = stream.dl
    explainer = _Explainer(Evaluator(_BatchSource(indexes, rows), stats), rows, dl, _query_terms(tree, bound, analyzers))
    matched, scores = explainer._scores(bound)
    doc = explainer.doc
    doc.add("{")
    doc.field("score", _floats(np.where(matched, scores, 0.0)), first=True)
    doc.field("matched", _bools(matched))
    doc.field("explanation", "")
    explainer.node(bound)
    doc.add("}")
    return doc.render(len(rows)).take(pa.array(np.searchsorted(rows, requested)))
