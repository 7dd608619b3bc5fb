"""Index builds as Ray tasks: each builds the segments of one row range and writes them to
shared storage under file ids the driver reserved; only the driver commits them.

A task reads the committed table (the driver flushes fresh rows first) with the
single-process builder (:mod:`..index.build_range`), so a segment built here
is the segment a local build makes over the same range.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import FtsError, StorageError
from ..index.building.build_progress import BuildReporter
from ..index.building.build_range import build_range, merge_neighbours
from ..storage.files.manifest import IndexMeta, SegmentMeta, TableMeta
from ..storage.snapshot import TableSnapshot
from ..storage.stores.shared import SharedLocation, open_shared

# File ids reserved per task; a range yields one segment unless its postings pass
# MERGE_MAX_POSTINGS (4e8), so this bounds a task at billions of postings.
IDS_PER_TASK = 8


def split_range(meta: TableMeta, lo: int, hi: int, pieces: int) -> list[tuple[int, int]]:
    """[lo, hi] cut into about ``pieces`` ranges of similar row counts, cutting at data
    fragment boundaries too (a task then reads whole fragments where it can)."""
    hi = min(hi, meta.next_rowid - 1)
    if hi < lo:
        return [(lo, lo)]
    step = max(1, -(-(hi - lo + 1) // pieces))
    cuts = set(range(lo + step, hi + 1, step)) | {f.row_lo for f in meta.fragments if lo < f.row_lo <= hi}
    bounds = [lo, *sorted(cuts), hi + 1]
    return [(a, b - 1) for a, b in zip(bounds, bounds[1:])]


def build_task(storage: SharedLocation, meta: TableMeta, index: IndexMeta, lo: int, hi: int, ids: list[str]) -> list[SegmentMeta]:
    """Build and write the segments over rows [lo, hi]; their metadata, for the driver."""
    try:
        shared = open_shared(storage, for_writes=True)
        shared.note_footers(meta.footer_crcs())  # (checked before a fragment's footer is parsed)
        snap = TableSnapshot(meta, shared)  # type: ignore[arg-type]
        chunk = iter(range(1 << 30))

        def new_id() -> str:
            return f"build-{lo}-{next(chunk)}"

        quiet = BuildReporter(None, index.column)  # (the driver reports the build)
        segments = merge_neighbours(build_range(snap, index, lo, hi, new_id, quiet), new_id, quiet)
        if len(segments) > len(ids):
            raise StorageError(f"{len(segments)} segments, more than the {len(ids)} reserved")
        out = []
        for seg, seg_id in zip(segments, ids):
            seg = replace(seg, meta=replace(seg.meta, id=seg_id))
            out.append(seg.write_to(shared).meta)
        return out
    except Exception as exc:  # a storage or decoding failure: name the range
        if isinstance(exc, FtsError) and not isinstance(exc, StorageError):
            raise
        raise StorageError(f"index build of {index.column!r} rows {lo}..{hi} failed: {exc}") from exc
