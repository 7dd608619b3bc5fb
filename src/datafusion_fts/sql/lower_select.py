"""Lower a SELECT with MATCH predicates into a LogicalSearch plus the SQL DataFusion runs.

The search part (the MATCH tree, its prefilter and its top-k) is planned by this system;
everything else — projections, joins, aggregates, ORDER BY/LIMIT of the rest — is left
to DataFusion, over the search result, which carries the columns the statement reads
(fetched by row id):

    FROM docs AS d WHERE MATCH(body, 'q') AND year > 2000 ORDER BY score() DESC LIMIT 10
    ->  LogicalSearch(docs, tree=parse('q', [body]), prefilter="year > 2000", k=10)
    ->  FROM <result> AS d WHERE year > 2000 ORDER BY d._score DESC, d._rowid ASC LIMIT 10

A MATCH under OR beside other predicates lets rows that do not match qualify too: its
result is joined back to the table by ``_rowid`` (a derived table, see ``_derived``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pyarrow as pa
from sqlglot import exp

from ..errors import PlanError, QuerySyntaxError, SqlError
from ..planner.logical import LogicalSearch
from ..query.parser import MAX_QUERY_TERMS, parse
from ..query.tree import Boolean, Query
from ..settings import INT64_MAX
from .dialect import FtsMatch, FtsScore, FtsScoreExplain, identifier
from .session_catalog import RESERVED_PREFIX, quote, rows_name
from .splice import Splicer

SCORE = "_score"
ROWID = "_rowid"
MATCHED = "_fts_matched"
EXPLAIN = "_explain"


@dataclass(frozen=True)
class Lowered:
    """One lowered SELECT: its search, the placeholder table its result must fill, and the
    output columns that hold row ids until score_explain() fills them (the outermost
    SELECT only: the statement's own result columns)."""

    search: LogicalSearch
    result_table: str
    explain: tuple[int, ...] = ()


def _own(node: exp.Expression, select: exp.Select) -> bool:
    """Whether ``node`` belongs to ``select`` itself, not to a nested query."""
    return node.find_ancestor(exp.Select) is select


def _conjuncts(node: exp.Expression | None) -> list[exp.Expression]:
    if node is None:
        return []
    node = node.unnest()
    if isinstance(node, exp.And):
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


def _disjuncts(node: exp.Expression) -> list[exp.Expression]:
    node = node.unnest()
    if isinstance(node, exp.Or):
        return _disjuncts(node.left) + _disjuncts(node.right)
    return [node]


def _has_match(node: exp.Expression) -> bool:
    return node.find(FtsMatch) is not None


def parse_match(
    sql: str, start: int | None, text: str, columns: tuple[str, ...], max_terms: int = MAX_QUERY_TERMS
) -> Query:
    """The leaf of a MATCH over ``columns`` whose query literal, ``text``, starts at
    ``start`` in ``sql``: a syntax error in it points into the SQL (past the opening
    quote, counting each '' escape as two)."""
    try:
        return parse(text, list(columns), max_terms=max_terms)
    except QuerySyntaxError as err:
        if start is None:
            raise
        raw = start + 1 + err.offset + text[: err.offset].count("'")
        raise QuerySyntaxError(
            f"{err.message} (offset {err.offset} in the MATCH query)", sql, raw, err.length
        ) from None


class _Lowering:
    """State for lowering one SELECT."""

    def __init__(
        self,
        sql: str,
        select: exp.Select,
        schemas: Callable[[str], tuple[pa.Schema, bool] | None],
        outermost: bool = False,
        leaf: Callable[[FtsMatch], Query] | None = None,
        max_terms: int = MAX_QUERY_TERMS,
        splicer: Splicer | None = None,
    ) -> None:
        self.sql = sql
        self.splicer = splicer
        self.max_terms = max_terms
        self.select = select
        self.schemas = schemas
        self.outermost = outermost
        self.managed: dict[str, bool] = {}
        self.missing: list[exp.Table] = []  # tables in FROM the session does not have
        self._leaf_of = leaf  # (None: _leaf; not stored as a bound method, a cycle that kept the database alive)

    # -- sources ------------------------------------------------------------------------
    def _sources(self) -> dict[str, tuple[exp.Table, pa.Schema]]:
        """Searchable tables in FROM / JOIN, by the name SQL refers to them with."""
        out = {}
        from_ = self.select.args.get("from_")
        tables = [from_.this] if from_ is not None else []
        tables += [j.this for j in self.select.args.get("joins") or []]
        for table in tables:
            if isinstance(table, exp.Table) and not table.args.get("db"):
                found = self.schemas(identifier(table))
                if found is None:
                    self.missing.append(table)
                    continue
                name = table.alias_or_name if table.alias else identifier(table)
                out[name] = (table, found[0])
                self.managed[name] = found[1]
        return out

    def _target(self, matches: list[FtsMatch], sources: dict[str, tuple[exp.Table, pa.Schema]]) -> str:
        """The one managed source every MATCH reads."""
        targets = set()
        for m in matches:
            for col in m.expressions:
                if not isinstance(col, exp.Column):
                    raise self._error("MATCH takes column names", col)
                name = identifier(col)
                if col.table:
                    qualifier = col.args["table"]
                    owner = qualifier.this if qualifier.quoted else qualifier.this.lower()
                    if owner not in sources:
                        raise self._error(f"MATCH column {col.sql()} is not a column of a table in FROM", col)
                    if name not in sources[owner][1].names:
                        raise self._error(f"table {owner!r} has no column {name!r}", col)
                    targets.add(owner)
                else:
                    owners = [a for a, (_, schema) in sources.items() if name in schema.names]
                    if not owners and self.missing:  # (the missing table is the cause)
                        raise self._error(f"no table named {identifier(self.missing[0])!r}", self.missing[0])
                    if not owners:
                        raise self._error(f"no table in FROM has a column {name!r}", col)
                    if len(owners) > 1:
                        raise self._error(f"column {name!r} is ambiguous: qualify it with one of {owners}", col)
                    targets.add(owners[0])
        if len(targets) != 1:
            raise PlanError(f"all MATCH predicates of one SELECT must search one table; they search {sorted(targets)}")
        return targets.pop()

    def _error(self, message: str, node: exp.Expression) -> SqlError:
        start = node_start(node, self.sql)
        return SqlError(message, self.sql, start if start is not None else 0, len(node.sql()))

    # -- MATCH trees ----------------------------------------------------------------------
    def _leaf(self, m: FtsMatch) -> Query:
        literal = m.args["query"]
        if not (isinstance(literal, exp.Literal) and literal.is_string):
            raise self._error("the query of MATCH must be a string literal", literal)
        columns = tuple(identifier(c) for c in m.expressions)
        return parse_match(self.sql, node_start(literal, self.sql), literal.this, columns, self.max_terms)

    def _tree(self, node: exp.Expression) -> Query:
        """AND / OR / NOT over MATCH predicates -> one Boolean tree (docs/design.md: "SQL")."""
        node = node.unnest()
        if isinstance(node, FtsMatch):
            return self._leaf_of(node) if self._leaf_of is not None else self._leaf(node)
        if isinstance(node, exp.Not):
            return Boolean(must_not=(self._tree(node.this),))
        if isinstance(node, exp.And):
            must, must_not = [], []
            for part in _conjuncts(node):
                part = part.unnest()
                if isinstance(part, exp.Not):
                    must_not.append(self._tree(part.this))
                else:
                    must.append(self._tree(part))
            return Boolean(must=tuple(must), must_not=tuple(must_not))
        if isinstance(node, exp.Or):
            return Boolean(should=tuple(self._tree(d) for d in _disjuncts(node)))
        raise self._error(f"MATCH can only be combined with AND, OR and NOT here, not {node.key.upper()}", node)

    def _pure_match(self, node: exp.Expression) -> bool:
        node = node.unnest()
        if isinstance(node, FtsMatch):
            return True
        if isinstance(node, exp.Not):
            return self._pure_match(node.this)
        if isinstance(node, (exp.And, exp.Or)):
            return self._pure_match(node.left) and self._pure_match(node.right)
        return False

    # -- the rewrite ----------------------------------------------------------------------
    def lower(self, fresh_name: Callable[[], str]) -> Lowered | None:
        select = self.select
        matches = [m for m in select.find_all(FtsMatch) if _own(m, select)]
        scores = [s for s in select.find_all(FtsScore) if _own(s, select)]
        explains = [s for s in select.find_all(FtsScoreExplain) if _own(s, select)]
        if not matches:
            if scores or explains:
                name = "score()" if scores else "score_explain()"
                raise self._error(f"{name} needs a MATCH predicate in the same SELECT", (scores or explains)[0])
            return None
        where = select.args.get("where")
        for m in matches:
            if where is None or not m.find_ancestor(exp.Where):
                raise self._error("MATCH may only appear in WHERE", m)
        sources = self._sources()
        alias = self._target(matches, sources)
        table, schema = sources[alias]
        managed = self.managed[alias]

        must, must_not, kept, prefilter, join, residual_ok = [], [], [], [], "inner", True
        joined: set[int] = set()  # (the MATCHes of the OR joined back to the table)
        conjuncts = _conjuncts(where.this)
        # (each as the user wrote it, for the prefilter DataFusion runs; None: generated)
        written = self.splicer.conjunct_texts(conjuncts) if self.splicer is not None else None
        written_prefilter: list[str] = []
        for n, conj in enumerate(conjuncts):
            if not _has_match(conj):
                kept.append(conj)
                if managed and self._local(conj, alias, schema):
                    prefilter.append(conj)
                    if written is not None:
                        written_prefilter.append(written[n])  # (no OR at its top: see conjunct_texts)
                else:
                    residual_ok = False
            elif self._pure_match(conj):
                inner = conj.unnest()
                if isinstance(inner, exp.Not):
                    must_not.append(self._tree(inner.this))
                else:
                    must.append(self._tree(inner))
            elif isinstance(conj.unnest(), exp.Or) and all(
                self._pure_match(d) or not _has_match(d) for d in _disjuncts(conj)
            ):
                if join == "left":
                    raise PlanError("only one OR may mix MATCH with other predicates in a WHERE clause")
                join = "left"
                joined = {id(m) for m in conj.find_all(FtsMatch)}
                disjuncts = _disjuncts(conj)
                must.append(Boolean(should=tuple(self._tree(d) for d in disjuncts if self._pure_match(d))))
                relational = [d for d in disjuncts if not _has_match(d)]
                kept.append(exp.or_(exp.column(MATCHED, table=alias).is_(exp.null()).not_(), *relational))
                residual_ok = False
            else:
                raise self._error(
                    "this predicate mixes MATCH with other conditions in a way that has no single "
                    "score; combine MATCH predicates with AND/OR/NOT, or put them under one top-level OR",
                    conj,
                )
        if join == "left" and (len(must) > 1 or must_not):
            raise PlanError("a MATCH under OR with other predicates must be the only MATCH in the WHERE clause")
        tree = must[0] if len(must) == 1 and not must_not else Boolean(must=tuple(must), must_not=tuple(must_not))

        stars = _stars(select)
        # (read before the tree changes: what the text's edits depend on)
        negated = {id(m) for m in matches if sum(isinstance(a, exp.Not) for a in _ancestors(m, exp.Where)) % 2}
        bare = {id(e) for e in explains if not isinstance(e.parent, exp.Alias)}
        excluded = {identifier(c) for star in stars for c in (star if isinstance(star, exp.Star) else star.this).args.get("except_") or []}
        order = select.args.get("order")
        keys = len(order.expressions) if order is not None else 0
        order_end = self.splicer.order_end(order) if order is not None and self.splicer is not None else None
        self._replace_scores(scores, alias)
        explained = self._replace_explains(explains, alias)
        expand_stars(select, self.schemas, searched=True)
        order_by_score = self._tie_break(alias)
        k = self._pushdown(order_by_score, residual_ok and join == "inner")
        prefilter_sql = " AND ".join(
            written_prefilter if written is not None else (p.sql(dialect="postgres", normalize_functions=False)
                                                           for p in prefilter)) or None
        select.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)
        # The table's columns the statement still reads once MATCH is gone.
        used = {identifier(c) for c in select.find_all(exp.Column) if c.table in (alias, "")} | excluded
        read = tuple(name for name in schema.names if name in used)
        search = LogicalSearch(identifier(table), alias, tree, prefilter_sql, k, join, managed, read)

        result_table = fresh_name()
        if search.carries_rows:
            # The search result carries the rows themselves: a bounded top-k is fetched by
            # row id (or a scan found them), so DataFusion never rescans the table.
            table.replace(
                exp.Table(this=exp.to_identifier(result_table), alias=exp.TableAlias(this=exp.to_identifier(alias)))
            )
        else:
            table.replace(self._derived(table, alias, result_table, join))
        positions = tuple(
            next(i for i, e in enumerate(select.expressions) if e is item) for item in explained
        )
        if self.splicer is not None:
            self._splice(matches, joined, negated, scores, explains, bare, stars, (keys, order_end), alias, table,
                         search, result_table)
        return Lowered(search, result_table, positions)

    def _splice(self, matches: list[FtsMatch], joined: set[int], negated: set[int], scores: list[FtsScore],
                explains: list[FtsScoreExplain], bare: set[int], stars: list[exp.Expression],
                order_at: tuple[int, int | None], alias: str, table: exp.Expression, search: LogicalSearch,
                result_table: str) -> None:
        """The edits of the statement's own text this lowering makes (sql/splice.py): each
        MATCH a truth value that makes its literal hold for every row of the search's result
        (TRUE, or FALSE under an odd number of NOTs: ``negated``; for a MATCH of the OR
        joined back to the table, ``joined``, whether the row was found), score() and
        score_explain() the result's columns (``bare``: those without an alias), the table
        its result, a tie-break after ORDER BY score() (``order_at``: the keys it had, where
        they ended), ``*`` the table's columns."""
        sp = self.splicer
        assert sp is not None
        matched = f"{quote(alias)}.{quote(MATCHED)}"
        for m in matches:
            odd = id(m) in negated  # (under an odd number of NOTs)
            if id(m) in joined:
                sp.replace_call(m, f"({matched} IS {'' if odd else 'NOT '}NULL)")
            else:
                sp.replace_call(m, "FALSE" if odd else "TRUE")
        for s in scores:
            sp.replace_call(s, f"{quote(alias)}.{quote(SCORE)}")
        for e in explains:
            sp.replace_call(e, f"{quote(alias)}.{quote(ROWID)}" + (f" AS {quote(EXPLAIN)}" if id(e) in bare else ""))
        if search.carries_rows:
            sp.replace_table(table, f"{quote(result_table)} AS {quote(alias)}")
            extra = [ROWID, SCORE]
        else:
            derived = self._derived(table, alias, result_table, search.join)
            sp.replace_table(table, derived.sql(dialect="postgres", normalize_functions=False))
            extra = [ROWID, SCORE] + ([MATCHED] if search.join == "left" else [])
        order, (keys, order_end) = self.select.args.get("order"), order_at
        if order is not None and len(order.expressions) > keys:  # (a tie-break was added)
            key = order.expressions[-1]
            sp.insert(order_end, f", {quote(alias)}.{quote(ROWID)} {'DESC' if key.args.get('desc') else 'ASC'}")
        _splice_stars(sp, self.select, stars, {alias: extra}, self.schemas)

    def _local(self, node: exp.Expression, alias: str, schema: pa.Schema) -> bool:
        """A predicate DataFusion can evaluate on the searched table alone (a prefilter);
        one reading score() can only be evaluated after the search."""
        if node.find(exp.Select, exp.AggFunc, exp.Window, FtsScore) is not None:
            return False
        for col in node.find_all(exp.Column):
            if col.table and col.table != alias:
                return False
            if identifier(col) not in schema.names and identifier(col) != ROWID:
                return False
        return True

    def _replace_scores(self, scores: list[FtsScore], alias: str) -> None:
        for s in scores:
            s.replace(exp.column(SCORE, table=alias))

    def _replace_explains(self, explains: list[FtsScoreExplain], alias: str) -> list[exp.Expression]:
        """Stand ``_rowid`` in for each score_explain() of the select list (execution puts
        the explanation of the rows the statement returns there); other places are refused."""
        items = []
        for node in explains:
            item = node.parent if isinstance(node.parent, exp.Alias) else node
            if item.parent is not self.select or item.arg_key != "expressions":
                raise self._error("score_explain() must be a column of the SELECT list (it may be aliased), not part of an expression", node)
            if not self.outermost:
                raise self._error("score_explain() must be in the statement's outermost SELECT, whose rows it explains", node)
            if self.select.args.get("group") or any(e.find(exp.AggFunc, exp.Window) for e in self.select.expressions):
                raise self._error("score_explain() explains single rows: it cannot be combined with GROUP BY, aggregates or windows", node)
            rowid = exp.column(ROWID, table=alias)
            if item is node:
                item = exp.alias_(rowid, EXPLAIN)
                node.replace(item)
            else:
                node.replace(rowid)
            items.append(item)
        return items

    def _is_score(self, node: exp.Expression, alias: str) -> bool:
        if isinstance(node, exp.Column) and node.name == SCORE and node.table in (alias, ""):
            return True
        if isinstance(node, exp.Column) and not node.table:
            for e in self.select.expressions:
                if isinstance(e, exp.Alias) and e.alias == node.name:
                    return self._is_score(e.this, alias)
        return False

    def _tie_break(self, alias: str) -> bool:
        """ORDER BY score() means the total order (docs/design.md: "SQL"): ``_rowid`` becomes the
        last key (after any the user gave), ascending under score() DESC. Returns whether
        the ORDER BY is exactly ``score() DESC``."""
        order = self.select.args.get("order")
        if order is None:
            return False
        keys = list(order.expressions)
        scored = [k for k in keys if self._is_score(k.this, alias)]
        if not scored:
            return False
        if not any(isinstance(k.this, exp.Column) and k.this.name == ROWID for k in keys):
            keys.append(exp.Ordered(this=exp.column(ROWID, table=alias), desc=not scored[0].args.get("desc")))
            order.set("expressions", keys)
        return keys[0] is scored[0] and bool(scored[0].args.get("desc")) and len(keys) == 2

    def _pushdown(self, order_by_score: bool, prefilter_complete: bool) -> int | None:
        """The top-k to push into the search when it cannot change the answer."""
        s = self.select
        limit = s.args.get("limit")
        if limit is None or not prefilter_complete:
            return None
        blockers = ("joins", "group", "having", "distinct", "qualify", "windows")
        if any(s.args.get(b) for b in blockers) or any(e.find(exp.AggFunc, exp.Window) for e in s.expressions):
            return None
        if s.args.get("order") is not None and not order_by_score:
            return None
        count = int_literal(limit.expression)
        offset = s.args.get("offset")
        skip = 0 if offset is None else int_literal(offset.expression)
        if count is None or skip is None:
            return None
        if count + skip > INT64_MAX:  # (rows are counted in int64, here and in DataFusion)
            node = limit.expression if count > INT64_MAX or offset is None else offset.expression
            raise self._error(f"LIMIT plus OFFSET must be at most 2^63-1, got {count} + {skip}", node)
        return count + skip

    def _derived(self, table: exp.Table, alias: str, result_table: str, join: str) -> exp.Subquery:
        inner = exp.to_identifier("__fts_t")
        res = exp.to_identifier("__fts_s")
        score = exp.column(SCORE, table=res)
        projections: list[exp.Expression] = [exp.column(exp.Star(), table=inner)]
        if join == "left":
            projections.append(exp.alias_(exp.func("COALESCE", score, exp.Literal.number("0.0")), SCORE))
            projections.append(exp.alias_(exp.column(ROWID, table=res), MATCHED))
        else:
            projections.append(exp.alias_(score, SCORE))
        body = (
            exp.select(*projections)
            .from_(exp.Table(this=exp.to_identifier(rows_name(identifier(table)), quoted=True), alias=exp.TableAlias(this=inner)))
            .join(
                exp.Table(this=exp.to_identifier(result_table), alias=exp.TableAlias(this=res)),
                on=exp.column(ROWID, table=inner).eq(exp.column(ROWID, table=res)),
                join_type="left" if join == "left" else "inner",
            )
        )
        return exp.Subquery(this=body, alias=exp.TableAlias(this=exp.to_identifier(alias)))


def _ancestors(node: exp.Expression, stop: type) -> list[exp.Expression]:
    """The ancestors of ``node`` below the first of type ``stop``."""
    out, at = [], node.parent
    while at is not None and not isinstance(at, stop):
        out.append(at)
        at = at.parent
    return out


def _stars(select: exp.Select) -> list[exp.Expression]:
    """The ``*`` and ``t.*`` items of a SELECT list (before they are spelled out)."""
    return [e for e in select.expressions
            if isinstance(e, exp.Star) or isinstance(e, exp.Column) and isinstance(e.this, exp.Star)]


def _splice_stars(sp: Splicer, select: exp.Select, stars: list[exp.Expression], extra: dict[str, list[str]],
                  schemas: Callable[[str], tuple[pa.Schema, bool] | None]) -> None:
    """Edit each ``*`` of ``select`` so it shows no column of ours: ``extra`` names them per
    source (a search's result: ``_rowid``, ``_score``); a managed table's rows carry
    ``_rowid``. A ``*`` over one source becomes ``* EXCLUDE (...)`` (with the user's own
    EXCLUDE list), over several ``a.* EXCLUDE (...), b.*``."""
    hidden = dict(extra)
    names = []
    for name, node in _source_names(select):
        names.append(name)
        if name not in hidden and isinstance(node, exp.Table) and not node.args.get("db"):
            found = schemas(identifier(node))
            if found is not None and found[1]:
                hidden[name] = [ROWID]
    if not hidden:
        return
    for item in stars:
        star = item if isinstance(item, exp.Star) else item.this
        modified = any(star.args.get(k) for k in ("except_", "replace", "rename", "ilike"))
        if isinstance(item, exp.Column):
            if item.table in hidden:
                columns = ", ".join([*map(quote, hidden[item.table]), *sp.excluded(star)])
                sp.replace_star(star, f"{quote(item.table)}.* EXCLUDE ({columns})", item)
        elif len(names) == 1:
            columns = ", ".join([*map(quote, hidden.get(names[0], [])), *sp.excluded(star)])
            if columns:
                sp.replace_star(star, f"* EXCLUDE ({columns})")
        elif modified or not all(names):
            raise PlanError("a * with EXCLUDE, EXCEPT, REPLACE or RENAME over several tables, or over an unnamed "
                            "subquery, beside a search or _rowid: write t.* for each table")
        else:
            sp.replace_star(star, ", ".join(
                f"{quote(n)}.* EXCLUDE ({', '.join(map(quote, hidden[n]))})" if n in hidden else f"{quote(n)}.*"
                for n in names))


def _source_names(select: exp.Select) -> list[tuple[str, exp.Expression]]:
    from_ = select.args.get("from_")
    nodes = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
    out = []
    for node in nodes:
        if isinstance(node, exp.Table):
            out.append((node.alias_or_name if node.alias else identifier(node), node))
        else:
            out.append((node.alias_or_name, node))
    return out


def expand_stars(
    select: exp.Select, schemas: Callable[[str], tuple[pa.Schema, bool] | None], searched: bool = False
) -> bool:
    """Spell out ``*`` and ``t.*`` over managed tables (and, in a searching SELECT, every
    known table) as their own columns, so the hidden ``_rowid`` and a search's ``_score``
    are selectable by name only (docs/design.md: "SQL"). Returns whether anything changed."""
    columns: dict[str, list[exp.Expression] | None] = {}
    managed = False
    for name, node in _source_names(select):
        found = schemas(identifier(node)) if isinstance(node, exp.Table) and not node.args.get("db") else None
        if found is not None and (found[1] or searched):
            managed = managed or found[1]
            columns[name] = [exp.column(c, table=name, quoted=True) for c in found[0].names]
        else:
            columns[name] = [exp.column(exp.Star(), table=name)] if name else None
    if not managed and not searched:
        return False
    expressions, changed = [], False
    for e in select.expressions:
        if isinstance(e, exp.Star) and all(c is not None for c in columns.values()):
            expressions.extend(_modified([c.copy() for cols in columns.values() for c in cols or []], e))
            changed = True
        elif isinstance(e, exp.Column) and isinstance(e.this, exp.Star) and columns.get(e.table):
            expressions.extend(_modified([c.copy() for c in columns[e.table] or []], e.this))
            changed = True
        else:
            expressions.append(e)
    if changed:
        select.set("expressions", expressions)
    return changed


def _modified(columns: list[exp.Expression], star: exp.Star) -> list[exp.Expression]:
    """The columns a ``*`` spelled out as ``columns`` selects: without those its EXCLUDE
    (or EXCEPT) names, with its REPLACE expressions in their places."""
    if star.args.get("rename") or star.args.get("ilike"):
        raise PlanError("a * with RENAME or ILIKE cannot be spelled out beside a search or _rowid: name the columns")
    excluded = {identifier(c) for c in star.args.get("except_") or []}
    replaced = {identifier(a.args["alias"]): a for a in star.args.get("replace") or []}
    out: list[exp.Expression] = []
    for column in columns:
        name = identifier(column) if isinstance(column.this, exp.Identifier) else None
        if name in excluded:
            continue
        out.append(replaced[name].copy() if name in replaced else column)
    return out


def _reads_rows(table: exp.Table, managed: Callable[[str], bool]) -> bool:
    """Whether ``table`` is a managed table the statement reads (not the one a CREATE
    TABLE, INSERT or DROP writes), named without a schema."""
    parent = table.parent.parent if isinstance(table.parent, exp.Schema) else table.parent
    if isinstance(parent, (exp.Create, exp.Insert, exp.Drop)) and table.arg_key == "this":
        return False
    return not table.args.get("db") and isinstance(table.this, exp.Identifier) and managed(identifier(table))


def read_rows(statement: exp.Expression, managed: Callable[[str], bool]) -> bool:
    """Make each managed table ``statement`` reads resolve to its rows with ``_rowid``
    (sql/session_catalog.py ``rows_name``), under the name it was referred to by: the
    statement may select or join on the row id, which the table's own name hides. Returns
    whether any did."""
    changed = False
    for table in list(statement.find_all(exp.Table)):
        if not _reads_rows(table, managed):
            continue
        name = identifier(table)
        table.set("this", exp.to_identifier(rows_name(name), quoted=True))
        if table.args.get("alias") is None:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(name, quoted=True)))
        changed = True
    return changed


def int_literal(node: exp.Expression | None) -> int | None:
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return int(node.this)
    return None


def node_start(node: exp.Expression, sql: str) -> int | None:
    """Where ``node`` begins in ``sql``: the earliest position of its tokens. Parentheses
    keep no token, so each one counts from the "(" just before its content."""
    starts = []
    for n in node.walk():
        if n.meta and n.meta.get("start") is not None:
            starts.append(int(n.meta["start"]))
        elif isinstance(n, exp.Paren):
            inner = node_start(n.this, sql)
            if inner is not None:
                at = inner - 1
                while at > 0 and sql[at].isspace():
                    at -= 1
                starts.append(at if sql[at] == "(" else inner)
    return min(starts) if starts else None


def lower_statement(
    sql: str,
    statement: exp.Expression,
    schemas: Callable[[str], tuple[pa.Schema, bool] | None],
    fresh_name: Callable[[], str],
    leaf: Callable[[FtsMatch], Query] | None = None,
    max_terms: int = MAX_QUERY_TERMS,
    splicer: Splicer | None = None,
) -> tuple[list[Lowered], str | None]:
    """Lower every SELECT of ``statement`` that searches, innermost first (in place); where
    the statement reads row ids, read the managed tables it reads otherwise with their
    ``_rowid`` (:func:`read_rows`), else as they are: the tables DataFusion knows, with
    the keys their definitions declare (a correlated subquery over a key needs them).
    ``leaf`` makes each MATCH's leaf of the tree (by default: its query text parsed, with
    at most ``max_terms`` words and phrases). Returns the searches and, given the
    ``splicer`` of the text the tree was parsed from, that text edited accordingly
    (sql/splice.py); None without one, or where an edit could not be placed (the tree is
    then to be generated)."""
    lowered = []
    reads_rowid = any(column.name == ROWID for column in statement.find_all(exp.Column))
    for select in reversed(list(statement.find_all(exp.Select, bfs=False))):
        lowering = _Lowering(sql, select, schemas, outermost=select is statement, leaf=leaf, max_terms=max_terms,
                             splicer=splicer)
        stars = _stars(select)
        result = lowering.lower(fresh_name)
        if result is not None:
            lowered.append(result)
        elif reads_rowid:  # (a * over a table's rows spelled without its row id)
            if splicer is not None:
                _splice_stars(splicer, select, stars, {}, schemas)
            expand_stars(select, schemas)
    if not reads_rowid:  # (the tables as DataFusion knows them, with their keys)
        return lowered, splicer.result() if splicer is not None else None

    def managed(name: str) -> bool:  # (a search's result is no table to look up)
        return not name.startswith(RESERVED_PREFIX) and (schemas(name) or (None, False))[1]

    for table in list(statement.find_all(exp.Table)):
        if splicer is not None and _reads_rows(table, managed):
            alias = table.alias_or_name if table.args.get("alias") is not None else identifier(table)
            splicer.replace_table(table, f"{quote(rows_name(identifier(table)))} AS {quote(alias)}")
    read_rows(statement, managed)
    return lowered, splicer.result() if splicer is not None else None
