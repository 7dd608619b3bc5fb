"""FlatScanSearch: answer any query by streaming the table's batches (docs/design.md: "The
operators").

No index is needed and no query shape is refused, so it is the plan every other plan
falls back to. Memory is bounded by the batch size and k:

1. a statistics pass tokenizes each batch once and keeps only counts — per column N and
   tokens, df of the query's terms, and each fuzzy/prefix leaf's best expansions;
2. the query is bound with those global numbers (§5.1, §5.3);
3. a scoring pass re-tokenizes each batch, indexes just the bound terms, evaluates the
   tree on the batch and folds its top-k into a running top-k.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from itertools import chain
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

from ..analysis import Analyzer, TokenStream
from ..errors import FtsNotice
from ..analysis.analyzer import columns_read, split_last_word
from ..index.bm25 import ColumnStats
from ..index.expansion import fuzzy_candidates, gram_candidates, prefix_candidates
from ..index.term_postings import TermPostings
from ..index.transient import TransientIndex, lookup_terms
from ..query.bind import bind
from ..query.bound import BoundPhrase, bound_leaves, query_terms
from ..query.tree import Match, Phrase, Prefix, Query, leaves
from .base import ExecutionPlan, search_batch
from .evaluate import Evaluator, Hits, QueryStats
from .ordering import ordered, shown_k

Scan = Callable[[list[str]], Iterator[pa.RecordBatch]]


@dataclass
class _ScanStats:
    """What the statistics pass learns about one column."""

    n_docs: int = 0
    total_tokens: int = 0
    df: dict[str, int] = field(default_factory=dict)
    fuzzy: dict[tuple, set[tuple[int, str]]] = field(default_factory=dict)


def _present_vocab(stream: TokenStream) -> pa.Array:
    counts = np.bincount(stream.term, minlength=len(stream.vocab))
    return stream.vocab.filter(pa.array(counts > 0))


# An expanding leaf's request: ("fuzzy", term, fuzziness, prefix_length, max_expansions),
# ("prefix", normalized prefix, max_expansions) or ("grams", a lone character).
Expanding = tuple


def term_requests(
    query: Query, analyzers: dict[str, Analyzer]
) -> tuple[dict[str, list[str]], dict[str, list[Expanding]]]:
    """Per column of ``analyzers`` (leaves on other columns are left out): the query's
    exact terms (distinct, in first-use order), and its fuzzy/prefix expansion requests
    (distinct) — what a pass over rows must find."""
    exact: dict[str, list[str]] = {c: [] for c in analyzers}
    expanding: dict[str, list[Expanding]] = {c: [] for c in analyzers}
    for leaf in leaves(query):
        analyzer = analyzers.get(leaf.column)
        if analyzer is None:
            continue
        if isinstance(leaf, Prefix):
            expanding[leaf.column].append(("prefix", analyzer.normalize(leaf.prefix), leaf.max_expansions))
            continue
        if isinstance(leaf, Phrase) and leaf.prefix:
            head, last = split_last_word(leaf.text)
            exact[leaf.column].extend(chain.from_iterable(analyzer.variants(head, leaf.language)))
            if last is not None:
                expanding[leaf.column].append(("prefix", analyzer.normalize(last), leaf.max_expansions))
            continue
        terms = list(chain.from_iterable(analyzer.variants(leaf.text, leaf.language)))
        if isinstance(leaf, Match) and leaf.fuzziness:
            for t in dict.fromkeys(terms):
                expanding[leaf.column].append(("fuzzy", t, leaf.fuzziness, leaf.prefix_length, leaf.max_expansions))
            continue
        char = analyzer.lone(terms)
        if char is not None:
            expanding[leaf.column].append(("grams", char))
        exact[leaf.column].extend(terms)
    return (
        {c: list(dict.fromkeys(ts)) for c, ts in exact.items()},
        {c: list(dict.fromkeys(ks)) for c, ks in expanding.items()},
    )


def expand(stream: TokenStream, requests: list[Expanding]) -> dict[Expanding, list[tuple[int, str]]]:
    """Each request's best expansions among the terms that occur in ``stream`` (the best
    of every source together are the global best, docs/design.md: "Compound queries")."""
    if not requests:
        return {}
    vocab = _present_vocab(stream)
    kinds = {"prefix": prefix_candidates, "fuzzy": fuzzy_candidates, "grams": gram_candidates}
    return {key: kinds[key[0]](vocab, *key[1:]) for key in requests}


def _count_df(stream: TokenStream, terms: list[str], into: dict[str, int]) -> None:
    """Add each term's number of rows in this batch to ``into``."""
    ids = lookup_terms(stream, terms)
    present = ids >= 0
    if not present.any():
        return
    remap = np.full(len(stream.vocab), -1, dtype=np.int64)
    remap[ids[present]] = np.flatnonzero(present)
    mapped = remap[stream.term]
    keep = mapped >= 0
    pairs = np.unique(stream.row[keep].astype(np.int64) * len(terms) + mapped[keep])
    counts = np.bincount(pairs % len(terms), minlength=len(terms))
    for term, count in zip(terms, counts.tolist()):
        if count:
            into[term] = into.get(term, 0) + count


class _ScanBindContext:
    """Binding against what the statistics pass saw (the table's live vocabulary)."""

    def __init__(self, analyzers: dict[str, Analyzer], stats: dict[str, _ScanStats]) -> None:
        self.analyzers = analyzers
        self.stats = stats

    def analyzer(self, column: str) -> Analyzer:
        return self.analyzers[column]

    def fuzzy_candidates(self, column: str, term: str, fuzziness: int, prefix_length: int, max_expansions: int):
        found = self.stats[column].fuzzy.get(("fuzzy", term, fuzziness, prefix_length, max_expansions), set())
        return sorted(found)[:max_expansions]

    def prefix_candidates(self, column: str, prefix: str, max_expansions: int):
        found = self.stats[column].fuzzy.get(("prefix", prefix, max_expansions), set())
        return sorted(found)[:max_expansions]

    def gram_candidates(self, column: str, char: str):
        return sorted(self.stats[column].fuzzy.get(("grams", char), set()))


class _BatchSource:
    def __init__(self, indexes: dict[str, TransientIndex], rows: np.ndarray) -> None:
        self.indexes = indexes
        self.rows = rows

    def postings(
        self, column: str, term: str, stats: ColumnStats, positions: bool, within: np.ndarray | None = None
    ) -> TermPostings | None:
        return self.indexes[column].postings(term, stats, positions, within)

    def all_rows(self) -> np.ndarray:
        return self.rows


class FlatScanSearch(ExecutionPlan):
    """Search by scanning: exact for every query shape, memory bounded by batch and k."""

    ordered_distinct = True
    CHOSEN_BECAUSE = "scan"

    @staticmethod
    def unmet(
        table: object, columns: tuple[str, ...], phrase_columns: frozenset[str] = frozenset(),
        residual_row_limit: int = 0,
    ) -> list[str]:
        """Nothing: a scan answers every query shape on any table."""
        return []

    def __init__(
        self,
        query: Query,
        scan: Scan,
        analyzers: dict[str, Analyzer],
        params: dict[str, tuple[float, float]],
        k: int | None,
        include: np.ndarray | None = None,
        label: str = "",
        reason: str = "",
        advice: str = "",
        notice_rows: int | None = None,
        by_score: bool = True,
    ) -> None:
        """``advice`` (what would let the query use an index) is issued as an
        :class:`FtsNotice` once the scan has passed ``notice_rows`` rows."""
        super().__init__()
        self.query = query
        self.scan = scan
        self.analyzers = analyzers
        self.params = params
        self.k = k
        self.include = include
        self.label = label
        self.reason = reason
        self.advice = advice
        self.notice_rows = notice_rows
        self.by_score = by_score  # (False, with k all: in row-id order, see ordering.ordered)
        self.columns = list(analyzers)
        # (and the columns naming each row's language, for analyzers that stem by it)
        self.reads = columns_read(analyzers, self.columns)

    def display(self) -> str:
        limit = shown_k(self.k, self.by_score)
        reason = f", reason={self.reason}" if self.reason else ""
        advice = f", advice: {self.advice}" if self.advice else ""
        return f"FlatScanSearch: table={self.label}, columns={self.columns}, k={limit}{reason}{advice}"

    # -- pass 1 ------------------------------------------------------------------------
    def _collect_stats(self) -> dict[str, _ScanStats]:
        exact, expanding = term_requests(self.query, self.analyzers)
        stats = {c: _ScanStats() for c in self.columns}
        for batch in self.scan(self.reads):
            self.metrics.add("rows_scanned", batch.num_rows)
            for column in self.columns:
                st = stats[column]
                stream = self.analyzers[column].analyze_rows(batch, column)
                st.n_docs += int(np.count_nonzero(stream.dl))
                st.total_tokens += int(stream.dl.sum(dtype=np.int64))
                wanted = list(exact[column])
                for key, found in expand(stream, expanding[column]).items():
                    st.fuzzy.setdefault(key, set()).update(found)
                    wanted.extend(t for _, t in found if t not in wanted)
                _count_df(stream, wanted, st.df)
        scanned = int(self.metrics.values.get("rows_scanned", 0))
        if self.advice and self.notice_rows is not None and scanned > self.notice_rows:
            warnings.warn(FtsNotice(f"MATCH scanned {scanned:,} rows of {self.label}: {self.advice}"), stacklevel=2)
        return stats

    # -- pass 2 ------------------------------------------------------------------------
    def execute(self) -> Iterator[pa.RecordBatch]:
        with self.metrics.timer():
            scan_stats = self._collect_stats()
            bound = bind(self.query, _ScanBindContext(self.analyzers, scan_stats))
            terms = query_terms(bound)
            positions = {leaf.column for leaf in bound_leaves(bound) if isinstance(leaf, BoundPhrase)}
            stats = QueryStats(
                columns={
                    c: ColumnStats(s.n_docs, s.total_tokens, *self.params[c]) for c, s in scan_stats.items()
                },
                df={(c, t): scan_stats[c].df.get(t, 0) for c in terms for t in terms[c]},
            )
            self.bound, self.stats = bound, stats  # what the scan scored with (score_explain)
            best_rows = np.zeros(0, np.int64)
            best_scores = np.zeros(0, np.float64)
            everything: list[Hits] = []  # without k, every match is kept and ordered once
            for batch in self.scan(self.reads):
                row_ids = batch.column(0).to_numpy()
                indexes = {}
                for column in self.columns:
                    col_terms = terms.get(column, [])
                    stream = self.analyzers[column].analyze_rows(batch, column, seed=col_terms)
                    indexes[column] = TransientIndex(stream, row_ids, col_terms, column in positions)
                evaluator = Evaluator(_BatchSource(indexes, row_ids), stats)
                hits = evaluator.evaluate(bound)
                self.metrics.add("postings_read", evaluator.metrics.postings_read)
                if self.include is not None and len(hits):
                    keep = np.isin(hits.rows, self.include)
                    hits = Hits(hits.rows[keep], hits.scores[keep])
                if not len(hits):
                    continue
                if self.k is None:
                    everything.append(hits)
                    continue
                rows = np.concatenate([best_rows, hits.rows])
                scores = np.concatenate([best_scores, hits.scores])
                idx = ordered(rows, scores, self.k)
                best_rows, best_scores = rows[idx], scores[idx]
            if everything:
                rows = np.concatenate([h.rows for h in everything])
                scores = np.concatenate([h.scores for h in everything])
                idx = ordered(rows, scores, None, self.by_score)
                best_rows, best_scores = rows[idx], scores[idx]
            self.metrics.add("rows_out", len(best_rows))
        yield search_batch(best_rows, best_scores)
