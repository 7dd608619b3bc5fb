"""HybridResidualSearch: an index that covers all but an append-only tail (docs/design.md: "The
operators").

The tail (committed rows no segment holds yet; fresh rows have in-memory segments of their
own) is read once and tokenized once into in-memory segments per column, cached per tail
version, and searched together with the persisted
segments as one more ranked part: statistics, vocabulary and scores are those of the
whole table (§5.1), not an approximation from two differently-weighted arms, and each
part's top-k merges under the total order (§5.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import pyarrow as pa

from ..storage.snapshot import TableSnapshot
from .base import ExecutionPlan


@dataclass(frozen=True)
class TailInfo:
    """What the plan did to the tail (the inclusive row-id ranges no segment holds), for
    EXPLAIN."""

    ranges: tuple[tuple[int, int], ...]
    build_ms: float
    cached: bool
    terms_only: bool = False  # postings of the query's terms only (no tail cache)
    # A table indexed in place: the source files whose rows the tail holds (new or changed
    # since the index was built), what the tail is made of for the user.
    files: tuple[str, ...] = ()

    @property
    def rows(self) -> int:
        return sum(hi - lo + 1 for lo, hi in self.ranges)

    def display(self) -> str:
        ranges = ", ".join(f"{lo}..{hi}" for lo, hi in self.ranges) or "none"
        return f"{ranges}; files not indexed: {', '.join(self.files)}" if self.files else ranges


def tail_rows(table: TableSnapshot, column: str) -> int:
    """Rows of ``table`` that no segment of ``column`` holds."""
    return sum(hi - lo + 1 for lo, hi in table.uncovered(column))


class HybridResidualSearch(ExecutionPlan):
    """Persisted segments plus an in-memory index of the unindexed tail."""

    ordered_distinct = True
    CHOSEN_BECAUSE = "the index covers all but a short unindexed tail"

    def __init__(self, child: ExecutionPlan, tails: dict[str, TailInfo]) -> None:
        super().__init__()
        self.child = child
        self.tails = tails

    @staticmethod
    def unmet(
        table: Any, columns: tuple[str, ...], phrase_columns: frozenset[str] = frozenset(),
        residual_row_limit: int = 0,
    ) -> list[str]:
        """Needs a managed table whose query columns are indexed (with positions for
        phrases) up to a tail of at most ``fts.residual_row_limit`` rows."""
        if not table.managed:
            return [f"{table.name} is not a managed table"]
        if not columns:
            return ["the query reads no column"]
        out = []
        for column in columns:
            index = table.index(column)
            if index is None:
                out.append(f"{column}: no index to extend with a tail")
            elif column in phrase_columns and not index.positions:
                out.append(f"{column}: phrase query but the index has no positions")
        if out:
            return out
        rows = max(tail_rows(table, c) for c in columns)
        if rows > residual_row_limit:
            out.append(f"unindexed tail of {rows} rows exceeds fts.residual_row_limit = {residual_row_limit}")
        return out

    def children(self) -> list[ExecutionPlan]:
        return [self.child]

    def display(self) -> str:
        tails = ", ".join(f"{c}[rows {t.display()}]" for c, t in self.tails.items())
        return f"HybridResidualSearch: tail={tails}"

    def execute(self) -> Iterator[pa.RecordBatch]:
        with self.metrics.timer():
            batches = list(self.child.execute())
        for t in self.tails.values():
            self.metrics.add("tail_rows", t.rows)
            self.metrics.add("tail_cache_hits" if t.cached else "tail_build_ms", 1 if t.cached else t.build_ms)
        yield from batches
