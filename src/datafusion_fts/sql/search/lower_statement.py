"""Lower a statement that searches: each SELECT with MATCH predicates, innermost first,
by the fast path where it holds (sql/search/lower_select.py) and by the general plan everywhere
else (sql/search/lower_marks.py), into its searches and the SQL DataFusion runs over their
results (docs/design.md: "SQL")."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from ...errors import SqlError
from ...query.parser import MAX_QUERY_TERMS
from ...query.tree import Query
from ...session.catalog import RESERVED_PREFIX, quote, rows_name
from ..text.dialect import FtsMatch, FtsScore, FtsScoreExplain, identifier
from ..text.select_sources import Schemas, match_source, own, select_sources
from ..text.splice import Splicer
from .lower_marks import MarkLowering
from .lower_select import (
    ROWID,
    FastLowering,
    Lowered,
    expand_stars,
    fast_path,
    node_start,
    parse_match,
    splice_stars,
    stars_of,
)


def lower_statement(
    sql: str,
    statement: exp.Expression,
    schemas: Schemas,
    fresh_name: Callable[[], str],
    leaf: Callable[[FtsMatch], Query] | None = None,
    max_terms: int = MAX_QUERY_TERMS,
    splicer: Splicer | None = None,
    fast_paths: bool = True,
) -> tuple[list[Lowered], str | None]:
    """Lower every SELECT of ``statement`` that searches, innermost first (in place); where
    the statement reads row ids, read the managed tables it reads otherwise with their
    ``_rowid`` (:func:`read_rows`), else as they are: the tables DataFusion knows, with
    the keys their definitions declare (a correlated subquery over a key needs them).
    ``leaf`` makes each MATCH's leaf of the tree (by default: its query text parsed, with
    at most ``max_terms`` words and phrases). Without ``fast_paths`` every SELECT takes
    the general plan. Returns the searches and, given the ``splicer`` of the text the
    tree was parsed from, that text edited accordingly (sql/text/splice.py); None without one,
    or where an edit could not be placed (the tree is then to be generated)."""

    def error(message: str, node: exp.Expression) -> SqlError:
        start = node_start(node, sql)
        return SqlError(message, sql, start if start is not None else 0, len(node.sql()))

    def parsed_leaf(match: FtsMatch) -> Query:
        literal = match.args["query"]
        if not (isinstance(literal, exp.Literal) and literal.is_string):
            raise error("the query of MATCH must be a string literal", literal)
        columns = tuple(identifier(c) for c in match.expressions)
        return parse_match(sql, node_start(literal, sql), literal.this, columns, max_terms)

    make_leaf = leaf if leaf is not None else parsed_leaf
    lowered: list[Lowered] = []
    reads_rowid = any(column.name == ROWID for column in statement.find_all(exp.Column))
    for select in reversed(list(statement.find_all(exp.Select, bfs=False))):
        stars = stars_of(select)
        found = _lower_select(sql, select, schemas, fresh_name, make_leaf, error, splicer, fast_paths,
                              outermost=select is statement)
        if found is not None:
            lowered.extend(found)
        elif reads_rowid:  # (a * over a table's rows spelled without its row id)
            if splicer is not None:
                splice_stars(splicer, select, stars, {}, schemas)
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


def _lower_select(sql: str, select: exp.Select, schemas: Schemas, fresh_name: Callable[[], str],
                  leaf: Callable[[FtsMatch], Query], error: Callable[[str, exp.Expression], SqlError],
                  splicer: Splicer | None, fast_paths: bool, outermost: bool) -> list[Lowered] | None:
    """The searches of one SELECT (None: it has no MATCH of its own)."""
    matches = [m for m in select.find_all(FtsMatch) if own(m, select)]
    scores = [s for s in select.find_all(FtsScore) if own(s, select)]
    explains = [s for s in select.find_all(FtsScoreExplain) if own(s, select)]
    if not matches:
        if scores or explains:
            name = "score()" if scores else "score_explain()"
            raise error(f"{name} needs a MATCH predicate in the same SELECT", (scores or explains)[0])
        return None
    sources, missing = select_sources(select, schemas)
    placed = [(m, match_source(m, sources, missing, error)) for m in matches]
    if fast_paths and fast_path(select, placed, scores):
        return [FastLowering(sql, select, placed[0][1], schemas, leaf, error, outermost, splicer).lower(fresh_name)]
    return MarkLowering(select, {id(m): (m, s) for m, s in placed}, leaf, fresh_name, error, splicer,
                        schemas, outermost).lower()


def _reads_rows(table: exp.Table, managed: Callable[[str], bool]) -> bool:
    """Whether ``table`` is a managed table the statement reads (not the one a CREATE
    TABLE, INSERT or DROP writes), named without a schema."""
    parent = table.parent.parent if isinstance(table.parent, exp.Schema) else table.parent
    if isinstance(parent, (exp.Create, exp.Insert, exp.Drop)) and table.arg_key == "this":
        return False
    return not table.args.get("db") and isinstance(table.this, exp.Identifier) and managed(identifier(table))


def read_rows(statement: exp.Expression, managed: Callable[[str], bool]) -> bool:
    """Make each managed table ``statement`` reads resolve to its rows with ``_rowid``
    (session/catalog.py ``rows_name``), under the name it was referred to by: the
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
