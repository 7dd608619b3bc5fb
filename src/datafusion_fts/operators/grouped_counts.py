"""Counts by a column over a search's matches (issue 44): the facets beside a search
page, for SQL's ``GROUP BY`` over a search answered without DataFusion
(sql/search/direct_groups.py) and ``Table.facets``.

The matches come unscored, ascending (``planner/count_matches.matching_rows``); the key
(text or integers) is taken as codes (``TableSnapshot.take_codes``: where the store keeps
the fragment's column decoded, the matches' places in its codes, no value taken per
match) and counted in one pass (``storage/coded_rows.py``), or the keys' counts come
counted already (``from_counts``: ``planner/count_matches.counted_by``); the few groups
are ordered as int64 keys (NULLs placed per ORDER BY item) and paged, and only the page
becomes Arrow.

Only aggregates whose value is DataFusion's whatever way it splits the rows are computed:
``count(*)``, ``count(c)``, and ``min``, ``max``, ``sum``, ``avg`` of signed integers
while the sum of their magnitudes stays under 2^53 (every partial sum is then exact,
whichever order DataFusion adds them in; its ``avg`` divides that float sum by the
count); past it the answer is declined (None), and the caller asks DataFusion. And the
``sum`` and ``avg`` of a float64 column, added in the rows' order: DataFusion's own float
sums depend on how it splits the rows among partitions (with several, its answers to
one statement can differ between runs); in one partition it adds them in the order they
come, and the order of the table's rows is the one order every plan shares. Each output
column is typed as DataFusion types it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..kernels.group_codes import sum_codes
from ..storage.coded_rows import CodedRows, narrow
from ..storage.snapshot import TableSnapshot

# Beyond this, a float sum of integers may round: the answer is DataFusion's.
_EXACT = float(2**53)
# Up to this many keys, a page of groups is made in Python (fewer calls into pyarrow).
_FEW_KEYS = 256
# All bits but the sign.
_FLIP = np.int64(0x7FFFFFFFFFFFFFFF)


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
        """The answer over the live rows ``ids`` (ascending) of ``version``: the key
        taken as codes (no value taken per match where the store keeps its codes)."""
        return self.answer(version.take_codes(ids, self.key), version.take(ids, self.columns), version.sql_schema)

    @property
    def counts_only(self) -> bool:
        """Whether every aggregate is ``count(*)``: the answer needs the keys' counts alone."""
        return all(agg is None or agg.column is None for _, agg in self.items)

    def answer(self, key: list[CodedRows], rows: pa.Table, schema: pa.Schema) -> pa.Table | None:
        """The answer over the matches' ``key`` (coded, part after part) and ``rows``
        (their :attr:`columns`, in the same order), each output typed as DataFusion types
        it for the table's columns as SQL declares them in ``schema``; None where a
        column's values make an aggregate's result depend on how DataFusion splits the
        rows (then DataFusion's)."""
        return self._answer(*_unified(key), rows, schema)

    def from_counts(self, counted: list[tuple[pa.Array, np.ndarray]], schema: pa.Schema) -> pa.Table:
        """The answer of :attr:`counts_only` aggregates from the matches' keys and how
        many hold each (the last: NULL), part after part (each with keys of its own; no
        part: no match)."""
        assert self.counts_only
        keys, counts, _ = _merged(counted)
        found = self._answer(keys, counts, None, None, schema)
        assert found is not None  # (counts: never a sum to decline)
        return found

    def _answer(self, keys: pa.Array, counts: np.ndarray, row_codes: Callable[[], np.ndarray] | None,
                rows: pa.Table | None, schema: pa.Schema) -> pa.Table | None:
        """:meth:`answer` from the keys, their counts and the rows' codes. The groups are
        ordered and paged as numbers (a rank of the few keys, the aggregates' values);
        only the page's rows become Arrow."""
        values: dict[str, _Values] = {}
        for name, agg in self.items:
            if agg is not None:
                if agg.column is None:
                    found: _Values | None = _Values(counts, None, pa.int64())
                else:
                    assert row_codes is not None and rows is not None  # (not counts alone)
                    found = _aggregate(agg, row_codes(), counts, rows.column(agg.column), schema.field(agg.column).type)
                if found is None:
                    return None
                values[name] = found
        n = len(keys)
        field = schema.field(self.key)
        if n <= _FEW_KEYS:  # (Python values: a few calls into numpy and pyarrow, each costly with cold caches)
            listed = keys.to_pylist()
            groups = self._few_ordered(listed, counts, values)
            columns = [pa.array([listed[g] if g < n else None for g in groups], field.type) if agg is None
                       else values[name].listed(groups) for name, agg in self.items]
        else:
            ordered = self._ordered(keys, counts, values)
            columns = [keys.take(pa.array(ordered, mask=ordered == n)).cast(field.type) if agg is None
                       else values[name].array(ordered) for name, agg in self.items]
        return pa.Table.from_arrays(columns, schema=_schema(tuple(
            (name, field.type, field.nullable) if agg is None else (name, values[name].type, values[name].null is not None)
            for name, agg in self.items)))

    def _few_ordered(self, listed: list, counts: np.ndarray, values: dict[str, _Values]) -> list[int]:
        """The page's groups in order, among a few keys (``listed``, as Python values; the
        group past them: NULL): each group's sort key a tuple, an ORDER BY item's NULL
        flag before its value, as ``numpy.lexsort`` orders them in :meth:`_ordered`."""
        n = len(listed)
        items: list[list] = []
        for name, desc, nulls_first in self.order:
            if name in values:
                keyed, null = values[name].keys(slice(None))
                order, nulls = keyed.tolist(), None if null is None else null.tolist()
            else:  # (the key's rank: str order is UTF-8's byte order, as DataFusion orders text)
                order = [0] * (n + 1)
                for rank, g in enumerate(sorted(range(n), key=listed.__getitem__)):
                    order[g] = rank
                nulls = [False] * n + [True]
            if nulls is not None:
                items.append([null != nulls_first for null in nulls])
            items.append([-v for v in order] if desc else order)
        present = counts.tolist()
        groups = [g for g in range(n + 1) if present[g]]
        if items:
            groups.sort(key=list(zip(*items)).__getitem__)
        return groups[self.offset : None if self.limit is None else self.offset + self.limit]

    def _ordered(self, keys: pa.Array, counts: np.ndarray, values: dict[str, _Values]) -> np.ndarray:
        """The page's groups in order, among many keys (ranked by pyarrow)."""
        groups = np.flatnonzero(counts)
        if self.order:
            keyed = [(values[name].keys(groups) if name in values else _key_order(keys, groups), desc, nulls_first)
                     for name, desc, nulls_first in self.order]
            groups = groups[np.lexsort([k for item in reversed(keyed) for k in _sort_keys(*item)])]
        return groups[self.offset : None if self.limit is None else self.offset + self.limit]


@dataclass(frozen=True)
class _Values:
    """One aggregate of every group (present or not), NULL where ``null`` (None: never)."""

    values: np.ndarray
    null: np.ndarray | None
    type: pa.DataType

    def keys(self, groups: np.ndarray | slice) -> tuple[np.ndarray, np.ndarray | None]:
        """The ``groups``' values as int64 keys in DataFusion's order (floats as arrow
        orders them, by their total order: -NaN first, -0.0 below +0.0, NaN last), and
        which are NULL (None: none)."""
        values = self.values[groups]
        if values.dtype.kind == "f":
            bits = values.view(np.int64)
            values = bits ^ ((bits >> 63) & _FLIP)  # (as Rust's f64::total_cmp)
        return values.astype(np.int64, copy=False), None if self.null is None else self.null[groups]

    def array(self, groups: np.ndarray) -> pa.Array:
        return pa.array(self.values[groups], self.type, mask=None if self.null is None else self.null[groups])

    def listed(self, groups: list[int]) -> pa.Array:
        """:meth:`array` of a few groups, made of Python values."""
        values = self.values.tolist()
        if self.null is None:
            return pa.array([values[g] for g in groups], self.type)
        null = self.null.tolist()
        return pa.array([None if null[g] else values[g] for g in groups], self.type)


def _key_order(keys: pa.Array, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``groups``' keys as int64 keys in their order (their ranks among ``keys``, by
    pyarrow: text in UTF-8's byte order, as DataFusion orders it), and which are NULL
    (the group past the keys)."""
    ranks = np.append(pc.rank(keys, tiebreaker="dense").to_numpy(), 0)
    return ranks[groups], groups == len(keys)


@lru_cache(maxsize=256)
def _schema(fields: tuple[tuple[str, pa.DataType, bool], ...]) -> pa.Schema:
    """The answer's schema, from its columns' names, types and nullability (made once)."""
    return pa.schema([pa.field(name, type_, nullable) for name, type_, nullable in fields])


def _sort_keys(keyed: tuple[np.ndarray, np.ndarray | None], desc: bool, nulls_first: bool) -> list[np.ndarray]:
    """One ORDER BY item's keys for ``numpy.lexsort`` (the last the most significant):
    its values' keys, reversed when descending, then NULLs after every value unless
    ``nulls_first``."""
    values, null = keyed
    out = [~values if desc else values]
    if null is not None:
        out.append(~null if nulls_first else null)
    return out


def _unified(parts: list[CodedRows]) -> tuple[pa.Array, np.ndarray, Callable[[], np.ndarray]]:
    """The distinct keys of every part, how many rows hold each (the last: NULL), and
    a function making each row's code (parts after one another)."""
    if len(parts) <= 1:
        part = parts[0] if parts else CodedRows(np.zeros(0, np.uint8), None, pa.array([], pa.string()))
        return part.keys, part.counts(), part.row_codes
    keys, counts, maps = _merged([(p.keys, p.counts()) for p in parts])
    return keys, counts, lambda: np.concatenate([to[p.row_codes()] for p, to in zip(parts, maps)])


def _merged(counted: list[tuple[pa.Array, np.ndarray]]) -> tuple[pa.Array, np.ndarray, list[np.ndarray]]:
    """Parts' keys and counts (the last: NULL) as one set of keys and its counts, and per
    part where each of its codes goes in it. The keys are numbered in the first part's
    order, then the new keys of each next part."""
    if len(counted) <= 1:  # (no map: one part's codes are the keys' own)
        keys, counts = counted[0] if counted else (pa.array([], pa.string()), np.zeros(1, np.int64))
        return keys, counts, []
    first = counted[0][0].type  # (files of one table may store text as string or large_string)
    counted = [(k if k.type == first else k.cast(first), counts) for k, counts in counted]
    keys = pc.unique(pa.concat_arrays([k for k, _ in counted]))
    code = narrow(len(keys) + 1)
    maps = [np.append(pc.index_in(k, keys).to_numpy(zero_copy_only=False), len(keys)).astype(code) for k, _ in counted]
    total = np.zeros(len(keys) + 1, np.int64)
    for (_, counts), to in zip(counted, maps):
        np.add.at(total, to, counts)
    return keys, total, maps


def _aggregate(agg: Aggregate, codes: np.ndarray, counts: np.ndarray, column: pa.ChunkedArray,
               declared: pa.DataType) -> _Values | None:
    """One aggregate per group (every group, present or not) of ``column`` (declared
    ``declared``) over rows of ``codes``; None where its value would depend on how
    DataFusion splits the rows."""
    groups = len(counts)
    values = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if values.null_count:
        valid = values.is_valid().to_numpy(zero_copy_only=False)
        codes = codes[valid]
        counts = np.bincount(codes, minlength=groups)
    if agg.func == "count":
        return _Values(counts, None, pa.int64())
    empty = counts == 0
    if pa.types.is_floating(declared):  # (float64 sum or avg: added up in the rows' order)
        sums = sum_codes(codes, values.drop_null().to_numpy(), groups)
        return _Values(sums if agg.func == "sum" else sums / np.maximum(counts, 1), empty, pa.float64())
    ints = values.drop_null().to_numpy().astype(np.int64, copy=False)
    if agg.func in ("min", "max"):
        out = np.full(groups, np.iinfo(np.int64).max if agg.func == "min" else np.iinfo(np.int64).min, np.int64)
        (np.minimum if agg.func == "min" else np.maximum).at(out, codes, ints)
        return _Values(np.where(empty, 0, out), empty, declared)
    floats = ints.astype(np.float64)
    if float(np.abs(floats).sum()) >= _EXACT:
        return None
    sums = np.bincount(codes, weights=floats, minlength=groups)  # (exact: see _EXACT)
    if agg.func == "sum":
        return _Values(sums.astype(np.int64), empty, pa.int64())
    return _Values(sums / np.maximum(counts, 1), empty, pa.float64())


def is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def groupable(t: pa.DataType) -> bool:
    """Whether values of type ``t`` may be counted by (their groups are DataFusion's)."""
    return is_text(t) or pa.types.is_integer(t)
