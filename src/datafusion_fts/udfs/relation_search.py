"""The search of a relation's rows inside DataFusion's plan (the general plan of SQL over a
CTE, a derived table, a view or a table of the session: sql/search/lower_marks.py): a window
function over the whole relation (``OVER ()``), which DataFusion hands every row the
relation yields at once, so the statistics are those rows' (DESIGN §3.2). Its arguments
are each searched column as LargeUtf8 and the name of its type; it returns each row's
score, NULL where the row does not match.

The rows are searched as a table of the session is (``storage/sources/foreign.py``): a
flat scan with the columns' default analysis, since a relation's columns have no index."""

from __future__ import annotations

import datafusion
import numpy as np
import pyarrow as pa
from datafusion.user_defined import WindowEvaluator

from ..errors import CatalogError
from ..operators.base import ExecutionPlan
from ..planner.logical import RelationSearch
from ..planner.plan_search import plan_search
from ..planner.answer_search import Search, answer, request_for
from ..settings import Settings
from ..storage.sources.foreign import HeldRows
from .error_bridge import ErrorBridge

_TEXT_TYPES = frozenset({"Utf8", "LargeUtf8", "Utf8View"})


class _RelationScores(WindowEvaluator):
    def __init__(self, search: RelationSearch, settings: Settings) -> None:
        self.search = search
        self.columns = search.columns
        self.settings = settings

    def evaluate_all(self, values: list[pa.Array], num_rows: int) -> pa.Array:
        texts = dict(zip(self.columns, values[0::2]))  # (a column named twice is searched once)
        for column, kind in zip(self.columns, values[1::2]):
            named = kind[0].as_py() if len(kind) else "Utf8"
            if named not in _TEXT_TYPES:
                raise CatalogError(f"MATCH column {column!r} is not text (it is {named})")
        found = answer(relation_search_of(self.search), HeldRows(self.search.relation, pa.table(texts)), None,
                       self.settings).rows
        scores = np.zeros(num_rows)
        unmatched = np.ones(num_rows, np.bool_)
        ids = found.column(0).to_numpy()
        scores[ids] = found.column(1).to_numpy()
        unmatched[ids] = False
        return pa.array(scores, pa.float64(), mask=unmatched)


def relation_search_of(search: RelationSearch) -> Search:
    """What the search of a relation's rows asks: every match."""
    return Search(search.tree, limit=None)


def relation_plan(search: RelationSearch, settings: Settings) -> ExecutionPlan:
    """The plan the window function runs for ``search`` (shown by EXPLAIN): its shape,
    over no rows."""
    rows = pa.table({c: pa.array([], pa.large_string()) for c in search.columns})
    return plan_search(request_for(relation_search_of(search), HeldRows(search.relation, rows), settings), None)[0]


def relation_search(name: str, search: RelationSearch, settings: Settings, errors: ErrorBridge
                    ) -> datafusion.WindowUDF:
    """The window function ``name`` answering ``search``."""

    def evaluator() -> WindowEvaluator:
        scores = _RelationScores(search, settings)
        scores.evaluate_all = errors.raising(scores.evaluate_all)  # type: ignore[method-assign]
        return scores

    return datafusion.udwf(evaluator, [pa.large_string(), pa.string()] * len(search.columns), pa.float64(),
                           "immutable", name=name)
