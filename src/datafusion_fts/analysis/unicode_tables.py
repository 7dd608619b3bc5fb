"""Code-point tables the tokenizer kernel reads: which code points are word characters,
and each one's simple lowercase mapping.

They come from Python's own ``unicodedata`` (``str.isalnum`` is exactly "Unicode letter or
number", categories L* and N*), so the engine and a plain-Python reading of the rules agree
code point for code point. Built once per process on first use (~0.4 s), never at import.
"""

from __future__ import annotations

import functools

import numpy as np

MAX_CODE_POINT = 0x110000


@functools.lru_cache(maxsize=1)
def word_and_lower_tables() -> tuple[np.ndarray, np.ndarray]:
    """``(is_word uint8[0x110000], lower int32[0x110000])``.

    ``lower`` is the simple (one code point) lowercase mapping: ``c.lower()`` where that is
    one code point, its first code point otherwise (only U+0130 İ, whose simple mapping is i).
    """
    chars = [chr(i) for i in range(MAX_CODE_POINT)]
    is_word = np.fromiter((c.isalnum() for c in chars), dtype=np.uint8, count=MAX_CODE_POINT)
    lower = np.fromiter((ord(c.lower()[0]) for c in chars), dtype=np.int32, count=MAX_CODE_POINT)
    # Surrogates are never word characters and map to themselves.
    is_word[0xD800:0xE000] = 0
    lower[0xD800:0xE000] = np.arange(0xD800, 0xE000, dtype=np.int32)
    return is_word, lower


def simple_lower(text: str) -> str:
    """Lowercase ``text`` per code point with the same mapping the tokenizer uses."""
    return "".join(c.lower()[0] for c in text)
