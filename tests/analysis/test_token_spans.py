"""Token spans (issue 8): where each token lies in its original text, for highlighting.

``analyze(values, spans=True)`` must give the same tokens as without spans, and each
span must be exactly the characters the token was made from."""

from __future__ import annotations

import unicodedata

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st
from reference import BIGRAM_NAMES, lone_char, lowercase
from strategies import values

from datafusion_fts.analysis import analyzer, analyzer_for, make_analyzer_config

ANALYZERS = ("simple", "folding", "english")


def _spans_of(name: str, texts: list[str | None]):
    an = analyzer_for(make_analyzer_config(name))
    array = pa.array(texts, pa.string())
    return an, an.analyze(array), an.analyze(array, spans=True)


@given(st.lists(values(), max_size=12), st.sampled_from(ANALYZERS))
def test_spans_cover_the_characters_of_each_token(texts, name):
    an, plain, spanned = _spans_of(name, texts)
    for field in ("row", "term", "pos", "dl"):
        assert np.array_equal(getattr(plain, field), getattr(spanned, field)), field
    assert plain.vocab.equals(spanned.vocab)
    assert plain.start is None and spanned.start is not None and spanned.end is not None
    vocab = spanned.vocab.to_pylist()
    previous_end: dict[int, int] = {}
    for row, term, start, end in zip(spanned.row, spanned.term, spanned.start, spanned.end):
        raw = texts[row].encode("utf-8")
        piece = raw[start:end].decode("utf-8")  # spans fall on character boundaries
        # The token is its characters, analyzed.
        assert an.terms(piece) == [vocab[term]] and end > start
        if lone_char(vocab[term][:1]):
            continue  # (a gram: neighbouring grams share a character; tests/analysis/test_scripts.py)
        assert start >= previous_end.get(row, 0)
        previous_end[row] = end
        # Nothing around a word is a character of words.
        before, after = raw[:start].decode("utf-8"), raw[end:].decode("utf-8")
        assert not (word_char(before[-1:]) or word_char(after[:1]))
        if name == "simple":
            assert vocab[term] == lowercase(piece)


def word_char(c: str) -> bool:
    """A character of words: a letter or digit of a script written with spaces."""
    return c.isalnum() and not unicodedata.name(c, "").startswith(BIGRAM_NAMES)


def test_spans_are_byte_offsets_in_multibyte_text():
    _, _, s = _spans_of("simple", ["¡Straße — 東京, x² İstanbul!"])
    raw = "¡Straße — 東京, x² İstanbul!".encode()
    assert [raw[a:b].decode() for a, b in zip(s.start, s.end)] == ["Straße", "東京", "x²", "İstanbul"]


def test_spans_skip_dropped_tokens():
    """Over-long tokens and stop words leave no token, so no span; the rest keep theirs."""
    text = "The " + "z" * 41 + " cats are running"
    _, _, s = _spans_of("english", [text])
    assert [text[a:b] for a, b in zip(s.start, s.end)] == ["cats", "running"]
    assert s.vocab.take(pa.array(s.term)).to_pylist() == ["cat", "run"]


def test_spans_survive_the_split_into_pieces(monkeypatch):
    monkeypatch.setattr(analyzer, "PIECE_ROWS", 3)
    texts = [f"w{i} x{i} y" if i % 4 else None for i in range(20)]
    _, plain, s = _spans_of("simple", texts)
    assert np.array_equal(plain.term, s.term)
    got = [texts[r][a:b] for r, a, b in zip(s.row, s.start, s.end)]
    assert got == [w for t in texts if t for w in t.split()]
