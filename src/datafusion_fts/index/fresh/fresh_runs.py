"""The fresh tier's in-memory index (docs/design.md: "Fresh tier and visibility"): inserted rows in
runs, each run with one segment per indexed column over exactly its rows.

An insert tokenizes its batch once per indexed column and becomes a run. Runs are merged
tiered, as an LSM tree merges (:mod:`..tiers`): a run's *level* is log_T of its rows (T =
``TIER``), and whenever the newest T runs share a level they merge into one run of the next
level. Equal inserts then count in base T: at most T - 1 runs per level, O(log n) runs
however small the inserts, each row copied log_T(n) times in all (postings are merged,
never re-tokenized). Irregular sizes can leave small runs behind bigger ones; past
``MAX_RUNS`` the adjacent pair with the fewest rows merges. Merging never changes what a
search sees: a merged segment ranks the same rows with the same tokens.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable, Mapping

import pyarrow as pa

from ...analysis import analyzer_for
from ...storage.files.manifest import IndexMeta
from ..building.builder import build_segment, merge_segments
from ..segment import InMemorySegment
from ..tiers import tiered

# Runs past which the adjacent pair with the fewest rows merges (:func:`.tiers.tiered`).
MAX_RUNS = 24
# Merged runs up to this many rows keep their rows in one record batch (few batches keep
# registering the fresh rows with DataFusion cheap); bigger ones keep their batches.
CONCAT_MAX_ROWS = 1 << 10

NewId = Callable[[], str]


@dataclass(frozen=True)
class FreshRun:
    """Fresh rows with consecutive row ids (``batches``: ``_rowid`` first) and a segment
    per indexed column over them, built with the index's current options (every change of
    an index flushes the fresh tier first)."""

    batches: tuple[pa.RecordBatch, ...]
    segments: Mapping[str, InMemorySegment]

    @property
    def rows(self) -> int:
        return sum(b.num_rows for b in self.batches)


def batch_segment(batch: pa.RecordBatch, index: IndexMeta, seg_id: str, tally: Counter) -> InMemorySegment:
    """A segment over the rows of ``batch`` (consecutive ``_rowid``\\ s first);
    ``tally["fresh_rows_tokenized"]`` counts the rows."""
    tally["fresh_rows_tokenized"] += batch.num_rows
    ids = batch.column(0).to_numpy()
    lo, hi = int(ids[0]), int(ids[-1])
    stream = analyzer_for(index.analyzer).analyze_rows(batch, index.column)
    return InMemorySegment.of(build_segment(seg_id, lo, hi, (lo, hi), ids, stream, index.positions))


def build_run(batch: pa.RecordBatch, indexes: Mapping[str, IndexMeta], new_id: NewId, tally: Counter) -> FreshRun:
    """A run over ``batch``, tokenized once per indexed column."""
    return FreshRun((batch,), {c: batch_segment(batch, ix, new_id(), tally) for c, ix in indexes.items()})


def move_run(run: FreshRun, first: int) -> FreshRun:
    """A one-batch run built with row ids 0.. moved to row ids ``first``.. (a segment's rows
    are relative to its base, so only the ids and the segments' ranges change)."""
    (batch,) = run.batches
    ids = pa.array(batch.column(0).to_numpy() + first)
    moved = pa.RecordBatch.from_arrays([ids, *batch.columns[1:]], schema=batch.schema)
    segments = {
        c: replace(seg, meta=replace(seg.meta, lo=seg.meta.lo + first, hi=seg.meta.hi + first, base=seg.meta.base + first))
        for c, seg in run.segments.items()
    }
    return FreshRun((moved,), segments)


def concat_batches(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    """One record batch holding ``batches`` in order."""
    if len(batches) == 1:
        return batches[0]
    table = pa.Table.from_batches(batches).combine_chunks()
    return pa.RecordBatch.from_arrays([c.chunk(0) for c in table.columns], schema=table.schema)


def merge_runs(runs: list[FreshRun], new_id: NewId) -> FreshRun:
    """One run holding ``runs`` (consecutive, ascending)."""
    if len(runs) == 1:
        return runs[0]
    segments = {
        column: InMemorySegment.of(merge_segments(new_id(), [r.segments[column] for r in runs], packed=False))
        for column in runs[0].segments
    }
    batches = tuple(b for r in runs for b in r.batches)
    if sum(b.num_rows for b in batches) <= CONCAT_MAX_ROWS:
        batches = (concat_batches(list(batches)),)
    return FreshRun(batches, segments)


def append_run(runs: tuple[FreshRun, ...], run: FreshRun, new_id: NewId) -> tuple[FreshRun, ...]:
    """``runs`` plus ``run``, with the tiered merges that keep their number logarithmic."""
    out = [*runs, run]
    return tuple(merge_runs(out[i:j], new_id) for i, j in tiered([r.rows for r in out], MAX_RUNS))


def fresh_batches(runs: tuple[FreshRun, ...]) -> tuple[pa.RecordBatch, ...]:
    return tuple(b for r in runs for b in r.batches)


def fresh_segments(runs: tuple[FreshRun, ...]) -> dict[str, tuple[InMemorySegment, ...]]:
    """Each indexed column's segments over the runs, oldest first."""
    if not runs:
        return {}
    return {c: tuple(r.segments[c] for r in runs) for c in runs[0].segments}
