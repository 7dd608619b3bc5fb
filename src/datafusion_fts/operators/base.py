"""The operator shape of DataFusion's ``ExecutionPlan``: a schema, children, ``execute()``
streaming record batches, a one-line ``display()`` for EXPLAIN, and metrics."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import pyarrow as pa

from ..storage.parquet.parquet_values import numeric_array

SEARCH_SCHEMA = pa.schema([pa.field("_rowid", pa.int64(), False), pa.field("_score", pa.float64(), False)])


@dataclass
class Metrics:
    """Counters an operator fills while it runs (shown by EXPLAIN ANALYZE and benchmarks)."""

    values: dict[str, int | float] = field(default_factory=dict)

    def add(self, name: str, amount: int | float) -> None:
        self.values[name] = self.values.get(name, 0) + amount

    @contextmanager
    def timer(self, name: str = "elapsed_ms") -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, (time.perf_counter() - start) * 1e3)


class ExecutionPlan(ABC):
    """A physical search operator."""

    schema: pa.Schema = SEARCH_SCHEMA
    # A plan property, as DataFusion's output ordering: the output is already in the total
    # order of docs/design.md: "Order, top-k and paging" (in row-id order, where a plan of
    # every match asks for it: ordering.ordered) with distinct row ids (lets a merge of one
    # input pass it through).
    ordered_distinct: bool = False

    def __init__(self) -> None:
        self.metrics = Metrics()

    def children(self) -> list["ExecutionPlan"]:
        return []

    @abstractmethod
    def execute(self) -> Iterator[pa.RecordBatch]:
        """Stream ``(_rowid, _score)`` batches in the total order of docs/design.md: "Order, top-k
        and paging" (or in row-id order: see ``ordered_distinct``)."""

    @abstractmethod
    def display(self) -> str:
        """One line for EXPLAIN."""

    def tree(self, indent: int = 0) -> str:
        lines = ["  " * indent + self.display()]
        for child in self.children():
            lines.append(child.tree(indent + 1))
        return "\n".join(lines)


_NO_ROWS = pa.RecordBatch.from_arrays(
    [pa.array([], pa.int64()), pa.array([], pa.float64())], schema=SEARCH_SCHEMA
)
_NO_ROWS_TABLE = pa.Table.from_batches([_NO_ROWS])


def search_batch(rows: np.ndarray, scores: np.ndarray) -> pa.RecordBatch:
    """``(_rowid, _score)`` as a batch; no rows make one shared empty batch (batches are
    immutable, and making one costs a query that finds nothing a sixth of its time)."""
    if not len(rows):
        return _NO_ROWS
    return pa.RecordBatch.from_arrays(_search_columns(rows, scores), schema=SEARCH_SCHEMA)


def search_table(rows: np.ndarray, scores: np.ndarray) -> pa.Table:
    """``(_rowid, _score)`` as a table (as :func:`search_batch`, for a search's result)."""
    if not len(rows):
        return _NO_ROWS_TABLE
    return pa.Table.from_arrays(_search_columns(rows, scores), schema=SEARCH_SCHEMA)


def _search_columns(rows: np.ndarray, scores: np.ndarray) -> list[pa.Array]:
    return [numeric_array(rows), numeric_array(scores, np.float64)]
