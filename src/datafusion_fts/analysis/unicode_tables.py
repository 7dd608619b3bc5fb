"""Code-point tables the tokenizer kernel reads: each code point's class (a separator, a
character of words, a character of a script written without spaces, a kana voicing mark),
its simple lowercase mapping, and how voicing marks compose with kana.

They come from Python's own ``unicodedata`` (``str.isalnum`` is exactly "Unicode letter or
number", categories L* and N*), so the engine and a plain-Python reading of the rules agree
code point for code point. Built once per process on first use, never at import: the
per-code-point answers are asked only where a C-level pass over all of them (a regex, or
a case mapping of a whole range) says they may differ from the plain default, so the
four tables take ~0.1 s together rather than ~0.9 s.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable

import numpy as np

MAX_CODE_POINT = 0x110000
SEPARATOR, WORD, BIGRAM, VOICING = 0, 1, 2, 3
# Characters of the scripts whose runs become bigrams, by their names' beginnings (Python
# has no script property): Han, Hiragana, Katakana (the prolonged sound mark among them)
# and Hangul, in every block and width.
BIGRAM_NAMES = ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH", "HIRAGANA", "KATAKANA",
                "HALFWIDTH KATAKANA", "HANGUL", "HALFWIDTH HANGUL", "IDEOGRAPHIC")
DAKUTEN, HANDAKUTEN = (0x3099, 0xFF9E), (0x309A, 0xFF9F)
KANA_LO, KANA_N = 0x3040, 0xC0
# Python's ``\w`` without the underscore: exactly ``str.isalnum`` (the ``re`` module's own
# definition of a word character for str patterns).
_ALNUM_RUNS = re.compile(r"[^\W_]+")
# The planes that hold combining marks (category M): the BMP, the SMP and plane 14's
# variation selectors; the others hold ideographs, private use or nothing.
_MARK_PLANES = ((0, 0x20000), (0xE0000, 0xF0000))


def _all_code_points() -> str:
    """Every code point in order, surrogates included (a str may hold them); decoded in
    one call (~17 ms; joining ``chr`` of each took ~120). Not kept: 4.4 MB for the
    process's life, to spare one table's build 17 ms."""
    return np.arange(MAX_CODE_POINT, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")


def _changed_by(transform: Callable[[str], str], text: str) -> list[int]:
    """The code points ``c`` (surrogates aside; ``text``: :func:`_all_code_points`) with
    ``transform(chr(c)) != chr(c)``, for a per-character ``transform`` (``str.lower``,
    ``str.casefold``): ranges it leaves as they are are skipped whole, the others halved. ``str.lower``'s one context rule (final
    sigma) maps only Σ, which no context leaves unchanged, so a range it leaves unchanged
    holds no character it changes."""
    found: list[int] = []
    todo = [(0, 0xD800), (0xE000, MAX_CODE_POINT)]
    while todo:
        lo, hi = todo.pop()
        if transform(text[lo:hi]) == text[lo:hi]:
            continue
        if hi - lo <= 64:
            found.extend(c for c in range(lo, hi) if transform(chr(c)) != chr(c))
        else:
            todo += [(lo, (lo + hi) // 2), ((lo + hi) // 2, hi)]
    return sorted(found)


@functools.lru_cache(maxsize=1)
def word_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(kind uint8[0x110000], lower int32[0x110000], compose int32[2 * KANA_N])`` of the
    analysis that makes no grams: a token is a run of letters and digits.

    ``lower`` is the simple (one code point) lowercase mapping: ``c.lower()`` where that is
    one code point, its first code point otherwise (only U+0130 İ, whose simple mapping is i).
    """
    text = _all_code_points()
    kind = np.zeros(MAX_CODE_POINT, dtype=np.uint8)
    for run in _ALNUM_RUNS.finditer(text):
        kind[run.start() : run.end()] = WORD
    lower = np.arange(MAX_CODE_POINT, dtype=np.int32)
    changed = _changed_by(str.lower, text)
    lower[changed] = [ord(chr(c).lower()[0]) for c in changed]
    # Surrogates are never word characters and map to themselves.
    kind[0xD800:0xE000] = SEPARATOR
    return kind, lower, np.zeros(2 * KANA_N, dtype=np.int32)


@functools.lru_cache(maxsize=1)
def script_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`word_tables` with the scripts written without spaces: their letters make
    bigrams; full-width Latin letters and digits fold to ASCII, half-width Katakana and
    Hangul to their usual width (NFKC), and a voicing mark (combining or half-width)
    composes with the kana before it (``compose``: NFC of kana + mark, 0 where none)."""
    kind, lower, _ = (a.copy() for a in word_tables())
    for cp in np.flatnonzero(kind).tolist():  # (letters and digits: names of ~140,000)
        if unicodedata.name(chr(cp), "").startswith(BIGRAM_NAMES):
            kind[cp] = BIGRAM
    for cp in range(0xFF01, 0xFF5F):  # full-width ASCII
        lower[cp] = lower[cp - 0xFEE0]
    for cp in range(0xFF61, 0xFFDD):  # half-width Katakana and Hangul
        folded = unicodedata.normalize("NFKC", chr(cp))
        if len(folded) == 1:
            lower[cp] = ord(folded)
    kind[list(DAKUTEN + HANDAKUTEN)] = VOICING
    compose = np.zeros(2 * KANA_N, dtype=np.int32)
    for half, mark in enumerate(("\u3099", "\u309a")):
        for cp in range(KANA_LO, KANA_LO + KANA_N):
            composed = unicodedata.normalize("NFC", chr(cp) + mark)
            if len(composed) == 1:
                compose[half * KANA_N + cp - KANA_LO] = ord(composed)
    return kind, lower, compose


def simple_lower(text: str) -> str:
    """Lowercase ``text`` per code point with the same mapping the tokenizer uses."""
    return "".join(c.lower()[0] for c in text)


@functools.lru_cache(maxsize=1)
def segment_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`script_tables`' folding with no grams: what the words of a dictionary segmenter
    (analysis/segmenters.py) are lowercased and width-folded with. Combining marks are word
    characters here, since the segmenter has found the word: Thai, Lao, Khmer and Myanmar
    write vowels and tones as marks; a voicing mark is composed into its kana afterwards by
    the analyzer (the kernel composes marks only inside runs of grams), with ``compose``."""
    kind, lower, compose = (a.copy() for a in script_tables())
    kind[kind == BIGRAM] = WORD
    kind[kind == VOICING] = WORD
    for lo, hi in _MARK_PLANES:
        for cp in (np.flatnonzero(kind[lo:hi] == SEPARATOR) + lo).tolist():
            if unicodedata.category(chr(cp)).startswith("M"):
                kind[cp] = WORD
    return kind, lower, compose


@functools.lru_cache(maxsize=1)
def fold_tables() -> tuple[np.ndarray, np.ndarray]:
    """``(fold int32[0x110000], expansions int32[m, 3])``: each code point's full case
    folding (``str.casefold``, which has no context), what an n-gram index reads text
    through (analysis/analyzer.py, ``segmenter="trigrams"``). ``fold[cp]`` is the one code
    point it folds to, or ``-1 - j`` when it folds to several: row j of ``expansions``
    (zero-padded). Folding is per code point, so a text holding a string holds its
    folded form after folding; and characters ILIKE or ``~*`` take as equal fold alike
    (checked against DataFusion by tests/analysis/test_ngrams.py)."""
    fold = np.arange(MAX_CODE_POINT, dtype=np.int32)
    expansions: list[list[int]] = []
    for cp in _changed_by(str.casefold, _all_code_points()):
        folded = chr(cp).casefold()
        if len(folded) == 1:
            fold[cp] = ord(folded)
        else:
            fold[cp] = -1 - len(expansions)
            expansions.append([ord(c) for c in folded] + [0] * (3 - len(folded)))
    return fold, np.array(expansions, dtype=np.int32).reshape(-1, 3)
