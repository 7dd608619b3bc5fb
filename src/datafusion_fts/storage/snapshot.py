"""A consistent view of one table at one manifest version: what a query reads."""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator, Mapping, TypeVar

import numpy as np
import pyarrow as pa

from .coded_rows import CodedRows
from .files.manifest import ROWID, FragmentMeta, IndexMeta, TableMeta, text_columns
from .parquet.large_take import take_out_of_order
from .parquet.reorder_rows import reorder_rows
from .sources.source_files import TAIL_ID_PREFIX, SourceFiles
from .stores.store import SCAN_BATCH_ROWS, Store

if TYPE_CHECKING:
    from ..index.segment import Segment

# Rows fetched at once when many rows are asked for out of order (see storage/parquet/large_take.py).
TAKE_BATCH_ROWS = 16_384
T = TypeVar("T")


@dataclass(frozen=True)
class TableSnapshot:
    """Committed fragments (``meta``) plus the fresh rows acknowledged but not yet flushed
    (``fresh``: batches with ``_rowid`` first, ids right after the committed ones) and the
    in-memory segments over them (``fresh_segments``: per indexed column, taken in the
    same step as the rows). A query takes one snapshot at its start: its visibility cut
    (docs/design.md: "Fresh tier and visibility"). A table indexed in place reads its
    rows from its source's files (``files``), as listed at the snapshot."""

    meta: TableMeta
    store: Store
    fresh: tuple[pa.RecordBatch, ...] = ()
    fresh_segments: Mapping[str, tuple["Segment", ...]] = field(default_factory=dict, repr=False)
    files: SourceFiles | None = field(default=None, repr=False, compare=False)
    # See derived().
    memo: dict[tuple, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    # A database's table: indexes may cover its rows (else a session's: sources/foreign.py).
    managed: ClassVar[bool] = True

    @property
    def name(self) -> str:
        return self.meta.name

    def index(self, column: str) -> IndexMeta | None:
        """The full-text index of ``column``, if it has one."""
        return self.meta.indexes.get(column)

    @property
    def schema(self) -> pa.Schema:
        return self.meta.schema

    @property
    def sql_schema(self) -> pa.Schema:
        """The columns as SQL declares them (their types in results)."""
        return self.meta.sql_schema

    def searched_columns(self) -> list[str]:
        """The columns a query string searches by default: the indexed ones, else the text ones."""
        return list(self.meta.fulltext) or text_columns(self.schema)

    @property
    def committed_rows(self) -> int:
        return self.meta.committed_rows

    @property
    def row_count(self) -> int:
        """Row ids handed out and visible to this snapshot: 0 .. row_count - 1."""
        return self.meta.next_rowid + sum(b.num_rows for b in self.fresh)

    @property
    def _data(self) -> Store | SourceFiles:
        """What the rows are read from: the store's fragments, or a source's files."""
        return self.files if self.files is not None else self.store

    @cached_property
    def rows_key(self) -> tuple:
        """What, beside its fragments' deletion vectors, tells this snapshot's rows from
        another version's under the same row ids: for a table indexed in place, its files
        (a file rewritten is read under new ids) and the ids handed out (with the files,
        they make its holes); nothing for a managed table."""
        if self.meta.source is None:
            return ()
        return self.meta.next_rowid, tuple((f.row_lo, f.file, f.size, f.mtime_ns) for f in self.meta.fragments)

    def derived(self, key: tuple, make: Callable[..., T], *args: Any) -> T:
        """``make(*args)``, computed once per snapshot under ``key``: for what depends on
        the snapshot alone and every query on it asks for (a column's coverage, its
        segment set, the planner's choice). A Database hands the same snapshot to every
        query until the table changes, so these are computed once per table version."""
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = make(*args)
        return hit

    def covered(self, column: str) -> tuple[tuple[int, int], ...]:
        """Inclusive row-id ranges some segment of ``column``'s index holds (persisted or
        fresh), merged, ascending (computed once per snapshot and column)."""
        return self.derived(("covered", column), self._merged_spans, column)

    def _merged_spans(self, column: str) -> tuple[tuple[int, int], ...]:
        index = self.meta.indexes.get(column)
        spans = [(s.base, s.base + s.count - 1) for s in index.segments if s.count] if index else []
        spans += [(s.meta.base, s.meta.base + s.meta.count - 1) for s in self.fresh_segments.get(column, ())]
        merged: list[tuple[int, int]] = []
        for lo, hi in sorted(spans):
            if merged and lo <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        return tuple(merged)

    def uncovered(self, column: str) -> list[tuple[int, int]]:
        """Inclusive row-id ranges of this snapshot that no segment of ``column`` holds."""
        gaps, start = [], 0
        for lo, hi in self.covered(column):
            if lo > start:
                gaps.append((start, min(lo, self.row_count) - 1))
            start = max(start, hi + 1)
        if start < self.row_count:
            gaps.append((start, self.row_count - 1))
        return [(lo, hi) for lo, hi in gaps if lo <= hi]

    def describe_source(self) -> str | None:
        """For EXPLAIN, a table indexed in place as this snapshot found its files: how
        many, which are not indexed yet (the tail), and the ids of rows whose files
        changed or went away since (read as deleted: no plan answers from them); None for
        a table whose rows the database holds."""
        if not self.meta.source:
            return None
        tail = [f.file for f in self.meta.fragments if f.id.startswith(TAIL_ID_PREFIX)]
        committed = len(self.meta.fragments) - len(tail)
        parts = [f"{self.meta.source} ({committed + len(tail)} files)"]
        if tail:
            parts.append(f"new or changed since committed: {', '.join(str(f) for f in tail)}")
        if self.meta.holes:
            parts.append("rows of changed or removed files: " + ", ".join(f"{lo}..{hi}" for lo, hi in self.meta.holes))
        return "; ".join(parts)

    def files_in(self, ranges: tuple[tuple[int, int], ...]) -> tuple[str, ...]:
        """The source files (of a table indexed in place) holding rows of ``ranges``."""
        return tuple(
            f.file for f in self.meta.fragments
            if f.file is not None and any(f.row_lo <= hi and lo <= f.row_hi for lo, hi in ranges)
        )

    def covered_until(self, column: str) -> int:
        """The highest row id r such that a segment holds every row 0..r (-1 if none)."""
        spans = self.covered(column)
        return spans[0][1] if spans and spans[0][0] == 0 else -1

    def scan(
        self, columns: list[str], batch_rows: int = SCAN_BATCH_ROWS, row_range: tuple[int, int] | None = None
    ) -> Iterator[pa.RecordBatch]:
        """Batches of ``_rowid`` plus ``columns`` in row-id order, optionally only rows in
        the inclusive ``row_range``."""
        wanted = [ROWID, *[c for c in columns if c != ROWID]]
        for frag in self.meta.fragments:
            if row_range is not None and (frag.row_hi < row_range[0] or frag.row_lo > row_range[1]):
                continue
            local = None
            if row_range is not None:
                lo, hi = max(row_range[0], frag.row_lo), min(row_range[1], frag.row_hi)
                local = (int(self._places(frag, np.array([lo]))[0]),
                         int(self._places(frag, np.array([hi + 1]))[0]) - 1)  # (hi itself may be a gap)
                if local[1] < local[0]:
                    continue
            deleted = self.store.read_deletes(frag.deletes, frag.deletes_crc) if frag.deletes else None
            for batch in self._data.iter_fragment(frag.id, wanted, batch_rows, local):
                if deleted is not None:
                    ids = batch.column(0).to_numpy()
                    batch = batch.filter(pa.array(~np.isin(ids, deleted, assume_unique=True)))
                    if not batch.num_rows:
                        continue
                if row_range is not None:
                    ids = batch.column(0).to_numpy()
                    if ids[0] < row_range[0] or ids[-1] > row_range[1]:
                        lo = int(np.searchsorted(ids, row_range[0]))
                        hi = int(np.searchsorted(ids, row_range[1], side="right"))
                        batch = batch.slice(lo, hi - lo)
                        if not batch.num_rows:
                            continue
                yield batch
        for batch in self.fresh:
            if row_range is not None:
                ids = batch.column(0).to_numpy()
                lo = int(np.searchsorted(ids, row_range[0]))
                hi = int(np.searchsorted(ids, row_range[1], side="right"))
                batch = batch.slice(lo, hi - lo)
                if not batch.num_rows:
                    continue
            yield batch.select(wanted)

    @cached_property
    def deleted(self) -> np.ndarray:
        """Every deleted committed row id, ascending: those of the deletion vectors, and
        the holes of a table indexed in place (``TableMeta.holes``)."""
        return self.deleted_from(0)

    def deleted_from(self, first: int) -> np.ndarray:
        """The deleted committed row ids from ``first`` on, ascending, reading only the
        deletion vectors of fragments that reach ``first``: a table held in memory filters
        its fresh rows (ids from ``next_rowid`` on) by them at each commit, where reading
        every vector took 2 ms for each 335,000 ids deleted over a table's history."""
        parts = [self.store.read_deletes(f.deletes, f.deletes_crc) for f in self.meta.fragments
                 if f.deletes and f.row_hi >= first]
        parts += [np.arange(max(lo, first), hi + 1, dtype=np.int64) for lo, hi in self.meta.holes if hi >= first]
        if not parts:
            return np.zeros(0, dtype=np.int64)
        ids = np.sort(np.concatenate(parts)) if len(parts) > 1 else parts[0]
        return ids[np.searchsorted(ids, first):] if first else ids

    def live_rows(self) -> np.ndarray:
        """Every live committed row id, ascending."""
        parts = [np.arange(f.row_lo, f.row_lo + f.rows, dtype=np.int64) for f in self.meta.fragments]
        parts += [b.column(0).to_numpy() for b in self.fresh]
        if not parts:
            return np.zeros(0, dtype=np.int64)
        rows = np.concatenate(parts)
        if len(self.deleted):
            rows = rows[~np.isin(rows, self.deleted, assume_unique=True)]
        return rows

    def take(self, row_ids: np.ndarray, columns: list[str]) -> pa.Table:
        """The ``columns`` of ``row_ids`` (live rows of this snapshot, in any order,
        repeats allowed), in the order given. More than ``TAKE_BATCH_ROWS`` ids out of
        order (a search without a limit) are fetched in bounded memory, in slices of
        the order asked or in two passes (:mod:`.large_take`)."""
        columns = [c for c in columns if c != ROWID]
        schema = pa.schema([self.schema.field(c) for c in columns])
        if not len(row_ids) or not columns:
            return pa.Table.from_batches([], schema=schema) if not len(row_ids) else _no_columns(len(row_ids))
        if len(row_ids) > TAKE_BATCH_ROWS and np.any(row_ids[1:] < row_ids[:-1]):
            return take_out_of_order(self._take, row_ids, columns, schema, self._page_keys, TAKE_BATCH_ROWS)
        return self._take(row_ids, columns)

    def take_codes(self, row_ids: np.ndarray, column: str) -> list[CodedRows]:
        """``column`` (text or integers) of ``row_ids`` (live rows, ascending, distinct) as
        codes, one part a fragment (its own keys) and one for the fresh rows: counting by it
        needs codes, not a value per row (``Store.take_codes``)."""
        stored, fresh_from = self._stored(row_ids)
        parts = self._data.take_codes(stored, column) if stored else []
        if fresh_from < len(row_ids):
            fresh = pa.Table.from_batches(self.fresh).column(column)
            parts.append(CodedRows.of(fresh.take(pa.array(row_ids[fresh_from:] - self.meta.next_rowid))))
        return parts

    def whole_codes(self, column: str, lo: int, hi: int, n: int) -> tuple[np.ndarray, pa.Array, int] | None:
        """Column ``column`` (text or integers) over the row ids [lo, hi) as codes
        (``Store.whole_codes``), their keys, and the id of the first code, where one
        fragment holds those ids and its store keeps such codes for counting ``n`` of its
        rows (a row's code is then at its id less that first id: a fragment whose file
        lacks the ids of rows deleted before it was written has its codes spread over its
        ids, those ids' codes never counted, and ids past its file have none); else None.
        What counting matches by a column from their postings needs
        (``SegmentSet.count_by``)."""
        at = bisect_right(self._fragment_starts, lo) - 1
        frag = self.meta.fragments[at] if at >= 0 else None
        # (ids past its file up to the next fragment are of rows deleted before it was
        # written: no code, never counted; fresh rows have no fragment)
        end = self._fragment_starts[at + 1] if at + 1 < len(self._fragment_starts) else self.meta.next_rowid
        if frag is None or hi > end:
            return None
        gaps = self.derived(("gaps", frag.id), self.store.read_deletes, frag.gaps, frag.gaps_crc) - frag.row_lo \
            if frag.gaps else None
        found = self._data.whole_codes(frag.id, column, n, gaps)
        return None if found is None else (*found, frag.row_lo)

    def _take(self, row_ids: np.ndarray, columns: list[str]) -> pa.Table:
        """:meth:`take` in one fetch: the store is asked once for the rows of every
        fragment, ascending, and reads only the pages they sit in (the values laid out in
        the order asked where no fresh row is among them)."""
        ascending = bool(np.all(row_ids[1:] > row_ids[:-1]))  # (a search's matches: no sort needed)
        rows, inverse = (row_ids, None) if ascending else np.unique(row_ids, return_inverse=True)
        stored, fresh_from = self._stored(rows)
        if inverse is not None and stored and fresh_from == len(rows):
            # (the store picks the values in the order asked: a top k's rows by score)
            return self._data.take_rows(stored, columns, inverse)
        parts = [self._data.take_rows(stored, columns)] if stored else []
        if fresh_from < len(rows):
            fresh = pa.Table.from_batches(self.fresh).select(columns)
            parts.append(fresh.take(pa.array(rows[fresh_from:] - self.meta.next_rowid)))
        table = parts[0] if len(parts) == 1 else pa.concat_tables(parts)
        return table if inverse is None or np.array_equal(rows, row_ids) else reorder_rows(table, inverse)

    @cached_property
    def _fragment_starts(self) -> list[int]:
        """Each fragment's first row id, ascending (as the fragments are)."""
        return [f.row_lo for f in self.meta.fragments]

    def _stored(self, rows: np.ndarray) -> tuple[list[tuple[str, np.ndarray]], int]:
        """Ascending distinct ``rows`` as (fragment id, local rows) of each fragment
        holding some, and where in ``rows`` the fresh ones begin."""
        # Fragments hold ascending, disjoint ranges and fresh rows follow them all, so each
        # one's rows are a slice of ``rows``.
        bounds = np.searchsorted(rows, [f.row_lo for f in self.meta.fragments] + [self.meta.next_rowid])
        stored = [
            (frag.id, self._places(frag, rows[lo:hi]))
            for frag, lo, hi in zip(self.meta.fragments, bounds[:-1].tolist(), bounds[1:].tolist()) if lo < hi
        ]
        return stored, int(bounds[-1])

    def _places(self, frag: FragmentMeta, ids: np.ndarray) -> np.ndarray:
        """Where the rows ``ids`` of fragment ``frag`` (ascending, in its range) are in its
        file: their offsets from its first row id, less the ids before them that its file
        lacks (its gaps, after compaction: ``FragmentMeta.gaps``). For an id that is a gap,
        the place of the next row."""
        places = ids - frag.row_lo if frag.row_lo else ids  # (the ids themselves: no copy)
        if frag.gaps:
            gaps = self.derived(("gaps", frag.id), self.store.read_deletes, frag.gaps, frag.gaps_crc)
            places = places - np.searchsorted(gaps, ids)
        return places

    def fetch_units(self, row_ids: np.ndarray, columns: list[str]) -> dict[str, Counter[str]]:
        """Per column, what :meth:`take` of ``row_ids`` reads (pages, row groups, rows
        in memory), for EXPLAIN ANALYZE: a fetch costs what it touches."""
        rows = np.unique(row_ids)
        stored, fresh_from = self._stored(rows)
        units = {}
        for column in columns:
            if column == ROWID:
                continue
            found = self._data.fetch_units(stored, column) if stored else Counter()
            if fresh_from < len(rows):
                found["fresh rows in memory"] += len(rows) - fresh_from
            units[column] = found
        return units

    def _page_keys(self, row_ids: np.ndarray, column: str) -> np.ndarray | None:
        """Per id, a key of the page of ``column`` holding it (-1: a fresh row), or None
        if the store does not read by page (see large_take)."""
        rows, inverse = np.unique(row_ids, return_inverse=True)
        stored, fresh_from = self._stored(rows)
        keys = self._data.pages_of(stored, column) if stored else np.zeros(0, np.int64)
        if keys is None:
            return None
        return np.concatenate([keys, np.full(len(rows) - fresh_from, -1, np.int64)])[inverse]


def _no_columns(n_rows: int) -> pa.Table:
    """A table of ``n_rows`` rows and no columns."""
    return pa.table({"_": pa.nulls(n_rows)}).drop_columns(["_"])
