"""Run a statement DataFusion would run as written, whose substring predicates an n-gram
index answers (sql/lower_substring.py): each table they read is shown to DataFusion as its
candidate rows, fetched by row id, under the name the statement reads it by."""

from __future__ import annotations

import datafusion
import numpy as np
import pyarrow as pa
from sqlglot import exp

from ..errors import SqlError
from ..session.catalog import quote
from ..session.declared_types import as_declared
from ..session.defined_tables import register_rows
from ..storage.files.manifest import NGRAM
from .dialect import identifier, parse_sql
from .execute import fresh_name
from .hosts import SqlHost
from .lower_substring import SubstringRead, substring_reads
from .splice import Splicer


def run_substring(db: SqlHost, text: str) -> datafusion.DataFrame | None:
    """``text`` (one statement) run over the candidates of the tables it reads by substring
    predicates; None where it reads none so, or sqlglot cannot parse it: DataFusion runs it
    as written then."""
    if not db.settings.get("fts.substring_index"):
        return None
    try:
        statements = parse_sql(text)
    except SqlError:
        return None
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        return None
    statement = statements[0]
    tables = db.manifest.tables

    def schema_of(name: str) -> tuple[pa.Schema, bool] | None:
        meta = tables.get(name)
        return (meta.sql_schema, True) if meta is not None else None  # (other tables: not read so)

    def ngram_columns(name: str) -> frozenset[str]:
        meta = tables.get(name)
        return frozenset(ix.column for ix in meta.indexes.values() if ix.kind == NGRAM) if meta else frozenset()

    reads = substring_reads(statement, schema_of, ngram_columns)
    splicer = Splicer(text)
    shown: list[str] = []
    try:
        for read in reads:
            rows = db.retrying(lambda: _candidate_rows(db, read))
            if rows is None:
                continue
            name = fresh_name()
            meta = tables[read.table]
            register_rows(db.ctx, name, rows, meta.definition)
            shown.append(name)
            node = read.node
            alias = node.alias if node.args.get("alias") is not None else identifier(node)
            splicer.replace_table(node, f"{quote(name)} AS {quote(alias)}")
        edited = splicer.result()
        if not shown or edited is None:  # (an edit not placed: the text as written, not one sqlglot writes)
            return None
        return db.ctx.sql(edited)
    finally:  # (a statement planned holds the tables it reads)
        for name in shown:
            db.ctx.deregister_table(name)


def _candidate_rows(db: SqlHost, read: SubstringRead) -> pa.Table | None:
    """The candidate rows of ``read``'s table, every column as SQL declares it, from one
    snapshot; None when the plan for every column is a scan."""
    plans, snap = db.table(read.table).substring_plan(read.needs)
    ids = None
    for plan in plans:
        if plan.operator is not None:
            found = pa.Table.from_batches(list(plan.operator.execute())).column(0).to_numpy()
            ids = found if ids is None else np.intersect1d(ids, found, assume_unique=True)
    if ids is None:
        return None
    fields = list(snap.meta.sql_schema)
    values = snap.take(ids, [f.name for f in fields])
    return pa.Table.from_arrays([as_declared(values.column(f.name), f.type) for f in fields],
                                schema=pa.schema(fields))
