"""The query tree (docs/design.md: "The query tree and the query string"; "Compound queries"):
immutable nodes that check themselves when built.

SQL, the query string and the Python builder all produce these nodes, so a query means
the same thing whichever way it was written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Union

from ..errors import InvalidArgument
from ..settings import INT64_MAX

# A phrase's positions are 32-bit: no slop needs more.
MAX_SLOP = (1 << 31) - 1

OPERATORS = ("or", "and")
# The most terms a fuzzy or prefix leaf expands to by default (Lucene's and Elasticsearch's 50).
MAX_EXPANSIONS = 50
# The deepest a tree may nest (a query string's groups may nest as deep): every pass over a
# tree recurses, and 300 levels raised a RecursionError (issue 34).
MAX_DEPTH = 100


def _nested(node: object, children: tuple["Query", ...]) -> int:
    """The depth of a compound node over ``children``, refused past :data:`MAX_DEPTH`."""
    depth = 1 + max((getattr(c, "depth", 1) for c in children), default=0)
    if depth > MAX_DEPTH:
        raise InvalidArgument(f"the query tree nests deeper than {MAX_DEPTH} levels ({type(node).__name__} "
                              "inside Boolean or Boost nodes)")
    return depth


def _check_boost(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidArgument(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _check_column(column: object) -> None:
    if column is not None and (not isinstance(column, str) or not column):
        raise InvalidArgument(f"column must be a non-empty string, got {column!r}")


def _check_text(text: object) -> None:
    if not isinstance(text, str):
        raise InvalidArgument(f"query text must be a string, got {text!r}")


def _check_language(language: object) -> None:
    """(Whether the column's analyzer has the language is checked when the query is bound.)"""
    if language is not None and (not isinstance(language, str) or not language.strip()):
        raise InvalidArgument(f"language must be a language name or None, got {language!r}")


def _check_count(name: str, value: object, minimum: int, maximum: int = INT64_MAX) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise InvalidArgument(f"{name} must be an integer from {minimum} to {maximum}, got {value!r}")


class _Leaf:
    """The repr a dataclass has, but ``language`` only when set: trees without one print
    as before it existed (EXPLAIN shows them)."""

    language: str | None

    def __repr__(self) -> str:
        shown = (f for f in fields(self) if f.name != "language" or self.language is not None)  # type: ignore[arg-type]
        return f"{type(self).__name__}({', '.join(f'{f.name}={getattr(self, f.name)!r}' for f in shown)})"


@dataclass(frozen=True, repr=False)
class Match(_Leaf):
    """Terms of ``text`` (through the column's analyzer) in ``column``.

    ``operator="or"`` matches rows with any term, ``"and"`` rows with every term; the score
    is the sum of the term scores times ``boost``. ``fuzziness`` > 0 expands each term to
    vocabulary terms within that Levenshtein distance (the first ``prefix_length``
    characters fixed), at most ``max_expansions`` of them, each scored as its own term.
    ``language`` (a column analyzed per row's language) analyzes the text in that language
    only; without it, in each of the column's languages (docs/design.md: "Analysis").
    """

    column: str | None
    text: str
    operator: str = "or"
    boost: float = 1.0
    fuzziness: int = 0
    prefix_length: int = 0
    max_expansions: int = MAX_EXPANSIONS
    language: str | None = None

    def __post_init__(self) -> None:
        _check_column(self.column)
        _check_text(self.text)
        _check_language(self.language)
        if self.operator not in OPERATORS:
            raise InvalidArgument(f"operator must be one of {OPERATORS}, got {self.operator!r}")
        object.__setattr__(self, "boost", _check_boost("boost", self.boost))
        _check_count("fuzziness", self.fuzziness, 0)
        if self.fuzziness > 2:
            raise InvalidArgument(f"fuzziness must be 0, 1 or 2, got {self.fuzziness}")
        _check_count("prefix_length", self.prefix_length, 0)
        _check_count("max_expansions", self.max_expansions, 1)


@dataclass(frozen=True)
class Prefix:
    """Vocabulary terms of ``column`` starting with ``prefix`` (``alph*``), each scored as a term.

    The prefix is lowercased (and folded) like the column's tokens, but not stemmed. At most
    ``max_expansions`` terms, the smallest first.
    """

    column: str | None
    prefix: str
    boost: float = 1.0
    max_expansions: int = MAX_EXPANSIONS

    def __post_init__(self) -> None:
        _check_column(self.column)
        _check_text(self.prefix)
        object.__setattr__(self, "boost", _check_boost("boost", self.boost))
        _check_count("max_expansions", self.max_expansions, 1)


@dataclass(frozen=True, repr=False)
class Phrase(_Leaf):
    """The terms of ``text`` at consecutive positions, or within ``slop`` moves of them
    (docs/design.md: "Compound queries").

    As in Lucene, a sloppy phrase's terms may come in any order: a match is one position
    per term whose offsets from the phrase's own (position minus place in the phrase)
    differ by at most ``slop``, so ``"a b"~1`` allows one word between them and ``"a b"~2``
    also matches ``b a`` (a transposition costs 2). A term repeated in the phrase takes
    distinct positions. ``in_order=True`` keeps the terms in phrase order instead, at most
    ``slop`` extra positions between the first and the last; with ``slop=0`` both are the
    exact phrase.

    ``prefix=True`` makes the last word of ``text`` a prefix (``"big bad wo"*``): it
    expands, like :class:`Prefix`, to the smallest ``max_expansions`` vocabulary terms
    starting with it, and each expanded phrase is scored as its own phrase.

    ``language`` as for :class:`Match`: without it, on a column analyzed per row's
    language, the phrase stands for one phrase per distinct analysis of ``text``, a row
    scored by the sum of those it matches.
    """

    column: str | None
    text: str
    slop: int = 0
    boost: float = 1.0
    in_order: bool = False
    prefix: bool = False
    max_expansions: int = MAX_EXPANSIONS
    language: str | None = None

    def __post_init__(self) -> None:
        _check_column(self.column)
        _check_text(self.text)
        _check_language(self.language)
        _check_count("slop", self.slop, 0, MAX_SLOP)
        object.__setattr__(self, "boost", _check_boost("boost", self.boost))
        for name in ("in_order", "prefix"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidArgument(f"{name} must be True or False, got {getattr(self, name)!r}")
        _check_count("max_expansions", self.max_expansions, 1)


@dataclass(frozen=True)
class MultiMatch:
    """``text`` matched in several columns: a SHOULD over one Match per column times its boost."""

    text: str
    columns: tuple[str, ...]
    boosts: tuple[float, ...] | None = None
    operator: str = "or"

    def __post_init__(self) -> None:
        _check_text(self.text)
        columns = (self.columns,) if isinstance(self.columns, str) else tuple(self.columns)
        if not columns:
            raise InvalidArgument("MultiMatch needs at least one column")
        for column in columns:
            _check_column(column)
        if len(set(columns)) != len(columns):
            raise InvalidArgument(f"MultiMatch columns repeat: {columns}")
        object.__setattr__(self, "columns", columns)
        if self.boosts is not None:
            if isinstance(self.boosts, dict):
                boosts = tuple(self.boosts.get(c, 1.0) for c in columns)
            else:
                boosts = tuple(self.boosts)
            if len(boosts) != len(columns):
                raise InvalidArgument(
                    f"MultiMatch has {len(columns)} columns but {len(boosts)} boosts"
                )
            object.__setattr__(
                self, "boosts", tuple(_check_boost("boost", b) for b in boosts)
            )
        if self.operator not in OPERATORS:
            raise InvalidArgument(f"operator must be one of {OPERATORS}, got {self.operator!r}")

    def expand(self) -> "Boolean":
        """The equivalent Boolean SHOULD of per-column Match leaves (docs/design.md: "Compound
        queries")."""
        boosts = self.boosts or (1.0,) * len(self.columns)
        return Boolean(
            should=tuple(
                Match(c, self.text, operator=self.operator, boost=b)
                for c, b in zip(self.columns, boosts)
            )
        )


@dataclass(frozen=True)
class Boolean:
    """MUST scores sum; SHOULD scores add to surviving rows; MUST_NOT excludes (docs/design.md:
    "Compound queries").

    With no MUST, at least one SHOULD must match; with neither, every live row matches
    (score 0) except the MUST_NOT rows.
    """

    must: tuple["Query", ...] = field(default_factory=tuple)
    should: tuple["Query", ...] = field(default_factory=tuple)
    must_not: tuple["Query", ...] = field(default_factory=tuple)
    depth: int = field(init=False, repr=False, compare=False, default=1)

    def __post_init__(self) -> None:
        for name in ("must", "should", "must_not"):
            clauses = getattr(self, name)
            clauses = (clauses,) if isinstance(clauses, QUERY_TYPES) else tuple(clauses)
            for clause in clauses:
                if not isinstance(clause, QUERY_TYPES):
                    raise InvalidArgument(f"Boolean.{name} holds a non-query: {clause!r}")
            object.__setattr__(self, name, clauses)
        object.__setattr__(self, "depth", _nested(self, self.must + self.should + self.must_not))


@dataclass(frozen=True)
class Boost:
    """Rows of ``positive``; those also matching ``negative`` score pos − negative_boost × neg."""

    positive: "Query"
    negative: "Query"
    negative_boost: float = 0.5
    depth: int = field(init=False, repr=False, compare=False, default=1)

    def __post_init__(self) -> None:
        for name in ("positive", "negative"):
            if not isinstance(getattr(self, name), QUERY_TYPES):
                raise InvalidArgument(f"Boost.{name} must be a query, got {getattr(self, name)!r}")
        object.__setattr__(
            self, "negative_boost", _check_boost("negative_boost", self.negative_boost)
        )
        object.__setattr__(self, "depth", _nested(self, (self.positive, self.negative)))


Query = Union[Match, Prefix, Phrase, MultiMatch, Boolean, Boost]
QUERY_TYPES = (Match, Prefix, Phrase, MultiMatch, Boolean, Boost)
LEAF_TYPES = (Match, Prefix, Phrase)


def children(node: Query) -> tuple[Query, ...]:
    """The direct sub-queries of ``node`` in canonical (scoring) order."""
    if isinstance(node, Boolean):
        return node.must + node.should + node.must_not
    if isinstance(node, Boost):
        return (node.positive, node.negative)
    return ()


def leaves(node: Query) -> tuple[Match | Prefix | Phrase, ...]:
    """Every leaf of the tree (MultiMatch expanded), depth first. (A tuple, not a
    generator: every query asks, and most trees are one leaf.)"""
    if isinstance(node, LEAF_TYPES):
        return (node,)
    if isinstance(node, MultiMatch):
        return leaves(node.expand())
    return tuple(leaf for child in children(node) for leaf in leaves(child))


def columns(node: Query) -> list[str]:
    """The columns the tree reads, in first-use order."""
    seen: dict[str, None] = {}
    for leaf in leaves(node):
        if leaf.column is not None:
            seen.setdefault(leaf.column, None)
    return list(seen)


def shape(node: Query) -> tuple:
    """``node`` with its texts taken out: what a plan decided from the tree's structure
    and columns alone can be kept under (queries repeat a few shapes with new words).
    Boosts keep the sign of a zero (-0.0 == 0.0, but a score times -0.0 ranks lower)."""
    kind = type(node)
    if isinstance(node, Match):
        return (kind, node.column, node.operator, node.boost or str(node.boost), node.fuzziness,
                node.prefix_length, node.max_expansions, node.language)
    if isinstance(node, Boolean):
        return (kind, tuple(map(shape, node.must)), tuple(map(shape, node.should)), tuple(map(shape, node.must_not)))
    if isinstance(node, Boost):
        return (kind, shape(node.positive), shape(node.negative), node.negative_boost or str(node.negative_boost))
    if isinstance(node, Prefix):
        return (kind, node.column, node.boost or str(node.boost), node.max_expansions)
    if isinstance(node, Phrase):
        return (kind, node.column, node.slop, node.boost or str(node.boost), node.in_order, node.prefix,
                node.max_expansions, node.language)
    if isinstance(node, MultiMatch):
        boosts = node.boosts and tuple(b or str(b) for b in node.boosts)
        return (kind, node.columns, boosts, node.operator)
    raise InvalidArgument(f"not a query: {node!r}")
