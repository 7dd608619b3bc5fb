"""Counts by a column over a search's matches, answered without DataFusion (issue 44;
docs/design.md: "Direct answers"): the facets beside a search page.

A statement ``SELECT k, count(*) AS n, ... FROM t WHERE MATCH(...) GROUP BY k
[ORDER BY ...] [LIMIT n [OFFSET m]]`` reads of the matches one column to group by and a
few to aggregate. Through DataFusion it costs ~1 ms of planning, and hashing every
match's key again (~1 ms at 100,000 matches); here it becomes a
``operators/grouped_counts.GroupedCounts`` over the matches found unscored.

Only aggregates whose value does not depend on the order rows are added in are answered
so (see that module), over the matches among the rows a prefilter keeps where the
statement has one (predicates of the table's columns beside MATCH); anything else (a
float's sum, HAVING, DISTINCT, several keys, score(), an aggregate without a name of its
own, an alias naming a column, a LIMIT that would cut rows tied on every ORDER BY key)
is DataFusion's: the statement runs as lowered. Each output column is named as DataFusion names it.
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from ...operators.grouped_counts import Aggregate, GroupedCounts, groupable
from ..text.dialect import conjuncts, identifier
from .lower_select import int_literal, local_predicate

_FUNCS = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max"}


def grouped_counts(statement: exp.Select, alias: str, schema: pa.Schema, prefiltered: bool) -> GroupedCounts | None:
    """The :class:`GroupedCounts` of a lowered statement reading one search's result
    (aliased ``alias``, of a table of SQL ``schema``), or None if DataFusion must answer it
    (see the module's docstring). Its WHERE, if any, must be the search's prefilter
    (``prefiltered``: every conjunct local to the table): the matches among the rows the
    prefilter keeps are the rows it keeps."""
    if any(statement.args.get(k) for k in ("having", "distinct", "qualify", "windows", "with", "joins")):
        return None
    where = statement.args.get("where")
    if where is not None and not (prefiltered and all(local_predicate(c, alias, schema) for c in conjuncts(where.this))):
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
        items.append((name or "count(*)", agg))
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
        return Aggregate("count", None)
    column = _column(node.this, alias, schema)
    if column is None:
        return None
    t = schema.field(column).type
    if func != "count" and not (pa.types.is_signed_integer(t) or (func in ("sum", "avg") and t == pa.float64())):
        return None
    return Aggregate(func, column)
