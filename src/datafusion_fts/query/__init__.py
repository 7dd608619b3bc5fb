"""The query tree and the query-string language (docs/design.md: "The query tree and the query
string")."""

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
