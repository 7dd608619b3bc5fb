"""Logical plan nodes for SQL searches: immutable, and checked when built."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import PlanError
from ..query.tree import QUERY_TYPES, Query

JOIN_MODES = ("inner", "mark")


@dataclass(frozen=True)
class LogicalSearch:
    """Search ``table`` (seen in SQL as ``alias``) for ``tree``.

    ``prefilter`` is a SQL predicate over the table's columns that DataFusion evaluates
    first, giving the row ids the search may return (docs/design.md: "Prefilters"). ``k`` is the
    bounded top-k pushed down from ORDER BY score() DESC LIMIT/OFFSET (None: every match). ``join``
    is "inner" when the search's result stands in for the table (the fast path: only matching
    rows qualify), "mark" when it marks the table's rows where the MATCH stands (the general
    plan: each row's truth and score looked up by its ``_rowid``). ``total``: the statement
    reads the number of matches beside the pushed-down top k (``count(*) OVER ()``), which
    the result carries as a column. ``scored``: the statement reads the score (else every
    match may be found without scoring it, its ``_score`` NULL).
    """

    table: str
    alias: str
    tree: Query
    prefilter: str | None = None
    k: int | None = None
    join: str = "inner"
    managed: bool = True  # (False: a table of the session, searched by scanning)
    columns: tuple[str, ...] = ()  # the table's columns the statement reads
    total: bool = False
    scored: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.tree, QUERY_TYPES):
            raise PlanError(f"LogicalSearch.tree must be a query tree, got {self.tree!r}")
        if self.join not in JOIN_MODES:
            raise PlanError(f"LogicalSearch.join must be one of {JOIN_MODES}, got {self.join!r}")
        if self.k is not None and self.k < 0:
            raise PlanError(f"LogicalSearch.k must be >= 0 or None, got {self.k}")
        if self.join == "mark" and (self.prefilter or self.k is not None or self.columns):
            raise PlanError("a search marking rows finds every match of its table: no prefilter, k or columns")
        if self.total and (self.k is None or self.join != "inner"):
            raise PlanError("a search counting its matches beside a top k needs a k and stands in for its table")
        if not self.managed and self.prefilter:
            raise PlanError(f"{self.table} is not a managed table: it is searched by a plain scan, without prefilters")

    @property
    def carries_rows(self) -> bool:
        """Whether the search result holds the columns the statement reads (it stands in
        for its table), instead of marking the table's rows by ``_rowid``: the found rows
        are fetched by row id, page by page, at a cost proportional to their number, where
        reading them beside the table would scan it whole."""
        return self.join == "inner"

    def display(self) -> str:
        parts = [f"table={self.table}", f"alias={self.alias}", f"tree={self.tree!r}"]
        if self.prefilter:
            parts.append(f"prefilter=[{self.prefilter}]")
        parts.append(f"k={'all' if self.k is None else self.k}")
        if self.total:
            parts.append("total")
        if not self.scored:
            parts.append("unscored")
        if self.join != "inner":
            parts.append(f"join={self.join}")
        if not self.managed:
            parts.append("foreign")
        return "LogicalSearch: " + ", ".join(parts)


@dataclass(frozen=True)
class RelationSearch:
    """Search the rows a relation yields (a CTE, a derived table, a view, a table of the
    session) for ``tree`` over its ``columns``, inside DataFusion's plan: a window function
    over the whole relation, so the statistics are those of its rows (DESIGN §3.2)."""

    relation: str  # (as the statement names it: a view's name, a CTE's, a derived table's alias)
    tree: Query
    columns: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.tree, QUERY_TYPES):
            raise PlanError(f"RelationSearch.tree must be a query tree, got {self.tree!r}")

    def display(self) -> str:
        return f"RelationSearch: relation={self.relation}, columns={list(self.columns)}, tree={self.tree!r}"


@dataclass(frozen=True)
class SessionRows:
    """Every row of ``table``, a table of the session, with its scan position as
    ``_rowid``: what the general plan reads where a search of it marks rows (a search of
    such a table numbers its rows so: ``storage/sources/foreign.py``)."""

    table: str

    def display(self) -> str:
        return f"SessionRows: table={self.table}"
