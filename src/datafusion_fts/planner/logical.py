"""Logical plan nodes for SQL searches: immutable, and checked when built."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import PlanError
from ..query.tree import QUERY_TYPES, Query

JOIN_MODES = ("inner", "left")


@dataclass(frozen=True)
class LogicalSearch:
    """Search ``table`` (seen in SQL as ``alias``) for ``tree``.

    ``prefilter`` is a SQL predicate over the table's columns that DataFusion evaluates
    first, giving the row ids the search may return (docs/design.md: "Prefilters"). ``k`` is the
    bounded top-k pushed down from ORDER BY score() DESC LIMIT/OFFSET (None: every match). ``join``
    is "inner" when only matching rows qualify, "left" when a MATCH sits under OR beside relational
    predicates (non-matching rows then score 0).
    """

    table: str
    alias: str
    tree: Query
    prefilter: str | None = None
    k: int | None = None
    join: str = "inner"
    managed: bool = True
    columns: tuple[str, ...] = ()  # the table's columns the statement reads

    def __post_init__(self) -> None:
        if not isinstance(self.tree, QUERY_TYPES):
            raise PlanError(f"LogicalSearch.tree must be a query tree, got {self.tree!r}")
        if self.join not in JOIN_MODES:
            raise PlanError(f"LogicalSearch.join must be one of {JOIN_MODES}, got {self.join!r}")
        if self.k is not None and self.k < 0:
            raise PlanError(f"LogicalSearch.k must be >= 0 or None, got {self.k}")
        if not self.managed and (self.prefilter or self.join != "inner"):
            raise PlanError(
                f"{self.table} is not a managed table: it is searched by a plain scan, without "
                "prefilters or MATCH under OR; create it with db.create_table to get those"
            )

    @property
    def carries_rows(self) -> bool:
        """Whether the search result holds the columns the statement reads (every search
        of an inner join, and of a foreign table), instead of being joined back to the
        table by ``_rowid``: the found rows are fetched by row id, page by page, at a cost
        proportional to their number, where a join would scan the whole table."""
        return not self.managed or self.join == "inner"

    def display(self) -> str:
        parts = [f"table={self.table}", f"alias={self.alias}", f"tree={self.tree!r}"]
        if self.prefilter:
            parts.append(f"prefilter=[{self.prefilter}]")
        parts.append(f"k={'all' if self.k is None else self.k}")
        if self.join != "inner":
            parts.append(f"join={self.join}")
        if not self.managed:
            parts.append("foreign")
        return "LogicalSearch: " + ", ".join(parts)
