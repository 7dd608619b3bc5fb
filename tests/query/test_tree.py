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
