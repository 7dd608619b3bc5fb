"""Planner rule: when a search was planned as a full scan only because no index covers
its columns, say which statement would let it use one (docs/design.md: "The planner").

The advice travels with the request: EXPLAIN shows it, and the scan issues it as an
:class:`~datafusion_fts.errors.FtsNotice` once it has scanned more than
``fts.residual_row_limit`` rows (a small table scans fast enough to need no advice)."""

from __future__ import annotations

from .search_request import SearchRequest, evolve


def advise_index(req: SearchRequest) -> SearchRequest:
    """``req`` with ``advice`` set when the planner chose a flat scan by itself."""
    if req.choice != "flat_scan" or req.force_plan != "auto" or not req.columns:
        return req
    table = req.snapshot.name
    columns = ", ".join(req.columns)
    if not req.snapshot.managed:
        return evolve(req, advice=(
            f"{table} is not a managed table, so MATCH scans every row; CREATE TABLE {table}_fts AS "
            f"SELECT * FROM {table}, then CREATE FULLTEXT INDEX ON {table}_fts ({columns}), searches an index"
        ))
    indexes = req.snapshot.meta.fulltext
    missing = [c for c in req.columns if c not in indexes]
    no_positions = [c for c in req.columns if c in indexes and c in req.phrase_columns and not indexes[c].positions]
    statements = []
    if missing:
        statements.append(f"CREATE FULLTEXT INDEX ON {table} ({', '.join(missing)})")
    if no_positions:
        statements.append(f"CREATE FULLTEXT INDEX ON {table} ({', '.join(no_positions)}) WITH (positions = true)")
    if not statements:  # (indexed, but the unindexed tail is past fts.residual_row_limit)
        statements.append(f"OPTIMIZE {table}")
    return evolve(req, advice=f"{' and '.join(statements)} would let MATCH on {columns} use an index")
