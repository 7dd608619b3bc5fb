"""``db.sql``'s entry: each statement of a text run by its kind (docs/design.md: "SQL";
DESIGN §3.1).

A statement's kind comes from its tokens (sql/text/classify.py), one table dispatches on it:
DataFusion's own statements go to ``ctx.sql`` as written; DDL and DML that write a managed
table to sql/managed_dml.py; searches and the project's statements to the SQL session of
sql/search/execute.py, which parses them with sqlglot: no other statement is parsed in Python.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import datafusion

from ..errors import EngineError, InvalidArgument, SqlError
from .hosts import SqlHost
from .managed_dml import HANDLERS, Handler, Run, drop
from .search.execute import SqlSession
from .substring.run_substring import run_substring
from .text.classify import (
    Kind,
    Statement,
    classify,
    engine_syntax_error,
    is_search,
    reads_substrings,
    refusal,
    split,
    tokenize,
)


def run_sql(db: SqlHost, text: str) -> datafusion.DataFrame:
    """Run ``text`` (statements separated by ``;``); the last one's result, raising our
    errors as themselves (udfs/error_bridge.py)."""
    if not isinstance(text, str):
        raise InvalidArgument(f"SQL must be a string, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise SqlError("not valid text: a lone surrogate cannot be encoded as UTF-8", text, err.start) from None
    try:
        result = None
        for part in split(text):
            # (classified as the statements before it left the tables)
            statement = reads_substrings(classify(part, db.manifest.tables.__contains__), partial(_ngram_tables, db))
            with db.pinned(statement.text):  # (every part of it reads one version of each table)
                result = _statement(db, text, statement)
    except RecursionError:
        raise SqlError("the statement nests too deeply to be parsed", text, 0, len(text)) from None
    if result is None:
        raise SqlError("no statement to run", text, 0)
    return db.errors.translating(result)


def _statement(db: SqlHost, text: str, part: Statement) -> datafusion.DataFrame:
    """Run one statement of ``text`` by its kind (:data:`RUNS`)."""
    refused = refusal(part)
    if refused is not None:
        raise SqlError(refused[0], text, part.start + refused[1])
    return RUNS[part.kind](db, text, part)


def _datafusion(db: SqlHost, text: str, part: Statement) -> datafusion.DataFrame:
    """A statement that is not ours: DataFusion's, as written; its syntax errors placed in
    the whole ``text``."""
    db.list_sources(part.text)
    try:
        return db.errors.call(db.ctx.sql, part.text)
    except EngineError as err:
        located = engine_syntax_error(text, str(err), part.start)
        if located is None:
            raise
        try:
            raise located from err
        finally:  # (this frame holding the error its traceback holds: a cycle keeping the database)
            del located


def _substring(db: SqlHost, text: str, part: Statement) -> datafusion.DataFrame:
    """A statement of DataFusion's that may read a table's candidate rows by its n-gram
    index (sql/substring/run_substring.py), else as written."""
    db.list_sources(part.text)
    found = db.errors.call(run_substring, db, part.text)
    return found if found is not None else _datafusion(db, text, part)


def _ngram_tables(db: SqlHost) -> frozenset[str]:
    return frozenset(name for name, meta in db.manifest.tables.items() if meta.ngram_columns)


def _write(handler: Handler) -> Callable[[SqlHost, str, Statement], datafusion.DataFrame]:
    """DDL or DML that writes a managed table (sql/managed_dml.py), its query run by
    :func:`_query`."""
    return lambda db, text, part: db.errors.call(handler, db, part, partial(_query, db))


def _ours(db: SqlHost, text: str, part: Statement) -> datafusion.DataFrame:
    """A search or a statement of the project's: parsed and lowered (sql/search/execute.py)."""
    return _searching(db)(part.text)


# One table from a statement's kind to how it runs, as sqlglot's STATEMENT_PARSERS from a
# statement's first token.
RUNS: dict[Kind, Callable[[SqlHost, str, Statement], datafusion.DataFrame]] = {
    Kind.DATAFUSION: _datafusion,
    Kind.SEARCH: _ours,
    Kind.FTS: _ours,
    Kind.SUBSTRING: _substring,
    Kind.DROP: lambda db, text, part: drop(db, part),
    **{kind: _write(handler) for kind, handler in HANDLERS.items()},
}


def _query(db: SqlHost, text: str) -> datafusion.DataFrame:
    """The query a write runs (sql/managed_dml.py): its searches lowered, else as written."""
    if is_search(tokenize(text), db.manifest.tables.__contains__):
        return _searching(db)(text)
    db.list_sources(text)
    return db.ctx.sql(text)


def _searching(db: SqlHost) -> Run:
    """How a statement of ours runs: parsed and lowered by the SQL session of
    sql/search/execute.py."""
    return SqlSession(db).statement
