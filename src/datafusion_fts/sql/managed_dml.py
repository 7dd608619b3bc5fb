"""DDL and DML that write a managed table, with DataFusion's own semantics by construction
(docs/design.md: "Managed tables in DataFusion"; DESIGN §3.1).

A managed table must behave as the table DataFusion would have made of the same statements:
its declared types, NOT NULL, DEFAULT values, casts of inserted values, CREATE OR REPLACE,
IF NOT EXISTS, the names it accepts, its ``count`` answers and its errors. Rather than
imitate these, DataFusion runs the user's own statement, as written, against a table it
owns, and the rows it produced move into the managed table:

- CREATE TABLE runs as written; the table DataFusion registers in the session's schema
  (noted by :meth:`SessionSchema.recording`) becomes a managed table of its schema, its
  rows and its column definitions (kept for the DEFAULT values of later inserts);
- INSERT runs with the table's name replaced by a scratch table of the same definition;
  its rows are then inserted (the fresh tier: durable and searchable at once);
- UPDATE first copies the rows its WHERE selects, with their row ids, into a scratch table,
  runs the user's UPDATE (without the WHERE) on it, and replaces those rows by its result
  in one commit;
- DELETE deletes the rows ``SELECT _rowid FROM t WHERE <its condition>`` finds;
- DROP TABLE drops the table, as DataFusion would, ``IF EXISTS`` included.

Only the table's name (and, for UPDATE, the WHERE) is cut from the text; a statement whose
query searches (MATCH, score()) runs through the search path with its scratch name.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any, Callable, Protocol

import datafusion
import numpy as np
import pyarrow as pa

from ..errors import CatalogError, InvalidArgument
from ..session.catalog import RESERVED_PREFIX, SessionSchema, quote, rows_name
from ..session.declared_types import empty_batch
from ..session.defined_tables import defined
from .result_frame import detached_frame
from .tables import TableMetadata
from .text.classify import ROWID, Kind, Statement, Token, is_search, tokenize

# The column of an UPDATE's scratch table holding each row's row id (a name no statement
# of a user's may write: the prefix is the engine's).
SCRATCH_ROWID = f"{RESERVED_PREFIX}rowid"


class DmlTable(Protocol):
    """What DML needs of a managed table (``table.Table`` is one)."""

    def insert(self, data: Any) -> int: ...

    def delete_rows(self, ids: np.ndarray) -> int: ...

    def replace_rows(self, ids: np.ndarray, data: pa.Table) -> None: ...


class DmlHost(Protocol):
    """What DML needs of a database (:class:`..database.Database`)."""

    ctx: datafusion.SessionContext
    session: SessionSchema

    def table(self, name: str) -> DmlTable: ...

    def table_meta(self, name: str) -> TableMetadata: ...

    def create_sql_table(self, name: str, rows: pa.Table, declared: pa.Schema, definition: str | None,
                         replacing: bool) -> None: ...

    def drop_table(self, name: str) -> None: ...


# How a statement's text runs (a search's parts lowered, the rest as written): the SQL
# session's own entry, handed in so this module imports nothing above it.
Run = Callable[[str], datafusion.DataFrame]
# A write's handler: the database, the statement, and how its query runs.
Handler = Callable[["DmlHost", Statement, Run], datafusion.DataFrame]


def _count(ctx: datafusion.SessionContext, n: int) -> datafusion.DataFrame:
    """DataFusion's answer to DML: one row, ``count`` (UInt64)."""
    return detached_frame(ctx, pa.table({"count": pa.array([n], pa.uint64())}))


def _empty(ctx: datafusion.SessionContext) -> datafusion.DataFrame:
    """DataFusion's answer to DDL: no column, no row."""
    return ctx.sql("SELECT 1 WHERE false").select()


def _spliced(statement: Statement, replacement: str, lo: int | None = None, hi: int | None = None) -> str:
    """The statement's text with the tokens [lo, hi) (by default its table's name) replaced."""
    lo, hi = statement.target if lo is None or hi is None else (lo, hi)
    tokens = statement.tokens
    return statement.text[: tokens[lo].start] + replacement + statement.text[tokens[hi - 1].end :]


def _definition(statement: Statement) -> str | None:
    """The parenthesised column definitions after a CREATE TABLE's name, as written."""
    tokens, (_, end) = statement.tokens, statement.target
    if end >= len(tokens) or tokens[end].value != "(" or tokens[end].kind != "punct":
        return None
    depth = 0
    for i in range(end, len(tokens)):
        if tokens[i].kind == "punct":
            depth += {"(": 1, ")": -1}.get(tokens[i].value, 0)
            if depth == 0:
                return statement.text[tokens[end].start : tokens[i].end]
    return None


def create_table(host: DmlHost, statement: Statement, run: Run) -> datafusion.DataFrame:
    """CREATE TABLE as DataFusion runs it; the table it made becomes a managed one."""
    name = statement.target_name
    assert name is not None
    with host.session.recording(name) as recorded:
        result = run(statement.text)
        if recorded.created is None:  # (IF NOT EXISTS on an existing table: nothing made)
            return result
        made = host.ctx.table(quote(name))
        try:
            rows = made.to_arrow_table()
        except pa.ArrowException as exc:  # (Arrow's C interface refuses a NUL in a name)
            raise InvalidArgument(f"column names must be without NUL to be stored: {exc}") from None
        declared = rows.schema
        host.create_sql_table(name, rows, declared, _definition(statement), recorded.replaced is not None)
        host.session.take_created(recorded)
    return result


def _scratch(host: DmlHost, meta: TableMetadata, extra: list[pa.Field] = (), rows: pa.Table | None = None) -> str:
    """A scratch table of DataFusion's with the table's definition (its DEFAULT values and
    constraints, when it has column definitions and no ``extra`` columns), holding ``rows``;
    its name."""
    name = f"{RESERVED_PREFIX}dml_{uuid.uuid4().hex[:16]}"
    schema = pa.schema([*meta.sql_schema, *extra])
    batches = [] if rows is None else rows.cast(schema).to_batches()
    # (without a definition, or one reading otherwise now: a setting changed its types)
    if extra or not defined(host.ctx, name, meta.definition, batches, schema):
        host.ctx.register_record_batches(name, [batches or [empty_batch(schema)]])
    return name


def insert(host: DmlHost, statement: Statement, run: Run) -> datafusion.DataFrame:
    """INSERT: DataFusion inserts into a scratch table of the same definition; its rows go
    into the managed table."""
    name = statement.target_name
    meta = host.table_meta(name)
    scratch = _scratch(host, meta)
    try:
        answer = run(_spliced(statement, quote(scratch))).to_arrow_table()
        rows = host.ctx.table(quote(scratch)).to_arrow_table()
    finally:
        host.ctx.deregister_table(scratch)
    if rows.num_rows:
        host.table(name).insert(rows)
    return detached_frame(host.ctx, answer)


def _top_level(tokens: tuple[Token, ...], start: int, *words: str) -> int | None:
    """The first of ``words`` at parenthesis depth 0 from token ``start``."""
    depth = 0
    for i in range(start, len(tokens)):
        token = tokens[i]
        if token.kind == "punct":
            depth += {"(": 1, ")": -1}.get(token.value, 0)
        elif token.kind == "word" and depth == 0 and token.value in words:
            return i
    return None


def _where(statement: Statement, start: int) -> str | None:
    """The condition of a statement's top-level WHERE, as written."""
    at = _top_level(statement.tokens, start, "where")
    return None if at is None else statement.text[statement.tokens[at].end :]


def _row_ids(run: Run, name: str, where: str | None, extra: str = "") -> pa.Table:
    """``_rowid`` (and the ``extra`` select list) of the rows of ``name`` that ``where``
    selects, the table referred to by its own name as DataFusion's DML refers to it. A
    condition that searches names the table itself: the search path reads its rows."""
    searches = where is not None and is_search(tokenize(where), lambda _: False)
    source = quote(name) if searches else f"{quote(rows_name(name))} AS {quote(name)}"
    query = f"SELECT {quote(ROWID)}{extra} FROM {source}"
    return run(query if where is None else f"{query} WHERE {where}").to_arrow_table()


def delete(host: DmlHost, statement: Statement, run: Run) -> datafusion.DataFrame:
    """DELETE: the rows its condition selects, deleted in one commit."""
    name = statement.target_name
    ids = _row_ids(run, name, _where(statement, statement.target[1])).column(0).to_numpy()
    count = host.table(name).delete_rows(np.unique(ids)) if len(ids) else 0
    return _count(host.ctx, count)


def update(host: DmlHost, statement: Statement, run: Run) -> datafusion.DataFrame:
    """UPDATE: the rows its WHERE selects, updated by DataFusion in a scratch table, replace
    the table's rows in one commit (with new row ids, after every other row, in the order
    of their old ones: not in the order DataFusion's plan found them, which changes with
    how the table is shown to it, session/table_views.py, and its partitions)."""
    name = statement.target_name
    meta = host.table_meta(name)
    tokens, (_, end) = statement.tokens, statement.target
    set_at = _top_level(tokens, end, "set")
    if set_at is None:
        raise InvalidArgument(f"UPDATE {name} needs SET")
    where_at = _top_level(tokens, set_at, "where")
    columns = "".join(f", {quote(name)}.{quote(f.name)}" for f in meta.sql_schema)
    found = _row_ids(run, name, _where(statement, set_at), columns)
    ids = found.column(0)
    rows = found.drop_columns([found.column_names[0]]).append_column(SCRATCH_ROWID, ids)
    rows = rows.rename_columns([*meta.sql_schema.names, SCRATCH_ROWID])
    scratch = _scratch(host, meta, [pa.field(SCRATCH_ROWID, pa.int64(), False)], rows)
    alias = "" if end < set_at else f" AS {quote(name)}"  # (its columns are qualified by its name)
    text = statement.text[: tokens[where_at].start] if where_at is not None else statement.text
    try:
        answer = run(text[: tokens[statement.target[0]].start] + quote(scratch) + alias
                     + text[tokens[end - 1].end :]).to_arrow_table()
        updated = host.ctx.table(quote(scratch)).sort(datafusion.col(SCRATCH_ROWID)).to_arrow_table()
    finally:
        host.ctx.deregister_table(scratch)
    if updated.num_rows:
        new_ids = updated.column(SCRATCH_ROWID).to_numpy()
        host.table(name).replace_rows(new_ids, updated.drop_columns([SCRATCH_ROWID]))
    return detached_frame(host.ctx, answer)


def explain_write(host: DmlHost, statement: Statement, run: Run) -> datafusion.DataFrame:
    """EXPLAIN of an INSERT, UPDATE or DELETE of a managed table: DataFusion's plan of the
    statement over a scratch table of the table's definition: for an INSERT an empty one,
    named as the table in the plan; for an UPDATE or DELETE one holding the table's rows,
    standing in for the table under its name (a subquery of the statement may name it).
    DataFusion writes its own table as it plans an UPDATE or DELETE of it (an in-memory
    table's), and as EXPLAIN ANALYZE runs an INSERT: where the scratch table was written,
    the managed table is written by the statement itself, as it runs without EXPLAIN."""
    name, tokens, (lo, hi) = statement.target_name, statement.tokens, statement.target
    at = max(i for i in range(lo) if tokens[i].kind == "word" and tokens[i].value in _VERBS)
    meta = host.table_meta(name)
    rows = None if tokens[at].value == "insert" else host.ctx.table(quote(name)).to_arrow_table()
    scratch = _scratch(host, meta, rows=rows)
    try:
        if rows is None:
            plan = run(_spliced(statement, quote(scratch))).to_arrow_table()
            plan = pa.table([pa.array([v.replace(scratch, name) if isinstance(v, str) else v for v in c.to_pylist()],
                                      c.type) for c in plan.columns], schema=plan.schema)
        else:
            with host.session.standing_in(name, host.session.table(scratch)):
                plan = run(statement.text).to_arrow_table()
        after = host.ctx.table(quote(scratch)).to_arrow_table()
    finally:
        host.ctx.deregister_table(scratch)
    if (after.num_rows > 0) if rows is None else after != rows:
        begin = tokens[at].start
        written = replace(statement, text=statement.text[begin:], start=statement.start + begin,
                          kind=_VERBS[tokens[at].value], target=(lo - at, hi - at),
                          tokens=tuple(t._replace(start=t.start - begin, end=t.end - begin) for t in tokens[at:]))
        HANDLERS[written.kind](host, written, run)
    return detached_frame(host.ctx, plan)


def drop(host: DmlHost, statement: Statement) -> datafusion.DataFrame:
    """DROP TABLE of a managed table (one name, as DataFusion drops one)."""
    tokens = statement.tokens
    lo, hi = statement.target
    if len(tokens) > hi or lo != (4 if tokens[2].value == "if" else 2):
        raise CatalogError(f"DROP TABLE drops one table at a time; drop {statement.target_name!r} on its own")
    host.drop_table(statement.target_name)
    return _empty(host.ctx)


_VERBS = {"insert": Kind.INSERT, "update": Kind.UPDATE, "delete": Kind.DELETE}
HANDLERS: dict[Kind, Handler] = {Kind.CREATE_TABLE: create_table, Kind.INSERT: insert, Kind.UPDATE: update, Kind.DELETE: delete,
            Kind.EXPLAIN_WRITE: explain_write}
