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
from dataclasses import dataclass, replace

from sqlglot import exp

from ...query.substring import Need, all_of, like_need, regex_need
from ...session.catalog import string_literal
from ..text.classify import ROWID
from ..text.dialect import Fts, FtsMatch, conjuncts, identifier
from ..text.select_sources import Schemas, Source, select_sources
from ..text.splice import Splicer


@dataclass(frozen=True)
class SubstringConjunct:
    """A substring conjunct of a WHERE (LIKE, a regular expression, strpos ...) over a column
    with an n-gram index: what it asks of the column, and its place in the statement."""

    column: str
    need: Need
    # Its regular expression evaluated on '' (SQL), if it has one: DataFusion refuses a
    # malformed pattern or flag only when it evaluates the predicate on some row, and the
    # candidates may be none.
    check: str | None
    # Whether it asks for one run of text anywhere (LIKE or ILIKE '%run%' with no wildcard or
    # escape inside, strpos > 0): a candidate holding the run's grams nearly always holds it.
    one_run: bool
    node: exp.Expression  # (as parsed: sql/substring/substring_shapes.py binds a copy to other literals)
    span: tuple[int, int] | None  # (where its text is in the statement; None: not placed)
    text: str | None  # (that text)

    @property
    def shown(self) -> str:
        """EXPLAIN's text of it: as written, else as sqlglot writes it."""
        return self.text if self.text is not None else self.node.sql()


@dataclass(frozen=True)
class SubstringRead:
    """A managed table of a SELECT (its FROM or JOIN, read as ``alias``; ``span``: that
    reference's place in the text, from its name to its alias, None if not placed) and
    its WHERE's substring conjuncts over its columns with an n-gram index."""

    table: str
    alias: str
    span: tuple[int, int] | None
    conjuncts: tuple[SubstringConjunct, ...]
    # The names (lowercased) the statement may read a column by; None: any column (a star,
    # a NATURAL join or USING). A candidate row's other columns need not be fetched.
    names: frozenset[str] | None = None
    # The statement's other regular expressions, evaluated on '' for every column (SQL): a
    # malformed one fails DataFusion's scan but not its run over no candidates.
    probes: tuple[str, ...] = ()

    @property
    def needs(self) -> tuple[tuple[str, Need, str], ...]:
        """Per column (in the order first met): what its conjuncts ask together, and their
        text."""
        columns: dict[str, list[SubstringConjunct]] = {}
        for conj in self.conjuncts:
            columns.setdefault(conj.column, []).append(conj)
        return tuple((column, all_of([c.need for c in items]), "; ".join(c.shown for c in items))
                     for column, items in columns.items())

    @property
    def checks(self) -> tuple[str, ...]:
        """SQL that fails where the statement's regular expressions are malformed."""
        return tuple(c.check for c in self.conjuncts if c.check is not None) + self.probes

    @property
    def predicates(self) -> tuple[str, ...] | None:
        """The conjuncts as the statement writes them (None: some could not be placed),
        which DataFusion may evaluate on the candidates' own columns first."""
        texts = tuple(c.text for c in self.conjuncts if c.text is not None)
        return texts if len(texts) == len(self.conjuncts) else None

    @property
    def runs_only(self) -> bool:
        """Whether every conjunct asks one run of text (evaluating them first would not pay)."""
        return all(c.one_run for c in self.conjuncts)


def substring_reads(statement: exp.Expression, schemas: Schemas,
                    ngram_columns: Callable[[str], frozenset[str]], splicer: Splicer | None = None
                    ) -> list[SubstringRead]:
    """Each table of ``statement`` that may be read as its candidates (see the module's
    docstring); ``ngram_columns(table)`` names a managed table's columns with an n-gram index;
    ``splicer``, over the statement's text as written (no edits), places its parts."""
    if any(isinstance(node, FtsMatch) or (isinstance(node, exp.Column) and node.name == ROWID)
           for node in statement.walk()):
        return []
    out = []
    names = referenced_names(statement)
    for select in statement.find_all(exp.Select):
        where = select.args.get("where")
        if where is None:
            continue
        sources, missing = select_sources(select, schemas)
        if missing:
            continue
        found: dict[int, tuple[Source, list[SubstringConjunct]]] = {}
        parts = conjuncts(where.this)
        spans = splicer.conjunct_spans(parts) if splicer is not None else None
        for i, conj in enumerate(parts):
            made = substring_conjunct(conj, spans[i] if spans is not None else None,
                                      splicer.text if splicer is not None else "")
            if made is None:
                continue
            source = _column_source(made[0], sources)
            if source is None or made[1].column not in ngram_columns(source.table or ""):
                continue
            found.setdefault(id(source.node), (source, []))[1].append(made[1])
        for source, items in found.values():
            node = source.node
            assert isinstance(node, exp.Table) and source.table is not None
            alias = node.alias if node.args.get("alias") is not None else identifier(node)
            span = splicer.table_span(node) if splicer is not None else None
            out.append(SubstringRead(source.table, alias, span, tuple(items), names))
    inside = {id(n) for read in out for c in read.conjuncts for n in c.node.walk()}
    probes = tuple(_probe(n) for n in statement.walk() if _is_regex(n) and id(n) not in inside)
    return [replace(read, probes=probes) for read in out] if probes else out


def _is_regex(node: exp.Expression) -> bool:
    """Whether ``node`` calls a regular-expression function (``~``, ``regexp_replace`` ...)."""
    return type(node).__name__.startswith("Regexp") or (
        isinstance(node, exp.Anonymous) and str(node.name).lower().startswith("regexp"))


def _flags(node: exp.RegexpLike | exp.RegexpILike) -> str | None:
    """The flags of ``~``, ``~*`` or ``regexp_like`` (``~*``'s ``i`` among them); None if
    they are not a string literal."""
    flags = _string(node.args.get("flag")) if node.args.get("flag") is not None else ""
    return None if flags is None else flags + ("i" if isinstance(node, exp.RegexpILike) else "")


def _like_check(node: exp.RegexpLike | exp.RegexpILike) -> str | None:
    """``regexp_like`` of '' with the pattern and flags of ``node`` (SQL), which fails where
    they are malformed; None if they are not string literals."""
    pattern, flags = _string(node.expression), _flags(node)
    if pattern is None or flags is None:
        return None
    return f"regexp_like('', {string_literal(pattern)}{', ' + string_literal(flags) if flags else ''})"


def _probe(call: exp.Expression) -> str:
    """A regular expression's call with '' for every column (SQL): it fails where the call's
    pattern or flags do (and may fail where the call would not: the statement then runs
    as written)."""
    if isinstance(call, (exp.RegexpLike, exp.RegexpILike)):
        check = _like_check(call)
        if check is not None:
            return check
    probe = call.copy()
    for column in list(probe.find_all(exp.Column)):
        column.replace(exp.Literal.string(""))
    return f"({probe.sql(dialect=Fts)})"


def referenced_names(statement: exp.Expression) -> frozenset[str] | None:
    """Every name ``statement`` may read a column by, lowercased (those of its identifiers
    and words, a superset: tables and aliases too), or None where it may read columns it
    does not name: a star (``count(*)`` aside), a NATURAL join, a join USING columns."""
    names = set()
    for node in statement.walk():
        if isinstance(node, exp.Star) and not isinstance(node.parent, exp.Count):
            return None
        if isinstance(node, exp.Join) and (node.method == "NATURAL" or node.args.get("using")):
            return None
        if isinstance(node, (exp.Identifier, exp.Var)):
            names.add(node.name.lower())
    return frozenset(names)


def substring_conjunct(node: exp.Expression, span: tuple[int, int] | None, text: str
                       ) -> tuple[exp.Column, SubstringConjunct] | None:
    """``node`` (a conjunct of a WHERE, at ``span`` of statement ``text``) as a substring
    conjunct, with the column it reads; None if it is another predicate."""
    read = _substring_predicate(node)
    if read is None:
        return None
    column, need, check = read
    return column, SubstringConjunct(identifier(column), need, check, _one_run(node), node, span,
                                     text[span[0] : span[1]] if span is not None else None)


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
        flags = _flags(node)
        if flags is None or "x" in flags:
            return None  # (flags of a column, or x: spaces and # are then not literal)
        read = _read(node.this, node.expression, regex_need)
        check = _like_check(node)
        if read is None or check is None:
            return None
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
