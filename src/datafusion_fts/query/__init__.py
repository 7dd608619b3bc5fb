"""The query tree and the query-string language (DESIGN §2, §4)."""

from .parser import parse
from .tree import (
    Boolean,
    Boost,
    Match,
    MultiMatch,
    Phrase,
    Prefix,
    Query,
    children,
    columns,
    leaves,
    shape,
)

__all__ = [
    "Boolean",
    "Boost",
    "Match",
    "MultiMatch",
    "Phrase",
    "Prefix",
    "Query",
    "children",
    "columns",
    "leaves",
    "parse",
    "shape",
]
