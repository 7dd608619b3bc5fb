"""Search statements remembered by shape (sql/text/shapes.py), so a repeated shape skips
parsing and lowering.

Parsing, lowering and generating the SQL DataFusion runs cost about as much as the
search itself, and none of it depends on the query text: the MATCH predicates leave the
statement when it is lowered, and their texts only become the leaves of the search tree.
The first time a shape is seen it is lowered as usual, but with each MATCH's leaf left
as a numbered slot; the template keeps the lowered searches, the SQL for DataFusion and
what it was lowered against (the tables' schemas, the other literals). A later statement
of the same shape fills the slots with its own MATCH texts, parsed as the MATCH would
parse them, and runs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import pyarrow as pa
from sqlglot import exp

from ...operators.grouped_counts import GroupedCounts
from ...planner.logical import LogicalSearch, SessionRows
from ...query.tree import Boolean, Match, Query
from ..text.dialect import identifier
from ..text.shapes import Shape
from .direct_groups import grouped_counts
from .lower_select import ROWID, SCORE, TOTAL, Lowered, int_literal

# The column of a slot leaf in a template tree: a name no table can have.
_SLOT = "\x00slot"


def slot_leaf(slot: int) -> Match:
    """The placeholder leaf of MATCH number ``slot`` in a template tree."""
    return Match(f"{_SLOT}{slot}", "")


def fill(tree: Query, leaves: list[Query]) -> Query:
    """``tree`` with each slot leaf replaced by its MATCH's own leaf (lowering builds only
    Booleans around the leaves)."""
    if isinstance(tree, Match) and tree.column is not None and tree.column.startswith(_SLOT):
        return leaves[int(tree.column[len(_SLOT):])]
    if isinstance(tree, Boolean):
        return Boolean(
            must=tuple(fill(c, leaves) for c in tree.must),
            should=tuple(fill(c, leaves) for c in tree.should),
            must_not=tuple(fill(c, leaves) for c in tree.must_not),
        )
    return tree


@dataclass(frozen=True)
class Direct:
    """A statement that only picks columns of its one search's result, in the search's own
    order, and pages it: its answer is that result, sliced and renamed, without
    DataFusion planning and sorting what is already in order (about 0.7 ms a statement)."""

    columns: tuple[tuple[str, str], ...]  # (result column, output name)
    offset: int
    limit: int | None
    counted: str | None = None  # (``SELECT count(*) [AS name]``: the output name; the matches in any order)
    grouped: GroupedCounts | None = None  # (counts by a column: sql/search/direct_groups.py)

    def count(self, matches: int) -> pa.Table:
        """The answer of a ``count(*)`` statement: as DataFusion's, int64, not null."""
        assert self.counted is not None
        return pa.table([pa.array([matches], pa.int64())],
                        schema=pa.schema([pa.field(self.counted, pa.int64(), nullable=False)]))

    def apply(self, result: pa.Table) -> pa.Table:
        rows = result.slice(self.offset, self.limit)
        schema = pa.schema([rows.schema.field(c).with_name(n) for c, n in self.columns])  # (non-null stays)
        return pa.table([rows.column(c) for c, _ in self.columns], schema=schema)


def direct(statement: exp.Expression, lowered: list[Lowered],
           schema_of: Callable[[str], tuple[pa.Schema, Any] | None]) -> Direct | None:
    """The :class:`Direct` form of a lowered statement (``schema_of(table)``: the SQL
    schema of a table it was lowered against, first), or None if DataFusion must run it."""
    if len(lowered) != 1 or lowered[0].explain or not isinstance(statement, exp.Select):
        return None
    search = lowered[0].search
    if not (isinstance(search, LogicalSearch) and search.carries_rows):
        return None
    alias = search.alias
    source = statement.args.get("from_")
    if source is None or not isinstance(source.this, exp.Table) or source.this.name != lowered[0].result_table:
        return None
    if statement.args.get("group"):
        found = schema_of(search.table) if search.managed else None
        grouped = grouped_counts(statement, alias, found[0], search.prefilter is not None) if found else None
        return Direct((), 0, None, grouped=grouped) if grouped is not None else None
    if any(statement.args.get(k) for k in ("joins", "where", "having", "distinct", "qualify", "windows", "with")):
        return None
    counted = _counted(statement)
    if counted is not None:
        return Direct((), 0, None, counted)
    columns = []
    named = {}
    for item in statement.expressions:
        inner = item.this if isinstance(item, exp.Alias) else item
        if not isinstance(inner, exp.Column) or inner.table not in ("", alias) or isinstance(inner.this, exp.Star):
            return None
        if identifier(inner) not in (ROWID, SCORE, *search.columns, *((TOTAL,) if search.total else ())):
            return None  # (not a column of the result: DataFusion says which)
        name = identifier(item.args["alias"]) if isinstance(item, exp.Alias) else identifier(inner)
        columns.append((identifier(inner), name))
        named[name] = identifier(inner)
    order = statement.args.get("order")
    if order is not None:
        keys = [(named.get(k.this.name, k.this.name) if isinstance(k.this, exp.Column) and not k.this.table
                 else identifier(k.this) if isinstance(k.this, exp.Column) else None, bool(k.args.get("desc")))
                for k in order.expressions]
        if keys != [(SCORE, True), (ROWID, False)]:
            return None
    limit, offset = statement.args.get("limit"), statement.args.get("offset")
    count = None if limit is None else int_literal(limit.expression)
    skip = 0 if offset is None else int_literal(offset.expression)
    if (limit is not None and count is None) or skip is None:
        return None
    return Direct(tuple(columns), skip, count)


def _counted(statement: exp.Select) -> str | None:
    """The output name of a statement that is ``SELECT count(*) [AS name]`` of its source
    and nothing more (no ORDER BY, LIMIT or OFFSET), as DataFusion names it; else None."""
    if len(statement.expressions) != 1 or any(statement.args.get(k) for k in ("order", "limit", "offset")):
        return None
    item = statement.expressions[0]
    inner = item.this if isinstance(item, exp.Alias) else item
    if not (isinstance(inner, exp.Count) and isinstance(inner.this, exp.Star)):
        return None
    return identifier(item.args["alias"]) if isinstance(item, exp.Alias) else "count(*)"


@dataclass(frozen=True)
class Template:
    """A lowered search statement with its MATCH leaves as slots.

    ``slots[j]``: the literal index of MATCH j's query text, with ``starts``/``columns``
    the MATCH's literal start in the statement and the columns it searches; ``fixed``: the
    other literals' values, which a statement must repeat to use the template; ``tables``:
    each table the lowering looked up and what it found; ``sql``: the SQL DataFusion runs,
    naming each search's result table as in ``lowered``."""

    slots: tuple[int, ...]
    columns: tuple[tuple[str, ...], ...]
    fixed: tuple[tuple[int, str], ...]
    tables: tuple[tuple[str, Any], ...]
    sql: str
    lowered: tuple[Lowered, ...]
    direct: Direct | None = None

    def fits(self, sql: str, shape: Shape, schema_of: Callable[[str], Any]) -> bool:
        """Whether ``sql`` repeats the other literals and the tables read are as they were."""
        if len(shape.spans) != len(self.slots) + len(self.fixed):
            return False
        if any(shape.literal(sql, i) != value for i, value in self.fixed):
            return False
        for name, seen in self.tables:
            now = schema_of(name)
            if (now is None) != (seen is None) or (now is not None and (now[1] != seen[1] or not now[0].equals(seen[0]))):
                return False
        return True

    def bind(
        self, sql: str, shape: Shape, parse_leaf: Callable[[str, int, str, tuple[str, ...]], Query],
        new_name: Callable[[], str],
    ) -> tuple[str, list[Lowered]]:
        """The SQL and searches of statement ``sql`` (of this shape): each MATCH text
        parsed by ``parse_leaf(sql, literal start, text, columns)``, each search result
        given a name of its own (the template may run in several threads at once)."""
        leaves = self._leaves(sql, shape, parse_leaf)
        text = self.sql
        lowered = []
        for item in self.lowered:
            name = new_name()
            text = text.replace(item.result_table, name)
            search = item.search
            if not isinstance(search, SessionRows):
                search = replace(search, tree=fill(search.tree, leaves))
            lowered.append(replace(item, result_table=name, search=search))
        return text, lowered

    def bind_search(self, sql: str, shape: Shape, parse_leaf: Callable[[str, int, str, tuple[str, ...]], Query]
                    ) -> LogicalSearch:
        """The one search of a :attr:`direct` template, bound to statement ``sql``: its
        result is the answer, so no SQL text or result table is made."""
        search = self.lowered[0].search
        assert isinstance(search, LogicalSearch)
        return replace(search, tree=fill(search.tree, self._leaves(sql, shape, parse_leaf)))

    def _leaves(self, sql: str, shape: Shape, parse_leaf: Callable[[str, int, str, tuple[str, ...]], Query]
                ) -> list[Query]:
        return [parse_leaf(sql, shape.spans[i][0], shape.literal(sql, i), columns)
                for i, columns in zip(self.slots, self.columns)]
