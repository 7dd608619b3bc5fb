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
