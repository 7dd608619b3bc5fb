"""A column's index as one searchable whole: its segments in ranking precedence.

docs/design.md: "Segment sets and ranked parts": segments are ordered by (from, to); each ranks only
the rows it holds that no earlier segment holds, i.e. rows after the last row already ranked. Rows
deleted since a segment was built are masked out of it. Statistics, postings and vocabulary all read
through those effective ranges, so overlapping ranges never count a row twice, deleted rows never
count, and scores do not depend on how rows were split.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa

from .bm25 import ColumnStats, block_bound_factors, norms
from .expansion import fuzzy_candidates, gram_candidates, prefix_candidates
from .segment import Segment
from .term_postings import TermPostings

# A column's codes over global ids [lo, hi) to count n rows by: (codes, keys, the id of the
# first code), or None (SegmentSet.count_by).
CodesOver = Callable[[int, int, int], "tuple[np.ndarray, pa.Array, int] | None"]

_NONE = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class RankedPart:
    """The local rows [lo, hi) of ``segment`` that it ranks, less ``deleted`` (local ids,
    ascending)."""

    segment: Segment
    lo: int
    hi: int
    deleted: np.ndarray = field(default_factory=lambda: _NONE)

    @cached_property
    def whole(self) -> bool:
        return self.lo == 0 and self.hi == self.segment.meta.count and not len(self.deleted)

    def posting_range(self, term_id: int) -> tuple[int, int]:
        offsets = self.segment.post_offsets  # (item() makes a Python int at half int()'s cost)
        a, b = offsets.item(term_id), offsets.item(term_id + 1)
        if self.lo == 0 and self.hi == self.segment.meta.count:
            return a, b
        return self.segment.rank(term_id, self.lo), self.segment.rank(term_id, self.hi)

    def df(self, term_id: int) -> int:
        """The term's postings at the live rows this part ranks."""
        a, b = self.posting_range(term_id)
        if len(self.deleted) and a < b:
            return b - a - len(self.segment.read(term_id, a, b, self.deleted, _NONE, False)[0])
        return b - a


def clip_part(part: RankedPart, lo_id: int, hi_id: int) -> RankedPart | None:
    """The rows of ``part`` with global ids in [lo_id, hi_id), or None if there are none."""
    base = part.segment.meta.base
    lo = max(part.lo, lo_id - base)
    hi = min(part.hi, hi_id - base)
    if lo >= hi:
        return None
    gone = part.deleted[np.searchsorted(part.deleted, lo) : np.searchsorted(part.deleted, hi)]
    return RankedPart(part.segment, lo, hi, gone)


def ranked_parts(segments: list[Segment], deleted: np.ndarray = _NONE) -> list[RankedPart]:
    """Each segment's effective range under the first-segment-ranks rule (§5.4), with the
    deleted rows (global ids, ascending) that fall in it and that it holds text of: a row
    it holds no text of (deleted before the segment was built, or empty) has no postings
    and no length to mask. After OPTIMIZE over a long history that is nearly every
    deleted row, which every read of a term would otherwise step through (20,000 live rows
    among 355,000 ids: 335,000 ids a term)."""
    parts = []
    last_ranked = -1  # the last row id ranked by an earlier segment (never last + 1: no overflow)
    for seg in sorted(segments, key=lambda s: (s.meta.lo, s.meta.hi)):
        if seg.meta.count == 0:
            continue
        first = max(seg.meta.base, last_ranked + 1) - seg.meta.base
        if first < seg.meta.count:
            lo_id, hi_id = seg.meta.base + first, seg.meta.base + seg.meta.count
            gone = deleted[np.searchsorted(deleted, lo_id) : np.searchsorted(deleted, hi_id)] - seg.meta.base
            parts.append(RankedPart(seg, first, seg.meta.count, gone[seg.dl[gone] > 0]))
        last_ranked = max(last_ranked, seg.meta.base + seg.meta.count - 1)
    return sorted(parts, key=lambda p: p.segment.meta.base + p.lo)


class SegmentSet:
    """Statistics, postings and vocabulary of one column over its ranked segment parts."""

    def __init__(self, segments: list[Segment], k1: float, b: float, deleted: np.ndarray = _NONE) -> None:
        self._init(ranked_parts(segments, deleted), k1, b)

    @classmethod
    def from_parts(cls, parts: list[RankedPart], k1: float, b: float) -> "SegmentSet":
        """A set over parts already ranked (disjoint, ascending): a share of a larger set,
        such as the parts one distributed worker ranks."""
        out = cls.__new__(cls)
        out._init(sorted(parts, key=lambda p: p.segment.meta.base + p.lo), k1, b)
        return out

    def _init(self, parts: list[RankedPart], k1: float, b: float) -> None:
        self.parts = parts
        self.k1 = k1
        self.b = b
        self._norms: dict[tuple[int, int], list[np.ndarray]] = {}
        self._bounds: dict[tuple[int, int], list[np.ndarray]] = {}
        self._vocab: list[pa.Array] | None = None

    @cached_property
    def column_stats(self) -> ColumnStats:
        """N and token total over the live rows this set ranks (fixed for its lifetime)."""
        n_docs = total = 0
        for p in self.parts:
            if p.whole:
                n_docs += p.segment.meta.n_docs
                total += p.segment.meta.total_tokens
                continue
            dl = p.segment.dl[p.lo : p.hi]
            n_docs += int(np.count_nonzero(dl))
            total += int(dl.sum(dtype=np.int64))
            gone = p.segment.dl[p.deleted]
            n_docs -= int(np.count_nonzero(gone))
            total -= int(gone.sum(dtype=np.int64))
        return ColumnStats(n_docs, total, self.k1, self.b)

    def df(self, term: str) -> int:
        return self.lookup((term,))[0][0]

    def lookup(self, terms: Sequence[str]) -> tuple[list[int], list[np.ndarray]]:
        """Each term's document frequency over the live rows of the parts, and per part
        the terms' ids in its segment (-1: absent): a query's terms in one pass."""
        dfs = [0] * len(terms)
        ids = []
        for p in self.parts:
            seg = p.segment
            offsets, whole = seg.post_offsets, p.whole
            part_ids = []
            for j, term in enumerate(terms):  # (loops: comprehensions cost a frame each)
                tid = seg.term_id(term)
                part_ids.append(tid)
                if tid < 0:
                    continue
                if whole:  # (the common part, without a call per term)
                    dfs[j] += offsets.item(tid + 1) - offsets.item(tid)
                else:
                    dfs[j] += p.df(tid)
            ids.append(np.array(part_ids, dtype=np.int64))
        return dfs, ids

    def part_norms(self, stats: ColumnStats) -> list[np.ndarray]:
        """Each part's per-row BM25 norms under ``stats`` (cached for one stats version)."""
        key = (stats.n_docs, stats.total_tokens)
        cached = self._norms.get(key)
        if cached is None:
            cached = [norms(p.segment.dl, stats) for p in self.parts]
            self._norms = {key: cached}  # one statistics version at a time
        return cached

    def part_block_bounds(self, stats: ColumnStats) -> list[np.ndarray]:
        """Each part's per-block bound factors under ``stats`` (see
        :func:`.bm25.block_bound_factors`; cached for one stats version)."""
        key = (stats.n_docs, stats.total_tokens)
        cached = self._bounds.get(key)
        if cached is None:
            cached = [
                block_bound_factors(p.segment.block_max_tf, p.segment.block_min_dl, p.segment.impacts, stats)
                for p in self.parts
            ]
            self._bounds = {key: cached}
        return cached

    def postings(
        self, term: str, stats: ColumnStats, positions: bool, within: np.ndarray | None = None
    ) -> TermPostings | None:
        """The term's live postings, only at rows of ``within`` (ascending) when given:
        probing a long posting list costs a binary search per candidate, not a pass."""
        pieces = []
        for p, norm in zip(self.parts, self.part_norms(stats)):
            tid = p.segment.term_id(term)
            if tid >= 0:
                a, b = p.posting_range(tid)
                if a < b:
                    piece = _piece(p, tid, a, b, norm, positions, within)
                    if piece is not None:
                        pieces.append(piece)
        if not pieces:
            return None
        if len(pieces) == 1:
            return pieces[0]
        return TermPostings(
            np.concatenate([t.rows for t in pieces]),
            np.concatenate([t.tfs for t in pieces]),
            np.concatenate([t.norms for t in pieces]),
            _concat_offsets([t.pos_offsets for t in pieces]) if positions else None,
            np.concatenate([t.positions for t in pieces]) if positions else None,
        )

    def rows_of(self, term: str, within: np.ndarray | None = None) -> np.ndarray:
        """The live rows holding ``term`` (global ids, ascending), only those of ``within``
        (ascending) when given: what an n-gram index's candidates are made of, which need
        neither frequencies nor norms."""
        pieces = [rows for p in self.parts if (rows := _part_rows(p, term, within)) is not None]
        if not pieces:
            return _NONE
        rows = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
        return rows if len(pieces) == 1 or bool(np.all(rows[1:] > rows[:-1])) else np.sort(rows)

    def count_by(self, terms: list[str], codes_over: CodesOver) -> tuple[list[tuple[pa.Array, np.ndarray]], np.ndarray]:
        """The live rows holding any of ``terms`` counted by a column, without their ids
        made where the column has codes: per set of codes they fall in (a fragment's),
        its keys and how many rows hold each (the last: NULL); and the rows of the parts
        whose rows have no codes (fresh rows; every row of a store keeping none), global
        ids, ascending, for the caller to count. ``codes_over(lo, hi, n)`` gives the codes
        of the column over global ids [lo, hi) (``n`` of them to be counted), their keys,
        and the id of the first code, or None. A row holding several of the terms is
        counted once (a byte a code marks the rows counted)."""
        counted: list[tuple[np.ndarray, pa.Array, np.ndarray, np.ndarray | None]] = []
        rest: list[np.ndarray] = []
        for p in self.parts:
            base = p.segment.meta.base
            held = [(term, tid, *p.posting_range(tid)) for term in terms if (tid := p.segment.term_id(term)) >= 0]
            held = [(term, tid, a, b) for term, tid, a, b in held if a < b]
            if not held:
                continue
            # (one choice a part: a row holding two terms is counted the one way or the other)
            coded = codes_over(base + p.lo, base + p.hi, sum(b - a for _, _, a, b in held))
            if coded is None:
                rest.extend(rows for term, _, _, _ in held if (rows := _part_rows(p, term, None)) is not None)
                continue
            codes, keys, first = coded
            found = next((c for c in counted if c[0] is codes), None)
            if found is None:
                seen = np.zeros(len(codes), np.uint8) if len(terms) > 1 else None
                found = (codes, keys, np.zeros(len(keys) + 1, np.int64), seen)
                counted.append(found)
            for _, tid, a, b in held:
                p.segment.count_postings(tid, a, b, p.deleted, codes, base - first, found[2], found[3])
        others = (np.unique(np.concatenate(rest)) if len(rest) > 1 else rest[0]) if rest else _NONE
        return [(keys, counts) for _, keys, counts, _ in counted], others

    def _vocabularies(self) -> list[pa.Array]:
        """Each part's terms that occur in the live rows it ranks."""
        if self._vocab is None:
            out = []
            for p in self.parts:
                seg = p.segment
                if p.whole or not seg.meta.n_postings:
                    out.append(seg.terms)
                    continue
                counts = seg.live_counts(p.lo, p.hi, p.deleted)
                out.append(seg.terms.filter(pa.array(counts > 0)))
            self._vocab = out
        return self._vocab

    def fuzzy_candidates(self, term: str, fuzziness: int, prefix_length: int, max_expansions: int) -> list[tuple[int, str]]:
        found: set[tuple[int, str]] = set()
        for vocab in self._vocabularies():
            found.update(fuzzy_candidates(vocab, term, fuzziness, prefix_length, max_expansions))
        return sorted(found)[:max_expansions]

    def gram_candidates(self, char: str) -> list[tuple[int, str]]:
        found: set[tuple[int, str]] = set()
        for vocab in self._vocabularies():
            found.update(gram_candidates(vocab, char))
        return sorted(found)

    def prefix_candidates(self, prefix: str, max_expansions: int) -> list[tuple[int, str]]:
        found: set[tuple[int, str]] = set()
        for vocab in self._vocabularies():
            found.update(prefix_candidates(vocab, prefix, max_expansions))
        return sorted(found)[:max_expansions]


def _piece(
    p: RankedPart, tid: int, a: int, b: int, norm: np.ndarray, positions: bool, within: np.ndarray | None
) -> TermPostings | None:
    """Postings a..b of term ``tid`` of a part with global row ids (positions rebased to
    0), without deleted rows, and only at rows of ``within`` when given (read in one
    compiled call, which decodes only the blocks holding those rows)."""
    seg = p.segment
    local = _local(p, within)
    if local is not None and not len(local):
        return None
    rows, tfs, po, pos = seg.read(tid, a, b, local, p.deleted, positions)
    if not len(rows):
        return None
    ids = rows.astype(np.int64)
    ids += seg.meta.base
    if not positions:
        return TermPostings(ids, tfs, norm[rows])
    return TermPostings(ids, tfs, norm[rows], po, pos)


def _part_rows(p: RankedPart, term: str, within: np.ndarray | None) -> np.ndarray | None:
    """The live rows of part ``p`` holding ``term`` (global ids, ascending), only those of
    ``within`` (ascending) when given; None where there are none."""
    tid = p.segment.term_id(term)
    if tid < 0:
        return None
    a, b = p.posting_range(tid)
    local = _local(p, within)
    if a >= b or local is not None and not len(local):
        return None
    rows = p.segment.read(tid, a, b, local, p.deleted, False, tfs=False)[0]
    return np.add(rows, p.segment.meta.base, dtype=np.int64) if len(rows) else None  # (one array, not two)


def _local(p: RankedPart, within: np.ndarray | None) -> np.ndarray | None:
    """The rows of ``within`` (global ids, ascending) the part ranks, local to its segment."""
    if within is None:
        return None
    base = p.segment.meta.base
    lo, hi = np.searchsorted(within, [base + p.lo, base + p.hi])
    return within[lo:hi] - base


def _concat_offsets(parts: list[np.ndarray | None]) -> np.ndarray:
    """Concatenate position offset arrays (each starting at 0) into one."""
    out, shift = [np.zeros(1, np.int64)], 0
    for offsets in parts:
        assert offsets is not None
        out.append(offsets[1:] + shift)
        shift += int(offsets[-1])
    return np.concatenate(out)
