"""Index the rows of a row-id range of a table snapshot.

``build_range`` works in bounded memory: rows are read in batches and tokenized a chunk
(at most ``BUILD_CHUNK_BYTES`` of text) at a time, in the background while the next chunk
is read (``CHUNKS_IN_FLIGHT``); each chunk becomes a bit-packed segment, every
``CHUNKS_PER_MERGE`` of them are merged into one as the build goes on, and at the end
neighbouring segments are merged (``merge_neighbours``), in one k-way merge per group,
while the merged segment stays under ``MERGE_MAX_POSTINGS``. Index builds use them
(segments then persisted), reporting each phase (:mod:`.build_progress`).

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

from ...analysis import TokenStream, analyzer_for
from ...storage.files.manifest import IndexMeta
from ...storage.snapshot import TableSnapshot
from ..segment import Segment
from .build_progress import MERGING, BuildReporter
from .builder import build_segment, merge_segments
from .malloc_policy import large_blocks_returned

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


def live_rows(snap: TableSnapshot, lo: int, hi: int) -> int:
    """Rows of the inclusive row-id range [lo, hi] that exist and are not deleted: what a
    build over it indexes."""
    last = snap.row_count - 1
    if lo > last:
        return 0
    deleted = snap.deleted
    gone = int(np.searchsorted(deleted, min(hi, last), side="right") - np.searchsorted(deleted, lo))
    return min(hi, last) - lo + 1 - gone


@large_blocks_returned()  # (what a chunk frees does not stay in the heap)
def build_range(
    snap: TableSnapshot, index: IndexMeta, lo: int, hi: int, new_id: Callable[[], str],
    progress: BuildReporter,
) -> list[Segment]:
    """Chunk segments (disjoint, in row order) over the inclusive row-id range [lo, hi] of
    ``index``'s column, for :func:`merge_neighbours`; ``progress`` is told the rows of each
    chunk as it is finished (the caller has started its tokenizing phase)."""
    analyzer = analyzer_for(index.analyzer)
    last = snap.row_count - 1
    chunks: list[Segment] = []
    merged = 0  # chunks[:merged] are merges of CHUNKS_PER_MERGE chunks each
    building: list[tuple[Future[Segment], int]] = []  # (chunk, its rows), in row order
    pending: list[pa.RecordBatch] = []
    pending_bytes = pending_rows = 0

    def collect(wait: bool) -> None:
        """Take the finished chunks off the front of ``building`` (waiting for the first
        while ``wait``), telling ``progress`` their rows; every ``CHUNKS_PER_MERGE`` new
        chunks are merged into one while the build goes on."""
        nonlocal merged
        while building and (wait or building[0][0].done()):
            future, rows = building.pop(0)
            chunks.append(future.result())
            progress.advance(rows)
            wait = False
            if len(chunks) - merged >= CHUNKS_PER_MERGE:
                chunks[merged:] = [merge_segments(new_id(), chunks[merged:])]
                merged += 1

    def build_chunk(chunk_lo: int, chunk_hi: int) -> None:
        """Tokenize and invert the pending rows in the background while the next chunk is
        read (at most ``CHUNKS_IN_FLIGHT`` at a time, which bounds the memory)."""
        nonlocal pending, pending_bytes, pending_rows
        seg_id, covered, batches = new_id(), (chunk_lo, min(chunk_hi, last)), pending

        def build() -> Segment:
            if batches:
                table = pa.Table.from_batches(batches)
                row_ids = table.column(0).to_numpy()
                stream = analyzer.analyze_rows(table, index.column)
            else:
                row_ids, stream = np.zeros(0, np.int64), None
            return build_segment(seg_id, chunk_lo, chunk_hi, covered, row_ids, stream, index.positions).pack()

        collect(wait=len(building) >= CHUNKS_IN_FLIGHT)
        building.append((_build_pool().submit(build), pending_rows))
        pending, pending_bytes, pending_rows = [], 0, 0

    chunk_lo = lo
    for batch in snap.scan(index.analyzer.reads(index.column), row_range=(lo, hi)):
        pending.append(batch)
        pending_bytes += batch.column(index.column).nbytes
        pending_rows += batch.num_rows
        if pending_bytes >= BUILD_CHUNK_BYTES:
            last_id = int(batch.column(0)[-1].as_py())
            build_chunk(chunk_lo, last_id)
            chunk_lo = last_id + 1
        else:
            collect(wait=False)  # (chunks finished meanwhile show in the progress)
    last_built = not pending_rows and bool(chunks or building)  # (the last chunk then ends at hi)
    if not last_built:
        build_chunk(chunk_lo, hi)
    for future, rows in building:  # (no merges here: merge_neighbours merges them all at once)
        chunks.append(future.result())
        progress.advance(rows)
    if last_built:
        chunks[-1] = replace(chunks[-1], meta=replace(chunks[-1].meta, hi=hi))
    return chunks


@large_blocks_returned()
def merge_neighbours(
    segments: list[Segment], new_id: Callable[[], str], progress: BuildReporter,
    max_postings: int = MERGE_MAX_POSTINGS,
) -> list[Segment]:
    """``segments`` (sorted by row range) with each run of neighbours merged, in one k-way
    merge per run (merging them two at a time would copy the first ones again at every
    step), its batches of terms merged by the build's threads. A run holds non-empty
    segments each wholly after the one before (rows and row ids), while the merged segment
    stays under ``max_postings``. Starts ``progress``'s merging phase, over the rows of the
    runs of more than one segment."""
    groups: list[list[Segment]] = []
    postings = 0
    for seg in segments:
        prev = groups[-1][-1].meta if groups else None
        if (
            prev is not None and seg.meta.count and prev.count
            and prev.base + prev.count <= seg.meta.base and prev.hi < seg.meta.lo
            and postings + seg.meta.n_postings <= max_postings
        ):
            groups[-1].append(seg)
            postings += seg.meta.n_postings
        else:
            groups.append([seg])
            postings = seg.meta.n_postings
    progress.start(MERGING, sum(s.meta.count for group in groups if len(group) > 1 for s in group))
    out = []
    for group in groups:
        if len(group) == 1:
            out.append(group[0])
            continue
        out.append(merge_segments(new_id(), group, map_=_build_pool().map))
        progress.advance(sum(s.meta.count for s in group))
    return out


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
        batches = list(snap.scan(index.analyzer.reads(index.column), row_range=(lo, hi)))
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
        stream = analyzer.analyze_rows(part, index.column, seed=seed)
        keep = wanted(stream) if wanted is not None else None
        return build_segment(seg_id, p_lo, p_hi, covered, part.column(0).to_numpy(), stream, index.positions, keep)

    futures = [_tail_pool().submit(build, job) for job in jobs]
    return lambda: [f.result() for f in futures]
