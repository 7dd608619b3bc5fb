"""The SQL dialect (docs/design.md: "SQL"): PostgreSQL as DataFusion speaks it, plus full-text
search.

Added syntax, each parsed into its own expression node (no string surgery on SQL text):

- ``MATCH(col, 'query')`` and ``MATCH((c1, c2), 'query')``  -> :class:`FtsMatch`
- ``score()``                                                -> :class:`FtsScore`
- ``score_explain()``                                        -> :class:`FtsScoreExplain`
- ``CREATE FULLTEXT INDEX [name] ON t (c1, ...) [WITH (k = v, ...)]`` -> :class:`CreateFulltextIndex`
- ``CREATE NGRAM INDEX [name] ON t (c1, ...)``               -> :class:`CreateFulltextIndex`, kind "ngram"
- ``OPTIMIZE t``                                             -> :class:`Optimize`
- ``EXPLAIN [ANALYZE] <statement>``                          -> :class:`Explain`
"""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from ...errors import SqlError
from .classify import offset_of


class FtsMatch(exp.Expression, exp.Func):
    """``MATCH(column | (columns...), 'query string')``: a full-text predicate."""

    arg_types = {"expressions": True, "query": True}
    _sql_names = ["MATCH"]

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.expressions]


class FtsScore(exp.Expression, exp.Func):
    """``score()``: the row's score for its SELECT's search expression; ``score(alias)``
    names the table where the SELECT's MATCHes read several."""

    arg_types = {"this": False, "expressions": False}
    _sql_names = ["SCORE"]


class FtsScoreExplain(exp.Expression, exp.Func):
    """``score_explain()``: a JSON breakdown of the row's score()."""

    arg_types: dict[str, bool] = {}
    _sql_names = ["SCORE_EXPLAIN"]


class CreateFulltextIndex(exp.Expression):
    arg_types = {"this": True, "expressions": True, "options": False, "name": False, "kind": False}


class Optimize(exp.Expression):
    arg_types = {"this": True}


class Explain(exp.Expression):
    arg_types = {"this": True, "analyze": False}


def _parse_match(self: "FtsParser") -> FtsMatch:
    name_token = self._tokens[self._index - 2]  # MATCH, before the consumed "("
    if self._match(TokenType.L_PAREN, advance=False) and self._next and self._next.token_type == TokenType.VAR:
        # MATCH((c1, c2), 'q'): a parenthesised column list.
        self._match(TokenType.L_PAREN)
        columns = self._parse_csv(self._parse_column)
        self._match_r_paren()
    else:
        columns = [c for c in [self._parse_column()] if c is not None]
    if not columns or not self._match(TokenType.COMMA):
        self.raise_error("MATCH needs a column (or a parenthesised column list), a comma and a query string")
    query = self._parse_bitwise()
    if query is None:
        self.raise_error("MATCH needs a query string after its comma")
    return self.expression(FtsMatch(expressions=columns, query=query), token=name_token)


class FtsTokenizer(Postgres.Tokenizer):
    # EXPLAIN and OPTIMIZE are opaque commands in Postgres; here they start statements
    # whose parts we parse.
    KEYWORDS = {k: v for k, v in Postgres.Tokenizer.KEYWORDS.items() if k not in ("EXPLAIN", "OPTIMIZE")}


class FtsParser(Postgres.Parser):
    FUNCTION_PARSERS = {**Postgres.Parser.FUNCTION_PARSERS, "MATCH": _parse_match}
    FUNCTIONS = {
        **Postgres.Parser.FUNCTIONS,
        "SCORE": lambda args: FtsScore(this=args[0] if args else None, expressions=args[1:]),
        "SCORE_EXPLAIN": lambda args: FtsScoreExplain(),
    }

    def validate_expression(self, expression: Any, args: list | None = None) -> Any:
        """A call of a function sqlglot knows with arguments it does not take (DataFusion's
        ``to_date`` takes any number of formats) is kept as an anonymous call of the name as
        written, its arguments DataFusion's to check: sqlglot refused the statement."""
        if args is not None and isinstance(expression, exp.Func) and expression.error_messages(args):
            depth, at = 1, self._index  # (inside the call, its ")" not yet read: back to its "(")
            while depth and at > 0:
                at -= 1
                kind = self._tokens[at].token_type
                depth += 1 if kind == TokenType.R_PAREN else -1 if kind == TokenType.L_PAREN else 0
            expression = exp.Anonymous(this=self._tokens[at - 1].text, expressions=args)
        return super().validate_expression(expression, args)

    def _warn_unsupported(self) -> None:
        """(Silent: a statement sqlglot cannot parse becomes a Command that DataFusion runs,
        or refuses with its own error; sqlglot's note went to the user's stderr.)"""

    def _parse_statement(self) -> exp.Expression | None:
        if self._match_text_seq("EXPLAIN"):
            analyze = self._match_text_seq("ANALYZE")
            statement = self._parse_statement()
            if statement is None:
                self.raise_error("EXPLAIN needs a statement")
            return self.expression(Explain(this=statement, analyze=analyze))
        if self._match_text_seq("OPTIMIZE"):
            table = self._parse_id_var(any_token=False)
            if table is None:
                self.raise_error("OPTIMIZE needs a table name")
            return self.expression(Optimize(this=table))
        if self._match_text_seq("CREATE", "FULLTEXT", "INDEX"):
            return self._parse_fulltext_index()
        if self._match_text_seq("CREATE", "NGRAM", "INDEX"):
            return self._parse_fulltext_index(kind="ngram")
        return super()._parse_statement()

    def _parse_fulltext_index(self, kind: str | None = None) -> CreateFulltextIndex:
        name = None if self._match(TokenType.ON) else self._parse_id_var()
        if name is not None and not self._match(TokenType.ON):
            self.raise_error("expected ON after the index name")
        table = self._parse_id_var(any_token=False)
        if table is None:
            self.raise_error("expected a table name after ON")
        columns = self._parse_wrapped_csv(self._parse_column)
        options = []
        if self._match(TokenType.WITH):
            options = self._parse_wrapped_csv(self._parse_assignment)
        return self.expression(
            CreateFulltextIndex(this=table, expressions=columns, options=options, name=name, kind=kind)
        )


class FtsGenerator(Postgres.Generator):
    """Writes the dialect back out (EXPLAIN shows statements in it)."""

    TRANSFORMS = {
        **Postgres.Generator.TRANSFORMS,
        FtsScore: lambda self, e: f"score({self.sql(e, 'this')})",
        FtsScoreExplain: lambda self, e: "score_explain()",
        FtsMatch: lambda self, e: "MATCH({}, {})".format(
            self.sql(e.expressions[0]) if len(e.expressions) == 1
            else "(" + ", ".join(self.sql(c) for c in e.expressions) + ")",
            self.sql(e, "query"),
        ),
        Optimize: lambda self, e: f"OPTIMIZE {self.sql(e, 'this')}",
        Explain: lambda self, e: "EXPLAIN " + ("ANALYZE " if e.args.get("analyze") else "") + self.sql(e, "this"),
        CreateFulltextIndex: lambda self, e: "CREATE {} INDEX {}ON {} ({}){}".format(
            "NGRAM" if e.args.get("kind") else "FULLTEXT",
            self.sql(e, "name") + " " if e.args.get("name") else "",
            self.sql(e, "this"),
            ", ".join(self.sql(c) for c in e.expressions),
            " WITH (" + ", ".join(self.sql(o) for o in e.args.get("options") or []) + ")"
            if e.args.get("options") else "",
        ),
    }


class Fts(Postgres):
    """The dialect: Postgres tokens and grammar plus the full-text additions."""

    Tokenizer = FtsTokenizer
    Parser = FtsParser
    Generator = FtsGenerator


def parse_sql(sql: str) -> list[exp.Expression]:
    """Parse one or more ``;``-separated statements; errors become :class:`SqlError`."""
    try:
        statements = sqlglot.parse(sql, read=Fts)
    except ParseError as err:
        first: dict[str, Any] = err.errors[0] if err.errors else {}
        line, col = first.get("line", 1) or 1, first.get("col", 1) or 1
        highlight = first.get("highlight") or ""
        offset = offset_of(sql, line, col) - max(0, len(highlight) - 1)
        message = first.get("description") or str(err).split("\n")[0]
        raise SqlError(message, sql, offset, max(1, len(highlight))) from None
    except TokenError:
        # The tokens read before the failure end where the bad one begins.
        tokenizer = FtsTokenizer()
        try:
            tokenizer.tokenize(sql)
        except TokenError:
            pass
        offset = tokenizer.tokens[-1].end + 1 if tokenizer.tokens else 0
        while offset < len(sql) and sql[offset].isspace():
            offset += 1
        raise SqlError("cannot tokenize SQL here (an unterminated string or identifier?)", sql, offset) from None
    return [s for s in statements if s is not None]


def identifier(node: exp.Expression) -> str:
    """A table or column name as DataFusion resolves it: unquoted names fold to lowercase."""
    ident = node.this if isinstance(node, (exp.Table, exp.Column)) else node
    if isinstance(ident, exp.Identifier):
        return ident.this if ident.quoted else ident.this.lower()
    return node.name


def conjuncts(node: exp.Expression) -> list[exp.Expression]:
    """The operands of a chain of ANDs, in order (parentheses looked through)."""
    node = node.unnest()
    if isinstance(node, exp.And):
        return conjuncts(node.left) + conjuncts(node.right)
    return [node]


def disjuncts(node: exp.Expression) -> list[exp.Expression]:
    """The operands of a chain of ORs, in order (parentheses looked through)."""
    node = node.unnest()
    if isinstance(node, exp.Or):
        return disjuncts(node.left) + disjuncts(node.right)
    return [node]
