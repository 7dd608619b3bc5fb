"""A statement's answer that is already computed, as a DataFusion DataFrame built only
when something needs DataFusion.

A search statement whose answer is its search's result, sliced and renamed (see
:class:`.search.search_templates.Direct`), has its rows in hand before DataFusion sees them.
Handing them to DataFusion and collecting them back (``ctx.from_arrow(t)`` then
``to_arrow_table()``) cost about 0.35 ms a statement for 10 rows, a third of what SQL
adds to a search. So ``to_arrow_table``, ``collect``, ``to_pylist``, ``to_pydict``,
``count`` and ``schema`` answer from the table itself; every other method (``filter``,
``show``, ``execute_stream``, ...) builds the DataFusion frame once and runs on it.
"""

from __future__ import annotations

import uuid
from typing import Any

import datafusion
import pyarrow as pa

from ..session.catalog import RESERVED_PREFIX
from ..udfs.error_bridge import ErrorBridge, TranslatingDataFrame


def detached_frame(ctx: datafusion.SessionContext, table: pa.Table) -> datafusion.DataFrame:
    """``table`` as a DataFrame of ``ctx`` that leaves no table in it. DataFusion's
    ``from_arrow`` registers the rows under a name, kept until deregistered: every SET,
    EXPLAIN or ``score_explain()`` statement left one in the user's session (in ``SHOW
    TABLES``, its rows never freed). The frame keeps its rows once the name is gone."""
    name = f"{RESERVED_PREFIX}result_{uuid.uuid4().hex}"
    frame = ctx.from_arrow(table, name=name)
    ctx.deregister_table(name)
    return frame


class ResultFrame(TranslatingDataFrame):
    """A DataFrame of the rows of ``table``, made in ``ctx`` on first use."""

    def __init__(self, ctx: datafusion.SessionContext, table: pa.Table, errors: ErrorBridge) -> None:  # noqa: D107
        self._ctx = ctx
        self._table = table
        self._bridge = errors
        self._df: Any = None

    @property  # type: ignore[override]
    def df(self) -> Any:
        """DataFusion's frame of the rows (what every inherited method runs on)."""
        if self._df is None:
            self._df = detached_frame(self._ctx, self._table).df
        return self._df

    def to_arrow_table(self) -> pa.Table:
        return self._table

    def collect(self) -> list[pa.RecordBatch]:
        return self._table.to_batches()

    def to_pylist(self) -> list[dict[str, Any]]:
        return self._table.to_pylist()

    def to_pydict(self) -> dict[str, list[Any]]:
        return self._table.to_pydict()

    def count(self) -> int:
        return self._table.num_rows

    def schema(self) -> pa.Schema:
        return self._table.schema
