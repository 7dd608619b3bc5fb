"""Counts by a column over a search's matches, answered without DataFusion (issue 44;
docs/design.md: "Direct answers"): the facets beside a search page.

A statement ``SELECT k, count(*) AS n, ... FROM t WHERE MATCH(...) GROUP BY k
[ORDER BY ...] [LIMIT n [OFFSET m]]`` reads of the matches one column to group by and a
few to aggregate. Through DataFusion it costs ~1 ms of planning, and hashing every
match's key again (~1 ms at 100,000 matches); here the matches are found unscored, the
key's codes counted (``numpy.bincount``) and the few groups ordered.

Only aggregates whose value does not depend on the order rows are added in are answered
so: ``count(*)``, ``count(c)``, and ``min``, ``max``, ``sum``, ``avg`` of a column of
signed integers while the sum of its magnitudes stays under 2^53 (every partial sum is
then exact, whichever order DataFusion adds them in; DataFusion's ``avg`` divides that
float sum by the count). Anything else (a float's sum, HAVING, DISTINCT, several keys, an
aggregate without a name of its own, an order that leaves ties to a LIMIT) is DataFusion's:
the statement runs as lowered. Each output column is named and typed as DataFusion names
and types it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from .dialect import identifier
from .lower_select import int_literal
from .tables import TableVersion, carried_rows

# Beyond this, a float sum of integers may round: such a statement is DataFusion's.
_EXACT = float(2**53)
_FUNCS = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max"}


@dataclass(frozen=True)
class Aggregate:
    func: str  # count, sum, avg, min, max
    column: str | None  # (None: count(*))
    name: str  # the output column's


@dataclass(frozen=True)
class GroupedCounts:
    """A statement grouping a search's matches by one column, answered from them."""

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
        return cls(column, ((column, None), ("_count", Aggregate("count", None, "_count"))),
                   (("_count", True, False), (column, False, False)), 0, limit)

    def over(self, ids: np.ndarray, version: TableVersion) -> pa.Table | None:
        """The answer over the rows ``ids`` (ascending) of ``version``: a text key taken
        as codes (no string made per match), the other columns as SQL declares them."""
        schema = version.meta.sql_schema
        if is_text(schema.field(self.key).type):
            return self.answer(version.take_encoded(ids, self.key), carried_rows(version, pa.array(ids), self.columns),
                               schema)
        rows = carried_rows(version, pa.array(ids), list(dict.fromkeys([self.key, *self.columns])))
        return self.answer(rows.column(self.key), rows, schema)

    def answer(self, key: pa.ChunkedArray, rows: pa.Table, schema: pa.Schema) -> pa.Table | None:
        """The statement's answer over the matches' ``key`` (text as dictionary arrays) and
        ``rows`` (their :attr:`columns`), the table's columns typed as SQL declares them in
        ``schema``; None where a column's values make an aggregate's result depend on the
        order of addition (then DataFusion's)."""
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


def grouped_counts(statement: exp.Select, alias: str, schema: pa.Schema) -> GroupedCounts | None:
    """The :class:`GroupedCounts` of a lowered statement reading one search's result
    (aliased ``alias``, of a table of SQL ``schema``) with no WHERE left, or None if
    DataFusion must answer it (see the module's docstring)."""
    if any(statement.args.get(k) for k in ("having", "distinct", "qualify", "windows", "with", "joins", "where")):
        return None
    group = statement.args.get("group")
    if group is None or len(group.expressions) != 1 or any(group.args.get(k) for k in group.args if k != "expressions"):
        return None
    key = _column(group.expressions[0], alias, schema)
    if key is None or not groupable(schema.field(key).type):
        return None
    items: list[tuple[str, Aggregate | None]] = []
    for item in statement.expressions:
        inner = item.this if isinstance(item, exp.Alias) else item
        name = identifier(item.args["alias"]) if isinstance(item, exp.Alias) else None
        if _column(inner, alias, schema) == key:
            items.append((name or key, None))
            continue
        agg = _aggregate_of(inner, alias, schema)
        if agg is None:
            return None
        if name is None and (agg.func, agg.column) != ("count", None):
            return None  # (DataFusion's name of it spells the expression: its own)
        items.append((name or "count(*)", Aggregate(agg.func, agg.column, name or "count(*)")))
    names = [name for name, _ in items]
    if len(set(names)) != len(names) or any(n in schema.names for n, a in items if a is not None):
        return None  # (an aggregate named as a column: which of them ORDER BY reads is DataFusion's rule)
    order: list[tuple[str, bool, bool]] = []
    node = statement.args.get("order")
    for ordered in node.expressions if node is not None else []:
        target = ordered.this
        if not isinstance(target, exp.Column):
            return None
        name = identifier(target) if not target.table and identifier(target) in names else None
        if name is None and _column(target, alias, schema) == key:
            name = next((n for n, a in items if a is None), None)
        if name is None:
            return None
        order.append((name, bool(ordered.args.get("desc")), bool(ordered.args.get("nulls_first"))))
    limit, offset = statement.args.get("limit"), statement.args.get("offset")
    count = None if limit is None else int_literal(limit.expression)
    skip = 0 if offset is None else int_literal(offset.expression)
    if (limit is not None and count is None) or skip is None:
        return None
    by_key = any(dict(items).get(n, 0) is None for n, _, _ in order)
    if (limit is not None or skip) and not by_key:
        return None  # (rows tied on every key: which of them a LIMIT keeps is DataFusion's choice)
    return GroupedCounts(key, tuple(items), tuple(order), skip, count)


def _column(node: exp.Expression, alias: str, schema: pa.Schema) -> str | None:
    """The table's column ``node`` names, if it is a plain column of it."""
    if not isinstance(node, exp.Column) or (node.table and node.table != alias) or isinstance(node.this, exp.Star):
        return None
    name = identifier(node)
    return name if name in schema.names else None


def _aggregate_of(node: exp.Expression, alias: str, schema: pa.Schema) -> Aggregate | None:
    func = _FUNCS.get(type(node))
    if func is None or any(node.args.get(k) for k in node.args if k not in ("this", "big_int")):
        return None
    if func == "count" and isinstance(node.this, exp.Star):
        return Aggregate("count", None, "")
    column = _column(node.this, alias, schema)
    if column is None:
        return None
    t = schema.field(column).type
    if func != "count" and not (pa.types.is_integer(t) and pa.types.is_signed_integer(t)):
        return None
    return Aggregate(func, column, "")


def is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def groupable(t: pa.DataType) -> bool:
    """Whether values of type ``t`` may be counted by (their groups are DataFusion's)."""
    return is_text(t) or pa.types.is_integer(t)
