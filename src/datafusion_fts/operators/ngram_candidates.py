"""NgramCandidates: the rows of a table that may match the user's LIKE, ILIKE, regular
expressions, strpos, starts_with and ends_with over a column with an n-gram index
(docs/design.md: "Substring search").

A row is a candidate when its folded text holds every trigram its requirement asks
(query/substring.py; a string's trigrams, AND over :class:`AllOf`, OR over
:class:`AnyOf`), read from the index's segments (persisted and fresh, deleted rows
left out), or when no segment holds it yet (the unindexed tail: it is kept, not read).
The candidates are a superset of the matching rows; DataFusion then evaluates the
user's predicate on them, so the answer is its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Iterator

import numpy as np
import pyarrow as pa

from ..index.segment_set import SegmentSet
from ..query.substring import AllOf, AnyOf
from .base import ExecutionPlan

CANDIDATES_SCHEMA = pa.schema([pa.field("_rowid", pa.int64(), False)])

# A requirement with each string cut into its distinct trigrams: a tuple of grams (all
# held), AllOf / AnyOf of such, None (nothing asked).
Grams = tuple[str, ...] | AllOf | AnyOf | None


class NgramCandidates(ExecutionPlan):
    """Candidate row ids of ``column`` for ``grams``, ascending, in one batch."""

    schema = CANDIDATES_SCHEMA
    ordered_distinct = True

    def __init__(self, table: str, column: str, grams: Grams, segments: SegmentSet, tail: np.ndarray,
                 shown: str) -> None:
        super().__init__()
        self.table = table
        self.column = column
        self.grams = grams
        self.segments = segments
        self.tail = tail  # (live rows no segment holds, ascending: candidates all)
        self.shown = shown  # (the predicates, for EXPLAIN)

    def display(self) -> str:
        return (f"NgramCandidates: table={self.table}, column={self.column}, grams={gram_text(self.grams)}, "
                f"tail_rows={len(self.tail)}, predicates=[{self.shown}]")

    def execute(self) -> Iterator[pa.RecordBatch]:
        with self.metrics.timer():
            found = rows_holding(self.grams, self.segments.rows_of, None)
            if found is None:
                raise AssertionError("an n-gram plan asks for some gram")  # (the rule checks it: see plan_substring)
            rows = np.union1d(found, self.tail) if len(self.tail) else found
            self.metrics.add("candidates", len(rows))
        yield pa.RecordBatch.from_arrays([pa.array(rows, pa.int64())], schema=CANDIDATES_SCHEMA)


def rows_holding(grams: Grams, rows_of: Callable[[str, np.ndarray | None], np.ndarray],
                 within: np.ndarray | None) -> np.ndarray | None:
    """The rows (of ``within`` when given) holding what ``grams`` asks; None: any row."""
    if grams is None:
        return within
    if isinstance(grams, AnyOf):
        parts = [rows_holding(g, rows_of, within) for g in grams.parts]
        if any(p is None for p in parts):
            return within
        return np.unique(np.concatenate(parts))
    # (each part read only at the rows the ones before left)
    for part in grams.parts if isinstance(grams, AllOf) else grams:
        within = rows_of(part, within) if isinstance(part, str) else rows_holding(part, rows_of, within)
        if within is not None and not len(within):
            break
    return within


def gram_text(grams: Grams) -> str:
    if grams is None:
        return "any"
    if isinstance(grams, tuple):
        return "(" + " AND ".join(repr(g) for g in grams) + ")" if len(grams) > 1 else repr(grams[0])
    joiner = " AND " if isinstance(grams, AllOf) else " OR "
    return "(" + joiner.join(gram_text(p) for p in grams.parts) + ")"
