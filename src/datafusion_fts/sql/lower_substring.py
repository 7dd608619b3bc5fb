"""The user's own substring predicates over a column with an n-gram index (issue 43;
docs/design.md: "Substring search"): a managed table read by a SELECT whose WHERE holds,
as a conjunct, LIKE or ILIKE, ``~`` or ``~*``, ``regexp_like``, ``strpos(c, s) > 0``,
``starts_with`` or ``ends_with`` of such a column and a string literal, is read as its
candidate rows (planner/plan_substring.py) instead of all its rows; the statement is
otherwise DataFusion's, as written, predicates included.

Why the candidates may stand in for the table: a candidate is any row whose text may make
the conjunct true, so a row left out makes it false or NULL; WHERE then drops every output
row made of it, whatever the joins (a row of the other side that matched only rows left
out is NULL-extended instead, and the conjunct, reading the table's column, is NULL
there), and every later part of the SELECT (groups, windows, DISTINCT, ORDER BY) reads
what WHERE keeps. Statements that read ``_rowid`` or search are left as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from ..query.substring import Need, all_of, like_need, regex_need
from ..session.catalog import string_literal
from .dialect import FtsMatch, identifier
from .lower_select import ROWID
from .search_scores import conjuncts
from .select_sources import Schemas, Source, select_sources
from .splice import Splicer


@dataclass(frozen=True)
class SubstringRead:
    """A managed table of a SELECT (its FROM or JOIN ``node``) and, per column with an
    n-gram index, what its WHERE's substring conjuncts ask of the column and their text."""

    node: exp.Table
    table: str
    needs: tuple[tuple[str, Need, str], ...]  # (column, requirement, the conjuncts as SQL)
    # Its regular expressions evaluated on '' (SQL): DataFusion refuses a malformed pattern or
    # flag only when it evaluates the predicate on some row, and the candidates may be none.
    checks: tuple[str, ...] = ()
    # Its substring conjuncts as the statement writes them (None: their text could not be
    # placed), which DataFusion may evaluate on the candidates' own columns first.
    predicates: tuple[str, ...] | None = None
    # Whether each conjunct asks for one run of text anywhere (LIKE or ILIKE '%run%' with no
    # wildcard or escape inside, strpos > 0): a candidate holding the run's grams nearly
    # always holds the run, so evaluating the conjuncts first would not pay.
    runs_only: bool = False


def substring_reads(statement: exp.Expression, schemas: Schemas,
                    ngram_columns: Callable[[str], frozenset[str]], splicer: Splicer | None = None
                    ) -> list[SubstringRead]:
    """Each table of ``statement`` that may be read as its candidates (see the module's
    docstring); ``ngram_columns(table)`` names a managed table's columns with an n-gram index;
    ``splicer``, over the statement's text, finds its conjuncts' text."""
    if any(isinstance(node, FtsMatch) or (isinstance(node, exp.Column) and node.name == ROWID)
           for node in statement.walk()):
        return []
    out = []
    for select in statement.find_all(exp.Select):
        where = select.args.get("where")
        if where is None:
            continue
        sources, missing = select_sources(select, schemas)
        if missing:
            continue
        found: dict[int, tuple[Source, dict[str, list[tuple[Need, str, str | None, str | None]]]]] = {}
        scattered: set[int] = set()  # (sources with a conjunct that asks more than one run)
        parts = conjuncts(where.this)
        written = splicer.conjunct_texts(parts) if splicer is not None else None
        for i, conj in enumerate(parts):
            read = _substring_predicate(conj)
            if read is None:
                continue
            column, need, check = read
            source = _column_source(column, sources)
            if source is None or identifier(column) not in ngram_columns(source.table or ""):
                continue
            text = written[i] if written is not None else None
            entry = found.setdefault(id(source.node), (source, {}))
            entry[1].setdefault(identifier(column), []).append(
                (need, text if text is not None else conj.sql(), check, text))  # (EXPLAIN's: as written, else sqlglot's)
            if not _one_run(conj):
                scattered.add(id(source.node))
        for source, columns in found.values():
            items = [item for column_items in columns.values() for item in column_items]
            needs = tuple((column, all_of([n for n, _, _, _ in column_items]), "; ".join(t for _, t, _, _ in column_items))
                          for column, column_items in columns.items())
            checks = tuple(c for _, _, c, _ in items if c is not None)
            texts = tuple(w for _, _, _, w in items if w is not None)
            assert isinstance(source.node, exp.Table) and source.table is not None
            out.append(SubstringRead(source.node, source.table, needs, checks,
                                     texts if len(texts) == len(items) else None, id(source.node) not in scattered))
    return out


def _column_source(column: exp.Column, sources: list[Source]) -> Source | None:
    """The managed table of ``sources`` that ``column`` certainly reads (None: another
    source, an outer query's, or not certain)."""
    name = identifier(column)
    if column.table:
        qualifier = column.args["table"]
        owner = qualifier.this if qualifier.quoted else qualifier.this.lower()
        matched = [s for s in sources if s.name == owner]
    else:
        if any(s.columns is None for s in sources):
            return None
        matched = [s for s in sources if name in (s.columns or ())]
    if len(matched) != 1:
        return None
    source = matched[0]
    node = source.node
    if not source.managed or not isinstance(node, exp.Table) or node.alias_column_names:
        return None  # (columns renamed by the alias: the name is not the table's column's)
    return source if name in (source.columns or ()) else None


def _substring_predicate(node: exp.Expression) -> tuple[exp.Column, Need, str | None] | None:
    """(the column, what it must hold, its check: a regular expression's call on '') of a
    substring predicate of a column and a string literal; None for any other predicate."""
    node = node.unnest()
    if isinstance(node, exp.Escape):
        escape = _string(node.expression)
        if escape != "\\":
            return None  # (DataFusion refuses any other escape character: its error)
        node = node.this
    if isinstance(node, (exp.Like, exp.ILike)) and not node.args.get("negate"):
        return _read(node.this, node.expression, like_need)
    if isinstance(node, (exp.RegexpLike, exp.RegexpILike)):
        flags = _string(node.args.get("flag")) if node.args.get("flag") is not None else ""
        if flags is None or "x" in flags:
            return None  # (flags of a column, or x: spaces and # are then not literal)
        if isinstance(node, exp.RegexpILike):
            flags += "i"
        read = _read(node.this, node.expression, regex_need)
        pattern = _string(node.expression)
        if read is None or pattern is None:
            return None
        check = f"regexp_like('', {string_literal(pattern)}{', ' + string_literal(flags) if flags else ''})"
        return read[0], read[1], check
    if isinstance(node, (exp.StartsWith, exp.EndsWith)):
        return _read(node.this, node.expression, lambda s: s or None)
    if isinstance(node, (exp.GT, exp.LT, exp.GTE, exp.LTE)):
        position, bound = (node.this, node.expression) if isinstance(node, (exp.GT, exp.GTE)) else (
            node.expression, node.this)
        least = 1 if isinstance(node, (exp.GT, exp.LT)) else 0  # (strpos(...) > 0, >= 1)
        if (isinstance(position, exp.StrPosition) and position.args.get("position") is None
                and isinstance(bound, exp.Literal) and not bound.is_string
                and bound.this.isdigit() and int(bound.this) + least >= 1):
            return _read(position.this, position.args.get("substr"), lambda s: s or None)
    return None


def _one_run(node: exp.Expression) -> bool:
    """Whether substring predicate ``node`` asks for one run of text anywhere in its column
    (``LIKE``/``ILIKE '%run%'``, no wildcard or backslash in the run; ``strpos(c, s) > 0``)."""
    node = node.unnest()
    if isinstance(node, exp.Escape):
        node = node.this
    if isinstance(node, (exp.Like, exp.ILike)):
        pattern = _string(node.expression) or ""
        inner = pattern[1:-1]
        return len(pattern) > 2 and pattern[0] == pattern[-1] == "%" and not any(c in inner for c in "%_\\")
    return isinstance(node, (exp.GT, exp.LT, exp.GTE, exp.LTE))  # (strpos: see _substring_predicate)


def _read(column: exp.Expression, literal: exp.Expression | None,
          need: Callable[[str], Need]) -> tuple[exp.Column, Need, None] | None:
    text = _string(literal)
    if not isinstance(column, exp.Column) or not isinstance(column.this, exp.Identifier) or text is None:
        return None
    return column, need(text), None


def _string(node: exp.Expression | None) -> str | None:
    return node.this if isinstance(node, exp.Literal) and node.is_string else None
