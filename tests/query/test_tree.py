"""The query tree's structural helpers."""

from __future__ import annotations

import pytest

from datafusion_fts.errors import InvalidArgument
from datafusion_fts.query import Boolean, Boost, Match, MultiMatch, Phrase, Prefix, shape


def test_a_shape_is_the_tree_without_its_texts():
    assert shape(Match("body", "alpha beta")) == shape(Match("body", "gamma"))
    tree = Boolean(must=(Match("body", "a"),), must_not=(Phrase("title", "b c"),))
    assert shape(tree) == shape(Boolean(must=(Match("body", "x y"),), must_not=(Phrase("title", "z"),)))
    assert shape(Boost(Prefix("body", "al"), Match("body", "b"))) == shape(Boost(Prefix("body", "be"), Match("body", "c")))
    assert shape(MultiMatch("a", ("body", "title"))) == shape(MultiMatch("b c", ("body", "title")))


@pytest.mark.parametrize(
    "other",
    [
        Match("title", "alpha"),
        Match("body", "alpha", operator="and"),
        Match("body", "alpha", boost=2.0),
        Match("body", "alpha", boost=-0.0),
        Match("body", "alpha", fuzziness=1),
        Match("body", "alpha", fuzziness=1, prefix_length=1),
        Match("body", "alpha", fuzziness=1, max_expansions=3),
        Phrase("body", "alpha"),
        Phrase("body", "alpha", in_order=True),
        Phrase("body", "alpha", prefix=True),
        Prefix("body", "alpha"),
        Boolean(must=(Match("body", "alpha"),)),
        Boolean(should=(Match("body", "alpha"),)),
        Boolean(must_not=(Match("body", "alpha"),)),
        MultiMatch("alpha", ("body",)),
    ],
)
def test_anything_but_the_text_changes_the_shape(other):
    assert shape(other) != shape(Match("body", "alpha"))


def test_a_zero_boost_keeps_its_sign():
    assert shape(Match("body", "a", boost=0.0)) != shape(Match("body", "a", boost=-0.0))
    assert shape(Boost(Match("body", "a"), Match("body", "b"), -0.0)) != shape(Boost(Match("body", "a"), Match("body", "b"), 0.0))
    assert shape(MultiMatch("a", ("body",), (0.0,))) != shape(MultiMatch("a", ("body",), (-0.0,)))
    assert shape(Phrase("body", "a", boost=-0.0)) != shape(Phrase("body", "a", boost=0.0))


def test_the_shape_of_a_non_query_is_an_error():
    with pytest.raises(InvalidArgument):
        shape("alpha")


def test_phrase_options_change_the_shape():
    base = Phrase("body", "a b", slop=2)
    assert shape(base) == shape(Phrase("body", "c d", slop=2))
    for other in (
        Phrase("body", "a b", slop=2, in_order=True),
        Phrase("body", "a b", slop=2, prefix=True),
        Phrase("body", "a b", slop=2, prefix=True, max_expansions=3),
    ):
        assert shape(other) != shape(base)
    assert shape(Phrase("body", "a", prefix=True, max_expansions=3)) != shape(Phrase("body", "a", prefix=True))


@pytest.mark.parametrize(
    "kwargs",
    [{"in_order": 1}, {"prefix": "yes"}, {"max_expansions": 0}, {"max_expansions": True}, {"slop": -1}],
)
def test_phrase_options_are_checked(kwargs):
    with pytest.raises(InvalidArgument):
        Phrase("body", "a b", **kwargs)


def test_a_tree_nested_past_the_depth_cap_is_refused_when_built() -> None:
    """Issue 34: a Python tree nested 300 levels deep raised RecursionError in a search (a
    query string's groups were already capped at 100)."""
    from datafusion_fts.query.tree import MAX_DEPTH

    q = Match("body", "a")
    for _ in range(MAX_DEPTH - 1):
        q = Boolean(must=(q,))
    assert q.depth == MAX_DEPTH
    with pytest.raises(InvalidArgument, match=f"nests deeper than {MAX_DEPTH} levels"):
        Boost(q, Match("body", "b"))
    with pytest.raises(InvalidArgument, match="nests deeper"):
        Boolean(must_not=(q,))
    assert Boolean(must=(q,) * 0) == Boolean()  # (depth takes no part in equality)
