"""The unit every posting source hands to the evaluator."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TermPostings:
    """One term's postings in a source: ascending rows, tfs, each row's BM25 norm, and
    optionally positions (``positions[pos_offsets[i]:pos_offsets[i+1]]`` for posting i)."""

    rows: np.ndarray  # int64
    tfs: np.ndarray  # uint32
    norms: np.ndarray  # float64
    pos_offsets: np.ndarray | None = None
    positions: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def take(self, sel: np.ndarray) -> "TermPostings":
        """The postings at indices ``sel`` (ascending)."""
        if self.pos_offsets is None or self.positions is None:
            return TermPostings(self.rows[sel], self.tfs[sel], self.norms[sel])
        offsets, positions = select_positions(self.pos_offsets, self.positions, sel)
        return TermPostings(self.rows[sel], self.tfs[sel], self.norms[sel], offsets, positions)


def select_positions(pos_offsets: np.ndarray, positions: np.ndarray, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The position lists of postings ``sel``, with offsets rebased to 0."""
    starts = pos_offsets[sel]
    lengths = pos_offsets[sel + 1] - starts
    offsets = np.zeros(len(sel) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    gather = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
    return offsets, positions[gather]


def present(rows: np.ndarray, within: np.ndarray) -> np.ndarray:
    """Indices into ``rows`` (ascending) of the values also in ``within`` (ascending)."""
    if not len(rows) or not len(within):
        return np.zeros(0, dtype=np.int64)
    idx = np.searchsorted(rows, within)
    hit = idx < len(rows)
    hit[hit] = rows[idx[hit]] == within[hit]
    return idx[hit]
