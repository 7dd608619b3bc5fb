"""Text function calls in ``db.sql``: optional arguments, the column's analyzer, and
errors that point into the SQL (issue 8).

``highlight(body, 'q' [, pre, post])`` and the other short forms of
:data:`datafusion_fts.udfs.FUNCTIONS` are rewritten into their ``_with`` form with every
argument spelled out: the defaults, the analyzer of ``body``'s full-text index (the
default analyzer for a column without one, or an expression) and ``body``'s name, which
``body:`` scopes in the query refer to. Literal arguments are checked here, so a bad
query string is reported at its place in the SQL before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
from sqlglot import exp

from ...analysis import AnalyzerConfig
from ...errors import FtsError, QuerySyntaxError, SqlError
from ...settings import INT64_MAX
from ...udfs import FUNCTIONS
from ...udfs.text_query import analyzer_spec, compile_query, resolve_analyzer
from ..text.dialect import identifier
from ..text.splice import Splicer
from .lower_select import node_start

Schemas = Callable[[str], "tuple[pa.Schema, bool] | None"]
IndexAnalyzer = Callable[[str, str], "AnalyzerConfig | None"]


def _integer(node: exp.Expression) -> int | None:
    """The value of an integer literal (``-1`` included), else None."""
    sign = 1
    if isinstance(node, exp.Neg):
        node, sign = node.this, -1
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return sign * int(node.this)
    return None


def _arities(counts: tuple[int, ...]) -> str:
    return " or ".join(str(c) for c in counts)


class _Rewrite:
    def __init__(self, sql: str, schemas: Schemas, index_analyzer: IndexAnalyzer) -> None:
        self.sql = sql
        self.schemas = schemas
        self.index_analyzer = index_analyzer

    def _error(self, message: str, node: exp.Expression) -> SqlError:
        start = node_start(node, self.sql)
        return SqlError(message, self.sql, start if start is not None else 0, len(node.sql()))

    def _column_source(self, column: exp.Column) -> tuple[str, str, str] | None:
        """(table, column, the table's name in the SELECT) of a column reference, when it
        names one table of its SELECT's FROM."""
        select = column.find_ancestor(exp.Select)
        if select is None:
            return None
        from_ = select.args.get("from_")
        tables = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
        name = identifier(column)
        qualifier = column.args.get("table")
        owner = None if qualifier is None else (qualifier.this if qualifier.quoted else qualifier.this.lower())
        owners = []
        for table in tables:
            if not isinstance(table, exp.Table) or table.args.get("db"):
                continue
            alias = table.alias_or_name if table.alias else identifier(table)
            if owner is not None and owner != alias:
                continue
            found = self.schemas(identifier(table))
            if found is not None and name in found[0].names:
                owners.append((identifier(table), name, alias))
        return owners[0] if len(owners) == 1 else None

    def call(self, node: exp.Anonymous) -> exp.Expression:
        spec = FUNCTIONS[node.name.lower()]
        args = list(node.expressions)
        if len(args) not in spec.sql_arities:
            names = ", ".join(a.name for a in spec.args[: max(spec.sql_arities)])
            raise self._error(
                f"{spec.name} takes {_arities(spec.sql_arities)} arguments ({names}), got {len(args)}", node
            )
        given = {a.name: value for a, value in zip(spec.args, args)}
        text = args[0]
        source = self._column_source(text) if isinstance(text, exp.Column) else None
        column = source[1] if source else None
        analyzer_node = given.get("analyzer")
        language: exp.Expression = exp.null()
        if analyzer_node is None:
            config = self.index_analyzer(*source[:2]) if source else None
            analyzer_node = exp.Literal.string(analyzer_spec(config)) if config else exp.null()
            if source and config and config.language_column is not None:  # (each row stemmed by it)
                language = exp.column(config.language_column, table=source[2], quoted=True)
        literal_analyzer = analyzer_node.this if isinstance(analyzer_node, exp.Literal) and analyzer_node.is_string else None
        try:
            analyzer = resolve_analyzer(literal_analyzer, spec.name)
        except FtsError as err:
            raise self._error(str(err), analyzer_node) from None
        query = given.get("query")
        if isinstance(query, exp.Literal) and query.is_string:
            self._check_query(query, analyzer, column, spec.name)
        width = given.get("max_tokens")
        value = _integer(width) if width is not None else None
        if value is not None and not 1 <= value <= INT64_MAX:  # (checked before Arrow sees it)
            bound = "a positive integer" if value < 1 else "at most 2^63-1"
            raise self._error(f"{spec.name}: argument 'max_tokens' must be {bound}, got {value}", width)
        full = []
        for arg in spec.args:
            if arg.name in given:
                full.append(given[arg.name])
            elif arg.name == "analyzer":
                full.append(analyzer_node)
            elif arg.name == "column":
                full.append(exp.Literal.string(column) if column else exp.null())
            elif arg.name == "language":
                full.append(language)
            elif arg.default is None:
                full.append(exp.null())
            elif isinstance(arg.default, str):
                full.append(exp.Literal.string(arg.default))
            else:
                full.append(exp.Literal.number(arg.default))
        return exp.Anonymous(this=spec.full_name, expressions=full)

    def _check_query(self, literal: exp.Literal, analyzer, column: str | None, function: str) -> None:
        try:
            compile_query(literal.this, analyzer, column, function, foreign_leaves=function != "fts_match")
        except QuerySyntaxError as err:
            start = node_start(literal, self.sql)
            if start is None:
                raise
            # Point into the SQL: past the opening quote, counting each '' escape as two.
            raw = start + 1 + err.offset + literal.this[: err.offset].count("'")
            raise QuerySyntaxError(f"{err.message} (offset {err.offset} in the query)", self.sql, raw, err.length) from None
        except FtsError as err:
            raise self._error(str(err), literal) from None


def rewrite_text_functions(sql: str, statement: exp.Expression, schemas: Schemas, index_analyzer: IndexAnalyzer,
                           splicer: Splicer | None = None) -> bool:
    """Rewrite every short-form text function call of ``statement`` in place, and in the
    statement's text through ``splicer`` (sql/text/splice.py); returns whether there was one."""
    calls = [n for n in statement.find_all(exp.Anonymous) if n.name.lower() in FUNCTIONS]
    rewrite = _Rewrite(sql, schemas, index_analyzer)
    for node in calls:
        new = rewrite.call(node)
        if isinstance(node.parent, exp.Select) and node.arg_key == "expressions":
            # A result column keeps the name of the call as written, not of its rewrite.
            written = f"{node.name}({', '.join(a.sql(dialect='postgres') for a in node.expressions)})"
            new = exp.alias_(new, written, quoted=True)
        if splicer is not None:
            splicer.replace_call(node, new.sql(dialect="postgres", normalize_functions=False))
        node.replace(new)
    return bool(calls)
