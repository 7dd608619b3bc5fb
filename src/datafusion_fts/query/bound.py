"""The bound query: the tree after analysis and expansion, ready to evaluate.

Binding turns text into terms through each column's analyzer and expands fuzzy and
prefix leaves over the column's live vocabulary. What remains is plain data, the same for
every plan, so every plan scores the same terms in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Iterator, Union

import numpy as np


@dataclass(frozen=True)
class BoundTerms:
    """Match / Prefix / fuzzy Match: ``groups`` of terms, each group one query term.

    A row matches a group if it has any of its terms; it matches the leaf if it matches
    any group (``require_all`` False) or every group (True). Its score is the sum of the
    present terms' scores in group order, times ``boost``.
    """

    column: str
    groups: tuple[tuple[str, ...], ...]
    require_all: bool
    boost: float

    def terms(self) -> Iterator[str]:
        return chain.from_iterable(self.groups)


@dataclass(frozen=True)
class BoundPhrase:
    """A phrase's terms (``in_order``: ordered within ``slop``; else Lucene's sloppy
    phrase; with ``slop`` 0 bound as in order, the exact phrase).

    A phrase prefix has ``expansions`` (a tuple, maybe empty): it stands for one phrase
    per expansion, ``terms`` then that expansion, each scored as its own phrase; the
    score is the sum of the matching ones in expansion order, times ``boost``.

    ``offsets`` are the terms' places in the phrase when the text leaves a gap between
    them (two runs of grams are one position apart, as the tokenizer indexes them); None
    when they follow each other (0, 1, 2, ...). An expansion comes right after the terms.
    """

    column: str
    terms: tuple[str, ...]
    slop: int
    boost: float
    in_order: bool = True
    expansions: tuple[str, ...] | None = None
    offsets: tuple[int, ...] | None = None

    def places(self, n: int) -> np.ndarray:
        """The offsets of a phrase of :meth:`phrases` with ``n`` terms."""
        if self.offsets is None:
            return np.arange(n, dtype=np.int64)
        return np.array((self.offsets + (self.offsets[-1] + 1,))[:n], dtype=np.int64)

    def phrases(self) -> tuple[tuple[str, ...], ...]:
        """The concrete phrases, in scoring order."""
        if self.expansions is None:
            return (self.terms,)
        return tuple(self.terms + (e,) for e in self.expansions)

    def all_terms(self) -> tuple[str, ...]:
        """Every term the leaf reads (fixed terms, then expansions)."""
        return self.terms if self.expansions is None else self.terms + self.expansions


@dataclass(frozen=True)
class BoundBoolean:
    must: tuple["BoundQuery", ...]
    should: tuple["BoundQuery", ...]
    must_not: tuple["BoundQuery", ...]


@dataclass(frozen=True)
class BoundBoost:
    positive: "BoundQuery"
    negative: "BoundQuery"
    negative_boost: float


BoundQuery = Union[BoundTerms, BoundPhrase, BoundBoolean, BoundBoost]


def bound_leaves(node: BoundQuery) -> tuple[BoundTerms | BoundPhrase, ...]:
    """The leaves, depth first (a tuple, as :func:`..query.tree.leaves`)."""
    if isinstance(node, (BoundTerms, BoundPhrase)):
        return (node,)
    if isinstance(node, BoundBoolean):
        children = node.must + node.should + node.must_not
    else:
        children = (node.positive, node.negative)
    return tuple(leaf for child in children for leaf in bound_leaves(child))


def query_terms(node: BoundQuery) -> dict[str, list[str]]:
    """Every (column, term) the query reads, distinct, in first-use order."""
    if isinstance(node, BoundTerms):  # the common tree: one leaf (a third of the cost)
        return {node.column: list(dict.fromkeys(chain.from_iterable(node.groups)))}
    out: dict[str, dict[str, None]] = {}
    for leaf in bound_leaves(node):
        seen = out.setdefault(leaf.column, {})
        for term in leaf.terms() if isinstance(leaf, BoundTerms) else leaf.all_terms():
            seen.setdefault(term, None)
    return {column: list(terms) for column, terms in out.items()}
