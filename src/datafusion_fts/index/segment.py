"""An immutable index segment: a term dictionary, postings, positions, document lengths
and block metadata over a contiguous range of row ids.

A segment is a bag of named Arrow arrays (memory-mapped Arrow IPC on disk). Row ids are
stored relative to ``base`` as uint32, halving the postings against int64.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields

import numpy as np
import pyarrow as pa

from ..storage.manifest import SegmentMeta
from .sorted_terms import find_term, term_buffers

ARRAY_NAMES = (
    "terms", "post_offsets", "rows", "tfs", "pos_offsets", "positions", "dl",
    "block_offsets", "block_max_tf", "block_min_dl", "block_last_row",
)


def _np(array: pa.Array) -> np.ndarray:
    return array.to_numpy(zero_copy_only=True) if len(array) else np.zeros(0, array.type.to_pandas_dtype())


@dataclass
class Segment:
    """The arrays of one segment, with a term lookup built on first use."""

    meta: SegmentMeta
    terms: pa.LargeStringArray
    post_offsets: np.ndarray
    rows: np.ndarray
    tfs: np.ndarray
    pos_offsets: np.ndarray
    positions: np.ndarray
    dl: np.ndarray
    block_offsets: np.ndarray
    block_max_tf: np.ndarray
    block_min_dl: np.ndarray
    block_last_row: np.ndarray
    _lookup: dict[str, int] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def from_arrays(cls, meta: SegmentMeta, arrays: dict[str, pa.Array]) -> "Segment":
        values = {name: arrays[name] if name == "terms" else _np(arrays[name]) for name in ARRAY_NAMES}
        return cls(meta=meta, **values)

    def to_arrays(self) -> dict[str, pa.Array]:
        return {
            name: getattr(self, name) if name == "terms" else pa.array(getattr(self, name))
            for name in ARRAY_NAMES
        }

    @property
    def has_positions(self) -> bool:
        return len(self.pos_offsets) > 0 or len(self.rows) == 0

    def term_id(self, term: str) -> int:
        """The id of ``term`` in this segment, or -1."""
        lookup = self._lookup
        if lookup is None:
            with self._lock:
                if self._lookup is None:
                    self._lookup = {t: i for i, t in enumerate(self.terms.to_pylist())}
                lookup = self._lookup
        return lookup.get(term, -1)

    def postings(self, term_id: int) -> tuple[np.ndarray, np.ndarray]:
        """(local rows uint32, tfs uint32) of a term, as views."""
        a, b = self.post_offsets[term_id], self.post_offsets[term_id + 1]
        return self.rows[a:b], self.tfs[a:b]


# A binary-search lookup costs about as much as putting this many terms in a dict.
_LOOKUP_COST_IN_TERMS = 50
# Searched-for terms an in-memory segment remembers (bounded: its dict costs less).
_FOUND_MAX = 4096


@dataclass
class InMemorySegment(Segment):
    """A segment built in memory for a short life (fresh rows, a query's unindexed tail).

    Its term lookups binary-search the sorted terms until they have cost about what a
    dictionary of its vocabulary costs to build, then build one (a ski-rental rule: never
    more than twice the better of the two). A segment that few queries read never pays
    for a dictionary of every term it holds. Terms already searched for are remembered
    (a query looks each of its terms up for its statistics, then for its postings; and
    a cached tail sees the same frequent terms query after query)."""

    _buffers: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _lookups: int = field(default=0, repr=False)
    _found: dict[str, int] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, segment: Segment) -> "InMemorySegment":
        return cls(**{f.name: getattr(segment, f.name) for f in fields(Segment) if f.name not in ("_lookup", "_lock")})

    def term_id(self, term: str) -> int:
        if self._lookup is not None:
            return self._lookup.get(term, -1)
        found = self._found.get(term)
        if found is not None:
            return found
        self._lookups += 1
        if self._lookups * _LOOKUP_COST_IN_TERMS >= len(self.terms):
            return super().term_id(term)
        if self._buffers is None:
            self._buffers = term_buffers(self.terms)
        found = int(find_term(*self._buffers, np.frombuffer(term.encode("utf-8"), dtype=np.uint8)))
        if len(self._found) < _FOUND_MAX:
            self._found[term] = found
        return found
