"""Compaction of a managed table's data fragments (docs/design.md: "Data fragments"). Every
flush adds a fragment and every delete leaves dead rows in one; here consecutive fragments
are merged into one file of their live rows, under the same row ids, so a table keeps few
fragments and few dead rows whatever its history of inserts, deletes and updates.

Each write plans with :func:`.tiers.tiered` (the newest 8 fragments merge when their live
rows have as many digits in base 8; past ``fts.max_fragments`` the neighbours holding the
fewest merge) and rewrites a fragment half of whose rows are deleted; OPTIMIZE merges
neighbours while a merged fragment holds at most ``FRAGMENT_ROWS`` rows, and rewrites a
fragment a tenth of whose rows are deleted. A merged fragment's range keeps the ids its
file lacks as gaps (``FragmentMeta.gaps``, also in its deletion vector); a range whose
rows are all deleted is held by no fragment any more (``TableMeta.holes``). A row id names
the same row before and after, so every search answers alike. The index segments lying
wholly in a merged range (a flush writes one per column over its fragment's rows) are
merged with it, their postings copied as they are (OPTIMIZE rebuilds the segments that
hold deleted rows), so segments do not pile up as flushes add them (rows a bulk load left
unindexed keep apart the segments before and after them, until OPTIMIZE indexes them).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import numpy as np
import pyarrow as pa

from ..index.building.builder import merge_segments
from ..index.segment import Segment
from ..index.tiers import tiered
from ..storage.files.manifest import (
    PAGED_LAYOUT,
    ROWID,
    FragmentMeta,
    IndexMeta,
    Manifest,
    SegmentMeta,
)
from ..storage.snapshot import TableSnapshot
from ..storage.stores.append_rows import FRAGMENT_ROWS
from ..storage.stores.store import Store

# A write rewrites a fragment of which at least 1/WRITE_WASTE of the rows its file holds
# are deleted; OPTIMIZE one of which at least 1/OPTIMIZE_WASTE are (a directory then takes
# little more than a fresh build of the same live rows).
WRITE_WASTE = 2
OPTIMIZE_WASTE = 10


def plan(fragments: Sequence[FragmentMeta], most: int, full: bool = False) -> list[tuple[int, int]]:
    """The ranges ``[i, j)`` of ``fragments`` to rewrite, each as one fragment of their live
    rows (none if they have none): by each write's rules, or OPTIMIZE's when ``full``."""
    live = [f.rows - f.deleted for f in fragments]
    groups = _neighbours(live) if full else tiered(live, most, FRAGMENT_ROWS)
    share = OPTIMIZE_WASTE if full else WRITE_WASTE
    return [(i, j) for i, j in groups if j - i > 1 or _wasteful(fragments[i], share, full)]


def _neighbours(sizes: list[int]) -> list[tuple[int, int]]:
    """Runs of neighbours, each run as long as its sizes sum to at most ``FRAGMENT_ROWS``:
    two neighbouring runs then hold more, so at most 2 * sum(sizes) / FRAGMENT_ROWS + 1 runs."""
    groups: list[list[int]] = []
    for i, size in enumerate(sizes):
        if groups and groups[-1][2] + size <= FRAGMENT_ROWS:
            groups[-1][1:] = [i + 1, groups[-1][2] + size]
        else:
            groups.append([i, i + 1, size])
    return [(i, j) for i, j, _ in groups]


def _wasteful(frag: FragmentMeta, share: int, full: bool) -> bool:
    """Whether ``frag`` alone is worth rewriting: its file holds deleted rows, at least
    1/``share`` of its rows; or (by OPTIMIZE) it is of an earlier layout."""
    dead = frag.stored_rows - (frag.rows - frag.deleted)
    return (dead > 0 and dead * share >= frag.stored_rows) or (full and frag.layout != PAGED_LAYOUT)


def compacted(store: Store, manifest: Manifest, name: str, most: int, segment: Callable[[SegmentMeta], Segment],
              full: bool = False) -> Manifest:
    """``manifest`` with the fragments of table ``name`` merged as :func:`plan` says, and
    its index segments as :func:`_merged_segments` does (those merged opened by
    ``segment``), their files written (not committed); ``manifest`` itself when nothing
    merges, or the table is indexed in place (its fragments are the user's files)."""
    meta = manifest.tables[name]
    if meta.source is not None:
        return manifest
    fragments = list(meta.fragments)
    groups = plan(fragments, most, full)
    if groups:
        snap = TableSnapshot(meta, store)
        file_schema = pa.schema([pa.field(ROWID, pa.int64(), False), *meta.schema])
        for i, j in reversed(groups):
            manifest, fragments[i:j] = _merged(store, manifest, snap, file_schema, fragments[i:j])
    indexes = dict(meta.indexes)
    for column, index in meta.indexes.items():
        manifest, indexes[column] = _merged_segments(store, manifest, index, most, segment)
    if not groups and indexes == meta.indexes:
        return manifest
    return manifest.with_table(replace(meta, fragments=tuple(fragments), indexes=indexes))


def _merged_segments(store: Store, manifest: Manifest, index: IndexMeta, most: int,
                     segment: Callable[[SegmentMeta], Segment]) -> tuple[Manifest, IndexMeta]:
    """``index`` with its segments merged as the fragments are (:func:`.tiers.tiered` over
    their rows, at most ``FRAGMENT_ROWS`` a merged one), written (not committed), within
    runs of segments each starting where the one before ended, none overlapped by another
    (a row is ranked by the first segment holding it, and rows no segment holds are an
    unindexed tail: merging such a run changes neither). Every flush adds a segment per
    indexed column: without this they piled up as fragments did (the segments of rows
    since deleted too)."""
    ordered = sorted(index.segments, key=lambda s: (s.lo, s.hi))
    runs: list[list[SegmentMeta]] = []
    reach = -1  # (the highest row id any segment before holds)
    for s in ordered:
        alone = s.count > 0 and s.lo > reach  # (no segment before overlaps it)
        before = runs[-1][-1] if runs and runs[-1] else None
        if alone and before is not None and s.lo == before.hi + 1 and s.base == before.base + before.count:
            runs[-1].append(s)
        else:
            if runs and runs[-1] and not alone:
                runs[-1].pop()  # (the segment before is overlapped by this one)
            runs.append([s] if alone else [])
        reach = max(reach, s.hi)
    merged: dict[str, SegmentMeta] = {}  # (by the first segment of each merged group)
    gone: set[str] = set()
    for run in runs:
        for i, j in tiered([s.count for s in run], most, FRAGMENT_ROWS):
            if j - i < 2:
                continue
            seg_id, manifest = manifest.file_id("seg")
            new = merge_segments(seg_id, [segment(s) for s in run[i:j]])
            merged[run[i].id] = new.write_to(store).meta
            gone.update(s.id for s in run[i:j])
    if not merged:
        return manifest, index
    segments = [merged.get(s.id, s) for s in ordered if s.id in merged or s.id not in gone]
    return manifest, replace(index, segments=tuple(segments))


def _merged(store: Store, manifest: Manifest, snap: TableSnapshot, file_schema: pa.Schema,
            group: list[FragmentMeta]) -> tuple[Manifest, list[FragmentMeta]]:
    """The live rows of ``group`` written as one fragment (none when they have none), its
    range from their first row id to their last, and the manifest reserving its files."""
    batches = snap.scan(file_schema.names[1:], row_range=(group[0].row_lo, group[-1].row_hi))
    first = next(batches, None)
    if first is None:
        return manifest, []
    last = [first]

    def rows() -> Iterator[pa.RecordBatch]:
        for batch in itertools.chain([first], batches):
            last[0] = batch
            yield batch if batch.schema.equals(file_schema) else pa.RecordBatch.from_arrays(
                batch.columns, schema=file_schema)

    frag_id, manifest = manifest.file_id("frag")
    written, crcs = store.write_fragment(frag_id, file_schema, rows())
    lo, hi = first.column(0)[0].as_py(), last[0].column(0)[-1].as_py()
    frag = FragmentMeta(frag_id, lo, hi - lo + 1, layout=PAGED_LAYOUT, crc=crcs.whole, footer_crc=crcs.footer)
    deleted = snap.deleted  # (with the holes between the group's fragments)
    gaps = deleted[np.searchsorted(deleted, lo) : np.searchsorted(deleted, hi, side="right")]
    if len(gaps):
        dv_id, manifest = manifest.file_id("dv")
        crc = store.write_deletes(dv_id, gaps)
        frag = replace(frag, deletes=dv_id, deleted=len(gaps), deletes_crc=crc, gaps=dv_id, gaps_crc=crc,
                       gap_rows=len(gaps))
    assert written == frag.stored_rows
    return manifest, [frag]
