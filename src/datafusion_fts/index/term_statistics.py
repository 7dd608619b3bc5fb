"""Phase one of a distributed search: the exact statistics of a query, gathered in parts.

Each holder of ranked parts (a worker's share, the driver's in-memory tiers) reports, for
the query's columns and terms, its live-row count N, token total and document
frequencies, and for each fuzzy or prefix leaf its own best ``max_expansions``
candidates with their frequencies. Sums of the reports are the whole table's numbers
(docs/design.md: "Statistics and BM25"). The global expansion choice is the best ``max_expansions``
of the union (§5.3); a chosen term is among the reported candidates of every holder that has it
(fewer than ``max_expansions`` terms rank before it anywhere), so its summed frequency is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

from .bm25 import ColumnStats
from .segment_set import SegmentSet


@dataclass(frozen=True)
class Expansion:
    """A fuzzy (``fuzziness`` > 0) or prefix (``fuzziness`` == -1) leaf's request, or a
    lone character's grams (``fuzziness`` == -2, every one)."""

    column: str
    term: str
    fuzziness: int
    prefix_length: int
    max_expansions: int


@dataclass(frozen=True)
class StatsRequest:
    terms: dict[str, tuple[str, ...]]  # column -> plain terms
    expansions: tuple[Expansion, ...]


@dataclass(frozen=True)
class StatsReply:
    columns: dict[str, tuple[int, int]]  # column -> (N, token total)
    df: dict[tuple[str, str], int]
    expansions: tuple[tuple[tuple[int, str, int], ...], ...]  # per request: (distance, term, df)


@dataclass(frozen=True)
class GlobalStats:
    columns: dict[str, ColumnStats]
    df: dict[tuple[str, str], int]
    expansions: dict[Expansion, list[tuple[int, str]]]


def _candidates(s: SegmentSet, e: Expansion) -> list[tuple[int, str]]:
    if e.fuzziness == -2:
        return s.gram_candidates(e.term)
    if e.fuzziness < 0:
        return s.prefix_candidates(e.term, e.max_expansions)
    return s.fuzzy_candidates(e.term, e.fuzziness, e.prefix_length, e.max_expansions)


def collect(sets: dict[str, SegmentSet], request: StatsRequest) -> StatsReply:
    """This holder's part of the statistics ``request`` asks for."""
    columns = {}
    for c, s in sets.items():
        stats = s.column_stats
        columns[c] = (stats.n_docs, stats.total_tokens)
    df = {}
    for c, terms in request.terms.items():
        for t, d in zip(terms, sets[c].lookup(terms)[0]):
            df[(c, t)] = d
    expansions = tuple(
        tuple((d, t, sets[e.column].df(t)) for d, t in _candidates(sets[e.column], e)) for e in request.expansions
    )
    return StatsReply(columns, df, expansions)


def merge(replies: list[StatsReply], request: StatsRequest, params: dict[str, tuple[float, float]]) -> GlobalStats:
    """The whole table's statistics from every holder's reply; ``params`` holds each
    column's (k1, b)."""
    columns = {}
    for c, (k1, b) in params.items():
        n = sum(r.columns[c][0] for r in replies if c in r.columns)
        total = sum(r.columns[c][1] for r in replies if c in r.columns)
        columns[c] = ColumnStats(n, total, k1, b)
    df = {key: sum(r.df[key] for r in replies) for c, terms in request.terms.items() for key in ((c, t) for t in terms)}
    expansions = {}
    for i, e in enumerate(request.expansions):
        found: dict[tuple[int, str], int] = {}
        for r in replies:
            for d, t, n in r.expansions[i]:
                found[(d, t)] = found.get((d, t), 0) + n
        chosen = sorted(found)[: e.max_expansions]
        expansions[e] = chosen
        for d, t in chosen:
            df.setdefault((e.column, t), found[(d, t)])
    return GlobalStats(columns, df, expansions)
