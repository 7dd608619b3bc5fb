"""What a text must hold to match a LIKE pattern or a regular expression (query/substring.py):
necessary strings, never more than the pattern asks; None where the reading is unsure."""

from __future__ import annotations

import pytest

from datafusion_fts.query.substring import AllOf, AnyOf, like_need, regex_need


@pytest.mark.parametrize(("pattern", "need"), [
    ("%abc%", "abc"),
    ("abc", "abc"),
    ("a_bc%d", AllOf(("a", "bc", "d"))),
    ("%50\\%%", "50%"),
    ("x\\_y", "x_y"),
    ("abc\\", "abc\\"),  # (a backslash at the end is itself)
    ("\\\\x", "\\x"),
    ("%%", None),
    ("", None),
])
def test_like(pattern: str, need: object) -> None:
    assert like_need(pattern) == need


@pytest.mark.parametrize(("pattern", "need"), [
    ("abc", "abc"),
    ("a(bc|de)f", AllOf(("a", AnyOf(("bc", "de")), "f"))),
    ("ab+c", AllOf(("ab", "bc"))),
    ("ab*c", AllOf(("a", "c"))),
    ("ab?c", AllOf(("a", "c"))),
    ("x{2,3}yz", AllOf(("x", "xyz"))),
    ("x{0,3}yz", "yz"),
    ("foo|b.r", AnyOf(("foo", AllOf(("b", "r"))))),
    ("foo|.*", None),  # (one branch asks nothing)
    ("(abc)?de", "de"),
    ("(?P<n>abc)+", "abc"),
    ("(?i)Hello", "Hello"),
    ("(?is:ab)c", AllOf(("ab", "c"))),
    ("^abc$", "abc"),
    ("\\d+abc\\.txt", "abc.txt"),
    ("[abc]def", "def"),
    ("a[]b]cd", AllOf(("a", "cd"))),
    ("[[:alpha:]]xyz", "xyz"),
    ("[a-z&&[^aeiou]]xyz", "xyz"),
    ("[\\]]xyz", "xyz"),
    ("ab\\\\cd", AllOf(("ab", "cd"))),  # (an escaped backslash asks nothing: see the next test)
    # unsure: no requirement, the column is scanned
    ("(?x)a b c", None),
    ("a\\x41bc", None),
    ("\\p{L}abc", None),
    ("a{", None),
    ("*a", None),
    ("(abc", None),
    ("\\1abc", None),
])
def test_regex(pattern: str, need: object) -> None:
    assert regex_need(pattern) == need
