"""Index the rows of a row-id range of a table snapshot, in bounded memory.

Rows are read in batches and tokenized a chunk (at most ``BUILD_CHUNK_BYTES`` of text)
at a time; each chunk becomes a segment, and neighbouring chunk segments are merged while
the merged segment stays under ``MERGE_MAX_POSTINGS``. Used by index builds (segments
then persisted) and by the hybrid plan's in-memory index of an unindexed tail.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np
import pyarrow as pa

from ..analysis import analyzer_for
from ..storage.manifest import IndexMeta
from ..storage.snapshot import TableSnapshot
from .builder import build_segment, merge_segments
from .segment import Segment

# A build tokenizes at most this much text at once, then inverts it into a segment.
BUILD_CHUNK_BYTES = 256 << 20
# Chunk segments are merged while the merged segment stays under this many postings.
MERGE_MAX_POSTINGS = 400_000_000

Progress = Callable[[int, int], None]


def build_range(
    snap: TableSnapshot, index: IndexMeta, lo: int, hi: int, new_id: Callable[[], str],
    progress: Progress | None = None,
) -> list[Segment]:
    """Segments over the inclusive row-id range [lo, hi] of ``index``'s column."""
    analyzer = analyzer_for(index.analyzer)
    last = snap.row_count - 1
    total = max(0, min(hi, last) - lo + 1) if lo <= last else 0
    deleted = snap.deleted
    total -= int(np.searchsorted(deleted, min(hi, last), side="right") - np.searchsorted(deleted, lo))
    done = 0
    chunks: list[Segment] = []
    pending: list[pa.RecordBatch] = []
    pending_bytes = 0

    def build_chunk(chunk_lo: int, chunk_hi: int) -> None:
        nonlocal pending, pending_bytes
        if pending:
            table = pa.Table.from_batches(pending)
            row_ids = table.column(0).to_numpy()
            stream = analyzer.analyze(table.column(1))
        else:
            row_ids, stream = np.zeros(0, np.int64), None
        covered = (chunk_lo, min(chunk_hi, last))
        chunks.append(build_segment(new_id(), chunk_lo, chunk_hi, covered, row_ids, stream, index.positions))
        pending, pending_bytes = [], 0

    chunk_lo = lo
    for batch in snap.scan([index.column], row_range=(lo, hi)):
        pending.append(batch)
        pending_bytes += batch.column(1).nbytes
        done += batch.num_rows
        if pending_bytes >= BUILD_CHUNK_BYTES:
            last_id = int(batch.column(0)[-1].as_py())
            build_chunk(chunk_lo, last_id)
            chunk_lo = last_id + 1
        if progress is not None:
            progress(done, total)
    if pending or not chunks:
        build_chunk(chunk_lo, hi)
    else:
        chunks[-1] = replace(chunks[-1], meta=replace(chunks[-1].meta, hi=hi))
    merged: list[Segment] = []
    for seg in chunks:
        if merged and merged[-1].meta.n_postings + seg.meta.n_postings <= MERGE_MAX_POSTINGS:
            merged[-1] = merge_segments(new_id(), [merged[-1], seg])
        else:
            merged.append(seg)
    return merged
