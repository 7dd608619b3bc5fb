"""What a SELECT reads, as a search sees it: each FROM and JOIN item by the name SQL refers
to it with, and which one each MATCH reads (docs/design.md: "SQL").

A *managed* source is a table of the database: its rows have ``_rowid`` and its columns
an index. A *table* of the session (registered by the user, not a view) is searched by
scanning it, its rows numbered by scan position. Every other item is a *relation*: a
CTE, a derived table, a view; a search of it reads the rows it yields (DESIGN §3.2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp

from ...errors import PlanError, SqlError
from .dialect import FtsMatch, identifier

# A table's schema and kind, by name (None: no such table): True for a managed table,
# False for a table of the session, None for a view.
Schemas = Callable[[str], "tuple[pa.Schema, bool | None] | None"]


@dataclass(frozen=True)
class Source:
    """One FROM or JOIN item of a SELECT: ``node`` (an ``exp.Table``, ``exp.Subquery`` or
    ``exp.Values``), its ``kind`` ("managed", "table" or "relation"), the table it names
    (None: a relation), the columns it yields where they are known (None: they are not)."""

    name: str
    node: exp.Expression
    kind: str
    table: str | None
    columns: tuple[str, ...] | None
    schema: pa.Schema | None = None

    @property
    def managed(self) -> bool:
        return self.kind == "managed"


def own(node: exp.Expression, select: exp.Select) -> bool:
    """Whether ``node`` belongs to ``select`` itself, not to a nested query."""
    return node.find_ancestor(exp.Select) is select


def from_items(select: exp.Select) -> list[exp.Expression]:
    """The FROM item and each JOIN's, in order."""
    from_ = select.args.get("from_")
    return ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]


def _cte(table: exp.Table) -> exp.CTE | None:
    """The CTE a table reference names, in the WITH of a query around it."""
    if table.args.get("db"):
        return None
    name = identifier(table)
    at: exp.Expression | None = table
    while at is not None:
        with_ = at.args.get("with_") if isinstance(at, exp.Query) else None
        if with_ is not None:
            for cte in with_.expressions:
                # (a CTE does not read itself unless RECURSIVE)
                if identifier(cte.args["alias"].this) == name and not inside(table, cte):
                    return cte
        at = at.parent
    return None


def inside(node: exp.Expression, ancestor: exp.Expression) -> bool:
    """Whether ``ancestor`` is ``node`` or holds it."""
    at: exp.Expression | None = node
    while at is not None:
        if at is ancestor:
            return True
        at = at.parent
    return False


def query_columns(query: exp.Expression, schemas: Schemas) -> tuple[str, ...] | None:
    """The names of the columns a query yields, as DataFusion names them, where they can
    be told from its text and the session's schemas; None where they cannot (an
    expression without an alias)."""
    query = query.unnest() if isinstance(query, exp.Paren) else query
    if isinstance(query, exp.Subquery):
        return query_columns(query.this, schemas)
    if isinstance(query, exp.SetOperation):
        return query_columns(query.left, schemas)
    if isinstance(query, exp.Values):
        alias = query.args.get("alias")
        if alias is not None and alias.columns:
            return tuple(identifier(c) for c in alias.columns)
        width = len(query.expressions[0].expressions) if query.expressions else 0
        return tuple(f"column{i + 1}" for i in range(width))
    if not isinstance(query, exp.Select):
        return None
    sources = {s.name: s for s in select_sources(query, schemas)[0]}
    names: list[str] = []
    for item in query.expressions:
        if isinstance(item, exp.Star):
            if any(item.args.get(k) for k in ("except_", "replace", "rename", "ilike")):
                return None
            for source in sources.values():
                if source.columns is None:
                    return None
                names.extend(source.columns)
        elif isinstance(item, exp.Column) and isinstance(item.this, exp.Star):
            source = sources.get(item.table)
            if source is None or source.columns is None or any(item.this.args.values()):
                return None
            names.extend(source.columns)
        elif isinstance(item, exp.Alias):
            names.append(identifier(item.args["alias"]))
        elif isinstance(item, exp.Column):
            names.append(identifier(item))
        else:
            return None
    return tuple(names)


def _relation_columns(node: exp.Expression, schemas: Schemas) -> tuple[str, ...] | None:
    alias = node.args.get("alias")
    if alias is not None and alias.columns:
        return tuple(identifier(c) for c in alias.columns)
    return query_columns(node, schemas)


def select_sources(select: exp.Select, schemas: Schemas) -> tuple[list[Source], list[exp.Table]]:
    """The items ``select`` reads, and the tables it names that the session does not have."""
    sources: list[Source] = []
    missing: list[exp.Table] = []
    for node in from_items(select):
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier) and not node.args.get("db"):
            name = node.alias_or_name if node.alias else identifier(node)
            cte = _cte(node)
            if cte is not None:
                columns = _relation_columns(node, schemas) if node.alias_column_names else None
                if columns is None:
                    columns = _relation_columns(cte, schemas) if cte.args["alias"].columns else query_columns(cte.this, schemas)
                sources.append(Source(name, node, "relation", None, columns))
                continue
            found = schemas(identifier(node))
            if found is None:
                missing.append(node)
                continue
            schema, managed = found
            columns = _relation_columns(node, schemas) if node.alias_column_names else tuple(schema.names)
            if managed is None:  # (a view)
                sources.append(Source(name, node, "relation", None, columns))
            else:
                sources.append(Source(name, node, "managed" if managed else "table", identifier(node), columns, schema))
        elif isinstance(node, (exp.Subquery, exp.Values)) and node.alias:
            sources.append(Source(node.alias, node, "relation", None, _relation_columns(node, schemas)))
    return sources, missing


def match_source(match: FtsMatch, sources: list[Source], missing: list[exp.Table],
                 error: Callable[[str, exp.Expression], SqlError]) -> Source:
    """The one source every column of ``match`` reads."""
    by_name = {s.name: s for s in sources}
    found: set[str] = set()
    for col in match.expressions:
        if not isinstance(col, exp.Column):
            raise error("MATCH takes column names", col)
        name = identifier(col)
        if col.table:
            qualifier = col.args["table"]
            owner = qualifier.this if qualifier.quoted else qualifier.this.lower()
            if owner not in by_name:
                raise error(f"MATCH column {col.sql()} is not a column of a table in FROM", col)
            columns = by_name[owner].columns
            if columns is not None and name not in columns:
                raise error(f"table {owner!r} has no column {name!r}", col)
            found.add(owner)
        else:
            owners = [s.name for s in sources if s.columns is not None and name in s.columns]
            if not owners and missing:  # (the missing table is the cause)
                raise error(f"no table named {identifier(missing[0])!r}", missing[0])
            unknown = [s.name for s in sources if s.columns is None]
            if not owners and len(sources) == 1 and unknown:
                owners = unknown
            if not owners:
                raise error(f"no table in FROM has a column {name!r}", col)
            if len(owners) > 1 or unknown and len(sources) > 1:
                raise error(f"column {name!r} is ambiguous: qualify it with one of {owners + unknown}", col)
            found.add(owners[0])
    if len(found) != 1:
        raise PlanError(f"one MATCH searches one table; this one reads {sorted(found)}")
    return by_name[found.pop()]
