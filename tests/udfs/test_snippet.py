"""snippet(): the window with the most (and most distinct) matched tokens (issue 8)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.kernels.render import best_windows

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
    got = session.one(f"snippet_with(t, q, {width}, '[', ']', '…', a, NULL, NULL)", t=text, q=query, a=analyzer)
    assert got == expected


def test_defaults(session):
    text = " ".join(["filler"] * 40 + ["needle"] + ["filler"] * 40)
    got = session.one("snippet(t, 'needle')", t=text)
    assert got.startswith("…filler") and got.endswith("filler…") and "<b>needle</b>" in got
    assert len(got.replace("…", "").split()) == 20


def test_nulls(session):
    got = session.rows("snippet_with(t, q, n, '[', ']', e, NULL, NULL, NULL)",
                       t=["a", None, "a", "a"], q=["a", "a", None, "a"], e=["…", "…", "…", None],
                       n=pa.array([3, 3, 3, 3]))
    assert got == ["[a]", None, None, None]
    assert session.one("snippet_with(t, 'a', NULL, '[', ']', '…', NULL, NULL, NULL)", t="a") is None


def test_max_tokens_must_be_positive(session):
    with pytest.raises(Exception, match="snippet: argument 'max_tokens' must be a positive integer, got 0"):
        session.one("snippet_with(t, 'a', 0, '[', ']', '…', NULL, NULL, NULL)", t="a")


@given(st.lists(st.lists(st.integers(-1, 3), max_size=15), min_size=1, max_size=6), st.integers(1, 6))
def test_the_window_is_the_best_and_keeps_its_matches(rows, width):
    """Against every window: most distinct matched keys, then most matched tokens; moved
    to centre its matches, it holds the same matched tokens as the earliest best one."""
    offsets = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    keys = np.array([k for r in rows for k in r], dtype=np.int64)
    first, stop = best_windows(offsets, keys, np.full(len(rows), width, dtype=np.int64), 4)
    for r, row in enumerate(rows):
        w = min(width, len(row))
        assert stop[r] - first[r] == w and 0 <= first[r] <= len(row) - w

        def key(s: int, row: list[int] = row, w: int = w) -> tuple[int, int]:
            window = [k for k in row[s:s + w] if k >= 0]
            return len(set(window)), len(window)

        best = max(range(len(row) - w + 1), key=lambda s: (key(s), -s), default=0)
        assert key(first[r]) == key(best)
        matched = [i for i in range(best, best + w) if row[i] >= 0]
        assert all(first[r] <= i < stop[r] for i in matched)
