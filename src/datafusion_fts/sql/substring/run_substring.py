"""Run a statement DataFusion would run as written, whose substring predicates an n-gram
index answers (sql/substring/lower_substring.py): each table they read is shown to DataFusion as its
candidate rows, fetched by row id, under the name the statement reads it by."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import datafusion
import numpy as np
import pyarrow as pa
from sqlglot import exp

from ...errors import SqlError
from ...planner.plan_substring import SubstringPlan
from ...session.catalog import fresh_name, quote, rows_name
from ...session.defined_tables import register_rows
from ..hosts import SqlHost
from ..result_frame import detached_frame
from ..tables import TableMetadata, TableVersion, carried_rows
from ..text.classify import ROWID
from ..text.dialect import Explain, parse_sql
from ..text.shapes import shape_of
from ..text.splice import Edit, Splicer, spliced
from .lower_substring import SubstringRead, substring_reads
from .substring_shapes import SubstringTemplate, substring_template


def run_substring(db: SqlHost, text: str) -> datafusion.DataFrame | None:
    """``text`` (one statement) run over the candidates of the tables it reads by substring
    predicates; None where it reads none so, or sqlglot cannot parse it: DataFusion runs it
    as written then. ``EXPLAIN [ANALYZE]`` of such a statement shows, before DataFusion's
    plan of what it runs, each table's plan and why (``substring_plan``)."""
    if not db.settings.get("fts.substring_index"):
        return None
    tables = db.manifest.tables  # (one version: the reads are found in it and registered from it)
    found = _statement_reads(db, tables, text)
    if found is None:
        return None
    explain, reads = found
    if not reads or any(read.span is None for read in reads) or not _valid(db, reads):
        return None  # (a table not placed in the text: the text as written)
    shown: list[str] = []
    lines: list[str] = []
    edits: list[Edit] = []
    try:
        for read in reads:
            plans, rows = db.retrying(lambda: _candidate_rows(db, read))
            lines += _explained(read, plans)
            if rows is None:
                continue
            name = fresh_name()
            register_rows(db.ctx, name, rows, tables[read.table].definition)
            shown.append(name)
            assert read.span is not None
            edits.append((*read.span, f"{quote(name)} AS {quote(read.alias)}"))
        if not (shown or explain):
            return None
        edited = spliced(text, edits)
        if not explain:
            return db.ctx.sql(edited)
        plan = db.ctx.sql(edited).to_arrow_table()
        return detached_frame(db.ctx, pa.table({"plan_type": ["substring_plan", *plan.column(0).to_pylist()],
                                                "plan": ["\n".join(lines), *plan.column(1).to_pylist()]}))
    finally:  # (a statement planned holds the tables it reads)
        for name in shown:
            db.ctx.deregister_table(name)


def _statement_reads(db: SqlHost, tables: Mapping[str, TableMetadata], text: str
                     ) -> tuple[bool, list[SubstringRead]] | None:
    """Whether ``text`` is an EXPLAIN, and the tables of ``tables`` it reads by substring
    predicates over n-gram indexes: from the template of its shape where one fits
    (sql/substring/substring_shapes.py), else parsed (and its template kept); None where sqlglot
    cannot parse it as one query."""
    shape = shape_of(text) if db.settings.get("fts.sql_fast_paths") else None
    if shape is not None:
        template = db.statements.get(text, shape, partial(_looked_up, tables))
        if isinstance(template, SubstringTemplate):
            reads = template.bind(text, shape)
            if reads is not None:
                return template.explain, reads
    try:
        statements = parse_sql(text)
    except SqlError:
        return None
    if len(statements) != 1:
        return None
    explain = isinstance(statements[0], Explain)
    query = statements[0].this if explain else statements[0]
    if not isinstance(query, exp.Query):
        return None
    seen: dict[str, Any] = {}
    reads = _reads(tables, query, Splicer(text), seen)
    if shape is not None:
        template = substring_template(text, shape, explain, query, reads, seen)
        if template is not None:
            db.statements.put(shape, template)
    return explain, reads


def prefiltered_ids(db: SqlHost, table: str, alias: str, prefilter: str) -> np.ndarray:
    """The ids of the rows of managed ``table`` (read as ``alias``) that the prefilter of a
    search keeps (docs/design.md: "Prefilters"): DataFusion evaluates it
    on the table's candidate rows where its substring predicates read an n-gram index,
    else on every row."""
    rows = None
    if db.settings.get("fts.substring_index"):
        text = f"SELECT 1 FROM {quote(table)} AS {quote(alias)} WHERE {prefilter}"
        try:
            (query,) = parse_sql(text)
        except (SqlError, ValueError):
            query = None
        reads = _reads(db.manifest.tables, query, Splicer(text)) if isinstance(query, exp.Query) else []
        if reads and _valid(db, reads):
            rows = db.retrying(lambda: _candidate_rows(db, reads[0], rowid=True))[1]
    return _kept_ids(db, rows, table, alias, prefilter)


def _kept_ids(db: SqlHost, rows: pa.Table | None, table: str, alias: str, where: str) -> np.ndarray:
    """The ``_rowid`` of the rows that ``where`` keeps, DataFusion evaluating it over
    ``rows`` (shown under a name of their own for the statement) or, None, over every
    row of ``table``; either read as ``alias``."""
    source = rows_name(table)
    if rows is not None:
        source = fresh_name()
        register_rows(db.ctx, source, rows)
    try:
        found = db.ctx.sql(f"SELECT {quote(alias)}.{ROWID} FROM {quote(source)} AS {quote(alias)} WHERE {where}")
        return found.to_arrow_table().column(0).to_numpy()
    finally:
        if rows is not None:
            db.ctx.deregister_table(source)


def _valid(db: SqlHost, reads: list[SubstringRead]) -> bool:
    """Whether DataFusion takes every regular expression of ``reads`` (else the statement
    runs as written, for DataFusion to refuse it as it does)."""
    checks = [c for read in reads for c in read.checks]
    if not checks:
        return True
    try:
        db.ctx.sql(f"SELECT {', '.join(checks)}").collect()
    except Exception:  # (DataFusion's errors have no class of their own in Python)
        return False
    return True


def _reads(tables: Mapping[str, TableMetadata], query: exp.Query, splicer: Splicer,
           seen: dict[str, Any] | None = None) -> list[SubstringRead]:
    """The tables of ``tables`` (a version of the database's) that ``query`` (whose text
    ``splicer`` holds) reads by substring predicates over n-gram indexes; each table looked
    up, and what was found, put in ``seen``."""

    def look_up(name: str) -> tuple[pa.Schema, frozenset[str]] | None:
        found = _looked_up(tables, name)
        if seen is not None:
            seen[name] = found
        return found

    def schema_of(name: str) -> tuple[pa.Schema, bool] | None:
        found = look_up(name)
        return (found[0], True) if found is not None else None  # (other tables: not read so)

    def ngram_columns(name: str) -> frozenset[str]:
        found = look_up(name)
        return found[1] if found is not None else frozenset()

    return substring_reads(query, schema_of, ngram_columns, splicer)


def _looked_up(tables: Mapping[str, TableMetadata], name: str) -> tuple[pa.Schema, frozenset[str]] | None:
    """A managed table's SQL schema and columns with an n-gram index; None: not one."""
    meta = tables.get(name)
    return (meta.sql_schema, meta.ngram_columns) if meta is not None else None


def _candidate_rows(db: SqlHost, read: SubstringRead, rowid: bool = False
                    ) -> tuple[list[SubstringPlan], pa.Table | None]:
    """The plans of ``read``'s columns and the candidate rows of its table, every column as
    SQL declares it (after ``_rowid`` with ``rowid``), from one snapshot (None when every
    plan is a scan). Only the columns the statement may read are fetched (``read.names``;
    and those that cannot be null): the others are nulls, which it never reads."""
    plans, snap = db.table(read.table).substring_plan(read.needs)
    ids = None
    for plan in plans:
        if plan.operator is not None:
            found = pa.Table.from_batches(list(plan.operator.execute())).column(0)
            ids = found if ids is None else pa.array(np.intersect1d(ids.to_numpy(), found.to_numpy(), assume_unique=True))
    if ids is None:
        return plans, None
    schema = snap.meta.sql_schema
    fetched = [f.name for f in schema if read.names is None or f.name.lower() in read.names or not f.nullable]
    columns = [column for column, _, _ in read.needs]
    if (read.predicates is None or read.runs_only or len(ids) < db.settings.get("fts.substring_recheck_rows")
            or set(fetched) <= set(columns)):
        rows = carried_rows(snap, ids, fetched)
    else:
        rows = _rechecked(db, read, snap, ids, columns, fetched)
    rows = _widened(rows, schema)
    return plans, rows if rowid else rows.drop_columns([ROWID])


def _widened(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """``rows`` (``_rowid`` and some of ``schema``'s columns) with the others as nulls, in
    the schema's order."""
    if rows.num_columns == len(schema) + 1:
        return rows
    have = set(rows.column_names)
    arrays = [rows.column(ROWID), *(rows.column(f.name) if f.name in have else pa.nulls(rows.num_rows, f.type)
                                    for f in schema)]
    return pa.Table.from_arrays(arrays, schema=pa.schema([rows.schema.field(ROWID), *schema]))


def _rechecked(db: SqlHost, read: SubstringRead, version: TableVersion, ids: pa.Array | pa.ChunkedArray,
               columns: list[str], fetched: list[str]) -> pa.Table:
    """The candidates ``ids`` of ``read``'s table that its substring predicates keep, with
    ``_rowid`` and the ``fetched`` columns as SQL declares them: the predicates' ``columns``
    are fetched for every candidate and DataFusion evaluates the predicates (as the
    statement writes them) on them; the others for the rows kept only. The statement
    evaluates them again over these rows: a row they drop was dropped by its WHERE anyway
    (see sql/substring/lower_substring.py), so this changes what is fetched, never the answer."""
    first = carried_rows(version, ids, columns)
    where = " AND ".join(f"({text})" for text in read.predicates or ())
    kept_ids = _kept_ids(db, first, read.table, read.alias, where)
    keep = np.isin(first.column(ROWID).to_numpy(), kept_ids)
    first = first.filter(pa.array(keep))
    rest = carried_rows(version, first.column(ROWID), [n for n in fetched if n not in columns])
    for column in columns:
        rest = rest.append_column(first.schema.field(column), first.column(column))
    return rest.select([ROWID, *fetched])


def _explained(read: SubstringRead, plans: list[SubstringPlan]) -> list[str]:
    """EXPLAIN's lines of one table's plans: per column, the choice and why, the operator
    with what it did."""
    lines = []
    for (column, _, _), plan in zip(read.needs, plans):
        lines.append(f"{read.table}.{column}: {plan.reason}")
        if plan.operator is not None:
            metrics = ", ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}"
                                for k, v in plan.operator.metrics.values.items())
            lines.append(f"  {plan.operator.display()}, metrics=[{metrics}]")
    return lines
