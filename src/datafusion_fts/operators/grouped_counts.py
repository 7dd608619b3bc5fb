"""Counts by a column over a search's matches (issue 44): the facets beside a search
page, for SQL's ``GROUP BY`` over a search answered without DataFusion
(sql/direct_groups.py) and ``Table.facets``.

The matches come unscored, ascending (``planner/count_matches.matching_rows``); a text key
is taken as codes into the fragment's whole column (``TableSnapshot.take_encoded``: no
string made per match), an integer key's offsets from its least value are its codes; the
codes are counted with ``numpy.bincount`` and the few groups ordered (``pyarrow`` ranks,
NULLs placed per key) and paged.

Only aggregates whose value does not depend on the order rows are added in are computed:
``count(*)``, ``count(c)``, and ``min``, ``max``, ``sum``, ``avg`` of signed integers
while the sum of their magnitudes stays under 2^53 (every partial sum is then exact,
whichever order DataFusion adds them in; its ``avg`` divides that float sum by the
count); past it the answer is declined (None), and the caller asks DataFusion. Each output
column is typed as DataFusion types it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..storage.snapshot import TableSnapshot

# Beyond this, a float sum of integers may round: the answer is DataFusion's.
_EXACT = float(2**53)


@dataclass(frozen=True)
class Aggregate:
    func: str  # count, sum, avg, min, max
    column: str | None  # (None: count(*))


@dataclass(frozen=True)
class GroupedCounts:
    """Matches grouped by one column of their table: each group's aggregates, the groups
    ordered and paged (``GROUP BY k ... ORDER BY ... LIMIT ... OFFSET``)."""

    key: str  # the table's column
    items: tuple[tuple[str, Aggregate | None], ...]  # (output name, aggregate; None: the key)
    order: tuple[tuple[str, bool, bool], ...]  # (output name, descending, nulls first)
    offset: int
    limit: int | None

    @property
    def columns(self) -> list[str]:
        """The table's columns the aggregates read."""
        read: list[str] = []
        for _, agg in self.items:
            if agg is not None and agg.column is not None and agg.column not in read:
                read.append(agg.column)
        return read

    @classmethod
    def facets(cls, column: str, limit: int | None) -> GroupedCounts:
        """The ``limit`` most frequent values of ``column`` among the matches, with their
        counts (``_count``), most frequent first, ties by value (NULL last):
        ``Table.facets``."""
        return cls(column, ((column, None), ("_count", Aggregate("count", None))),
                   (("_count", True, False), (column, False, False)), 0, limit)

    def over(self, ids: np.ndarray, version: TableSnapshot) -> pa.Table | None:
        """The answer over the live rows ``ids`` (ascending) of ``version``: a text key
        taken as codes (no string made per match)."""
        schema = version.meta.sql_schema
        if is_text(schema.field(self.key).type):
            return self.answer(version.take_encoded(ids, self.key), version.take(ids, self.columns), schema)
        rows = version.take(ids, list(dict.fromkeys([self.key, *self.columns])))
        return self.answer(rows.column(self.key), rows, schema)

    def answer(self, key: pa.ChunkedArray, rows: pa.Table, schema: pa.Schema) -> pa.Table | None:
        """The answer over the matches' ``key`` (text as dictionary arrays) and ``rows``
        (their :attr:`columns`), each output typed as DataFusion types it for the table's
        columns as SQL declares them in ``schema``; None where a column's values make an
        aggregate's result depend on the order of addition (then DataFusion's)."""
        codes, keys = _codes(key)
        groups = len(keys) + 1  # (the last: NULL keys)
        counts = np.bincount(codes, minlength=groups)
        present = np.flatnonzero(counts)
        columns, fields = [], []
        for name, agg in self.items:
            if agg is None:
                field = schema.field(self.key)
                columns.append(pa.concat_arrays([keys, pa.nulls(1, keys.type)]).take(pa.array(present)).cast(field.type))
                fields.append(pa.field(name, field.type, field.nullable))
                continue
            column = rows.column(agg.column) if agg.column is not None else None
            found = _aggregate(agg, codes, counts, column, schema.field(agg.column).type if column is not None else None)
            if found is None:
                return None
            column, nullable = found
            columns.append(column.take(pa.array(present)) if len(present) else column.slice(0, 0))
            fields.append(pa.field(name, column.type, nullable))
        table = pa.table(columns, schema=pa.schema(fields))
        if self.order:
            ranks = [_rank(table.column(name), desc, nulls_first) for name, desc, nulls_first in self.order]
            table = table.take(pa.array(np.lexsort(ranks[::-1]))) if table.num_rows else table
        return table.slice(self.offset, self.limit)


def _codes(key: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """Per row, the number of its key among the distinct keys (``len(keys)`` for NULL),
    and those keys."""
    if pa.types.is_integer(key.type):
        values = key.combine_chunks() if key.num_chunks != 1 else key.chunk(0)
        valid = values.is_valid().to_numpy(zero_copy_only=False)
        ints = values.fill_null(0).to_numpy().astype(np.int64, copy=False)
        if valid.any():
            lo, hi = int(ints[valid].min()), int(ints[valid].max())
            if hi - lo <= 4 * len(ints) + 1024:  # (a dense range: its offsets are the codes)
                present = np.bincount(ints[valid] - lo, minlength=hi - lo + 1) > 0
                distinct = np.flatnonzero(present) + lo
                index = np.cumsum(present) - 1
                codes = np.where(valid, index[np.clip(ints - lo, 0, hi - lo)], len(distinct))
                return codes, pa.array(distinct, values.type)
        distinct, inverse = np.unique(ints[valid], return_inverse=True)
        codes = np.full(len(ints), len(distinct), np.int64)
        codes[valid] = inverse
        return codes, pa.array(distinct, values.type)
    encoded = pc.dictionary_encode(key).unify_dictionaries().combine_chunks() if not pa.types.is_dictionary(key.type) \
        else key.unify_dictionaries().combine_chunks()
    keys = encoded.dictionary
    codes = encoded.indices.fill_null(len(keys)).to_numpy().astype(np.int64, copy=False)
    return codes, keys


def _aggregate(agg: Aggregate, codes: np.ndarray, counts: np.ndarray, column: pa.ChunkedArray | None,
               declared: pa.DataType | None) -> tuple[pa.Array, bool] | None:
    """One aggregate per group (every group, present or not) of ``column`` (declared
    ``declared``), and its nullability; None where its value would depend on the order of
    addition."""
    if column is None:
        return pa.array(counts, pa.int64()), False
    groups = len(counts)
    values = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if values.null_count:
        valid = values.is_valid().to_numpy(zero_copy_only=False)
        codes = codes[valid]
        counts = np.bincount(codes, minlength=groups)
    if agg.func == "count":
        return pa.array(counts, pa.int64()), False
    ints = values.drop_null().to_numpy().astype(np.int64, copy=False)
    empty = counts == 0
    if agg.func in ("min", "max"):
        out = np.full(groups, np.iinfo(np.int64).max if agg.func == "min" else np.iinfo(np.int64).min, np.int64)
        (np.minimum if agg.func == "min" else np.maximum).at(out, codes, ints)
        return pa.array(out, pa.int64(), mask=empty).cast(declared), True
    floats = ints.astype(np.float64)
    if float(np.abs(floats).sum()) >= _EXACT:
        return None
    sums = np.bincount(codes, weights=floats, minlength=groups)  # (exact: see _EXACT)
    if agg.func == "sum":
        return pa.array(sums.astype(np.int64), pa.int64(), mask=empty), True
    return pa.array(sums / np.maximum(counts, 1), pa.float64(), mask=empty), True


def _rank(column: pa.ChunkedArray, desc: bool, nulls_first: bool) -> np.ndarray:
    """Each row's place in the order of one ORDER BY key (ties equal), NULLs placed."""
    ranks = pc.rank(column, sort_keys="descending" if desc else "ascending", tiebreaker="dense").to_numpy()
    if nulls_first:  # (ranked after every value by default)
        ranks = np.where(column.is_null().to_numpy(zero_copy_only=False), 0, ranks)
    return ranks


def is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def groupable(t: pa.DataType) -> bool:
    """Whether values of type ``t`` may be counted by (their groups are DataFusion's)."""
    return is_text(t) or pa.types.is_integer(t)
