"""Analyzers (docs/design.md: "Statistics and BM25"): the vectorized tokenizer agrees with the
plain-Python reference row by row, on any text and any layout of the input array, however
``analyze`` cuts it into pieces; the filters (folding, stop words, stemming) and option
validation."""

from __future__ import annotations

import random
import unicodedata
from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference import analyze as reference_analyze

from datafusion_fts.analysis import ANALYZER_OPTIONS, Analyzer, TokenStream, make_analyzer_config
from datafusion_fts.analysis import analyzer as analyzer_module
from datafusion_fts.errors import FtsError, InvalidArgument

# Characters the tokenizer must get right, beyond what a random draw usually hits.
TRICKY = (
    "aZ09 \t\n.,;-_'\"!?/\\()[]{}@#$%^&*+=<>|~`"  # ASCII letters, digits and separators
    "àÀéÉßÿµªº¹²³¼½¾¡¿×÷\u00a0"  # Latin-1: letters, ordinals, superscripts, fractions, NBSP
    "ΣσςΆάΐ"  # Greek, both final and medial sigma
    "İıIi"  # Turkish dotted / dotless i (İ lowercases to 2 code points; simple mapping: i)
    "\u0301\u0307\u0345"  # combining marks (not word characters: they split tokens)
    "漢字東京\u3000"  # CJK and the ideographic space
    "٠١٢٣٤٥٦٧٨٩"  # Arabic-Indic digits
    "⁰⁴⁵ⁿ₁₂"  # superscripts and subscripts
    "\u023a\u212a\u2126\u1e9e\u01c5\u2168"  # lowercasing changes the UTF-8 length: Ⱥ K Ω ẞ ǅ Ⅸ
    "\U00010400\U0001d400"  # 4-byte letters (Deseret capital, math bold A)
    "😀👍🏽\u200d\ufeff"  # emoji, skin tone, ZWJ, BOM: never word characters
)

tricky_chars = st.sampled_from(TRICKY)
any_char = st.characters(exclude_categories=("Cs",))  # every code point but surrogates
texts = st.text(alphabet=st.one_of(tricky_chars, tricky_chars, any_char), max_size=60)
values = st.one_of(st.none(), st.just(""), texts, texts, texts)
value_lists = st.lists(values, max_size=40)
LAYOUTS = ("string", "large_string", "string_view", "sliced", "chunked", "dictionary")


def as_arrow(values: list[str | None], layout: str) -> pa.Array | pa.ChunkedArray:
    """``values`` as an Arrow string column with one of several physical layouts."""
    if layout == "string":
        return pa.array(values, pa.string())
    if layout == "large_string":
        return pa.array(values, pa.large_string())
    if layout == "string_view":
        return pa.array(values, pa.string_view())
    if layout == "sliced":  # a non-zero offset into the buffers, with padding rows around
        padded = pa.array(["PAD pad", None, *values, "tail TAIL"], pa.string())
        return padded.slice(2, len(values))
    if layout == "chunked":
        half = len(values) // 2
        return pa.chunked_array(
            [pa.array(values[:half], pa.string()), pa.array(values[half:], pa.string())]
        )
    if layout == "dictionary":
        return pa.array(values, pa.string()).dictionary_encode()
    raise AssertionError(layout)


def tokens_by_row(stream: TokenStream) -> list[list[str]]:
    """The tokens of each row in order, after checking the stream's invariants: equal-length
    integer arrays, tokens in (row, position) order with positions 0..n-1 per row, ``dl``
    the token count of each row, and a vocabulary holding each term once."""
    n = stream.n_rows
    assert len(stream.row) == len(stream.term) == len(stream.pos)
    for array in (stream.row, stream.term, stream.pos, stream.dl):
        assert np.issubdtype(array.dtype, np.integer)
    assert len(stream.dl) == n
    vocab = stream.vocab.to_pylist()
    assert None not in vocab
    assert len(set(vocab)) == len(vocab), "vocabulary holds a term twice"
    rows: list[list[str]] = [[] for _ in range(n)]
    positions: list[list[int]] = [[] for _ in range(n)]
    previous_row = -1
    for r, t, p in zip(stream.row.tolist(), stream.term.tolist(), stream.pos.tolist(), strict=True):
        assert 0 <= r < n and 0 <= t < len(vocab)
        assert r >= previous_row, "tokens are not grouped by row in row order"
        previous_row = r
        rows[r].append(vocab[t])
        positions[r].append(p)
    for r in range(n):
        assert positions[r] == list(range(len(rows[r]))), f"row {r}: positions {positions[r]}"
    assert stream.dl.tolist() == [len(tokens) for tokens in rows]
    return rows


def simple(max_token_length: int = 40) -> Analyzer:
    return Analyzer(make_analyzer_config("simple", max_token_length=max_token_length))


# ---------------------------------------------------------------- the simple analyzer


@given(value_lists, st.sampled_from(LAYOUTS))
def test_simple_analyzer_matches_reference_row_by_row(values, layout):
    stream = simple().analyze(as_arrow(values, layout))
    assert stream.n_rows == len(values)
    assert tokens_by_row(stream) == [reference_analyze(v) for v in values]


@given(value_lists, st.integers(1, 60), st.sampled_from(LAYOUTS))
def test_max_token_length_matches_reference(values, max_token_length, layout):
    stream = simple(max_token_length).analyze(as_arrow(values, layout))
    assert tokens_by_row(stream) == [reference_analyze(v, max_token_length) for v in values]


def test_token_length_is_counted_in_utf8_bytes_after_lowercasing():
    # "Ⱥ" is 2 bytes but lowercases to "ⱥ" (3 bytes); "K" (Kelvin) is 3 bytes, "k" 1.
    assert simple(6).terms("ȺȺ ȺȺȺ KKKKKK") == ["ⱥⱥ", "kkkkkk"]
    assert simple(40).terms("y" * 40 + " " + "z" * 41 + " " + "é" * 20 + " " + "é" * 21) == [
        "y" * 40,
        "é" * 20,
    ]


def test_simple_analyzer_examples():
    a = simple()
    assert a.terms("Hello, WORLD! hello-world") == ["hello", "world", "hello", "world"]
    assert a.terms("ΣΊΣΥΦΟΣ σας") == ["σίσυφοσ", "σας"]  # per-code-point lowercase
    assert a.terms("İstanbul ıI") == ["istanbul", "ıi"]
    assert a.terms("Straße x² ١٢٣ 漢字😀東京 e\u0301t") == [
        "straße",
        "x²",
        "١٢٣",
        "漢字",
        "東京",
        "e",
        "t",
    ]
    assert a.terms("") == [] and a.terms("  ,;  ") == []


@given(value_lists, st.integers(1, 5))
def test_many_small_pieces_give_the_same_tokens(values, piece_rows):
    """Cut into pieces of a few rows (run on the tokenizer's threads), then merged."""
    with mock.patch.object(analyzer_module, "PIECE_ROWS", piece_rows):
        stream = simple().analyze(pa.array(values, pa.string()))
    assert tokens_by_row(stream) == [reference_analyze(v) for v in values]


def random_corpus(n_rows: int, seed: int) -> list[str | None]:
    rng = random.Random(seed)
    words = ["alpha", "Beta", "ΣΟΦΙΑ", "straße", "İz", "漢字", "x²", "٣٤", "𐐀𐐀"] + [
        f"w{i}"
        for i in range(6000)  # > 2048 terms: the hash table grows
    ]
    out: list[str | None] = []
    for _ in range(n_rows):
        kind = rng.random()
        if kind < 0.02:
            out.append(None)
        elif kind < 0.04:
            out.append("")
        else:
            chosen = [rng.choice(words) for _ in range(rng.randint(1, 6))]
            if rng.random() < 0.05:
                chosen.append("q" * rng.randint(38, 44))  # around the 40-byte limit
            out.append(rng.choice([" ", ", ", "—", "\u3000", "😀"]).join(chosen))
    return out


def test_large_input_is_split_into_pieces_and_merged_exactly():
    n_rows = analyzer_module.PIECE_ROWS + 9_000  # > 70,000 rows: several pieces, in threads
    values = random_corpus(n_rows, seed=7)
    stream = simple().analyze(pa.array(values, pa.string()))
    assert stream.n_rows == n_rows
    assert tokens_by_row(stream) == [reference_analyze(v) for v in values]


def test_large_input_with_seed_keeps_seed_ids():
    n_rows = analyzer_module.PIECE_ROWS + 9_000
    values = random_corpus(n_rows, seed=11)
    seed = ["w5999", "nowhere", "alpha", "σοφια"]
    stream = simple().analyze(pa.array(values, pa.large_string()), seed=seed)
    assert stream.n_seed == len(seed)
    assert stream.vocab.to_pylist()[: len(seed)] == seed
    assert tokens_by_row(stream) == [reference_analyze(v) for v in values]


# ---------------------------------------------------------------------------- seeds


@st.composite
def values_and_seed(draw):
    values = draw(value_lists)
    present = sorted({t for v in values for t in reference_analyze(v)})
    words = st.text(alphabet="abcxyzßσ漢٣", min_size=1, max_size=6)
    candidates = st.one_of(st.sampled_from(present), words) if present else words
    return values, draw(st.lists(candidates, unique=True, max_size=8))


@given(values_and_seed(), st.integers(1, 4), st.sampled_from(LAYOUTS))
def test_seed_terms_get_the_first_ids(case, piece_rows, layout):
    values, seed = case
    with mock.patch.object(analyzer_module, "PIECE_ROWS", piece_rows):
        stream = simple().analyze(as_arrow(values, layout), seed=seed)
    assert stream.n_seed == len(seed)
    assert stream.vocab.to_pylist()[: len(seed)] == seed
    assert tokens_by_row(stream) == [reference_analyze(v) for v in values]


def test_seed_ids_pick_out_query_terms_without_lookup():
    stream = simple().analyze(pa.array(["b a", None, "c a"]), seed=["a", "zz", "c"])
    hits = {(r, t) for r, t in zip(stream.row.tolist(), stream.term.tolist(), strict=True) if t < 3}
    assert hits == {(0, 0), (2, 2), (2, 0)}


# -------------------------------------------------------------------------- filters


def english() -> Analyzer:
    return Analyzer(make_analyzer_config("english"))


def test_english_stems():
    assert english().terms("running foxes") == ["run", "fox"]
    assert english().terms("The Runner RUNS") == ["runner", "run"]


def test_english_stop_words_leave_no_position_gap():
    stream = english().analyze(pa.array(["the quick fox is in the box", "The AND of", None, "the"]))
    assert tokens_by_row(stream) == [["quick", "fox", "box"], [], [], []]  # positions 0..n-1


def test_stop_words_alone():
    a = Analyzer(make_analyzer_config("simple", stop_words="english"))
    assert a.terms("The running of the foxes") == ["running", "foxes"]
    assert Analyzer(make_analyzer_config("english", stop_words="none")).terms("the foxes") == [
        "the",
        "fox",
    ]


def test_custom_stop_words_are_case_insensitive():
    a = Analyzer(make_analyzer_config("simple", stop_words=["The", "AND", "ΣΟΦΙΑ"]))
    stream = a.analyze(pa.array(["the cat AND THE dog", "Σοφια σοφια x", "and"]))
    assert tokens_by_row(stream) == [["cat", "dog"], ["x"], []]


def test_custom_stop_words_go_through_folding_like_the_tokens():
    a = Analyzer(make_analyzer_config("folding", stop_words=["Café"]))
    assert a.terms("café CAFE cafés") == ["cafes"]


def test_ascii_folding():
    a = Analyzer(make_analyzer_config("folding"))
    assert a.terms("Café straße Ærø ŒUVRE naïve Łódź") == [
        "cafe",
        "strasse",
        "aero",
        "oeuvre",
        "naive",
        "lodz",
    ]
    stream = a.analyze(pa.array(["Café cafe CAFÉ"]))
    assert len(set(stream.term.tolist())) == 1  # one term, three positions
    assert stream.pos.tolist() == [0, 1, 2]


@given(st.lists(st.one_of(st.none(), st.text(alphabet=st.characters(max_codepoint=0x7F)))))
def test_folding_is_a_no_op_on_ascii(values):
    folded = Analyzer(make_analyzer_config("folding")).analyze(pa.array(values, pa.string()))
    assert tokens_by_row(folded) == [reference_analyze(v) for v in values]


@given(value_lists, st.sampled_from(["folding", "english"]), st.integers(1, 4))
def test_filtered_analyzers_are_consistent_per_row(values, name, piece_rows):
    """A batch gives each row the tokens ``terms()`` gives that row alone, with positions
    0..n-1 after dropped tokens, and folded terms hold no combining mark."""
    a = Analyzer(make_analyzer_config(name))
    with mock.patch.object(analyzer_module, "PIECE_ROWS", piece_rows):
        rows = tokens_by_row(a.analyze(pa.array(values, pa.string())))
    assert rows == [a.terms(v) if v is not None else [] for v in values]
    for tokens in rows:
        for token in tokens:
            assert token and not any(unicodedata.category(c) == "Mn" for c in token)


def test_normalize_for_prefixes():
    assert simple().normalize("CAFÉ") == "café"
    assert simple().normalize("İSTAN") == "istan"
    assert Analyzer(make_analyzer_config("folding")).normalize("CAFÉ") == "cafe"
    assert Analyzer(make_analyzer_config("folding")).normalize("ÆRØ") == "aero"
    assert english().normalize("RUNNING") == "running"  # folded and lowercased, not stemmed


word_chars = st.one_of(
    st.sampled_from("aZßÉÆØŒİıΣςȺK漢٣²𐐀"), st.characters(categories=("Lu", "Ll", "Nd"))
)


@given(
    st.text(alphabet=word_chars, min_size=1, max_size=12), st.sampled_from(["simple", "folding"])
)
def test_normalized_prefix_is_a_prefix_of_the_term(word, name):
    # (segmenter "none": a word is one token; the default cuts "0漢" into "0" and "漢")
    a = Analyzer(make_analyzer_config(name, max_token_length=1024, segmenter="none"))
    (term,) = a.terms(word)
    assert a.normalize(word) == term
    for k in range(1, len(word)):
        assert term.startswith(a.normalize(word[:k]))


# ------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"analyzer": "klingon"}, "analyzer"),
        ({"stemmer": "klingon"}, "stemmer"),
        ({"max_token_length": 0}, "max_token_length"),
        ({"max_token_length": 2000}, "max_token_length"),
        ({"max_token_length": 1.5}, "max_token_length"),
        ({"max_token_length": True}, "max_token_length"),
        ({"stop_words": 5}, "stop_words"),
        ({"stop_words": [1, "a"]}, "stop_words"),
        ({"stop_words": "klingon"}, "stop word list"),
        ({"ascii_folding": "yes"}, "ascii_folding"),
        ({"colour": "red"}, "colour"),
    ],
    ids=lambda v: repr(v) if isinstance(v, dict) else None,
)
def test_bad_options_raise_invalid_argument_naming_the_option(options, named):
    with pytest.raises(InvalidArgument) as info:
        make_analyzer_config(**options)
    assert isinstance(info.value, FtsError)
    assert named in str(info.value)
    key, value = next(iter(options.items()))
    if key in ANALYZER_OPTIONS and isinstance(value, str):  # the bad value is quoted too
        assert value in str(info.value)


def test_config_and_options_together_are_rejected():
    with pytest.raises(InvalidArgument):
        make_analyzer_config(make_analyzer_config("simple"), stemmer="english")


def test_analyzing_a_non_text_column_is_rejected():
    with pytest.raises(InvalidArgument, match="int64"):
        simple().analyze(pa.array([1, 2, 3]))


@given(
    st.text(alphabet=st.sampled_from("abcXYZ019 -_.,!?'\"\t\n" + "é" + "İ"), max_size=60),
    st.integers(1, 12),
)
def test_query_terms_match_the_reference(text, max_len):
    """``terms`` (ASCII fast path and kernel path alike) tokenizes as the reference does."""
    a = Analyzer(make_analyzer_config("simple", max_token_length=max_len))
    assert a.terms(text) == reference_analyze(text, max_len)
