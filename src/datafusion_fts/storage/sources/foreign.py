"""Tables registered on the DataFusion session by other means (a Parquet listing table,
a DataFrame): searched by scanning, rows identified by scan position.

Partitions are read one after another in partition order, which is what a
single-partition scan of the same source yields, so positions (and with them the order
of tied scores) are the same on every run over unchanged data.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterator, TypeVar

import datafusion
import numpy as np
import pyarrow as pa

from ..files.manifest import ROWID, text_columns

T = TypeVar("T")


def _plain(field: pa.Field) -> pa.Field:
    if pa.types.is_string_view(field.type):
        return field.with_type(pa.large_string())
    if pa.types.is_binary_view(field.type):
        return field.with_type(pa.large_binary())
    return field


class ForeignTable:
    """A table of the session, as a search reads it (the planner's ``SearchedTable``, as a
    managed table's snapshot is): no index covers its rows, so every plan scans it."""

    managed = False

    def __init__(self, ctx: datafusion.SessionContext, name: str) -> None:
        self.ctx = ctx
        self.name = name
        # View types (DataFusion reads Parquet text as string_view) become plain ones to be
        # searched; the rows a search returns have the session's own types again.
        self.sql_schema: pa.Schema = ctx.table(name).schema()
        self.schema: pa.Schema = pa.schema([_plain(f) for f in self.sql_schema])
        self._memo: dict[tuple, Any] = {}

    def index(self, column: str) -> None:
        """No index: a table of the session is searched by scanning it."""
        return None

    def searched_columns(self) -> list[str]:
        """The columns a query string searches by default: the text ones (no index)."""
        return text_columns(self.schema)

    def describe_source(self) -> None:
        """No files indexed in place to describe (EXPLAIN)."""
        return None

    def derived(self, key: tuple, make: Callable[..., T], *args: Any) -> T:
        """``make(*args)``, once per this table as one statement reads it."""
        if key not in self._memo:
            self._memo[key] = make(*args)
        return self._memo[key]

    def scan(self, columns: list[str]) -> Iterator[pa.RecordBatch]:
        """Batches of ``_rowid`` (scan position) plus ``columns``."""
        df = self.ctx.table(self.name).select(*[f'"{c}"' for c in columns]) if columns else self.ctx.table(self.name)
        position = 0
        for stream in df.execute_stream_partitioned():
            for batch in stream:
                rb = batch.to_pyarrow()
                ids = pa.array(np.arange(position, position + rb.num_rows, dtype=np.int64))
                position += rb.num_rows
                cols = [c.cast(_plain(f).type) for c, f in zip(rb.columns, rb.schema)]
                yield pa.RecordBatch.from_arrays([ids, *cols], names=[ROWID, *rb.schema.names])

    def rows(self) -> pa.Table:
        """Every row, ``_rowid`` (its scan position) first, the columns of the types the
        session gives them."""
        schema = pa.schema([pa.field(ROWID, pa.int64()), *[f.with_nullable(True) for f in self.schema]])
        table = pa.Table.from_batches([b.cast(schema) for b in self.scan(self.schema.names)], schema=schema)
        return table.cast(pa.schema([schema.field(0), *self.sql_schema]))

    def count(self) -> int:
        return self.ctx.table(self.name).count()

    def fetch_units(self, row_ids: np.ndarray, columns: list[str]) -> dict[str, Counter[str]]:
        """Per column, what :meth:`take` reads, for EXPLAIN ANALYZE: the whole table, whose
        rows have no ids to be read by (a scan, in order)."""
        scanned = self.count()
        return {c: Counter({"rows of a scan of the table": scanned}) for c in columns if c != ROWID}

    def take(self, positions: np.ndarray, columns: list[str]) -> pa.Table:
        """The ``columns`` of the rows at ``positions`` (any order), in the order given,
        of the types the session gives them (as a snapshot's ``take``)."""
        return self.take_scored(positions, np.zeros(len(positions))).select(columns)

    def take_scored(self, positions: np.ndarray, scores: np.ndarray) -> pa.Table:
        """Every column of the rows at ``positions`` (any order), with ``_rowid`` and
        ``_score``, in the order given; the columns of the types the session gives them."""
        order = np.argsort(positions, kind="stable")
        wanted = positions[order]
        parts = []
        for batch in self.scan(self.schema.names):
            ids = batch.column(0).to_numpy()
            lo, hi = np.searchsorted(wanted, [ids[0], ids[-1] + 1]) if len(ids) else (0, 0)
            if lo < hi:
                parts.append(batch.take(pa.array(wanted[lo:hi] - ids[0])))
        # Scanned batches may declare fields nullable where the table's schema does not.
        schema = pa.schema([pa.field(ROWID, pa.int64()), *[f.with_nullable(True) for f in self.schema]])
        table = pa.Table.from_batches([p.cast(schema) for p in parts], schema=schema) if parts else schema.empty_table()
        inverse = np.empty(len(order), dtype=np.int64)
        inverse[order] = np.arange(len(order))
        table = table.take(pa.array(inverse)).cast(pa.schema([schema.field(0), *self.sql_schema]))
        return table.append_column("_score", pa.array(scores, pa.float64()))


class HeldRows(ForeignTable):
    """Rows held in memory, searched as a table of the session is: those a relation of a
    statement yields (a CTE, a derived table, a view), handed to its search whole."""

    def __init__(self, name: str, rows: pa.Table) -> None:
        self.name = name
        self.sql_schema = rows.schema
        self.schema = pa.schema([_plain(f) for f in rows.schema])
        self._rows = rows
        self._memo = {}

    def count(self) -> int:
        return self._rows.num_rows

    def scan(self, columns: list[str]) -> Iterator[pa.RecordBatch]:
        position = 0
        for batch in self._rows.select(columns).to_batches():
            ids = pa.array(np.arange(position, position + batch.num_rows, dtype=np.int64))
            position += batch.num_rows
            yield pa.RecordBatch.from_arrays([ids, *batch.columns], names=[ROWID, *batch.schema.names])
