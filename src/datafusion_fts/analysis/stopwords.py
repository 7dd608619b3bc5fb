"""Built-in stop-word lists (lowercase, matched after lowercasing and folding)."""

from __future__ import annotations

# Lucene's classic English stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET).
ENGLISH: frozenset[str] = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the
    their then there these they this to was will with""".split()
)

BUILTIN: dict[str, frozenset[str]] = {"english": ENGLISH}
