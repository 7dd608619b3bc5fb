"""Simplify a query tree into one with the same rows and bit-identical scores (issue 17).

The query string, SQL lowering and the builder write Booleans that change nothing:
``+alpha`` is a one-clause MUST, ``MATCH(body, '+a +b') AND MATCH(body, 'c')`` nests one
Boolean in another, ``MATCH(body, 'a') AND NOT MATCH(body, 'b')`` has one MUST beside its
MUST_NOT. The term kernels (:mod:`..operators.term_slots`) recognize flat trees, so those
shapes ran the general evaluator or an unpruned kernel, up to 11x slower than the same
query written flat (bench_shapes.py, 1M rows). This rule rewrites the tree first, for every search (planned or
prepared, Python or SQL), and only where the result is exactly the same.

Why each rewrite is exact: a Boolean scores a row ``((0.0 + c1) + c2) + ...`` over its
MUST clauses then its present SHOULD clauses, left to right, and excludes its MUST_NOT
clauses' rows without reading their scores (:mod:`..operators.evaluate`, docs/design.md: "Compound
queries"). In IEEE 754 float64 arithmetic (round to nearest):

1. ``0.0 + x`` is ``x`` bit for bit unless ``x`` is ``-0.0`` (which becomes ``+0.0``; a NaN
   is returned as it is, its payload kept, as IEEE 754 §6.2.3 asks and x86-64 and AArch64 do).
2. A Boolean's score is never ``-0.0`` (``a + b`` is ``-0.0`` only if both are, and the sum
   starts at ``+0.0``), nor is a leaf's whose boost has no sign bit (BM25 term scores are
   positive). A Boost's score is ``-0.0`` only where its positive's is.
3. A clause score in a MUST or SHOULD list is added to a sum that is never ``-0.0`` (1 and 2),
   and ``a + (-0.0) == a + (+0.0)`` bit for bit when ``a`` is not ``-0.0``: there the sign of
   a zero clause score is never seen (under MUST_NOT no score is read at all). Only at the
   root and under a Boost is it.

The rewrites (children first):

- A Boolean with one scoring clause ``X`` (MUST or SHOULD) and no MUST_NOT is ``X`` (its
  score ``0.0 + x`` is ``x`` by 1 and 2, or the difference is unseen by 3); a leaf or Boost
  ``X`` whose ``-0.0`` would show keeps its Boolean. Beside MUST_NOT clauses, a Boolean ``X``
  takes them along (rows of ``X`` minus the union of both lists); a leaf keeps its Boolean,
  which the term kernels answer as they answer the leaf (:mod:`..operators.term_slots`).
- The first MUST clause, when it is a conjunction (a Boolean of MUST clauses only, or of
  one SHOULD), is spliced into the MUST list with its MUST_NOT clauses: the sum starts
  ``0.0 + (0.0 + a1 + a2) == 0.0 + a1 + a2`` (1 and 2), and intersecting the rows is associative.
  (Only the first: ``b + (0.0 + a1 + a2)`` is not ``b + a1 + a2`` in floating point.)
- With no MUST, the first SHOULD clause, when it is a disjunction (a Boolean of SHOULD
  clauses only, or a MultiMatch), is spliced into the SHOULD list: each row's sum over its
  present clauses starts the same way.
- A MUST_NOT clause that is a disjunction is replaced by its clauses: excluding a union is
  excluding each part.
- A MultiMatch of one column is the Match it expands to (docs/design.md: "Compound queries"), then
as above.

Nothing drops a leaf, so every column check and error, and the planner's choice, stay
those of the tree as written. A MultiMatch's boosts, a leaf's boost and a Boost's
negative_boost are never folded into another number: ``(a + b) * w`` is not
``a * w + b * w``, and ``pos - 0.0 * neg`` is not ``pos`` when ``neg`` is infinite.
"""

from __future__ import annotations

import math
from itertools import chain
from operator import is_

from ..query.tree import LEAF_TYPES, Boolean, Boost, MultiMatch, Query

_LEAVES = frozenset(LEAF_TYPES)


def simplify_query(query: Query) -> Query:
    """The simplest tree with ``query``'s rows and bit-identical scores (``query`` itself
    when no rewrite applies)."""
    return _simplify(query, True)


def _simplify(node: Query, signed: bool) -> Query:
    """``node`` simplified; ``signed``: whether the sign of a zero score of ``node`` can be
    seen (at the root and under a Boost), else it is added to a sum (rule 3)."""
    if type(node) in _LEAVES:  # (first, and by type: every search asks, most trees are leaves)
        return node
    if isinstance(node, Boolean):
        return _boolean(node, signed)
    if isinstance(node, Boost):
        positive, negative = _simplify(node.positive, True), _simplify(node.negative, True)
        if positive is node.positive and negative is node.negative:
            return node
        return Boost(positive, negative, node.negative_boost)
    if isinstance(node, MultiMatch) and len(node.columns) == 1:
        return _boolean(node.expand(), signed)
    return node


def _boolean(node: Boolean, signed: bool) -> Query:
    """``node`` with its clauses simplified, then the Boolean rewrites of the module."""
    must = _clauses(node.must)
    should = _clauses(node.should)
    must_not = _clauses(node.must_not)
    if not _LEAVES.issuperset(map(type, must_not)):
        excluded = tuple(chain.from_iterable(map(_excluded, must_not)))
        must_not = must_not if _same(excluded, must_not) else excluded
    if len(must) + len(should) == 1:
        (clause,) = must + should
        inner = clause.expand() if isinstance(clause, MultiMatch) else clause
        if isinstance(inner, Boolean):
            return _new_boolean(inner.must, inner.should, inner.must_not + must_not) if must_not else inner
        if not must_not and not (signed and _may_score_negative_zero(clause)):
            return clause
    elif must:
        conjunction = _conjunction(must[0])
        if conjunction is not None:
            must = conjunction.must + conjunction.should + must[1:]
            must_not = conjunction.must_not + must_not
    elif should:
        disjunction = _disjunction(should[0])
        if disjunction is not None:
            should = disjunction.should + should[1:]
    if must is node.must and should is node.should and must_not is node.must_not:
        return node  # (unchanged: callers see by identity that no rewrite applied)
    return _new_boolean(must, should, must_not)


def _new_boolean(must: tuple[Query, ...], should: tuple[Query, ...], must_not: tuple[Query, ...]) -> Boolean:
    """A Boolean of clauses taken from checked nodes, built without re-checking them: its
    checks cost ~3 us, more than the rest of the rule on a small tree."""
    node = object.__new__(Boolean)
    setattr_ = object.__setattr__  # (frozen)
    setattr_(node, "must", must)
    setattr_(node, "should", should)
    setattr_(node, "must_not", must_not)
    return node


def _clauses(clauses: tuple[Query, ...]) -> tuple[Query, ...]:
    """The clauses simplified in a sum (or under MUST_NOT, where only rows count); the
    same tuple when none changed."""
    if _LEAVES.issuperset(map(type, clauses)):  # (the common case, tested in C)
        return clauses
    out = tuple([_simplify(c, False) for c in clauses])
    return clauses if _same(out, clauses) else out


def _same(a: tuple[Query, ...], b: tuple[Query, ...]) -> bool:
    return len(a) == len(b) and all(map(is_, a, b))


def _conjunction(node: Query) -> Boolean | None:
    """``node`` when its rows are those of every scoring clause but the MUST_NOT clauses',
    scored ``0.0 + c1 + c2 + ...``: a Boolean of MUST clauses only, or of one SHOULD."""
    if isinstance(node, Boolean) and (
        (node.must and not node.should) or (not node.must and len(node.should) == 1)
    ):
        return node
    return None


def _disjunction(node: Query) -> Boolean | None:
    """``node`` as a Boolean of SHOULD clauses only (a MultiMatch expanded), if it is one."""
    if isinstance(node, MultiMatch):
        return node.expand()
    if isinstance(node, Boolean) and node.should and not node.must and not node.must_not:
        return node
    return None


def _excluded(node: Query) -> tuple[Query, ...]:
    """The MUST_NOT clauses excluding the rows ``node`` (simplified) matches."""
    disjunction = _disjunction(node)
    if disjunction is None:
        return (node,)
    return tuple(chain.from_iterable(map(_excluded, disjunction.should)))


def _may_score_negative_zero(node: Query) -> bool:
    """Whether some row's score of ``node`` may be ``-0.0`` (rule 2). Leaves: a BM25 score
    is positive, so only a boost with a sign bit (negative, or ``-0.0``) makes one."""
    if isinstance(node, Boost):
        return _may_score_negative_zero(node.positive)
    return isinstance(node, LEAF_TYPES) and math.copysign(1.0, node.boost) < 0
