"""Recognize the bound trees the document-at-a-time kernels answer: one column's terms
combined as a disjunction or a conjunction, with exclusions.

Those are the query shapes people type most (``alpha beta``, ``+alpha +beta``,
``+alpha -beta``, ``alpha -beta``, ``Match(operator="and")``), one such leaf beside
exclusions (``a b -c``), and a ``Boost`` demoting one term's rows that hold another.
Each is flattened into
*slots* (one per term, in the evaluator's canonical order) whose kind says how the term
takes part and whose multiplier is the clause boost, so that the kernels' one formula
(kernels/conjunction.pyx) adds exactly the numbers :mod:`..evaluate` adds, in the same
order. Any other tree returns None and goes to the general evaluator.
"""

from __future__ import annotations

import math
from itertools import chain
from typing import NamedTuple, Sequence

import numpy as np

from ...kernels.conjunction import EXCLUDED, OPTIONAL, REQUIRED
from ...query.bound import BoundBoolean, BoundBoost, BoundQuery, BoundTerms


class TermSlots(NamedTuple):
    """``terms[i]`` takes part as ``kinds[i]`` with score multiplier ``mults[i]``; a row's
    score is the sum over present REQUIRED/OPTIONAL slots, in order, times ``boost``.
    ``conjunctive``: at least one REQUIRED slot (otherwise a row needs any OPTIONAL one).
    ``prunable``: block bounds may prune (they bound scores only when they grow with them).
    (A named tuple, made with ``tuple.__new__``: it is built for every query.)"""

    column: str
    terms: tuple[str, ...]
    kinds: np.ndarray  # int64
    mults: np.ndarray  # float64
    boost: float
    conjunctive: bool
    prunable: bool  # every scored slot's m_t * boost > 0: scores grow with the bounds


def _single_term(node: BoundQuery, column: str) -> str | None:
    """The one term of a one-term leaf on ``column``."""
    if isinstance(node, BoundTerms) and node.column == column and len(node.groups) == 1 and len(node.groups[0]) == 1:
        return node.groups[0][0]
    return None


def _disjunctive(node: BoundTerms) -> bool:
    """The leaf matches rows holding any of its terms (require_all with one group too)."""
    return not node.require_all or len(node.groups) <= 1


def term_slots(node: BoundQuery) -> TermSlots | None:
    """The slots of ``node``, or None when it is not a shape the kernels answer."""
    if isinstance(node, BoundTerms):
        terms = tuple(chain.from_iterable(node.groups))
        if _disjunctive(node):
            return _leaf_slots(node.column, terms, OPTIONAL, node.boost, False)
        if len(terms) == len(node.groups) and () not in node.groups:  # one term per group
            return _leaf_slots(node.column, terms, REQUIRED, node.boost, True)
        return None
    if isinstance(node, BoundBoost):
        return _boost_slots(node)
    if not isinstance(node, BoundBoolean) or not (node.must or node.should):
        return None
    if len(node.must) + len(node.should) == 1:
        slots = _one_clause_slots(node)
        if slots is not None:
            return slots
    first = (node.must or node.should)[0]
    if not isinstance(first, BoundTerms):
        return None
    column = first.column
    terms: list[str] = []
    kinds: list[int] = []
    mults: list[float] = []
    for kind, clauses in ((REQUIRED, node.must), (OPTIONAL, node.should)):
        for clause in clauses:
            term = _single_term(clause, column)
            if term is None:
                return None
            assert isinstance(clause, BoundTerms)
            terms.append(term)
            kinds.append(kind)
            mults.append(clause.boost)
    excluded = _excluded_terms(node, column)
    if excluded is None:
        return None
    terms += excluded
    kinds += [EXCLUDED] * len(excluded)
    mults += [1.0] * len(excluded)
    return _slots(column, tuple(terms), kinds, mults, 1.0, bool(node.must))


def _excluded_terms(node: BoundBoolean, column: str) -> list[str] | None:
    """The terms of ``node``'s MUST_NOT clauses, if each is a disjunctive leaf on ``column``."""
    terms: list[str] = []
    for clause in node.must_not:
        if not (isinstance(clause, BoundTerms) and clause.column == column and _disjunctive(clause)):
            return None
        terms.extend(clause.terms())
    return terms


def _one_clause_slots(node: BoundBoolean) -> TermSlots | None:
    """A Boolean whose one MUST or SHOULD clause is a leaf the kernels answer (``a b``, ``+a
    +b``), beside exclusions: the leaf's slots, then an EXCLUDED slot per excluded term.
    The Boolean scores ``0.0 + x`` for the leaf's ``x``, which is ``x`` exactly unless ``x``
    is -0.0; a leaf boost without a sign bit never makes one (term scores are positive).
    So ``+a`` and ``+a -b`` reach the pruned disjunction as ``a`` and ``a -b`` do."""
    (clause,) = node.must + node.should
    if not isinstance(clause, BoundTerms) or math.copysign(1.0, clause.boost) < 0:
        return None
    leaf = term_slots(clause)
    excluded = _excluded_terms(node, clause.column)
    if leaf is None or excluded is None:
        return None
    if not excluded:
        return leaf
    kinds = leaf.kinds.tolist() + [EXCLUDED] * len(excluded)
    terms = leaf.terms + tuple(excluded)
    return _slots(clause.column, terms, kinds, [1.0] * len(kinds), clause.boost, leaf.conjunctive)


# The slot arrays of the common shapes (every multiplier 1.0), per (kinds, boost):
# queries repeat a few shapes, and making two small arrays costs more than the rest of
# this module. The kernels never write to them.
_SHARED: dict[tuple[tuple[int, ...], float], tuple[np.ndarray, np.ndarray, bool]] = {}
_SHARED_MAX = 256


def _boost_slots(node: BoundBoost) -> TermSlots | None:
    """A one-term positive (boost > 0) demoted where a one-term negative (boost 1) holds
    the row: the evaluator's ``s_p * b_p - nb * s_n`` is the kernels' ``(0.0 + s_p * b_p)
    + s_n * -nb`` exactly (0.0 + x == x for x >= +0.0; negating a product is exact), with
    the negative an OPTIONAL slot of multiplier ``-nb``. Other Boosts return None."""
    positive, negative = node.positive, node.negative
    if not (isinstance(positive, BoundTerms) and isinstance(negative, BoundTerms)):
        return None
    term_p = _single_term(positive, positive.column)
    term_n = _single_term(negative, positive.column)
    nb = node.negative_boost
    if term_p is None or term_n is None or not positive.boost > 0 or negative.boost != 1.0 or not math.isfinite(nb):
        return None
    return _slots(positive.column, (term_p, term_n), [REQUIRED, OPTIONAL], [positive.boost, -nb], 1.0, True)


def _slots(
    column: str, terms: tuple[str, ...], kinds: list[int], mults: list[float], boost: float, conjunctive: bool
) -> TermSlots:
    if mults.count(1.0) == len(mults):
        kinds_a, mults_a, prunable = _shared(tuple(kinds), boost)
    else:
        kinds_a, mults_a = np.array(kinds, dtype=np.int64), np.array(mults, dtype=np.float64)
        prunable = _prunable(kinds, mults, boost)
    return tuple.__new__(TermSlots, (column, terms, kinds_a, mults_a, boost, conjunctive, prunable))


def _leaf_slots(column: str, terms: tuple[str, ...], kind: int, boost: float, conjunctive: bool) -> TermSlots:
    """The slots of one leaf's terms, all of one kind (multiplier 1.0)."""
    kinds_a, mults_a, prunable = _shared((kind,) * len(terms), boost)
    return tuple.__new__(TermSlots, (column, terms, kinds_a, mults_a, boost, conjunctive, prunable))


def _shared(kinds: tuple[int, ...], boost: float) -> tuple[np.ndarray, np.ndarray, bool]:
    """The slot arrays of ``kinds``, every multiplier 1.0, shared (see ``_SHARED``)."""
    hit = _SHARED.get((kinds, boost))
    if hit is None:
        mults = [1.0] * len(kinds)
        hit = (np.array(kinds, dtype=np.int64), np.array(mults, dtype=np.float64), _prunable(kinds, mults, boost))
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.clear()
        _SHARED[(kinds, boost)] = hit
    return hit


def _prunable(kinds: Sequence[int], mults: Sequence[float], boost: float) -> bool:
    return all(m * boost > 0 for m, kind in zip(mults, kinds) if kind != EXCLUDED)
