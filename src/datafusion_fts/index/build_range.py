"""Index the rows of a row-id range of a table snapshot.

``build_range`` works in bounded memory: rows are read in batches and tokenized a chunk
(at most ``BUILD_CHUNK_BYTES`` of text) at a time, in the background while the next chunk
is read (``CHUNKS_IN_FLIGHT``); each chunk becomes a bit-packed segment, every
``CHUNKS_PER_MERGE`` of them are merged into one as the build goes on, and at the end
neighbouring segments are merged, in one k-way merge per group, while the merged segment
stays under ``MERGE_MAX_POSTINGS``. Index builds use it (segments then persisted).

``start_tail`` indexes a short unindexed tail for the hybrid plan (at most
``fts.residual_row_limit`` rows, so it is read whole): cut into pieces tokenized and
inverted in parallel threads (the kernels release the GIL) while the caller goes on, and
optionally keeping postings only for the terms one query needs.
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa

from ..analysis import TokenStream, analyzer_for
from ..storage.manifest import IndexMeta
from ..storage.snapshot import TableSnapshot
from .builder import build_segment, merge_segments
from .malloc_policy import return_large_blocks
from .segment import Segment

# A build tokenizes at most this much text at once, then inverts it into a segment.
BUILD_CHUNK_BYTES = 16 << 20
# Chunks tokenized and inverted at once, in the background while the next is read.
CHUNKS_IN_FLIGHT = 2
# Chunk segments are merged while the merged segment stays under this many postings.
MERGE_MAX_POSTINGS = 400_000_000
# Every this many chunk segments are merged into one while the build goes on: each chunk
# carries its own dictionary and per-term and per-block metadata (a 16 MiB chunk of the
# benchmark corpus: ~4 MB of it beside ~3 MB of packed postings), which would otherwise
# be held once per chunk until the end (1.9 GB of 300 chunks at 10M rows).
CHUNKS_PER_MERGE = 16
# A tail is cut into at most one piece per worker, each of at least this many rows.
TAIL_PIECE_ROWS = 2048
TAIL_WORKERS = max(1, min(4, os.cpu_count() or 1))

Progress = Callable[[int, int], None]


def build_range(
    snap: TableSnapshot, index: IndexMeta, lo: int, hi: int, new_id: Callable[[], str],
    progress: Progress | None = None,
) -> list[Segment]:
    """Segments over the inclusive row-id range [lo, hi] of ``index``'s column."""
    return_large_blocks()  # (what a chunk frees does not stay in the heap)
    analyzer = analyzer_for(index.analyzer)
    last = snap.row_count - 1
    total = max(0, min(hi, last) - lo + 1) if lo <= last else 0
    deleted = snap.deleted
    total -= int(np.searchsorted(deleted, min(hi, last), side="right") - np.searchsorted(deleted, lo))
    done = 0
    chunks: list[Segment] = []
    merged = 0  # chunks[:merged] are merges of CHUNKS_PER_MERGE chunks each
    building: list[Future[Segment]] = []
    pending: list[pa.RecordBatch] = []
    pending_bytes = 0

    def build_chunk(chunk_lo: int, chunk_hi: int) -> None:
        """Tokenize and invert the pending rows in the background while the next chunk is
        read (at most ``CHUNKS_IN_FLIGHT`` at a time, which bounds the memory)."""
        nonlocal pending, pending_bytes, merged
        seg_id, covered, batches = new_id(), (chunk_lo, min(chunk_hi, last)), pending

        def build() -> Segment:
            if batches:
                table = pa.Table.from_batches(batches)
                row_ids = table.column(0).to_numpy()
                stream = analyzer.analyze(table.column(1))
            else:
                row_ids, stream = np.zeros(0, np.int64), None
            return build_segment(seg_id, chunk_lo, chunk_hi, covered, row_ids, stream, index.positions).pack()

        if len(building) >= CHUNKS_IN_FLIGHT:
            chunks.append(building.pop(0).result())
            if len(chunks) - merged >= CHUNKS_PER_MERGE:
                chunks[merged:] = [merge_segments(new_id(), chunks[merged:])]
                merged += 1
        building.append(_build_pool().submit(build))
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
    last_built = not pending and bool(chunks or building)  # (the last chunk then ends at hi)
    if not last_built:
        build_chunk(chunk_lo, hi)
    chunks.extend(f.result() for f in building)
    if last_built:
        chunks[-1] = replace(chunks[-1], meta=replace(chunks[-1].meta, hi=hi))
    return merge_runs(chunks, new_id)


def merge_runs(segments: list[Segment], new_id: Callable[[], str]) -> list[Segment]:
    """Neighbouring segments merged into as few as stay under ``MERGE_MAX_POSTINGS`` each,
    each group in one k-way merge (merging them two at a time would copy the first ones
    again at every step), its batches of terms merged by the build's threads."""
    groups: list[list[Segment]] = []
    total = 0
    for seg in segments:
        if groups and total + seg.meta.n_postings <= MERGE_MAX_POSTINGS:
            groups[-1].append(seg)
            total += seg.meta.n_postings
        else:
            groups.append([seg])
            total = seg.meta.n_postings
    return [group[0] if len(group) == 1 else merge_segments(new_id(), group, map_=_build_pool().map) for group in groups]


@functools.lru_cache(maxsize=1)
def _build_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=CHUNKS_IN_FLIGHT, thread_name_prefix="fts-build")


@functools.lru_cache(maxsize=1)
def _tail_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=TAIL_WORKERS, thread_name_prefix="fts-tail")


Wanted = Callable[[TokenStream], np.ndarray]


def start_tail(
    snap: TableSnapshot, index: IndexMeta, gaps: Sequence[tuple[int, int]], new_id: Callable[[], str],
    wanted: Wanted | None = None, seed: Sequence[str] = (),
) -> Callable[[], list[Segment]]:
    """Start indexing the rows of ``gaps`` (inclusive row-id ranges no segment holds) in
    background threads; the returned function waits for the segments. ``seed`` terms are
    handed to the analyzer; ``wanted(stream)`` (when given) names the stream term ids a
    piece keeps postings for — every row's length is kept either way."""
    analyzer = analyzer_for(index.analyzer)
    last = snap.row_count - 1
    jobs: list[tuple[str, int, int, pa.Table | None]] = []
    for lo, hi in gaps:
        batches = list(snap.scan([index.column], row_range=(lo, hi)))
        rows = pa.Table.from_batches(batches) if batches else None
        n = rows.num_rows if rows is not None else 0
        pieces = max(1, min(TAIL_WORKERS, n // TAIL_PIECE_ROWS))
        cuts = [n * i // pieces for i in range(pieces + 1)]
        ids = rows.column(0) if rows is not None else None
        for i in range(pieces):
            p_lo = lo if i == 0 else ids[cuts[i]].as_py()
            p_hi = hi if i == pieces - 1 else ids[cuts[i + 1]].as_py() - 1
            part = rows.slice(cuts[i], cuts[i + 1] - cuts[i]) if rows is not None else None
            jobs.append((new_id(), p_lo, p_hi, part))

    def build(job: tuple[str, int, int, pa.Table | None]) -> Segment:
        seg_id, p_lo, p_hi, part = job
        covered = (p_lo, min(p_hi, last))
        if part is None or not part.num_rows:
            return build_segment(seg_id, p_lo, p_hi, covered, np.zeros(0, np.int64), None, index.positions)
        stream = analyzer.analyze(part.column(1), seed=seed)
        keep = wanted(stream) if wanted is not None else None
        return build_segment(seg_id, p_lo, p_hi, covered, part.column(0).to_numpy(), stream, index.positions, keep)

    futures = [_tail_pool().submit(build, job) for job in jobs]
    return lambda: [f.result() for f in futures]
