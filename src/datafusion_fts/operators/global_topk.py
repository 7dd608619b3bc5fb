"""GlobalTopK: merge the ordered outputs of several search operators (docs/design.md: "Order, top-k
and paging"; "Segment sets and ranked parts").

A row id reported by more than one child keeps its first score (children are given in
ranking precedence); the merged rows are ordered by the total order and rows
[offset, offset + k) are kept, so paging over any split of the data is exact.
"""

from __future__ import annotations

import time
from typing import Iterator

import numpy as np
import pyarrow as pa

from .base import ExecutionPlan, search_batch
from .ordering import ordered, shown_k


class GlobalTopK(ExecutionPlan):
    def __init__(self, inputs: list[ExecutionPlan], k: int | None, offset: int = 0, by_score: bool = True) -> None:
        super().__init__()
        self.inputs = inputs
        self.k = k
        self.offset = offset
        self.by_score = by_score  # (False, with k all: in row-id order, see ordering.ordered)

    def children(self) -> list[ExecutionPlan]:
        return list(self.inputs)

    def display(self) -> str:
        limit = shown_k(self.k, self.by_score)
        return f"GlobalTopK: k={limit}, offset={self.offset}, inputs={len(self.inputs)}"

    def execute(self) -> Iterator[pa.RecordBatch]:
        if len(self.inputs) == 1 and self.inputs[0].ordered_distinct:
            # Already distinct and in order: only the offset and k remain.
            start = time.perf_counter()
            batches = list(self.inputs[0].execute())
            if len(batches) == 1:
                batch = batches[0]
                if self.offset or (self.k is not None and batch.num_rows > self.k):
                    batch = batch.slice(self.offset, self.k)
                out = [batch]
                rows_out = batch.num_rows
            else:
                table = pa.Table.from_batches(batches, schema=self.schema).slice(self.offset, self.k)
                out = table.to_batches()
                rows_out = table.num_rows
            self.metrics.add("rows_out", rows_out)
            self.metrics.add("elapsed_ms", (time.perf_counter() - start) * 1e3)
            yield from out
            return
        with self.metrics.timer():
            rows_parts, score_parts = [], []
            for child in self.inputs:
                for batch in child.execute():
                    rows_parts.append(batch.column(0).to_numpy())
                    score_parts.append(batch.column(1).to_numpy())
            rows = np.concatenate(rows_parts) if rows_parts else np.zeros(0, np.int64)
            scores = np.concatenate(score_parts) if score_parts else np.zeros(0, np.float64)
            # Keep each row id's first occurrence (np.unique returns first indices).
            _, first = np.unique(rows, return_index=True)
            if len(first) != len(rows):
                first.sort()
                rows, scores = rows[first], scores[first]
            want = None if self.k is None else self.k + self.offset
            idx = ordered(rows, scores, want, self.by_score)[self.offset :]
            self.metrics.add("rows_in", len(rows))
            self.metrics.add("rows_out", len(idx))
        yield search_batch(rows[idx], scores[idx])
