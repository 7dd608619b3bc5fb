"""The tokenizer's code-point tables (analysis/unicode_tables.py), built from C-level passes
over all code points, are exactly what asking ``unicodedata`` and ``str`` about each code
point gives (the definitions in their docstrings)."""

from __future__ import annotations

import unicodedata

import numpy as np

from datafusion_fts.analysis import unicode_tables as u

CHARS = [chr(c) for c in range(u.MAX_CODE_POINT)]
SURROGATES = slice(0xD800, 0xE000)


def test_word_tables_are_isalnum_and_the_first_code_point_of_lower() -> None:
    kind = np.fromiter((c.isalnum() for c in CHARS), dtype=np.uint8, count=len(CHARS))
    lower = np.fromiter((ord(c.lower()[0]) for c in CHARS), dtype=np.int32, count=len(CHARS))
    kind[SURROGATES] = u.SEPARATOR
    lower[SURROGATES] = np.arange(0xD800, 0xE000)
    found_kind, found_lower, _ = u.word_tables()
    assert np.array_equal(found_kind, kind * u.WORD)
    assert np.array_equal(found_lower, lower)


def test_segment_tables_make_every_combining_mark_a_word_character() -> None:
    kind = u.script_tables()[0].copy()
    kind[(kind == u.BIGRAM) | (kind == u.VOICING)] = u.WORD
    marks = [c for c in np.flatnonzero(kind == u.SEPARATOR).tolist() if unicodedata.category(CHARS[c]).startswith("M")]
    kind[marks] = u.WORD
    assert len(marks) > 2000
    assert np.array_equal(u.segment_tables()[0], kind)


def test_fold_tables_are_casefold_of_each_code_point() -> None:
    fold, expansions = u.fold_tables()
    for c, char in enumerate(CHARS):
        if 0xD800 <= c < 0xE000:
            assert fold[c] == c
            continue
        folded = char.casefold()
        if len(folded) == 1:
            assert fold[c] == ord(folded)
        else:
            assert [chr(x) for x in expansions[-1 - fold[c]] if x] == list(folded)


def test_a_range_lower_leaves_as_it_is_holds_no_character_it_changes() -> None:
    """The one context rule of ``str.lower`` (final sigma) maps Σ, never to itself."""
    assert all(("a" + "\u03a3" + tail).lower() != "a" + "\u03a3" + tail for tail in ("", " ", "b"))
    assert u._changed_by(str.lower, u._all_code_points()) == [c for c in range(u.MAX_CODE_POINT)
                                        if not 0xD800 <= c < 0xE000 and CHARS[c].lower() != CHARS[c]]
