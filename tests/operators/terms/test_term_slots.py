"""The kernels' slot arrays: shared between queries of the common shapes, never for
multipliers whose bits equality cannot tell apart (signed zeros, NaN)."""

from __future__ import annotations

import numpy as np

from datafusion_fts.kernels.conjunction import OPTIONAL, REQUIRED
from datafusion_fts.operators.terms.term_slots import term_slots
from datafusion_fts.query.bound import BoundBoolean, BoundTerms


def leaf(term: str, boost: float = 1.0) -> BoundTerms:
    return BoundTerms("body", ((term,),), False, boost)


def test_common_shapes_share_their_arrays():
    a = term_slots(BoundTerms("body", (("x",), ("y",)), True, 1.0))
    b = term_slots(BoundTerms("body", (("p",), ("q",)), True, 1.0))
    assert a.kinds is b.kinds and a.mults is b.mults
    assert a.kinds.tolist() == [REQUIRED, REQUIRED] and a.terms == ("x", "y") and b.terms == ("p", "q")


def test_clause_boosts_get_arrays_of_their_own_with_their_sign_bits():
    neg = term_slots(BoundBoolean((), (leaf("x", -0.0), leaf("y")), ()))
    pos = term_slots(BoundBoolean((), (leaf("x", 0.0), leaf("y")), ()))
    assert neg.mults is not pos.mults
    assert np.signbit(neg.mults).tolist() == [True, False] and np.signbit(pos.mults).tolist() == [False, False]
    assert neg.kinds.tolist() == [OPTIONAL, OPTIONAL] and not neg.prunable and not pos.prunable
    nan = term_slots(BoundBoolean((), (leaf("x", float("nan")), leaf("y")), ()))
    assert np.isnan(nan.mults[0]) and not nan.prunable


def test_prunable_follows_the_query_boost():
    assert term_slots(BoundTerms("body", (("x",),), False, 2.0)).prunable
    assert not term_slots(BoundTerms("body", (("x",),), False, -2.0)).prunable


def test_a_one_term_boost_is_a_required_and_a_demoting_optional_slot():
    from datafusion_fts.query.bound import BoundBoost

    slots = term_slots(BoundBoost(leaf("x", 2.0), leaf("y"), 0.5))
    assert slots.terms == ("x", "y") and slots.kinds.tolist() == [REQUIRED, OPTIONAL]
    assert slots.mults.tolist() == [2.0, -0.5] and slots.conjunctive and not slots.prunable
    # The evaluator answers what the one formula cannot reproduce bit for bit.
    assert term_slots(BoundBoost(leaf("x"), leaf("y", 2.0), 0.5)) is None  # negative boost
    assert term_slots(BoundBoost(leaf("x", -1.0), leaf("y"), 0.5)) is None  # 0.0 + (-0.0)
    assert term_slots(BoundBoost(leaf("x"), BoundTerms("body", (("y",), ("z",)), False, 1.0), 0.5)) is None
