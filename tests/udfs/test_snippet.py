"""snippet(): the window with the most (and most distinct) matched tokens (issue 8)."""

from __future__ import annotations

import pyarrow as pa
import pytest

WORDS = " ".join(f"w{i}" for i in range(30))

GOLDEN = [
    # centred on the match, cut with the ellipsis on the cut sides only
    (WORDS + " fox w30 w31", "fox", 5, None, "…w28 w29 [fox] w30 w31"),
    # two distinct matched terms beat four of one
    ("fox fox fox fox x1 x2 x3 x4 x5 fox quick x6 x7 x8", "fox quick", 4, None, "…x5 [fox] [quick] x6…"),
    # no match: the start of the text (punctuation before the first token kept)
    ("(" + WORDS + ")", "nomatch", 4, None, "(w0 w1 w2 w3…"),
    # short enough: the whole text
    ("(a short text!)", "text", 10, None, "(a short [text]!)"),
    # the analyzer's tokens are counted: stop words are not
    ("the cat and the dog and the bird sat on the mat", "bird", 3, "english", "…dog and the [bird] sat…"),
    ("Ünïcode wörds here: café CAFÉ and more words after", "cafe", 3, "folding", "…[café] [CAFÉ] and…"),
    ("alpha beta gamma", "gamma", 1, None, "…[gamma]"),
    # ties: the earliest window
    ("a b c d e f g h", "a h", 3, None, "[a] b c…"),
    ('one two three four five six', '"four five"', 2, None, "…[four] [five]…"),
    ("", "a", 3, None, ""),
]


@pytest.mark.parametrize("text, query, width, analyzer, expected", GOLDEN)
def test_golden(session, text, query, width, analyzer, expected):
    got = session.one(f"snippet_with(t, q, {width}, '[', ']', '…', a, NULL)", t=text, q=query, a=analyzer)
    assert got == expected


def test_defaults(session):
    text = " ".join(["filler"] * 40 + ["needle"] + ["filler"] * 40)
    got = session.one("snippet(t, 'needle')", t=text)
    assert got.startswith("…filler") and got.endswith("filler…") and "<b>needle</b>" in got
    assert len(got.replace("…", "").split()) == 20


def test_nulls(session):
    got = session.rows("snippet_with(t, q, n, '[', ']', e, NULL, NULL)",
                       t=["a", None, "a", "a"], q=["a", "a", None, "a"], e=["…", "…", "…", None],
                       n=pa.array([3, 3, 3, 3]))
    assert got == ["[a]", None, None, None]
    assert session.one("snippet_with(t, 'a', NULL, '[', ']', '…', NULL, NULL)", t="a") is None


def test_max_tokens_must_be_positive(session):
    with pytest.raises(Exception, match="snippet: argument 'max_tokens' must be a positive integer, got 0"):
        session.one("snippet_with(t, 'a', 0, '[', ']', '…', NULL, NULL)", t="a")
