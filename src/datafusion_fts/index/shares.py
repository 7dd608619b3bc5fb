"""Split a query's ranked segment parts into shares, one per distributed worker.

Under the first-segment-ranks rule (docs/design.md: "Segment sets and ranked parts") every row of a
column is ranked by one part; a query over several columns must see all of a row's columns in one
place (a cross-column Boolean scores a row from every column). So the split is by row id: the row-id
line is cut at part boundaries into elementary intervals, and each interval goes either to a worker,
when every column ranks it from a persisted segment (a worker reads it from storage), or to the
driver, when some column ranks it from an in-memory segment (the hybrid tail, fresh rows). Worker
intervals are grouped into contiguous shares balanced by postings, estimated from segment metadata
alone: the driver splits without reading any posting.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..storage.files.manifest import SegmentMeta
from ..storage.stores.shared import SharedLocation
from .segment import Segment
from .segment_set import RankedPart, SegmentSet, clip_part

Run = tuple[int, int]  # global row ids [from, to)


@dataclass(frozen=True)
class PartRef:
    """A ranked part by reference: its segment's metadata, local rows [lo, hi), and the
    deleted local ids among them. What a worker needs to rebuild the part from storage."""

    segment: SegmentMeta
    lo: int
    hi: int
    deleted: np.ndarray


@dataclass(frozen=True)
class ColumnShare:
    parts: tuple[PartRef, ...]
    k1: float
    b: float


@dataclass(frozen=True)
class Share:
    """The rows one worker ranks: ``runs`` of row ids, each column's parts over them, the
    deleted row ids inside them, and where the segments are stored. ``key`` names the
    content, so a worker that has the share cached never needs it sent again."""

    key: str
    source: str  # the database incarnation: segment ids are unique within one
    storage: SharedLocation
    runs: tuple[Run, ...]
    columns: dict[str, ColumnShare]
    deleted: np.ndarray
    postings: int

    def display(self) -> str:
        return " ".join(f"{a}..{b - 1}" for a, b in self.runs)


@dataclass(frozen=True)
class Partition:
    shares: tuple[Share, ...]
    local: dict[str, SegmentSet]  # the driver's parts of each column
    remote_runs: tuple[Run, ...]


def _covering(parts: list[RankedPart], x: int) -> RankedPart | None:
    starts = [p.segment.meta.base + p.lo for p in parts]
    i = int(np.searchsorted(starts, x, side="right")) - 1
    if i >= 0 and parts[i].segment.meta.base + parts[i].hi > x:
        return parts[i]
    return None


def _merge_runs(pieces: list[tuple[int, int]]) -> tuple[Run, ...]:
    out: list[Run] = []
    for a, b in pieces:
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return tuple(out)


def _group(pieces: list[tuple[int, int, float]], n: int) -> list[list[tuple[int, int, float]]]:
    """Contiguous groups of ``pieces`` (row ranges with weights), at most ``n``, balanced
    by weight; ranges are halved first while there are fewer pieces than groups."""
    pieces = list(pieces)
    while len(pieces) < n:
        i = max(range(len(pieces)), key=lambda j: (pieces[j][2], pieces[j][1] - pieces[j][0]))
        a, b, w = pieces[i]
        if b - a < 2:
            break
        mid = a + (b - a) // 2
        pieces[i : i + 1] = [(a, mid, w * (mid - a) / (b - a)), (mid, b, w * (b - mid) / (b - a))]
    weights = np.array([w for _, _, w in pieces], dtype=np.float64)
    if weights.sum() <= 0:
        weights = np.array([b - a for a, b, _ in pieces], dtype=np.float64)
    centers = np.cumsum(weights) - weights / 2
    which = np.minimum((centers / weights.sum() * n).astype(np.int64), n - 1)
    groups: list[list[tuple[int, int, float]]] = [[] for _ in range(n)]
    for piece, g in zip(pieces, which):
        groups[int(g)].append(piece)
    return [g for g in groups if g]


def partition(
    sets: dict[str, SegmentSet],
    persisted: dict[str, frozenset[str]],
    n_shares: int,
    deleted: np.ndarray,
    storage: SharedLocation,
    token: str,
) -> Partition:
    """Shares of the rows every column ranks from ``persisted`` segments (ids per column),
    at most ``n_shares`` of them; the driver keeps the other rows. ``deleted`` holds the
    table's deleted row ids (ascending); ``token`` names the database incarnation, so keys
    never collide across databases that reuse a path."""
    parts = {c: list(s.parts) for c, s in sets.items()}
    bounds = sorted({p.segment.meta.base + x for ps in parts.values() for p in ps for x in (p.lo, p.hi)})
    remote: list[tuple[int, int, float]] = []
    local: list[tuple[int, int]] = []
    for x, y in zip(bounds, bounds[1:]):
        covering = {c: _covering(ps, x) for c, ps in parts.items()}
        present = [(c, p) for c, p in covering.items() if p is not None]
        if not present:
            continue
        if all(p.segment.meta.id in persisted[c] for c, p in present):
            weight = sum(p.segment.meta.n_postings * (y - x) / max(1, p.segment.meta.count) for _, p in present)
            remote.append((x, y, weight))
        else:
            local.append((x, y))
    local_runs = _merge_runs(local)
    local_sets = {
        c: SegmentSet.from_parts(
            [q for p in ps for a, b in local_runs if (q := clip_part(p, a, b)) is not None], sets[c].k1, sets[c].b
        )
        for c, ps in parts.items()
    }
    shares = []
    for group in _group(remote, n_shares) if remote else []:
        runs = _merge_runs([(a, b) for a, b, _ in group])
        columns = {}
        for c, ps in parts.items():
            refs = tuple(
                PartRef(q.segment.meta, q.lo, q.hi, q.deleted)
                for p in ps for a, b in runs if (q := clip_part(p, a, b)) is not None
            )
            columns[c] = ColumnShare(refs, sets[c].k1, sets[c].b)
        gone = np.concatenate([deleted[np.searchsorted(deleted, a) : np.searchsorted(deleted, b)] for a, b in runs])
        digest = hashlib.blake2b(digest_size=16)
        digest.update(repr((token, storage, runs)).encode())
        for c, share in sorted(columns.items()):
            digest.update(repr((c, share.k1, share.b, [(r.segment, r.lo, r.hi) for r in share.parts])).encode())
        digest.update(np.ascontiguousarray(gone, dtype=np.int64).tobytes())
        postings = int(sum(w for _, _, w in group))
        shares.append(Share(digest.hexdigest(), token, storage, runs, columns, gone, postings))
    return Partition(tuple(shares), local_sets, _merge_runs([(a, b) for a, b, _ in remote]))


def share_sets(share: Share, load: Callable[[SegmentMeta], Segment]) -> dict[str, SegmentSet]:
    """A worker's view of its share: each column's parts over segments from ``load``."""
    return {
        c: SegmentSet.from_parts(
            [RankedPart(load(r.segment), r.lo, r.hi, r.deleted) for r in cs.parts], cs.k1, cs.b
        )
        for c, cs in share.columns.items()
    }


def runs_rows(runs: tuple[Run, ...], deleted: np.ndarray) -> np.ndarray:
    """The live row ids of ``runs`` (``deleted`` ascending)."""
    if not runs:
        return np.zeros(0, dtype=np.int64)
    rows = np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in runs])
    return rows[~np.isin(rows, deleted, assume_unique=True)] if len(deleted) else rows


def clip_rows(rows: np.ndarray, runs: tuple[Run, ...]) -> np.ndarray:
    """The ids of ``rows`` (ascending) that fall in ``runs``."""
    pieces = [rows[np.searchsorted(rows, a) : np.searchsorted(rows, b)] for a, b in runs]
    return np.concatenate(pieces) if pieces else rows[:0]
