"""Dictionary segmenters (issue 42): words, from a package's dictionary, where the default
analysis cuts text written without spaces into bigrams.

Each segmenter cuts a value into consecutive pieces, one Python call into its package per
value; :func:`word_spans` turns the pieces of a batch into UTF-8 byte spans with numpy, and
the analyzer runs the compiled tokenizer over each span (``unicode_tables.segment_tables``),
so a word is lowercased, width-folded and stripped of punctuation exactly as the default
analysis does: only the cuts differ. A package is imported on first use; a missing one
raises :class:`InvalidArgument` naming the extra that installs it.
"""

from __future__ import annotations

import importlib
import itertools
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InvalidArgument
from .unicode_tables import KANA_LO, KANA_N, segment_tables

# A text's pieces, as the end offset of each (they cover the text, in order).
Cuts = Callable[[str], Iterable[int]]
# Sudachi refuses inputs over 49,149 UTF-8 bytes: longer texts go in pieces of at most this
# many characters (4 bytes each at most), cut after a line break where there is one.
SUDACHI_CHARS = 12_000


def _jieba() -> Cuts:
    import rjieba

    return lambda text: itertools.accumulate(map(len, rjieba.cut(text)))


def _icu() -> Cuts:
    from icu4py.breakers import WordBreaker

    # (the root locale: ICU picks its dictionaries by script, not by locale)
    return lambda text: itertools.islice(
        itertools.chain.from_iterable(WordBreaker(text, "und").segments()), 1, None, 2
    )


def _sudachi() -> Cuts:
    from sudachipy import Dictionary, Morpheme, SplitMode

    tokenize = Dictionary(dict="core").tokenizer(mode=SplitMode.C).tokenize
    end = Morpheme.end

    def cuts(text: str) -> Iterator[int]:
        for at, piece in _lines_within(text, SUDACHI_CHARS):
            yield from (at + e for e in map(end, tokenize(piece)))

    return cuts


def _lindera() -> Cuts:
    from lindera import TokenizerBuilder

    builder = TokenizerBuilder().set_mode("normal").set_dictionary("embedded://ipadic")
    tokenize = builder.set_keep_whitespace(True).build().tokenize
    return lambda text: map(attrgetter("byte_end"), tokenize(text))


@dataclass(frozen=True)
class Segmenter:
    """A dictionary segmenter: the module it imports, the pip extra that installs that,
    the unit of its offsets (``"char"``: Python string index, ``"utf16"``, ``"utf8"``) and
    how to make its cutter (one per thread: not every package's is thread-safe)."""

    module: str
    extra: str
    unit: str
    load: Callable[[], Cuts]


DICTIONARY_SEGMENTERS: dict[str, Segmenter] = {
    "jieba": Segmenter("rjieba", "chinese", "char", _jieba),
    "icu": Segmenter("icu4py", "icu", "utf16", _icu),
    "sudachi": Segmenter("sudachipy", "japanese", "char", _sudachi),
    "lindera": Segmenter("lindera", "lindera", "utf8", _lindera),
}
_local = threading.local()


def require(name: str) -> None:
    """Import segmenter ``name``'s package, or say which extra installs it."""
    segmenter = DICTIONARY_SEGMENTERS[name]
    try:
        importlib.import_module(segmenter.module)
    except ImportError as error:
        raise InvalidArgument(
            f"segmenter {name!r} needs the {segmenter.module} package: "
            f"pip install 'datafusion-fts[{segmenter.extra}]' ({error})"
        ) from None


def _cutter(name: str) -> Cuts:
    cutters = _local.__dict__.setdefault("cutters", {})
    if name not in cutters:
        require(name)
        cutters[name] = DICTIONARY_SEGMENTERS[name].load()
    return cutters[name]


def _lines_within(text: str, size: int) -> Iterator[tuple[int, str]]:
    """``(offset, piece)`` of ``text`` in pieces of at most ``size`` characters."""
    start = 0
    while len(text) - start > size:
        cut = text.rfind("\n", start, start + size) + 1
        if cut <= start:
            cut = start + size
        yield start, text[start:cut]
        start = cut
    yield start, text[start:]


def word_spans(
    name: str, values: pa.Array, data: np.ndarray, offsets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row int32, start int64, end int64)``: segmenter ``name``'s pieces of every value,
    as UTF-8 byte offsets into their value, in (row, start) order.

    ``data`` and ``offsets`` are the array's UTF-8 bytes and its values' int64 offsets into
    them: the package's offsets (characters or UTF-16 units) are mapped to bytes through them.
    """
    cut = _cutter(name)
    n = len(values)
    counts = np.zeros(n, dtype=np.int64)
    flat: list[int] = []
    for r, text in enumerate(values.to_pylist()):
        if text:
            before = len(flat)
            flat.extend(cut(text))
            counts[r] = len(flat) - before
    row = np.repeat(np.arange(n, dtype=np.int32), counts)
    ends = np.array(flat, dtype=np.int64)
    unit = DICTIONARY_SEGMENTERS[name].unit
    if unit != "utf8":
        ends = _bytes_of_units(ends, row, data, offsets, unit) - offsets[row]
    starts = np.zeros_like(ends)
    starts[1:] = ends[:-1]
    starts[(np.cumsum(counts) - counts)[counts > 0]] = 0  # (each row's first piece)
    return row, starts, ends


def _bytes_of_units(
    ends: np.ndarray, row: np.ndarray, data: np.ndarray, offsets: np.ndarray, unit: str
) -> np.ndarray:
    """Absolute byte offsets of offsets ``ends`` (characters or UTF-16 units into value
    ``row``): every unit of the array gets the byte where its code point starts."""
    lo, hi = offsets[0], offsets[-1]
    chunk = data[lo:hi]
    lead = np.flatnonzero((chunk & 0xC0) != 0x80)  # where each code point starts
    before = np.searchsorted(lead, offsets[:-1] - lo)  # code points before each value
    if unit == "utf16":  # (four-byte code points are two units)
        units = 1 + (chunk[lead] >= 0xF0)
        lead = np.repeat(lead, units)
        before = np.concatenate(([0], np.cumsum(units)))[before]
    unit_byte = np.append(lead, hi - lo) + lo
    return unit_byte[before[row] + ends]


def compose_voicing(terms: pa.Array) -> pa.Array:
    """``terms`` with each voicing mark composed into the kana before it, as the default
    analysis composes them; a mark that composes with nothing is dropped."""
    marked = pc.match_substring_regex(terms, "[\u3099\u309a]")
    if not pc.any(marked).as_py():
        return terms
    compose = segment_tables()[2]
    out = terms.to_pylist()
    for i in np.flatnonzero(marked.to_numpy(zero_copy_only=False)).tolist():
        chars: list[str] = []
        for c in out[i]:
            if c in "\u3099\u309a":
                prev = ord(chars[-1]) - KANA_LO if chars else -1
                folded = compose[prev + (KANA_N if c == "\u309a" else 0)] if 0 <= prev < KANA_N else 0
                if folded:
                    chars[-1] = chr(folded)
                continue
            chars.append(c)
        out[i] = "".join(chars)
    return pa.array(out, pa.large_string())

