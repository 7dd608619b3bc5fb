"""The segment sets searches read, kept between queries: each persisted segment loaded
once, the set of a column's segments per table version, and unindexed tails indexed in
memory (docs/design.md: "Tiers" and "The hybrid residual plan").

A database holds one :class:`SegmentSets`; the planner asks it through the catalog
(``planner/plan_search.py``, ``planner/prepared_search.py``). Commits tell it which files
are live (:meth:`SegmentSets.retain`), and a flush hands it the segments it has just
written (:meth:`SegmentSets.add`).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from dataclasses import replace
from typing import Callable

import numpy as np

from ..analysis import Analyzer, TokenStream, analyzer_for
from ..index.building.build_range import Wanted, start_tail
from ..index.building.builder import merge_segments
from ..index.segment import InMemorySegment, Segment
from ..index.segment_set import SegmentSet
from ..index.transient import find_terms, lookup_terms
from ..operators.flat_scan_search import expand, term_requests
from ..operators.hybrid_residual_search import TailInfo
from ..query.tree import Query
from ..settings import Settings
from ..storage.files.manifest import SegmentMeta
from ..storage.snapshot import TableSnapshot
from ..storage.stores.store import Store

# Segment sets kept (most recently used): a few tables' columns at their current versions.
SEGMENT_SET_CACHE = 8


class SegmentSets:
    """Loaded segments, segment sets and in-memory tails of one database's store."""

    def __init__(self, store: Store, settings: Settings, counters: Counter[str]) -> None:
        self.store = store
        self.settings = settings
        self.counters = counters  # (counts "tail_rows_tokenized")
        self._segments: dict[str, Segment] = {}
        self._segment_sets: dict[tuple, SegmentSet] = {}
        self._tails: dict[tuple, tuple[list[Segment], TailInfo]] = {}
        self._tail_ids = itertools.count()
        self._lock = threading.Lock()

    def add(self, segments: dict[str, Segment]) -> None:
        """Segments just written (a flush's): in memory already."""
        with self._lock:
            for seg_id, seg in segments.items():
                self._segments.setdefault(seg_id, seg)

    def retain(self, live: frozenset[str] | set[str]) -> None:
        """Forget what refers to files no longer ``live`` (after a commit, or a failed write)."""
        with self._lock:
            self._segments = {k: v for k, v in self._segments.items() if k in live}
            self._segment_sets = {k: v for k, v in self._segment_sets.items() if live.issuperset(k[2])}
            self._tails = {k: v for k, v in self._tails.items() if live.issuperset(k[-1])}

    def segment(self, meta: SegmentMeta) -> Segment:
        with self._lock:
            seg = self._segments.get(meta.id)
        if seg is None:
            seg = Segment.open(meta, self.store)
            with self._lock:
                seg = self._segments.setdefault(meta.id, seg)
        return seg

    def caches_tails(self) -> bool:
        return bool(self.settings.get("fts.tail_cache_entries"))

    def hybrid_segment_set(
        self, snapshot: TableSnapshot, column: str, query: Query | None = None
    ) -> tuple[SegmentSet, TailInfo]:
        """The column's persisted and fresh segments plus in-memory segments over the rows
        none of them holds (the unindexed tail).

        With the tail cache on (``fts.tail_cache_entries``) the tail is indexed whole, once
        per tail version, and kept in a small LRU. With it off, each query reads and
        tokenizes the tail once for all its leaves and keeps postings only for ``query``'s
        terms on this column (its exact terms and the tail's best expansions of its fuzzy
        and prefix leaves: all a query can read). Either way the tail is tokenized in
        parallel pieces while the persisted segments are loaded.
        """
        limit = self.settings.get("fts.tail_cache_entries")
        if limit:  # the same for every query on this snapshot (see caches_tails)
            hit = snapshot.memo.get(("hybrid_set", column))
            if hit is None:
                made = self._hybrid_set(snapshot, column, query, limit)
                # (not derived(): this query reports its own build, later ones a cached tail)
                snapshot.memo[("hybrid_set", column)] = (made[0], replace(made[1], cached=True))
                return made
            return hit
        return self._hybrid_set(snapshot, column, query, limit)

    def _hybrid_set(
        self, snapshot: TableSnapshot, column: str, query: Query | None, limit: int
    ) -> tuple[SegmentSet, TailInfo]:
        index = snapshot.meta.indexes[column]
        gaps = tuple(snapshot.uncovered(column))
        deletes = tuple(f.deletes for f in snapshot.meta.fragments if f.deletes)
        key = (snapshot.name, column, gaps, index.analyzer, index.positions, snapshot.rows_key, deletes)
        with self._lock:
            hit = self._tails.pop(key, None)
            if hit is not None:
                self._tails[key] = hit  # most recently used last
        if hit is not None:
            return self._cached_set(snapshot, column, hit[0]), replace(hit[1], cached=True)
        start = time.perf_counter()
        with self._lock:
            self.counters["tail_rows_tokenized"] += sum(hi - lo + 1 for lo, hi in gaps)
        wanted, seed = None, ()
        if not limit and query is not None:
            wanted, seed = _query_terms_only(query, column, analyzer_for(index.analyzer))
        join = start_tail(snapshot, index, gaps, lambda: f"tail-{next(self._tail_ids)}", wanted, seed)
        for meta in index.segments:
            self.segment(meta)  # meanwhile (loaded once, then cached)
        pieces = join()
        if limit:  # kept for many queries: one part per gap costs less than one per piece
            pieces = _merge_contiguous(pieces, lambda: f"tail-{next(self._tail_ids)}")
        tail = [InMemorySegment.of(seg) for seg in pieces]
        info = TailInfo(gaps, (time.perf_counter() - start) * 1e3, False, terms_only=wanted is not None,
                        files=snapshot.files_in(gaps))
        if limit:
            with self._lock:
                self._tails[key] = (tail, info)
                while len(self._tails) > limit:
                    self._tails.pop(next(iter(self._tails)))
        return self._cached_set(snapshot, column, tail), info

    def segment_set(self, snapshot: TableSnapshot, column: str) -> SegmentSet:
        """The (cached) searchable view of a column's index in ``snapshot``: its persisted
        segments and the fresh tier's segments, as parts of one set (exact statistics over
        both, docs/design.md: "Statistics and BM25")."""
        return snapshot.derived(("segment_set", column), self._cached_set, snapshot, column, [])

    def _cached_set(self, snapshot: TableSnapshot, column: str, extra: list[Segment]) -> SegmentSet:
        index = snapshot.meta.indexes[column]
        fresh = list(snapshot.fresh_segments.get(column, ()))
        deletes = tuple(f.deletes for f in snapshot.meta.fragments if f.deletes)
        key = (
            snapshot.name, column, tuple(s.id for s in index.segments),
            tuple(s.meta.id for s in fresh + extra), index.k1, index.b, snapshot.rows_key, deletes,
        )
        with self._lock:
            cached = self._segment_sets.pop(key, None)
            if cached is not None:
                self._segment_sets[key] = cached  # most recently used last
                return cached
        segments = [self.segment(s) for s in index.segments] + fresh + extra
        made = SegmentSet(segments, index.k1, index.b, snapshot.deleted)
        with self._lock:
            made = self._segment_sets.setdefault(key, made)
            while len(self._segment_sets) > SEGMENT_SET_CACHE:
                self._segment_sets.pop(next(iter(self._segment_sets)))
        return made


def _merge_contiguous(segments: list[Segment], new_id: Callable[[], str]) -> list[Segment]:
    """``segments`` (ascending ranges) with each run of adjacent ranges merged into one
    segment: the pieces a gap was tokenized in (in parallel) become one segment part."""
    runs: list[list[Segment]] = []
    for seg in segments:
        if runs and seg.meta.lo == runs[-1][-1].meta.hi + 1:
            runs[-1].append(seg)
        else:
            runs.append([seg])
    return [run[0] if len(run) == 1 else merge_segments(new_id(), run, packed=False) for run in runs]


def _query_terms_only(query: Query, column: str, analyzer: Analyzer) -> tuple[Wanted, tuple[str, ...]]:
    """What a tail piece must keep for ``query`` on ``column``: the stream ids of the exact
    terms (handed to the tokenizer as seeds) and of the piece's best expansions."""
    exact, expanding = term_requests(query, {column: analyzer})
    seed = tuple(exact[column])

    def wanted(stream: TokenStream) -> np.ndarray:
        ids = lookup_terms(stream, seed) if seed else np.zeros(0, np.int64)
        extra = [t for found in expand(stream, expanding[column]).values() for _, t in found]
        ids = np.concatenate([ids, find_terms(stream, extra)])
        return ids[ids >= 0]

    return wanted, seed
