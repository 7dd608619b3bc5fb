"""The total order of docs/design.md: "Order, top-k and paging": score descending as Java's
``Double.compare`` orders doubles (NaN above +inf, all NaNs equal, +0.0 above -0.0), then row id
ascending."""

from __future__ import annotations

import numpy as np

from ..kernels.merge import top_k

_CANONICAL_NAN = np.float64("nan").view(np.int64)
_FLIP = np.int64(0x7FFFFFFFFFFFFFFF)


def order_keys(scores: np.ndarray) -> np.ndarray:
    """int64 keys whose integer order is ``Double.compare``'s order of ``scores``."""
    bits = np.ascontiguousarray(scores, dtype=np.float64).view(np.int64)
    bits = np.where(np.isnan(scores), _CANONICAL_NAN, bits)
    return np.where(bits < 0, bits ^ _FLIP, bits)


def ordered(rows: np.ndarray, scores: np.ndarray, k: int | None) -> np.ndarray:
    """Indices of the first ``k`` entries (all if None) in the total order, best first."""
    if k is None or k >= len(rows):
        return np.lexsort((rows, ~order_keys(scores)))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    return top_k(rows, scores, k)
