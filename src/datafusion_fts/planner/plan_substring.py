"""The rule choosing between an n-gram index and a scan for the user's substring predicates
over one column (docs/design.md: "Substring search"): the index where the predicates ask
for some trigram and few rows hold what they ask, else DataFusion's scan, with the
reason EXPLAIN shows."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..analysis import analyzer_for
from ..analysis.analyzer import Analyzer
from ..operators.ngram_candidates import Grams, NgramCandidates, gram_text
from ..query.substring import AllOf, AnyOf, Need
from ..storage.files.manifest import ngram_key
from ..storage.snapshot import TableSnapshot
from .plan_search import Catalog


@dataclass(frozen=True)
class SubstringPlan:
    """The index's operator, or None (scan), and why."""

    operator: NgramCandidates | None
    reason: str


def plan_substring(snapshot: TableSnapshot, catalog: Catalog, column: str, need: Need, shown: str,
                   max_share: float) -> SubstringPlan:
    """How to find the rows of ``snapshot`` whose ``column`` may meet ``need`` (the
    requirement of the predicates ``shown``): the index while the rows it estimates hold
    the grams (the fewest of an AND, all of an OR) and its unindexed tail are at most
    ``max_share`` of the live rows (``fts.substring_candidate_share``: past it, fetching
    the candidates by row id costs more than DataFusion's scan of the column)."""
    index = snapshot.meta.ngram(column)
    assert index is not None
    grams = _grams(need, analyzer_for(index.analyzer))
    if grams is None:
        return SubstringPlan(None, f"scan: no literal of 3 characters in [{shown}]")
    segments = catalog.segment_set(snapshot, ngram_key(column))
    terms = sorted(_terms(grams))
    df = dict(zip(terms, segments.lookup(terms)[0]))
    grams = _rarest_first(grams, df)
    tail = _live_tail(snapshot, ngram_key(column))
    live = snapshot.meta.live_rows + sum(b.num_rows for b in snapshot.fresh)
    estimate = _estimate(grams, df) + len(tail)
    if estimate > max_share * live:
        return SubstringPlan(None, f"scan: about {estimate:,} of {live:,} rows hold {gram_text(grams)}")
    operator = NgramCandidates(snapshot.name, column, grams, segments, tail, shown)
    return SubstringPlan(operator, f"n-gram index: about {estimate:,} of {live:,} rows")


def _grams(need: Need, analyzer: Analyzer) -> Grams:
    """``need`` with each string cut into its distinct trigrams (as the index reads text)."""
    if need is None:
        return None
    if isinstance(need, str):
        vocab = analyzer.analyze(pa.array([need], pa.large_string())).vocab.to_pylist()
        return tuple(vocab) or None
    parts = [_grams(p, analyzer) for p in need.parts]
    if isinstance(need, AnyOf):
        return None if any(p is None for p in parts) else AnyOf(tuple(parts))
    kept = tuple(p for p in parts if p is not None)
    return None if not kept else kept[0] if len(kept) == 1 else AllOf(kept)


def _terms(grams: Grams) -> set[str]:
    if grams is None:
        return set()
    if isinstance(grams, tuple):
        return set(grams)
    return set().union(*(_terms(p) for p in grams.parts))


def _rarest_first(grams: Grams, df: dict[str, int]) -> Grams:
    """The grams of an AND in ascending document frequency (each later one read only at
    the rows the ones before left), the parts of an AND by their estimates."""
    if grams is None or isinstance(grams, tuple):
        return tuple(sorted(grams, key=lambda g: (df[g], g))) if grams else grams
    parts = tuple(_rarest_first(p, df) for p in grams.parts)
    if isinstance(grams, AllOf):
        parts = tuple(sorted(parts, key=lambda p: _estimate(p, df)))
    return type(grams)(parts)


def _estimate(grams: Grams, df: dict[str, int]) -> int:
    """At most how many indexed rows hold ``grams``: the fewest of an AND, the sum of an OR."""
    if isinstance(grams, tuple):
        return min(df[g] for g in grams)
    assert grams is not None
    estimates = [_estimate(p, df) for p in grams.parts]
    return min(estimates) if isinstance(grams, AllOf) else sum(estimates)


def _live_tail(snapshot: TableSnapshot, key: str) -> np.ndarray:
    """The live rows no segment of the index holds, ascending."""
    gaps = snapshot.uncovered(key)
    if not gaps:
        return np.zeros(0, dtype=np.int64)
    rows = np.concatenate([np.arange(lo, hi + 1, dtype=np.int64) for lo, hi in gaps])
    deleted = snapshot.deleted
    return rows[~np.isin(rows, deleted, assume_unique=True)] if len(deleted) else rows
