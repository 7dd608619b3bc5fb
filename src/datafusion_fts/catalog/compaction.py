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
rows are all deleted is held by no fragment any more (``TableMeta.holes``). Index segments
stay as they are: a row id names the same row before and after, so every search answers
alike (OPTIMIZE rebuilds the segments that hold deleted rows).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import replace

import numpy as np
import pyarrow as pa

from ..index.tiers import tiered
from ..storage.files.manifest import PAGED_LAYOUT, ROWID, FragmentMeta, Manifest
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


def compacted(store: Store, manifest: Manifest, name: str, most: int, full: bool = False) -> Manifest:
    """``manifest`` with the fragments of table ``name`` merged as :func:`plan` says, their
    files written (not committed); ``manifest`` itself when nothing merges, or the table is
    indexed in place (its fragments are the user's files)."""
    meta = manifest.tables[name]
    groups = plan(meta.fragments, most, full) if meta.source is None else []
    if not groups:
        return manifest
    snap = TableSnapshot(meta, store)
    file_schema = pa.schema([pa.field(ROWID, pa.int64(), False), *meta.schema])
    fragments = list(meta.fragments)
    for i, j in reversed(groups):
        manifest, fragments[i:j] = _merged(store, manifest, snap, file_schema, fragments[i:j])
    return manifest.with_table(replace(meta, fragments=tuple(fragments)))


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
