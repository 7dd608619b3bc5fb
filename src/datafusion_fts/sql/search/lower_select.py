"""The fast path of a SELECT that searches: the search's result stands in for its table
(docs/design.md: "SQL"). The general plan, which answers every shape, is
sql/search/lower_marks.py; this one answers the shapes it can prove give the same answer,
faster: its MATCHes AND / OR / NOT-ed together at the top of WHERE over one managed table.

The search part (the MATCH tree, its prefilter and its top-k) is planned by this system;
everything else (projections, joins, aggregates, ORDER BY/LIMIT of the rest) is left to
DataFusion, over the search result, which carries the columns the statement reads
(fetched by row id):

    FROM docs AS d WHERE MATCH(body, 'q') AND year > 2000 ORDER BY score() DESC LIMIT 10
    ->  LogicalSearch(docs, tree=parse('q', [body]), prefilter="year > 2000", k=10)
    ->  FROM <result> AS d WHERE year > 2000 ORDER BY d._score DESC, d._rowid ASC LIMIT 10

Why the result may stand in for the table: the MATCH tree is a conjunct of WHERE and
reads only the table's row, so filtering the table's rows by it before the joins keeps
exactly the rows WHERE keeps, whatever the joins: a row of the table that the tree
rejects leaves no output row either way, and one on the NULL side of an outer join,
which the tree's truth makes NULL, is removed either way (the tree then reads
``_rowid IS NOT NULL`` for TRUE). The prefilter's conjuncts stay in WHERE, so they hold
as well; the top k is pushed only where nothing else in the SELECT can change which rows
come first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pyarrow as pa
from sqlglot import exp

from ...errors import PlanError, QuerySyntaxError, SqlError
from ...planner.logical import LogicalSearch, RelationSearch, SessionRows
from ...query.parser import MAX_QUERY_TERMS, parse
from ...query.tree import Boolean, Query
from ...session.catalog import quote
from ...settings import INT64_MAX
from ..text.classify import ROWID
from ..text.dialect import FtsMatch, FtsScore, FtsScoreExplain, conjuncts, disjuncts, identifier
from ..text.select_sources import Source, own
from ..text.splice import Splicer

SCORE = "_score"
TOTAL = "_total"  # (the number of matches, beside a top k: LogicalSearch.total)
EXPLAIN = "_explain"


@dataclass(frozen=True)
class Lowered:
    """One search of a lowered SELECT: the search, the name its result takes (a table;
    functions named from it), the output columns that hold row ids until score_explain()
    fills them (the outermost SELECT only: the statement's own result columns), and
    whether score_explain() stands elsewhere (:func:`lower_explains`)."""

    search: LogicalSearch | RelationSearch | SessionRows
    result_table: str
    explain: tuple[int, ...] = ()
    explains: bool = False  # (its explanations are a function too: <result_table>_explain(_rowid))


def has_match(node: exp.Expression) -> bool:
    return node.find(FtsMatch) is not None


def pure_match(node: exp.Expression) -> bool:
    """Whether ``node`` is MATCH predicates joined by AND, OR and NOT only."""
    node = node.unnest()
    if isinstance(node, FtsMatch):
        return True
    if isinstance(node, exp.Not):
        return pure_match(node.this)
    if isinstance(node, (exp.And, exp.Or)):
        return pure_match(node.left) and pure_match(node.right)
    return False


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


def score_keys(select: exp.Select, scores: list[FtsScore]) -> list[tuple[exp.Ordered, FtsScore]]:
    """The ORDER BY keys of ``select`` that are one of its ``scores``: called, named by a
    select item's alias, or by the item's position."""
    order = select.args.get("order")
    if order is None:
        return []
    ids = {id(s) for s in scores}
    items = select.expressions
    found = []
    for key in order.expressions:
        node = key.this
        position = int_literal(node)
        if position is not None and 1 <= position <= len(items):
            node = items[position - 1]
        elif isinstance(node, exp.Column) and not node.table:
            node = next((e for e in items if isinstance(e, exp.Alias) and e.alias == node.name), node)
        node = node.this if isinstance(node, exp.Alias) else node
        if id(node) in ids:
            found.append((key, node))
    return found


def fast_path(select: exp.Select, matches: list[tuple[FtsMatch, Source]], scores: list[FtsScore]) -> bool:
    """Whether the search's result may stand in for its table (see the module's
    docstring): every MATCH in a conjunct of WHERE made of MATCHes alone, all of one
    table (of the database, or of the session), every score() of it."""
    where = select.args.get("where")
    if where is None or len({id(source) for _, source in matches}) != 1 or matches[0][1].kind == "relation":
        return False
    pure = [c for c in conjuncts(where.this) if has_match(c)]
    if not all(pure_match(c) and own_matches(c, select) for c in pure):
        return False
    if sum(len(list(c.find_all(FtsMatch))) for c in pure) != len(matches):
        return False  # (a MATCH outside WHERE's conjuncts)
    name = matches[0][1].name
    return all(s.this is None or isinstance(s.this, exp.Column) and not s.this.table
               and identifier(s.this) == name and not s.expressions for s in scores)


def own_matches(node: exp.Expression, select: exp.Select) -> bool:
    return all(own(m, select) for m in node.find_all(FtsMatch))


class FastLowering:
    """The fast path of one SELECT (:func:`fast_path` holds): its MATCHes' tree searched,
    the result standing in for ``source``."""

    def __init__(
        self,
        sql: str,
        select: exp.Select,
        source: Source,
        schemas: Callable[[str], tuple[pa.Schema, bool] | None],
        leaf: Callable[[FtsMatch], Query],
        error: Callable[[str, exp.Expression], SqlError],
        outermost: bool = False,
        splicer: Splicer | None = None,
    ) -> None:
        self.sql = sql
        self.splicer = splicer
        self.select = select
        self.source = source
        self.schemas = schemas
        self.outermost = outermost
        self.leaf = leaf
        self.error = error

    # -- MATCH trees ----------------------------------------------------------------------
    def _tree(self, node: exp.Expression) -> Query:
        """AND / OR / NOT over MATCH predicates -> one Boolean tree (docs/design.md: "SQL")."""
        node = node.unnest()
        if isinstance(node, FtsMatch):
            return self.leaf(node)
        if isinstance(node, exp.Not):
            return Boolean(must_not=(self._tree(node.this),))
        if isinstance(node, exp.And):
            must, must_not = [], []
            for part in conjuncts(node):
                part = part.unnest()
                if isinstance(part, exp.Not):
                    must_not.append(self._tree(part.this))
                else:
                    must.append(self._tree(part))
            return Boolean(must=tuple(must), must_not=tuple(must_not))
        assert isinstance(node, exp.Or)
        return Boolean(should=tuple(self._tree(d) for d in disjuncts(node)))

    # -- the rewrite ----------------------------------------------------------------------
    def lower(self, fresh_name: Callable[[], str]) -> Lowered:
        select, source = self.select, self.source
        alias, table, schema = source.name, source.node, source.schema
        assert isinstance(table, exp.Table) and source.table is not None and schema is not None
        matches = [m for m in select.find_all(FtsMatch) if own(m, select)]
        scores = [s for s in select.find_all(FtsScore) if own(s, select)]
        explains = [s for s in select.find_all(FtsScoreExplain) if own(s, select)]
        where = select.args["where"]

        must, must_not, kept, prefilter, residual_ok = [], [], [], [], True
        conjuncts_ = conjuncts(where.this)
        # (each as the user wrote it, for the prefilter DataFusion runs; None: generated)
        written = self.splicer.conjunct_texts(conjuncts_) if self.splicer is not None else None
        written_prefilter: list[str] = []
        for n, conj in enumerate(conjuncts_):
            if not has_match(conj):
                kept.append(conj)
                if source.managed and local_predicate(conj, alias, schema):
                    prefilter.append(conj)
                    if written is not None:
                        written_prefilter.append(written[n])  # (no OR at its top: see conjunct_texts)
                else:
                    residual_ok = False
            else:
                inner = conj.unnest()
                if isinstance(inner, exp.Not):
                    must_not.append(self._tree(inner.this))
                else:
                    must.append(self._tree(inner))
        tree = must[0] if len(must) == 1 and not must_not else Boolean(must=tuple(must), must_not=tuple(must_not))

        stars = stars_of(select)
        # (read before the tree changes: what the text's edits depend on)
        negated = {id(m) for m in matches if sum(isinstance(a, exp.Not) for a in _ancestors(m, exp.Where)) % 2}
        excluded = {identifier(c) for star in stars for c in (star if isinstance(star, exp.Star) else star.this).args.get("except_") or []}
        order = select.args.get("order")
        keys = score_keys(select, scores)
        order_end = self.splicer.order_end(order) if order is not None and self.splicer is not None else None
        outer = any(j.side for j in select.args.get("joins") or [])  # (a row of the table may not exist)
        for s in scores:
            s.replace(exp.column(SCORE, table=alias))
        result_table = fresh_name()
        positions, explaining = lower_explains(select, explains, f"{quote(alias)}.{quote(ROWID)}", result_table,
                                               source.managed, self.outermost, self.error, self.splicer)
        expand_stars(select, self.schemas, searched=True)
        added = self._tie_break(keys, alias)
        totals = self._totals() if source.managed and TOTAL not in schema.names else []  # (a column of the user's)
        k = self._pushdown(self._in_score_order(keys, alias), residual_ok, totals)
        totals = totals if k is not None else []
        for w in totals:
            if self.splicer is not None:
                self.splicer.replace_window(w, f"{quote(alias)}.{quote(TOTAL)}")
            w.replace(exp.column(TOTAL, table=alias))
        prefilter_sql = " AND ".join(
            written_prefilter if written is not None else (p.sql(dialect="postgres", normalize_functions=False)
                                                           for p in prefilter)) or None
        select.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)
        # The table's columns the statement still reads once MATCH is gone.
        used = {identifier(c) for c in select.find_all(exp.Column) if c.table in (alias, "")} | excluded
        read = tuple(name for name in schema.names if name in used)
        search = LogicalSearch(source.table, alias, tree, prefilter_sql, k, managed=source.managed, columns=read,
                               total=bool(totals), scored=SCORE in used or k is not None or bool(stars or explains))

        # The search result carries the rows themselves: a bounded top-k is fetched by row
        # id (or a scan found them), so DataFusion never rescans the table.
        table.replace(
            exp.Table(this=exp.to_identifier(result_table), alias=exp.TableAlias(this=exp.to_identifier(alias)))
        )
        if self.splicer is not None:
            self._splice(matches, negated, outer, scores, stars, added, order_end, alias, table, result_table,
                         bool(totals))
        return Lowered(search, result_table, positions, explaining)

    def _splice(self, matches: list[FtsMatch], negated: set[int], outer: bool, scores: list[FtsScore],
                stars: list[exp.Expression], added: exp.Ordered | None, order_end: int | None, alias: str,
                table: exp.Expression, result_table: str, total: bool) -> None:
        """The edits of the statement's own text this lowering makes (sql/text/splice.py): each
        MATCH a truth value that makes its literal hold for every row of the search's result
        (TRUE, or FALSE under an odd number of NOTs: ``negated``; beside an ``outer`` join,
        whether the row exists), score() the result's column, the table its result, a
        tie-break after the ORDER BY (``added``, at ``order_end``), ``*`` the table's columns."""
        sp = self.splicer
        assert sp is not None
        rowid = f"{quote(alias)}.{quote(ROWID)}"
        for m in matches:
            odd = id(m) in negated  # (under an odd number of NOTs)
            if outer:
                sp.replace_call(m, f"({rowid} IS {'' if odd else 'NOT '}NULL)")
            else:
                sp.replace_call(m, "FALSE" if odd else "TRUE")
        for s in scores:
            sp.replace_call(s, f"{quote(alias)}.{quote(SCORE)}")
        sp.replace_table(table, f"{quote(result_table)} AS {quote(alias)}")
        if added is not None:
            sp.insert(order_end, f", {rowid} {'DESC' if added.args.get('desc') else 'ASC'}")
        splice_stars(sp, self.select, stars, {alias: [ROWID, SCORE, *([TOTAL] if total else [])]}, self.schemas)

    def _tie_break(self, keys: list[tuple[exp.Ordered, FtsScore]], alias: str) -> exp.Ordered | None:
        """ORDER BY the score means the total order (docs/design.md: "SQL"): ``_rowid``
        becomes the last key (after any the user gave), ascending under a descending
        score. Returns the key added, if one was."""
        order = self.select.args.get("order")
        if not keys or any(isinstance(k.this, exp.Column) and k.this.name == ROWID for k in order.expressions):
            return None
        if self.select.args.get("group") or self.select.args.get("distinct"):
            return None  # (it can order only by what it selects)
        key = exp.Ordered(this=exp.column(ROWID, table=alias), desc=not keys[0][0].args.get("desc"))
        order.set("expressions", [*order.expressions, key])
        return key

    def _in_score_order(self, keys: list[tuple[exp.Ordered, FtsScore]], alias: str) -> bool:
        """Whether the ORDER BY is exactly the total order: the score descending, then
        ``_rowid`` ascending (the order a pushed-down top k keeps)."""
        order = self.select.args.get("order")
        if order is None or len(order.expressions) != 2 or not keys or keys[0][0] is not order.expressions[0]:
            return False
        first, second = order.expressions
        rowid = second.this
        return (bool(first.args.get("desc")) and not second.args.get("desc")
                and isinstance(rowid, exp.Column) and rowid.name == ROWID and rowid.table in ("", alias))

    def _totals(self) -> list[exp.Window]:
        """The ``count(*) OVER ()`` of the SELECT list, each inside an item with a name of
        its own (``AS n``): the number of rows the statement finds, which the search can
        count beside a top k (its name would otherwise be DataFusion's text of the window)."""
        out = []
        for item in self.select.expressions:
            if isinstance(item, exp.Alias):
                out += [w for w in item.find_all(exp.Window) if own(w, self.select) and _whole_count(w)]
        return out

    def _pushdown(self, order_by_score: bool, prefilter_complete: bool, totals: list[exp.Window]) -> int | None:
        """The top-k to push into the search when it cannot change the answer: with
        ``totals``, which the search then counts, as the only windows and aggregates."""
        s = self.select
        limit = s.args.get("limit")
        if limit is None or not prefilter_complete:
            return None
        blockers = ("joins", "group", "having", "distinct", "qualify", "windows")
        counted = {id(n) for w in totals for n in w.walk()}
        if any(s.args.get(b) for b in blockers) or any(
                id(n) not in counted for e in s.expressions for n in e.find_all(exp.AggFunc, exp.Window)):
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
            raise self.error(f"LIMIT plus OFFSET must be at most 2^63-1, got {count} + {skip}", node)
        return count + skip


def _whole_count(window: exp.Window) -> bool:
    """Whether ``window`` is ``count(*) OVER ()``: the rows of the whole result."""
    count = window.this
    return (isinstance(count, exp.Count) and isinstance(count.this, exp.Star) and not count.args.get("expressions")
            and not any(window.args.get(k) for k in ("partition_by", "order", "spec", "alias")))


def lower_explains(select: exp.Select, explains: list[FtsScoreExplain], rowid: str, result: str, managed: bool,
                   outermost: bool, error: Callable[[str, exp.Expression], SqlError],
                   splicer: Splicer | None) -> tuple[tuple[int, ...], bool]:
    """score_explain() of the search named ``result``, whose rows' ids read as ``rowid``
    (in place: the tree and the ``splicer``'s edits). An item of the outermost SELECT list
    of single rows holds the row id until the statement has run, then the explanations of
    the rows it returned: their positions are returned. Anywhere else, over a table of the
    database, it is ``<result>_explain(<row id>)``, explaining the rows DataFusion reads it
    for (GROUP BY, aggregates, windows, subqueries): True is returned where it is. Over a
    table of the session it is refused there (its rows are read through DataFusion, which
    may not be asked from inside its own plan)."""
    grouped = bool(select.args.get("group")) or any(e.find(exp.AggFunc, exp.Window) for e in select.expressions)
    listed, function = [], False
    for node in explains:
        item = node.parent if isinstance(node.parent, exp.Alias) else node
        named = "" if item is not node else f" AS {quote(EXPLAIN)}"
        if outermost and not grouped and item.parent is select and item.arg_key == "expressions":
            text = rowid + named
        elif managed:
            text, function = f"{result}_explain({rowid})" + (named if item.parent is select else ""), True
        else:
            raise error("score_explain() of a table of the session must be a column of the statement's outermost "
                        "SELECT list, of rows not grouped", node)
        if splicer is not None:
            splicer.replace_call(node, text)
        replacement = exp.maybe_parse(text, dialect="postgres")
        node.replace(replacement)
        if text.startswith(rowid):
            listed.append(replacement if item is node else item)
    return tuple(next(i for i, e in enumerate(select.expressions) if e is item) for item in listed), function


def _ancestors(node: exp.Expression, stop: type) -> list[exp.Expression]:
    """The ancestors of ``node`` below the first of type ``stop``."""
    out, at = [], node.parent
    while at is not None and not isinstance(at, stop):
        out.append(at)
        at = at.parent
    return out


def stars_of(select: exp.Select) -> list[exp.Expression]:
    """The ``*`` and ``t.*`` items of a SELECT list (before they are spelled out)."""
    return [e for e in select.expressions
            if isinstance(e, exp.Star) or isinstance(e, exp.Column) and isinstance(e.this, exp.Star)]


def splice_stars(sp: Splicer, select: exp.Select, stars: list[exp.Expression], extra: dict[str, list[str]],
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


def local_predicate(node: exp.Expression, alias: str, schema: pa.Schema) -> bool:
    """A predicate DataFusion can evaluate on the searched table alone (a prefilter: its
    columns, ``_rowid``); one reading score() can only be evaluated after the search."""
    if node.find(exp.Select, exp.AggFunc, exp.Window, FtsScore) is not None:
        return False
    for col in node.find_all(exp.Column):
        if col.table and col.table != alias:
            return False
        if identifier(col) not in schema.names and identifier(col) != ROWID:
            return False
    return True


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
