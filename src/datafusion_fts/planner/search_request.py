"""The request a search is planned from: what was asked, then each planner rule's
decisions (docs/design.md: "The planner")."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Protocol, TypeVar

import datafusion
import numpy as np
import pyarrow as pa

from ..query.tree import Query
from ..storage.files.manifest import IndexMeta
from ..storage.sources.foreign import ForeignTable

T = TypeVar("T")


class SearchedTable(Protocol):
    """What the planner and the operators read of the table a search reads: a managed
    table's snapshot (``TableSnapshot``) and a table of the session (``ForeignTable``)
    both answer it, so a rule asks the table, not its class."""

    name: str

    @property
    def schema(self) -> pa.Schema: ...

    @property
    def sql_schema(self) -> pa.Schema:
        """The columns as SQL declares them (as results type them)."""

    def searched_columns(self) -> list[str]:
        """The columns a query string searches when it names none."""

    @property
    def managed(self) -> bool:
        """A database's table, whose rows indexes may cover (else every plan scans it)."""

    def index(self, column: str) -> IndexMeta | None:
        """The full-text index of ``column``, if any."""

    def derived(self, key: tuple, make: Callable[..., T], *args: Any) -> T:
        """``make(*args)``, computed once per version of the table under ``key``."""

    def describe_source(self) -> str | None:
        """For EXPLAIN, the files of a table indexed in place (None: another kind)."""

    def take(self, row_ids: np.ndarray, columns: list[str]) -> pa.Table:
        """The ``columns`` of rows ``row_ids``, in the order given."""


class SearchRequest(NamedTuple):
    """One search as the rules see it: what was asked, then each rule's decisions.

    Immutable, and a named tuple rather than a frozen dataclass: one is built, and
    evolved by every rule, for each search, and a frozen dataclass's per-field setattr
    costs several times more."""

    snapshot: SearchedTable
    query: Query
    k: int | None
    offset: int = 0
    include: np.ndarray | None = None
    force_plan: str = "auto"
    pruning: bool = True
    residual_row_limit: int = 100_000
    executor: str = "local"
    # With k None: whether the matches come in the total order (else in row-id order, for
    # a SQL statement that orders rows itself: operators/ordering.py ``ordered``).
    by_score: bool = True
    columns: tuple[str, ...] = ()
    phrase_columns: frozenset[str] = frozenset()
    choice: str = ""
    reasons: tuple[str, ...] = ()
    advice: str = ""


_FIELD_INDEX = {name: i for i, name in enumerate(SearchRequest._fields)}
# The fields the rules fill are the last ones (a memoized decision is appended as is).
DECIDED = 5
assert SearchRequest._fields[-DECIDED:] == ("columns", "phrase_columns", "choice", "reasons", "advice")


def evolve(req: SearchRequest, **changes: Any) -> SearchRequest:
    """``req`` with ``changes`` (``_replace`` without its pass over every field)."""
    values = list(req)
    for name, value in changes.items():
        values[_FIELD_INDEX[name]] = value
    return tuple.__new__(SearchRequest, values)


def session_table(ctx: datafusion.SessionContext, name: str) -> ForeignTable:
    """The table ``name`` of the session, which no database manages: searched by scanning
    it, its rows numbered by scan position."""
    return ForeignTable(ctx, name)


def described_source(req: SearchRequest) -> str | None:
    """What EXPLAIN says of the files a search of a table indexed in place reads (None:
    the search reads another kind of table)."""
    return req.snapshot.describe_source()
