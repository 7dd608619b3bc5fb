"""Execute SQL text on a database: our statements here, the rest on DataFusion (docs/design.md:
"SQL")."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import datafusion
import numpy as np
import pyarrow as pa
from sqlglot import exp
from sqlglot.tokens import TokenType

from ...analysis import AnalyzerConfig
from ...errors import CatalogError, InvalidArgument, SqlError
from ...operators.base import SEARCH_SCHEMA
from ...operators.explain import explain_search
from ...operators.grouped_counts import GroupedCounts
from ...planner.answer_search import Answer, Search, answer
from ...planner.count_matches import counted_from_statistics
from ...planner.logical import LogicalSearch, RelationSearch, SessionRows
from ...planner.plan_search import column_analyzer
from ...planner.search_request import SearchRequest, described_source, session_table
from ...session.catalog import RESERVED_PREFIX, fresh_name
from ...session.defined_tables import register_rows, result_definition
from ...settings import MAX_NAME_CHARS
from ...udfs.relation_search import relation_plan, relation_search
from ...udfs.row_marks import row_explanations, row_marks
from ..hosts import SqlHost
from ..result_frame import ResultFrame, detached_frame
from ..substring.run_substring import prefiltered_ids
from ..tables import FetchedRows, carried_rows
from ..text.dialect import (
    CreateFulltextIndex,
    Explain,
    Fts,
    FtsMatch,
    FtsScore,
    FtsScoreExplain,
    Optimize,
    identifier,
    parse_sql,
)
from ..text.shapes import Shape, shape_of
from ..text.splice import Splicer
from .lower_select import TOTAL, Lowered, node_start, parse_match
from .lower_statement import lower_statement
from .search_templates import Template, direct, slot_leaf
from .text_functions import rewrite_text_functions

# DataFusion plans a statement by recursion on the calling thread, and one nested a few
# thousand levels deep (3,500 UNION ALLs, 12,000 '+': chains sqlglot parses in a loop)
# overflows that thread's stack and kills the process. Deeper statements are refused; one
# sqlglot passes on unparsed (a Command) is judged by its tokens, at least two a level.
MAX_DEPTH = 1_000
_TOKENS = re.compile(r"\w+|[^\w\s]")
# DataFusion answers an unknown function with the known names nearest to it, by an edit
# distance from each: a name of 1 MB took 3.6 s. Longer names than a table's are refused.
MAX_FUNCTION_NAME = MAX_NAME_CHARS


def _refusal(statement: exp.Expression) -> tuple[str, exp.Expression] | None:
    """Why ``statement`` is not handed to DataFusion, and the node to point at (walked
    without recursion: the tree may be deeper than Python's limit); None if it is not."""
    if isinstance(statement, exp.Command):
        if len(_TOKENS.findall(statement.sql())) > 2 * MAX_DEPTH:
            return f"the statement nests more than {MAX_DEPTH:,} levels deep", statement
        return None
    stack = [(statement, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return (f"the statement nests more than {MAX_DEPTH:,} levels deep (each operator of a chain, "
                    "each UNION counts one)", statement)
        if isinstance(node, exp.Anonymous) and len(node.name) > MAX_FUNCTION_NAME:
            return f"no function has a name longer than {MAX_FUNCTION_NAME} characters", node
        stack.extend((child, depth + 1) for child in node.iter_expressions())
    return None


def _statement_texts(sql: str, count: int) -> list[str]:
    """The source text of each ``;``-separated statement (for untouched pass-through)."""
    if count == 1:
        return [sql]
    cuts = [t.start for t in Fts().tokenize(sql) if t.token_type == TokenType.SEMICOLON]
    texts, start = [], 0
    for cut in cuts:
        if sql[start:cut].strip():
            texts.append(sql[start:cut])
        start = cut + 1
    if sql[start:].strip():
        texts.append(sql[start:])
    return texts


# The words before the statement an EXPLAIN explains, in the statement's own text.
_EXPLAIN_PREFIX = re.compile(r"^\s*explain\s+(?:analyze\s+)?", re.IGNORECASE)
# A statement that groups rows (a mention in a string literal only costs a keyed result).
_GROUP_BY = re.compile(r"\bgroup\s+by\b", re.IGNORECASE)


def generated(statement: exp.Expression) -> str:
    """The SQL of a statement lowering rewrote: the functions named as the user wrote them
    (DataFusion finds a table function by its exact name)."""
    return statement.sql(dialect="postgres", normalize_functions=False)


def _literal(node: exp.Expression) -> Any:
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        return float(text) if any(c in text for c in ".eE") else int(text)
    if isinstance(node, (exp.Column, exp.Var, exp.Identifier)):
        return node.name
    if isinstance(node, exp.Neg):
        value = _literal(node.this)
        if isinstance(value, (int, float)) and not isinstance(value, bool):  # (not "-word")
            return -value
    raise InvalidArgument(f"expected a literal value, got {node.sql()}")


# A result standing in for its table: its score nullable, as the general plan's (looked up
# by row id) is; the number of matches beside a top k non-null, as DataFusion's count.
_CARRIED_SCORE = SEARCH_SCHEMA.field(1).with_nullable(True)
_TOTAL_FIELD = pa.field(TOTAL, pa.int64(), False)


class SqlSession:
    """Runs statements against one database."""

    def __init__(self, db: SqlHost) -> None:
        self.db = db
        self._text = ""
        self._shape: Shape | None = None  # the statement's shape, while it may be cached

    @property
    def ctx(self) -> datafusion.SessionContext:
        return self.db.ctx

    def _status(self, message: str) -> datafusion.DataFrame:
        return detached_frame(self.ctx, pa.table({"status": [message]}))

    def statement(self, text: str) -> datafusion.DataFrame:
        """Run one statement of ours, a search or the project's own (sql/text/classify.py): parsed
        by sqlglot, lowered, run."""
        self._text = text  # error positions point into the statement's text
        # (templates are lowered with the fast paths: without them every statement is lowered)
        self._shape = shape_of(text) if self.db.settings.get("fts.sql_fast_paths") else None
        if self._shape is not None:
            template = self.db.statements.get(text, self._shape, self._schema_of)
            if isinstance(template, Template):  # a search of a known shape: no parsing, no lowering
                if template.direct is None:  # (DataFusion reads tables too: see list_sources)
                    self.db.list_sources(text)
                return self.db.errors.call(self._run_template, template, self._shape)
        self.db.list_sources(text)
        statements = parse_sql(text)
        result = None
        for statement, source in zip(statements, _statement_texts(text, len(statements))):
            if isinstance(statement, exp.Semicolon):  # only a comment after the last ';'
                continue
            refusal = _refusal(statement)
            if refusal is not None:
                message, node = refusal
                at = node_start(node, text) if node is not statement else None
                raise SqlError(message, text, at if at is not None else max(0, text.find(source)))
            # Errors our functions raise inside DataFusion come back as themselves.
            result = self.db.errors.call(self._execute, statement, source)
        if result is None:
            raise SqlError("no statement to run", text, 0)
        return result

    # -- dispatch -------------------------------------------------------------------------
    def _execute(self, statement: exp.Expression, source: str) -> datafusion.DataFrame:
        # Edits of the statement's own text, when the tree's positions point into it
        # (sql/text/splice.py); else the rewritten tree is generated.
        splicer = Splicer(self._text) if source == self._text else None
        if statement.find(exp.Anonymous) is not None:
            self._shape = None  # (text functions rewrite the statement: not a cached shape)
            statement = statement.copy()
            if rewrite_text_functions(self._text, statement, self._schema_of, self._index_analyzer, splicer):
                source = generated(statement)
        run = _RUNS.get(type(statement))
        if run is not None:
            return run(self, statement, source, splicer)
        if statement.find(FtsMatch, FtsScore, FtsScoreExplain) is not None:
            return self._search_query(statement, source, splicer)
        return self.ctx.sql(self._reading_rows(statement, source, splicer))

    def _reading_rows(self, statement: exp.Expression, source: str, splicer: Splicer | None) -> str:
        """The SQL of a statement that does not search: the managed tables it reads with
        their ``_rowid``, ``*`` over them without it (:func:`.lower_select.lower_statement`)."""
        rewritten = statement.copy()
        _, text = lower_statement(self._text, rewritten, self._schema_of, fresh_name, splicer=splicer,
                                  fast_paths=self.db.settings.get("fts.sql_fast_paths"))
        if text is not None:
            return text
        return generated(rewritten) if rewritten != statement else source

    # -- statements ---------------------------------------------------------------------
    def _optimize(self, statement: Optimize, source: str, splicer: Splicer | None) -> datafusion.DataFrame:
        self.db.table(identifier(statement.this)).optimize()
        return self._status(f"optimized {identifier(statement.this)}")

    def _set(self, statement: exp.Set, source: str, splicer: Splicer | None) -> datafusion.DataFrame:
        items = statement.expressions
        names = []
        for item in items:
            eq = item.this
            if not isinstance(eq, exp.EQ):
                return self.ctx.sql(source)
            name = eq.this.sql(dialect="postgres").replace('"', "")
            if not name.lower().startswith("fts."):
                return self.ctx.sql(source)
            names.append((name, _literal(eq.expression)))
        for name, value in names:
            self.db.settings.set(name, value)
        return self._status("; ".join(f"{n} = {v!r}" for n, v in names))

    def _create_index(self, statement: CreateFulltextIndex, source: str, splicer: Splicer | None
                      ) -> datafusion.DataFrame:
        """``CREATE FULLTEXT INDEX ON t (columns)`` (or ``CREATE NGRAM INDEX``: each column's
        n-gram index): on a managed table, or on a Parquet table of the session, indexed in
        place (``Database.index_in_place``)."""
        name = identifier(statement.this)
        options = {}
        for option in statement.args.get("options") or []:
            if not isinstance(option, exp.EQ):
                raise InvalidArgument(f"index options are key = value, got {option.sql()}")
            options[option.this.name.lower()] = _literal(option.expression)
        columns = [identifier(c) for c in statement.expressions]
        store = options.pop("store", None)
        if statement.args.get("kind"):
            if "kind" in options:
                raise InvalidArgument("CREATE NGRAM INDEX makes n-gram indexes: no kind option")
            options["kind"] = statement.args["kind"]
        if store is not None and not isinstance(store, str):
            raise InvalidArgument(f"store is a list of column names in a string ('title, url'), got {store!r}")
        stored = [c.strip() for c in store.split(",") if c.strip()] if store is not None else None
        meta = self.db.manifest.tables.get(name)
        if meta is None and self.ctx.table_exist(name) and not name.startswith(RESERVED_PREFIX):
            schema = self.ctx.table(name).schema()
            for column in columns:  # (checked before the table is made one indexed in place)
                if column not in schema.names:
                    raise CatalogError(f"table {name!r} has no column {column!r}; columns: {schema.names}")
            table = self.db.index_in_place(name, store=stored)
        elif meta is not None and meta.source is not None:
            table = self.db.index_in_place(name, meta.source, store=stored)
        else:
            if stored is not None:
                raise InvalidArgument(f"store is for tables indexed in place; {name!r} keeps every column already")
            table = self.db.table(name)
        # Validate every column before building any index: a failing statement writes nothing.
        for column in columns:
            table.index_meta(column, options, None)
        for column in columns:
            table.create_index(column, **options)
        return self._status(f"indexed {table.name} ({', '.join(columns)})")

    # -- searches -------------------------------------------------------------------------
    def _index_analyzer(self, table: str, column: str) -> AnalyzerConfig | None:
        """The analyzer of a managed table's index on ``column`` (None: no index)."""
        meta = self.db.manifest.tables.get(table)  # (the committed table: no listing of a source)
        index = meta.indexes.get(column) if meta is not None else None
        return index.analyzer if index is not None else None

    def _schema_of(self, name: str) -> tuple[pa.Schema, bool | None] | None:
        """(schema, kind) of a table SQL may search: True for a managed table, False for a
        table of the session, None for a view (sql/text/select_sources.py)."""
        meta = self.db.manifest.tables.get(name)  # (the committed table: no listing of a source)
        if meta is not None:
            return meta.sql_schema, True
        if not name.startswith(RESERVED_PREFIX) and self.ctx.table_exist(name):
            table = self.ctx.catalog().schema().table(name)
            return self.ctx.table(name).schema(), None if getattr(table, "kind", None) == "view" else False
        return None

    def _plan(self, statement: exp.Expression, splicer: Splicer | None) -> tuple[exp.Expression, list[Lowered], str]:
        """The statement lowered: its tree, its searches and the SQL DataFusion runs."""
        statement = statement.copy()
        lowered, text = lower_statement(
            self._text, statement, self._schema_of, fresh_name, max_terms=self.db.settings.get("fts.max_query_terms"),
            splicer=splicer, fast_paths=self.db.settings.get("fts.sql_fast_paths"),
        )
        return statement, lowered, text if text is not None else generated(statement)

    def _answer(self, search: LogicalSearch, **asked: Any) -> Answer:
        """``search`` asked as ``asked`` (planner/answer_search.py ``Search``): of a managed
        table among the rows its prefilter keeps, or of a table of the session."""
        if not search.managed:
            table = session_table(self.ctx, search.table)
            return answer(Search(search.tree, **asked), table, None, self.db.settings)
        include = prefiltered_ids(self.db, search.table, search.alias, search.prefilter) if search.prefilter else None
        return self.db.table(search.table).run(Search(search.tree, include_row_ids=include, **asked))

    def _count(self, search: LogicalSearch) -> int:
        """How many rows ``search`` matches (from the index's statistics where they tell it
        exactly, else by finding them: planner/count_matches.py)."""
        total = self.db.retrying(lambda: self._answer(search, rows=False, total=True).total)
        assert total is not None
        return total

    def _run_search(
        self, search: LogicalSearch, in_order: bool = False, planned: bool = True
    ) -> tuple[pa.Table, Any, SearchRequest | None]:
        """A search's result: ``_rowid``, the columns the statement reads when the result
        carries them, and ``_score``; in the search's order if ``in_order``, else carried
        rows come in row-id order (fetched in file order: the statement orders them).
        With ``planned`` (EXPLAIN, score_explain()) also its plan and request, else the
        search runs as ``Table.search`` runs it (prepared, when it can be). A search that
        marks rows (``join="mark"``) finds every match: ``_rowid`` and ``_score``."""
        if search.k == 0:
            if not search.managed:
                return session_table(self.ctx, search.table).take_scored(np.zeros(0, np.int64), np.zeros(0)), None, None
            fields = [self.db.table_meta(search.table).sql_schema.field(c) for c in search.columns]
            score = _CARRIED_SCORE if search.carries_rows else SEARCH_SCHEMA.field(1)
            total_field = [_TOTAL_FIELD] if search.total else []
            return pa.schema([SEARCH_SCHEMA.field(0), *fields, score, *total_field]).empty_table(), None, None
        # Fast paths (fts.sql_fast_paths; off, every match is ranked as the general plan
        # ranks it): every match of a statement that orders rows itself comes in row-id
        # order, not sorted by score first; one that reads no score (a GROUP BY, a count
        # beside other columns) is found without scoring, its ``_score`` NULL.
        fast = self.db.settings.get("fts.sql_fast_paths") and search.managed
        unscored = fast and not (search.scored or in_order or planned or search.total) and search.k is None \
            and search.carries_rows
        found = self._answer(search, limit=search.k, by_score=in_order or search.k is not None or not fast,
                             scored=not unscored, total=search.total, explained=planned)
        result, snap = found.rows, found.snapshot
        if not search.managed:
            if search.carries_rows:
                result = snap.take_scored(result.column(0).to_numpy(), result.column(1).to_numpy())
            return result, found.plan, found.request
        if search.carries_rows and search.columns:  # (else the result is _rowid, _score already)
            if not in_order and found.ranked:  # (no reordering copy of the fetched rows)
                result = result.take(pa.array(np.argsort(result.column(0).to_numpy(), kind="stable")))
            rows = carried_rows(snap, result.column(0), search.columns)
            result = rows.append_column(_CARRIED_SCORE, result.column(1))
        elif search.carries_rows:
            result = result.cast(pa.schema([SEARCH_SCHEMA.field(0), _CARRIED_SCORE]))
        if search.total:
            result = result.append_column(_TOTAL_FIELD, pa.array([found.total] * result.num_rows, pa.int64()))
        return result, found.plan, found.request

    def _register_result(self, name: str, result: pa.Table, definition: str | None = None) -> None:
        """Show a search result to DataFusion for the rewritten statement to join; with a
        ``definition`` (:func:`..session.defined_tables.result_definition`) as the table DataFusion
        makes of it, holding the searched table's keys, when it reads as the result is."""
        register_rows(self.ctx, name, result, definition)

    def _keyed(self, search: LogicalSearch, text: str) -> tuple[LogicalSearch, str | None]:
        """``search``, carrying every column of its table with the definition of its result
        (:meth:`_register_result`) where ``text`` groups rows and the table declares keys:
        DataFusion lets a ``GROUP BY`` of a key select the other columns only of a table
        holding the key's constraint. Else as it is."""
        if not (search.managed and search.carries_rows and _GROUP_BY.search(text)):
            return search, None
        meta = self.db.table_meta(search.table)
        definition = result_definition(meta.definition)
        if definition is None:
            return search, None
        return replace(search, columns=tuple(meta.sql_schema.names)), definition

    def _search_query(self, statement: exp.Expression, source: str, splicer: Splicer | None) -> datafusion.DataFrame:
        template = self._template(statement, self._shape, splicer) if self._shape is not None else None
        if template is not None:
            self.db.statements.put(self._shape, template)
            return self._run_template(template, self._shape)
        _, lowered, text = self._plan(statement, splicer)
        return self._run_lowered(text, lowered)

    def _template(self, statement: exp.Expression, shape: Shape, splicer: Splicer | None) -> Template | None:
        """The statement lowered with its MATCH leaves as slots (see
        :mod:`.search_templates`), or None if a MATCH's query is not one of its literals."""
        starts = {lo: i for i, (lo, _) in enumerate(shape.spans)}
        slot_of: dict[int, int] = {}
        slots, columns = [], []
        rewritten = statement.copy()  # (lowered in place)
        for match in rewritten.find_all(FtsMatch):
            literal = match.args.get("query")
            if not (isinstance(literal, exp.Literal) and literal.is_string and literal.meta):
                return None
            i = starts.get(literal.meta.get("start"))
            if i is None or not all(isinstance(c, exp.Column) for c in match.expressions):
                return None
            slot_of[id(match)] = len(slots)
            slots.append(i)
            columns.append(tuple(identifier(c) for c in match.expressions))
        seen: dict[str, Any] = {}

        def schema_of(name: str) -> tuple[pa.Schema, bool] | None:
            seen[name] = found = self._schema_of(name)
            return found

        lowered, text = lower_statement(
            self._text, rewritten, schema_of, fresh_name, leaf=lambda m: slot_leaf(slot_of[id(m)]), splicer=splicer
        )
        fixed = tuple((i, shape.literal(self._text, i)) for i in range(len(shape.spans)) if i not in set(slots))
        return Template(tuple(slots), tuple(columns), fixed, tuple(seen.items()),
                        text if text is not None else generated(rewritten), tuple(lowered),
                        direct(rewritten, lowered, seen.get))

    def _run_template(self, template: Template, shape: Shape) -> datafusion.DataFrame:
        parse_leaf = partial(parse_match, max_terms=self.db.settings.get("fts.max_query_terms"))
        if template.direct is not None:  # the search's result is the answer: no SQL text, no table
            search = template.bind_search(self._text, shape, parse_leaf)
            if template.direct.counted is not None:
                return ResultFrame(self.ctx, template.direct.count(self._count(search)), self.db.errors)
            grouped = template.direct.grouped
            if grouped is None:
                result, _, _ = self.db.retrying(partial(self._run_search, search, in_order=True, planned=False))
                return ResultFrame(self.ctx, template.direct.apply(result), self.db.errors)
            answer = self.db.retrying(partial(self._grouped, search, grouped))
            if answer is not None:
                return ResultFrame(self.ctx, answer, self.db.errors)
        text, lowered = template.bind(self._text, shape, parse_leaf, fresh_name)
        return self._run_lowered(text, lowered)

    def _grouped(self, search: LogicalSearch, grouped: GroupedCounts) -> pa.Table | None:
        """The answer of a statement counting ``search``'s matches by a column
        (sql/search/direct_groups.py), among the rows its prefilter keeps; None where DataFusion
        must add its values up."""
        return self._answer(search, rows=False, groups=(grouped,)).groups[0]

    def _run_lowered(self, text: str, lowered: list[Lowered]) -> datafusion.DataFrame:
        """Run the searches of a lowered statement, then its SQL ``text`` over their results."""
        shown = []
        explained = []
        try:
            for item in lowered:
                shown.append(item)
                _, plan, request = self._show(item, text, planned=bool(item.explain) or item.explains)
                if item.explain:
                    explained.append((item, plan, request))
            df = self.ctx.sql(text)
            if not explained:
                return df
            # score_explain(): run the statement, then explain only the rows it returns.
            table = df.to_arrow_table()
            for item, plan, request in explained:
                ids = table.column(item.explain[0]).combine_chunks().to_numpy(zero_copy_only=False)
                explanations = self._explain_rows(plan, request, ids)
                for i in item.explain:
                    table = table.set_column(i, pa.field(table.field(i).name, pa.string()), explanations)
            return detached_frame(self.ctx, table)
        finally:
            for item in shown:
                self._forget(item)

    def _show(self, item: Lowered, text: str, planned: bool) -> tuple[pa.Table | None, Any, SearchRequest | None]:
        """Run ``item``'s search and show it to DataFusion under the item's name, as the
        SQL ``text`` reads it: a table standing in for the searched one, the functions
        marking its rows, or the window function searching a relation (which DataFusion
        runs itself). Returns the search's result, plan and request (None: not run yet)."""
        search = item.search
        if isinstance(search, RelationSearch):
            self.ctx.register_udwf(relation_search(item.result_table, search, self.db.settings, self.db.errors))
            return None, relation_plan(search, self.db.settings) if planned else None, None
        if isinstance(search, SessionRows):
            self._register_result(item.result_table, session_table(self.ctx, search.table).rows())
            return None, None, None
        search, definition = self._keyed(search, text)
        result, plan, request = self.db.retrying(partial(self._run_search, search, planned=planned))
        if search.carries_rows:
            self._register_result(item.result_table, result, definition)
        else:
            for function in row_marks(item.result_table, result, self.db.errors):
                self.ctx.register_udf(function)
        if item.explains:
            explain = partial(self._explain_rows, plan, request)
            self.ctx.register_udf(row_explanations(item.result_table, explain, self.db.errors))
        return result, plan, request

    def _forget(self, item: Lowered) -> None:
        """Take back what :meth:`_show` showed DataFusion (a statement planned holds it)."""
        if isinstance(item.search, RelationSearch):
            self.ctx.deregister_udwf(item.result_table)
        elif isinstance(item.search, SessionRows) or item.search.carries_rows:
            self.ctx.deregister_table(item.result_table)
        else:
            self.ctx.deregister_udf(f"{item.result_table}_hit")
            self.ctx.deregister_udf(f"{item.result_table}_score")
        if item.explains:
            self.ctx.deregister_udf(f"{item.result_table}_explain")

    def _direct_answer(self, statement: exp.Expression, lowered: list[Lowered]) -> str | None:
        """What EXPLAIN says of a statement (lowered) that runs without DataFusion, its
        answer made from its search's (sql/search/search_templates.py ``Direct``): a statement of
        a shape the cache takes, with fts.sql_fast_paths on."""
        if not self.db.settings.get("fts.sql_fast_paths") or shape_of(_EXPLAIN_PREFIX.sub("", self._text, 1)) is None:
            return None
        found = direct(statement, lowered, self._schema_of)
        if found is None:
            return None
        if found.grouped is not None:
            how = ("counted as the postings of an OR of terms are read, where the fragments keep the column's "
                   "codes, else found unscored" if found.grouped.counts_only
                   and self.db.settings.get("fts.counts_from_postings") else "found unscored")
            return (f"counts by {found.grouped.key} of the matches, {how}, without DataFusion "
                    "(DataFusion's plan below where a sum would not be exact)")
        if found.counted is not None:
            return "the number of matches, without DataFusion"
        return "the search's rows, without DataFusion"

    def _explain_rows(self, plan: Any, request: SearchRequest | None, ids: np.ndarray) -> pa.Array:
        """score_explain() of the rows ``ids`` of one search, with its bound query and statistics."""
        if plan is None or request is None or not len(ids):
            return pa.nulls(len(ids), pa.string())
        analyzers = {c: column_analyzer(request.snapshot, c) for c in request.columns}
        return explain_search(plan, request.snapshot, request.query, analyzers, ids)

    def _explain(self, statement: Explain, source: str, splicer: Splicer | None) -> datafusion.DataFrame:
        inner = statement.this
        rows: dict[str, list[str]] = {"plan_type": [], "plan": []}
        if inner.find(FtsMatch, FtsScore, FtsScoreExplain) is None:  # (EXPLAIN of _rowid, text functions)
            return self.ctx.sql(self._reading_rows(statement, source, splicer))
        analyze = bool(statement.args.get("analyze"))
        rewritten, lowered, sql = self._plan(inner, splicer)
        sql = _EXPLAIN_PREFIX.sub("", sql, count=1)  # (the spliced text holds the user's EXPLAIN)
        shown = []
        try:
            logical, searches = [], []
            for item in lowered:
                logical.append(item.search.display())
                shown.append(item)
                result, plan, request = self._show(item, sql, planned=True)
                if request is not None and request.query is not item.search.tree:
                    logical.append(f"  simplify_query: tree={request.query!r}")
                if isinstance(item.search, LogicalSearch) and item.search.total and request is not None:
                    counted = counted_from_statistics(request, self.db) is not None
                    logical.append("  total: " + ("the index's document frequencies, beside the top k found alone"
                                                  if counted else "every match counted, then the top k"))
                source = described_source(request) if request is not None else None
                if source is not None:
                    logical.append(f"  source: {source}")
                if plan is not None:
                    tree = _explain_plan(plan, analyze)
                    if isinstance(item.search, RelationSearch):
                        tree = (f"WindowSearch: relation={item.search.relation}, every row it yields (a window "
                                "function of DataFusion's plan)\n" + "\n".join("  " + line for line in tree.splitlines()))
                    elif analyze and (search := self._keyed(item.search, sql)[0]).carries_rows:
                        fetch = _explain_fetch(request.snapshot, result, list(search.columns))
                        tree = fetch + "\n" + "\n".join("  " + line for line in tree.splitlines())
                    searches.append(tree)
            answered = self._direct_answer(rewritten, lowered)
            if answered is not None:
                logical.append(f"  direct_answer: {answered}")
            df_plan = self.ctx.sql("EXPLAIN " + sql).to_arrow_table()
            rows["plan_type"].append("logical_plan")
            rows["plan"].append("\n".join(logical))
            if analyze:  # one tree: DataFusion's operators, the searches under their scans
                df_logical = df_plan.column(1).to_pylist()[0]
                analyzed = self.ctx.sql("EXPLAIN ANALYZE " + sql).to_arrow_table().column(1).to_pylist()[-1]
                rows["plan_type"] += ["datafusion_logical_plan", "plan_with_metrics"]
                rows["plan"] += [df_logical, _one_tree(analyzed, searches)]
            else:
                rows["plan_type"].append("search_plan")
                rows["plan"].append("\n".join(searches))
                for kind, text in zip(df_plan.column(0).to_pylist(), df_plan.column(1).to_pylist()):
                    rows["plan_type"].append(f"datafusion_{kind}")
                    rows["plan"].append(text)
        finally:
            for item in shown:
                self._forget(item)
        return detached_frame(self.ctx, pa.table(rows))


# The project's statements, by the type of their node (as sqlglot's STATEMENT_PARSERS by
# token): each run with the statement, its text and its splicer. Any other statement is a
# search, or DataFusion's reading rows by their ids.
_RUNS: dict[type, Callable[[SqlSession, Any, str, Splicer | None], datafusion.DataFrame]] = {
    Explain: SqlSession._explain,
    Optimize: SqlSession._optimize,
    CreateFulltextIndex: SqlSession._create_index,
    exp.Set: SqlSession._set,
}


def _one_tree(analyzed: str, searches: list[str]) -> str:
    """DataFusion's plan with metrics, each search's tree (the fetch of its rows' columns
    over its operators) under the scan that reads its result. A search result is a
    memory table (``partition_sizes=``): with one search and one such scan the search
    goes under it; otherwise the searches follow DataFusion's tree, each on its own."""
    lines = analyzed.rstrip("\n").splitlines()
    scans = [i for i, line in enumerate(lines) if "partition_sizes=" in line]
    if len(searches) == 1 and len(scans) == 1:
        at = scans[0]
        depth = len(lines[at]) - len(lines[at].lstrip()) + 2
        nested = [" " * depth + line for line in searches[0].splitlines()]
        return "\n".join(lines[: at + 1] + nested + lines[at + 1 :])
    return "\n".join(lines + [line for tree in searches for line in tree.splitlines()])


def _explain_fetch(snapshot: FetchedRows, result: pa.Table, columns: list[str]) -> str:
    """EXPLAIN ANALYZE's line for the fetch of the found rows' columns: what it read per
    column (pages, row groups; of a source's files, of stored copies, or fresh rows)."""
    units = snapshot.fetch_units(result.column(0).to_numpy(), columns)
    read = "; ".join(
        f"{column}: " + (", ".join(f"{n} {_singular(unit) if n == 1 else unit}" for unit, n in sorted(found.items()))
                         or "nothing")
        for column, found in units.items()
    )
    return f"FetchRows: rows={result.num_rows}, columns={columns}  [{read}]"


def _singular(unit: str) -> str:
    """'pages of source files' -> 'page of source files' (likewise row groups, rows, CSV files)."""
    for plural in ("pages", "row groups", "rows", "CSV files"):
        if unit.startswith(plural) or unit.startswith("fresh " + plural):
            return unit.replace(plural, plural[:-1], 1)
    return unit


def _explain_plan(plan: Any, analyze: bool) -> str:
    lines = []

    def walk(node: Any, depth: int) -> None:
        line = "  " * depth + node.display()
        if analyze and node.metrics.values:
            line += "  [" + ", ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in node.metrics.values.items()) + "]"
        lines.append(line)
        for child in node.children():
            walk(child, depth + 1)

    walk(plan, 0)
    return "\n".join(lines)
