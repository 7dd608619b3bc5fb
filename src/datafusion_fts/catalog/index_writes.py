"""Index writes (docs/design.md: "Building and merging"): an index built over every row, a
segment added over one range, and an index brought up to date by OPTIMIZE. Each writes its files, then commits them in one commit;
the writer (:mod:`.writer`) runs them inside ``Writer.writing``, so a failed one leaves
nothing behind."""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

import numpy as np

from ..index.building.build_progress import COMMITTING, TOKENIZING, WRITING, BuildReporter
from ..index.building.build_range import (
    MERGE_MAX_POSTINGS,
    build_range,
    live_rows,
    merge_neighbours,
)
from ..index.segment import Segment
from ..planner.segment_sets import SegmentSets
from ..settings import INT64_MAX, Settings
from ..storage.files.manifest import IndexMeta, Manifest, SegmentMeta
from ..storage.snapshot import TableSnapshot
from ..storage.stores.store import Store
from .table_state import TableState


class RayBuild(Protocol):
    """Segments over ``ranges`` built and written by Ray tasks, the ranges first split for
    parallelism when ``split``: the manifest reserving their file ids and their metadata.
    The catalog may not import ``distributed/`` (a layer above it), so ``table.py`` hands
    this in (``Table._built_on_ray``); it is called only with ``fts.executor = 'ray'``."""

    def __call__(
        self, manifest: Manifest, snap: TableSnapshot, index: IndexMeta, ranges: list[tuple[int, int]], split: bool
    ) -> tuple[Manifest, list[SegmentMeta]]: ...


class IndexWriter(Protocol):
    """What index writes need of the writer (:class:`.writer.Writer`, which cannot be
    imported here: it imports this module)."""

    store: Store
    state: TableState
    settings: Settings
    segment_sets: SegmentSets

    def commit(self, manifest: Manifest, flushed: str | None = None) -> None: ...


def build_index(writer: IndexWriter, name: str, index: IndexMeta, progress: BuildReporter, ray: RayBuild) -> None:
    """Commit ``index`` (its segments not yet built) of table ``name`` built over every
    committed row, replacing its segments."""
    snap = writer.state.snapshot(name)
    manifest, segments, written = _build_ranges(
        writer, writer.state.manifest, snap, index, [(0, max(snap.meta.next_rowid - 1, 0))], progress, ray, split=True
    )
    if not written:  # (Ray tasks merged their own, and the index keeps their pieces)
        manifest, segments = _merged(manifest, segments, progress)
    new = [seg for seg in segments if seg.meta.id not in written]
    _commit_index(writer, name, manifest, index, tuple(seg.meta for seg in segments), new, progress)


def add_segment(
    writer: IndexWriter, name: str, index: IndexMeta, lo: int, hi: int, progress: BuildReporter
) -> SegmentMeta:
    """Commit one more segment of ``index`` over the inclusive row range [lo, hi] (its chunks
    merged into one whatever its size); its metadata as committed."""
    snap = writer.state.snapshot(name)
    manifest, chunks = _tokenized(writer.state.manifest, snap, index, [(lo, hi)], progress)
    manifest, (segment,) = _merged(manifest, chunks, progress, max_postings=INT64_MAX)
    return _commit_index(writer, name, manifest, index, (*index.segments, segment.meta), [segment], progress)[-1]


def optimize_index(writer: IndexWriter, name: str, key: str, progress: BuildReporter, ray: RayBuild) -> None:
    """Bring the index ``key`` names (``IndexMeta.key``) up to date in one commit, or none when it is: segments
    holding deleted rows rebuilt over the same range without them, rows no segment holds
    indexed, then neighbouring segments, old and new, merged under the merge budget."""
    snap = writer.state.snapshot(name)
    index = snap.meta.indexes[key]
    deleted = snap.deleted
    kept: list[Segment] = []
    ranges = []
    for meta in index.segments:
        segment = writer.segment_sets.segment(meta)
        gone = np.searchsorted(deleted, [meta.base, meta.base + meta.count])
        # (a row deleted before the build has no token in it: only rows holding some count)
        if segment.dl[deleted[gone[0] : gone[1]] - meta.base].any():
            ranges.append((meta.lo, meta.hi))  # rebuilt without its deleted rows
        else:
            kept.append(segment)
    ranges.extend(snap.uncovered(key))  # rows no segment holds (a tail, gaps)
    manifest, built, written = _build_ranges(writer, writer.state.manifest, snap, index, ranges, progress, ray)
    manifest, merged = _merged(manifest, kept + built, progress)
    metas = tuple(s.meta for s in merged)
    if metas != index.segments:
        new = [s for s in merged if s.meta not in index.segments and s.meta.id not in written]
        _commit_index(writer, name, manifest, index, metas, new, progress)


def _build_ranges(
    writer: IndexWriter, manifest: Manifest, snap: TableSnapshot, index: IndexMeta, ranges: list[tuple[int, int]],
    progress: BuildReporter, ray: RayBuild, split: bool = False,
) -> tuple[Manifest, list[Segment], frozenset[str]]:
    """The tokenizing phase: segments over each inclusive range, in order, not yet merged
    (:func:`_merged`), with file ids reserved in ``manifest``, and the ids of those already
    written. With ``fts.executor = 'ray'`` they are built (merged and written) by parallel
    Ray tasks (``ray``), the ranges first ``split`` for parallelism when allowed; a failed
    task fails the build, and what the others wrote is removed (by ``Writer.writing``)."""
    if writer.settings.get("fts.executor") != "ray" or snap.meta.source is not None:
        # (Ray's build tasks read a store's fragments; a table indexed in place is
        # read where its files are, by this process)
        return (*_tokenized(manifest, snap, index, ranges, progress), frozenset())
    rows = sum(live_rows(snap, lo, hi) for lo, hi in ranges)
    progress.start(TOKENIZING, rows)
    if not ranges:
        return manifest, [], frozenset()
    manifest, metas = ray(manifest, snap, index, ranges, split)
    progress.advance(rows)  # (the tasks report nothing on their way)
    return manifest, [writer.segment_sets.segment(m) for m in metas], frozenset(m.id for m in metas)


def _tokenized(
    manifest: Manifest, snap: TableSnapshot, index: IndexMeta, ranges: list[tuple[int, int]], progress: BuildReporter,
) -> tuple[Manifest, list[Segment]]:
    """The tokenizing phase in this process: the chunk segments of each range, in order."""
    progress.start(TOKENIZING, sum(live_rows(snap, lo, hi) for lo, hi in ranges))
    new_id = _FileIds(manifest)
    segments = [seg for lo, hi in ranges for seg in build_range(snap, index, lo, hi, new_id, progress)]
    return new_id.manifest, segments


def _merged(
    manifest: Manifest, segments: list[Segment], progress: BuildReporter, max_postings: int = MERGE_MAX_POSTINGS,
) -> tuple[Manifest, list[Segment]]:
    """The merging phase: ``segments`` sorted by row range, runs of neighbours merged while
    a merged one stays under ``max_postings`` (:func:`merge_neighbours`)."""
    new_id = _FileIds(manifest)
    merged = merge_neighbours(sorted(segments, key=lambda s: (s.meta.lo, s.meta.hi)), new_id, progress, max_postings)
    return new_id.manifest, merged


def _commit_index(
    writer: IndexWriter, name: str, manifest: Manifest, index: IndexMeta, segments: tuple[SegmentMeta, ...],
    new: list[Segment], progress: BuildReporter,
) -> tuple[SegmentMeta, ...]:
    """The writing phase (the files of the ``new`` segments, each then carrying the crc of
    its checksum file), then the committing one: ``index`` of table ``name`` made of
    ``segments``, in one commit. Returns the segments as committed."""
    progress.start(WRITING, sum(seg.meta.count for seg in new))
    written = {}
    for seg in new:
        written[seg.meta.id] = seg.write_to(writer.store).meta
        progress.advance(seg.meta.count)
    segments = tuple(written.get(meta.id, meta) for meta in segments)
    index = replace(index, segments=segments)
    rows = sum(meta.count for meta in segments)
    progress.start(COMMITTING, rows)
    writer.commit(manifest.with_table(manifest.tables[name].with_index(index)))
    progress.advance(rows)
    return segments


class _FileIds:
    """New segment file ids, each reserved in ``manifest`` (the manifest holding them)."""

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest

    def __call__(self) -> str:
        seg_id, self.manifest = self.manifest.file_id("seg")
        return seg_id
