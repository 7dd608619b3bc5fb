"""A compiled loop over many pages cut in parts of equal work, run side by side.

The loops that read a fetch's pages (``pread``), check their CRCs and decompress them
release the GIL, and run one after the other over every page of a piece: a fetch of 1,000
scattered rows of the benchmark's three columns spent ~15 ms in them on one core of two.
Cut in two, the second part runs on a helper thread while the caller does the first.
Python's own work between the loops stays on the caller: handing the GIL back and forth
per page cost more than the second core gave (see ``PageReader.take``).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Callable, TypeVar

import numpy as np

T = TypeVar("T")

_LOCK = threading.Lock()
_POOL: dict[int, ThreadPoolExecutor] = {}  # by process: a forked child makes its own
_ALONE = threading.local()


@contextmanager
def one_part() -> Iterator[None]:
    """Loops of this thread run whole for the duration: for work already spread over
    every core (a scan's pieces on its pool), where parts would only wait for each other."""
    before = getattr(_ALONE, "on", False)
    _ALONE.on = True
    try:
        yield
    finally:
        _ALONE.on = before


@functools.cache
def _cores() -> int:
    """The machine's cores, asked once (``os.cpu_count`` costs ~2 us, and a fetch of a few
    rows asked it three times)."""
    return os.cpu_count() or 1


def _helpers() -> ThreadPoolExecutor | None:
    """The helper threads of this process (None on one core)."""
    n = _cores() - 1
    if n < 1:
        return None
    pid = os.getpid()
    with _LOCK:
        pool = _POOL.get(pid)
        if pool is None:
            _POOL.clear()  # (a parent's pool: its threads do not exist in this process)
            pool = _POOL[pid] = ThreadPoolExecutor(n, thread_name_prefix="fts-pages")
        return pool


def cuts(weights: np.ndarray, least: float) -> list[tuple[int, int]]:
    """Consecutive index ranges covering ``weights``, of about equal total weight, one per
    core, each of at least ``least`` (one range if the whole weighs less than twice that,
    or within :func:`one_part`)."""
    n = len(weights)
    if n < 2:
        return [(0, n)]
    cores = 1 if getattr(_ALONE, "on", False) else _cores()
    total = float(weights.sum())
    parts = int(min(cores, total // least)) if least > 0 else cores
    if parts < 2:
        return [(0, n)]
    ends = np.searchsorted(np.cumsum(weights), total * np.arange(1, parts) / parts, side="right")
    bounds = [0, *sorted({int(min(max(e, 1), n - 1)) for e in ends.tolist()}), n]
    return list(zip(bounds[:-1], bounds[1:]))


def side_by_side(weights: np.ndarray, least: float, run: Callable[[int, int], T]) -> list[T]:
    """``run(a, b)`` over each of ``cuts(weights, least)``, the first on this thread, the
    others on helper threads at the same time; results in order. ``run`` must release the
    GIL for the parts to overlap, and write only its own part of any shared buffer."""
    parts = cuts(weights, least)
    pool = _helpers() if len(parts) > 1 else None
    if pool is None:
        return [run(a, b) for a, b in parts]
    others = [pool.submit(run, a, b) for a, b in parts[1:]]
    first = run(*parts[0])
    return [first, *(f.result() for f in others)]


def first_bad(weights: np.ndarray, least: float, run: Callable[[int, int], int]) -> int:
    """:func:`side_by_side` of a check: ``run(a, b)`` returns -1 or the first bad index of
    its part, counted from ``a``; this returns -1 or the first bad index of all."""

    def part(a: int, b: int) -> int:
        bad = run(a, b)
        return bad if bad < 0 else a + bad

    return min((bad for bad in side_by_side(weights, least, part) if bad >= 0), default=-1)
