"""The general plan of a SELECT that searches: every MATCH becomes its row's mark, a truth
value DataFusion reads where the MATCH stands, so the statement's SQL around it is
DataFusion's by construction (DESIGN §3.2; docs/design.md: "SQL").

- A MATCH over a managed table is a search of the whole table (``LogicalSearch`` with
  ``join="mark"``: every match, no prefilter, no top-k), looked up by each row's
  ``_rowid``: ``<result>_hit(t._rowid)`` is TRUE where the row matches, FALSE where it
  does not and NULL where the row does not exist (the NULL side of an outer join); its
  score is ``<result>_score(t._rowid)``. The table is read with its row ids.
- A MATCH over a relation (a CTE, a derived table, a view, a table of the session) is a
  window function over the rows the relation yields (``RelationSearch``), whose
  statistics are those rows': the relation is read through
  ``(SELECT *, <result> IS NOT NULL AS <result>_hit FROM (SELECT *, <result>(...) OVER ()
  AS <result> FROM <relation>))``.
- ``score()`` is its SELECT's search expression's score (sql/search/search_scores.py): NULL where
  the row does not exist, 0.0 where the expression is not true.
- ``ORDER BY`` the score (by call, alias or position) means the total order of §5.2:
  ``_rowid`` (for a relation: each of its columns) follows as the last key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sqlglot import exp

from ...errors import SqlError
from ...planner.logical import LogicalSearch, RelationSearch, SessionRows
from ...query.tree import Query
from ...session.catalog import quote, rows_name
from ..text.classify import ROWID
from ..text.dialect import Fts, FtsMatch, FtsScore, FtsScoreExplain, identifier
from ..text.select_sources import Schemas, Source, inside, own
from ..text.splice import Splicer
from .lower_select import (
    SCORE,
    Lowered,
    expand_stars,
    lower_explains,
    score_keys,
    splice_stars,
    stars_of,
)
from .search_scores import score_sql, search_formula


def _sql(node: exp.Expression) -> str:
    return node.sql(dialect=Fts, normalize_functions=False)


def _parsed(text: str) -> exp.Expression:
    return exp.maybe_parse(text, dialect=Fts)


class MarkLowering:
    """The general plan of one SELECT whose MATCHes each read one of its sources (by the
    MATCH's ``id``: the MATCH and its source), lowered in place: its tree, and the
    ``splicer``'s edits of its text."""

    def __init__(self, select: exp.Select, matches: dict[int, tuple[FtsMatch, Source]],
                 leaf: Callable[[FtsMatch], Query], fresh_name: Callable[[], str],
                 error: Callable[[str, exp.Expression], SqlError], splicer: Splicer | None,
                 schemas: Schemas, outermost: bool = False) -> None:
        self.outermost = outermost
        self.row_keys: dict[str, str] = {}  # per table read with its row ids: their unique name
        self.replaced: dict[int, FtsMatch] = {}  # the MATCH each mark stands for (errors point at it)
        self.select = select
        self.matches = matches
        self.leaf = leaf
        self.fresh_name = fresh_name
        self.error = error
        self.splicer = splicer
        self.schemas = schemas

    def lower(self) -> list[Lowered]:
        select, sp = self.select, self.splicer
        # (read before the tree changes: what the text's edits depend on)
        scores = [s for s in select.find_all(FtsScore) if own(s, select)]
        explains = [s for s in select.find_all(FtsScoreExplain) if own(s, select)]
        # (score_explain() explains one MATCH's search: where the score is that MATCH's or 0.0)
        explainable = len(self.matches) == 1 and not any(
            isinstance(a, (exp.If, exp.Case, exp.Coalesce)) for m, _ in self.matches.values() for a in _between(m))
        keys = score_keys(select, scores)
        order = select.args.get("order")
        order_end = sp.order_end(order) if order is not None and sp is not None else None
        stars = stars_of(select)
        by_source: dict[str, tuple[Source, list[FtsMatch]]] = {}
        for match, source in self.matches.values():
            by_source.setdefault(source.name, (source, []))[1].append(match)
        lowered: list[Lowered] = []
        leaf_scores: dict[str, dict[int, str]] = {}  # per source: each mark's score, by the mark's id
        missing: dict[str, str] = {}  # per source: the condition of a row that does not exist
        hidden: dict[str, list[str]] = {}  # per source: the columns of ours a * leaves out
        for name, (source, matches) in by_source.items():
            q = quote(name)
            marks: list[tuple[FtsMatch, str, str]] = []  # (MATCH, its truth, its score)
            if source.table is not None:
                rows = None
                if not source.managed:  # (read with their scan positions, as its search numbers them)
                    rows = self.fresh_name()
                    lowered.append(Lowered(SessionRows(source.table), rows))
                for match in matches:
                    result = self.fresh_name()
                    search = LogicalSearch(source.table, name, self.leaf(match), join="mark", managed=source.managed)
                    lowered.append(Lowered(search, result))
                    marks.append((match, result, result))
                key = self.row_keys[name] = f"{rows or marks[0][1]}_rowid"
                rowid = f"{q}.{quote(key)}"
                marks = [(match, f"{result}_hit({rowid})", f"{result}_score({rowid})") for match, result, _ in marks]
                missing[name] = f"{rowid} IS NULL"
                hidden[name] = [ROWID, key]
                self._read_rows(source, rows, key)
            else:
                windows = []
                for match in matches:
                    result = self.fresh_name()
                    columns = tuple(identifier(c) for c in match.expressions)
                    relation = identifier(source.node) if isinstance(source.node, exp.Table) else name
                    lowered.append(Lowered(RelationSearch(relation, self.leaf(match), columns), result))
                    windows.append((result, columns))
                    marks.append((match, f"{q}.{quote(result + '_hit')}", f"{q}.{quote(result)}"))
                missing[name] = f"{q}.{quote(windows[0][0] + '_hit')} IS NULL"
                hidden[name] = [n for result, _ in windows for n in (result, result + "_hit")]
                self._wrap(source, windows)
            leaf_scores[name] = {}
            for match, truth, score in marks:
                if sp is not None:
                    sp.replace_call(match, truth)
                mark = _parsed(truth)
                match.replace(mark)
                leaf_scores[name][id(mark)] = score
                self.replaced[id(mark)] = match
        searched = list(by_source)
        if explains:
            self._explain(explains, lowered, explainable)
        for score in scores:
            name = self._scored(score, searched)
            text = f"({self._score(name, leaf_scores[name], missing[name])})"
            if score.parent is select and len(searched) == 1:  # (named as the fast path's column is)
                text += f" AS {quote(SCORE)}"
            if sp is not None:
                sp.replace_call(score, text)
            score.replace(_parsed(text))
        added = self._tie_break(keys, by_source, searched)
        if added and sp is not None:
            sp.insert(order_end, "".join(", " + _sql(k) for k in added))
        if sp is not None:
            splice_stars(sp, select, stars, hidden, self.schemas)
        expand_stars(select, self.schemas, searched=True)
        return lowered

    # -- sources ------------------------------------------------------------------------
    def _read_rows(self, source: Source, rows: str | None, key: str) -> None:
        """Read a table with its row ids, under the name the statement uses: a managed
        table's rows, or those of a table of the session registered as ``rows``; its row
        ids also under the name ``key``, which no other column has. (DataFusion 55's
        physical filter pushdown finds a column by its name: a filter of one table's
        ``_rowid`` above a join of two tables that both have one was pushed into the other.
        apache/datafusion#25296.)"""
        node = source.node
        assert isinstance(node, exp.Table) and source.table is not None
        read = quote(rows if rows is not None else rows_name(source.table))
        text = f"(SELECT *, {quote(ROWID)} AS {quote(key)} FROM {read}) AS {quote(source.name)}"
        if self.splicer is not None:
            self.splicer.replace_table(node, text)
        node.replace(_parsed(f"SELECT * FROM {text}").args["from_"].this)

    def _wrap(self, source: Source, windows: list[tuple[str, tuple[str, ...]]]) -> None:
        """Read a relation with each MATCH's score and mark beside its columns."""
        node = source.node
        scored = ", ".join(
            f"{result}({', '.join(_arguments(columns))}) OVER () AS {quote(result)}" for result, columns in windows)
        marked = ", ".join(f"__fts_q.{quote(result)} IS NOT NULL AS {quote(result + '_hit')}" for result, _ in windows)
        alias = node.args.get("alias")
        named = f"({', '.join(quote(identifier(c)) for c in alias.columns)})" if alias is not None and alias.columns else ""
        head = f"(SELECT __fts_q.*, {marked} FROM (SELECT __fts_p.*, {scored} FROM "
        tail = f" AS __fts_p{named}) AS __fts_q) AS {quote(source.name)}"
        wrapper = _parsed(f"SELECT * FROM {head}__fts_relation{tail}").args["from_"].this
        placeholder = next(t for t in wrapper.find_all(exp.Table) if t.name == "__fts_relation")
        if isinstance(node, exp.Table):
            if self.splicer is not None:
                self.splicer.replace_table(node, head + quote(identifier(node)) + tail)
            placeholder.set("this", exp.to_identifier(identifier(node), quoted=True))
        else:
            if self.splicer is not None:
                self.splicer.wrap(node, head, tail)
            placeholder.replace(exp.Subquery(this=node.this, alias=placeholder.args["alias"]))
        node.replace(wrapper)

    def _explain(self, explains: list[FtsScoreExplain], lowered: list[Lowered], explainable: bool) -> None:
        """score_explain() where the SELECT's search expression holds one MATCH of a table,
        ``explainable`` (its score is that MATCH's, or 0.0): the explanation of that
        search's rows (:func:`.lower_select.lower_explains`). Other shapes are refused."""
        searches = [item for item in lowered if not isinstance(item.search, SessionRows)]
        search = searches[0].search
        if not (explainable and isinstance(search, LogicalSearch)):
            raise self.error("score_explain() explains a search expression holding one MATCH over a table "
                             "(of the database, or of the session)", explains[0])
        rowid = f"{quote(search.alias)}.{quote(self.row_keys[search.alias])}"
        positions, explaining = lower_explains(self.select, explains, rowid, searches[0].result_table, search.managed,
                                               self.outermost, self.error, self.splicer)
        lowered[lowered.index(searches[0])] = replace(searches[0], explain=positions, explains=explaining)

    # -- score() ------------------------------------------------------------------------
    def _scored(self, score: FtsScore, searched: list[str]) -> str:
        """The source a score() is of: the one its argument names, or the only one searched."""
        if score.expressions:
            raise self.error("score() takes at most one argument: the name of a searched table", score)
        named = score.this
        if named is None:
            if len(searched) > 1:
                raise self.error(f"this SELECT searches several tables ({', '.join(searched)}): name one, "
                                 f"as score({searched[0]})", score)
            return searched[0]
        if not isinstance(named, exp.Column) or named.table:
            raise self.error("score() takes the name (or alias) of a searched table", named)
        name = identifier(named)
        if name not in searched:
            raise self.error(f"score({name}): {name!r} is not a table this SELECT searches "
                             f"({', '.join(searched)})", named)
        return name

    def _score(self, name: str, leaves: dict[int, str], missing: str) -> str:
        """The SQL of ``score(name)``: its search expression's score (WHERE's, else that of
        the one expression its MATCHes stand in), NULL where the row does not exist."""
        marks = [n for n in self.select.walk() if id(n) in leaves]
        where = self.select.args.get("where")
        if where is not None and any(inside(m, where) for m in marks):
            score = score_sql(where.this, leaves, _sql) or "0.0"
            return f"CASE WHEN {missing} THEN NULL ELSE {score} END"  # (every row here meets WHERE)
        formulas = list({id(f): f for f in map(search_formula, marks)}.values())
        if len(formulas) > 1:
            raise self.error(f"score() of {name!r} is ambiguous: its MATCHes stand in several expressions "
                             "(put them in WHERE, or in one expression)",
                             self.replaced.get(id(formulas[1]), formulas[1]))
        formula = formulas[0]
        score = score_sql(formula, leaves, _sql) or "0.0"
        return f"CASE WHEN {missing} THEN NULL WHEN {_sql(formula)} THEN {score} ELSE 0.0 END"

    # -- ORDER BY ----------------------------------------------------------------------
    def _tie_break(self, keys: list[tuple[exp.Ordered, FtsScore]], by_source: dict[str, tuple[Source, list[FtsMatch]]],
                   searched: list[str]) -> list[exp.Ordered]:
        """The keys added after the last ORDER BY key: each scored source's row order,
        ``_rowid`` (a relation: its columns), ascending under a descending score. None in a
        grouping or DISTINCT SELECT, which can only order by what it selects."""
        order = self.select.args.get("order")
        if order is None or not keys or self.select.args.get("group") or self.select.args.get("distinct"):
            return []
        if any(isinstance(k.this, exp.Column) and k.this.name == ROWID for k in order.expressions):
            return []
        added: list[exp.Ordered] = []
        seen: set[tuple[str, str]] = set()
        for key, score in keys:
            name = self._scored(score, searched)
            source = by_source[name][0]
            if source.table is not None:
                columns: tuple[str, ...] = (self.row_keys[name],)
            elif source.columns is None:
                raise self.error(f"ORDER BY score() over {name!r} orders tied rows by its columns: name them "
                                 "(give each expression an alias)", key)
            else:
                columns = source.columns
            for column in columns:
                if (name, column) not in seen:
                    seen.add((name, column))
                    added.append(exp.Ordered(this=exp.column(column, table=name, quoted=True),
                                             desc=not key.args.get("desc")))
        order.set("expressions", [*order.expressions, *added])
        return added


def _between(match: FtsMatch) -> list[exp.Expression]:
    """The expressions from ``match`` up to the search formula around it."""
    formula = search_formula(match)
    out, at = [], match.parent
    while at is not None and at is not formula.parent:
        out.append(at)
        at = at.parent
    return out


def _arguments(columns: tuple[str, ...]) -> list[str]:
    """A relation search's arguments for its ``columns``: each as LargeUtf8, and the name
    of its type (the search refuses a column that is not text)."""
    return [f"arrow_cast(__fts_p.{quote(c)}, 'LargeUtf8'), arrow_typeof(__fts_p.{quote(c)})" for c in columns]
