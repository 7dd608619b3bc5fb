"""The one entry every search reaches: ``Table.search`` and ``find``, SQL's searches and
``fts_search`` (docs/design.md: "The planner").

A request is answered by its shape's prepared search when the snapshot keeps one (a
cache of plans inside the planner: :mod:`.prepared_search`), else by its plan
(:func:`.plan_search.plan_search`, which ``EXPLAIN`` and ``Table.plan`` call for the plan
itself). Both give the same rows and scores; the tests hold them to it.
"""

from __future__ import annotations

import pyarrow as pa

from ..operators.base import SEARCH_SCHEMA, ExecutionPlan, search_table
from .plan_search import Catalog, plan_search
from .prepared_search import search_prepared
from .search_request import SearchRequest


def run_search(req: SearchRequest, catalog: Catalog | None) -> pa.Table:
    """The ranked ``_rowid`` and ``_score`` of ``req`` (``catalog``: the database's
    segments; None for a table of the session, which is scanned)."""
    found = search_prepared(req, catalog) if catalog is not None else None
    if found is None:
        return executed(plan_search(req, catalog)[0])
    return search_table(*found)


def executed(plan: ExecutionPlan) -> pa.Table:
    """The ranked ``_rowid`` and ``_score`` ``plan`` yields, as one table."""
    return pa.Table.from_batches(list(plan.execute()), schema=SEARCH_SCHEMA)
