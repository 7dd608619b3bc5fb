"""The search worker: a long-lived Ray actor holding shares of tables' segments.

A share arrives by reference (a Ray object, fetched once per share key) and is kept with
its memory-mapped segments until newer shares push it out. Both phases run the
single-process code over the share's parts: :func:`..index.term_statistics.collect` for
phase one and :class:`..operators.indexed_search.IndexedSearch` for phase two, so a
worker cannot score differently from a local plan.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any

import numpy as np

from ..index.segment import Segment
from ..index.segment_set import SegmentSet
from ..index.shares import Share, runs_rows, share_sets
from ..index.term_statistics import StatsReply, StatsRequest, collect
from ..operators.distributed_search import ShareSearch
from ..operators.indexed_search import IndexedSearch
from ..storage.files.manifest import SegmentMeta
from ..storage.stores.shared import SharedLocation, SharedStore, open_shared
from . import _compat

SHARES_KEPT = 16


class _Loaded:
    def __init__(self, share: Share, sets: dict[str, SegmentSet]) -> None:
        self.share = share
        self.sets = sets
        self._rows: np.ndarray | None = None

    def rows(self) -> np.ndarray:
        """The share's live rows (for a query that matches every row)."""
        if self._rows is None:
            self._rows = runs_rows(self.share.runs, self.share.deleted)
        return self._rows


class SearchWorker:
    """Answers both phases of a distributed search for the shares it is sent."""

    def __init__(self) -> None:
        self._stores: dict[SharedLocation, SharedStore] = {}
        self._segments: dict[tuple[str, str, str], Segment] = {}
        self._shares: OrderedDict[str, _Loaded] = OrderedDict()
        self.loads = 0

    def pid(self) -> int:
        return os.getpid()

    def _segment(self, share: Share, meta: SegmentMeta) -> Segment:
        key = (share.source, share.storage, meta.id)
        seg = self._segments.get(key)
        if seg is None:
            store = self._stores.get(share.storage)
            if store is None:
                store = self._stores[share.storage] = open_shared(share.storage)
            seg = self._segments[key] = Segment.open(meta, store)
        return seg

    def _share(self, key: str, box: list[Any]) -> _Loaded:
        loaded = self._shares.get(key)
        if loaded is not None:
            self._shares.move_to_end(key)
            return loaded
        share: Share = _compat.ray().get(box[0])
        loaded = _Loaded(share, share_sets(share, lambda meta: self._segment(share, meta)))
        self._shares[key] = loaded
        self.loads += 1
        if len(self._shares) > SHARES_KEPT:
            self._shares.popitem(last=False)
            live = {
                (s.share.source, s.share.storage, r.segment.id)
                for s in self._shares.values() for cs in s.share.columns.values() for r in cs.parts
            }
            self._segments = {k: v for k, v in self._segments.items() if k in live}
        return loaded

    def statistics(self, key: str, box: list[Any], request: StatsRequest) -> StatsReply:
        """Phase one: this share's N, token totals, frequencies and expansion candidates."""
        return collect(self._share(key, box).sets, request)

    def search(self, key: str, box: list[Any], request: ShareSearch) -> tuple[np.ndarray, np.ndarray]:
        """Phase two: this share's top-k under the global statistics."""
        loaded = self._share(key, box)
        op = IndexedSearch(
            request.bound, loaded.sets, request.stats, loaded.rows, request.k, request.include,
            pruning=request.pruning,
        )
        (batch,) = op.execute()
        return batch.column(0).to_numpy(), batch.column(1).to_numpy()
