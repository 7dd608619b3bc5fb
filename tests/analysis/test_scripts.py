"""Scripts written without spaces (issue 42): runs of Han, Hiragana, Katakana and Hangul
become overlapping bigrams after width folding, against the plain-Python rule 1 of
tests/reference.py, code point by code point and text by text."""

from __future__ import annotations

import unicodedata

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st
from reference import BIGRAM_NAMES, analyze, analyze_positions, fold_width, lower_code_point

from datafusion_fts.analysis import AnalyzerConfig, analyzer_for, make_analyzer_config
from datafusion_fts.analysis.unicode_tables import BIGRAM, SEPARATOR, VOICING, WORD, script_tables

# Characters of every kind the rule tells apart: Han (BMP, extension B, compatibility),
# kana of both widths, voicing marks (combining and half-width, composable or not),
# Hangul syllables and jamo, full-width Latin, the prolonged sound mark and iteration marks,
# ideographic punctuation, Latin words and separators.
CJK = (
    "数据库管理系统中文日本語東京漢字𠀋丽"  # Han, U+2000B (extension B), U+F9AA-like compatibility
    "ひらがなかきくはぱ"  # Hiragana
    "カタカナカキハヒ"  # Katakana
    "ｶﾀｶﾅｷﾞﾊﾟｰ"  # half-width Katakana and marks
    "\u3099\u309a\uff9e\uff9f"  # voicing marks alone
    "한국어텍스트ㄱㅏ"  # Hangul syllables, compatibility jamo
    "ＡＢＣａｂｃ１２３"  # full-width Latin and digits
    "ー々〆〇"  # prolonged sound mark, iteration and closing marks, ideographic zero
    "、。「」・（）\u3000"  # ideographic punctuation and space
    "ab Z9 é -"  # Latin words and separators
)
cjk_texts = st.text(alphabet=st.sampled_from(CJK), max_size=40)


def simple(**options) -> object:
    return analyzer_for(make_analyzer_config("simple", **options))


def positions_by_row(values: list[str | None], **options) -> list[list[str | None]]:
    """The analyzer's tokens per row, at their positions (None where a position is empty)."""
    stream = simple(**options).analyze(pa.array(values, pa.string()))
    vocab = stream.vocab.to_pylist()
    rows: list[list[str | None]] = [[] for _ in values]
    for row, term, pos in zip(stream.row.tolist(), stream.term.tolist(), stream.pos.tolist()):
        rows[row].extend([None] * (pos - len(rows[row])))
        rows[row].append(vocab[term])
    for r, dl in enumerate(stream.dl.tolist()):
        assert dl == sum(t is not None for t in rows[r])
    return rows


def test_every_code_point_is_classed_as_the_rule_says() -> None:
    kind, lower, _ = script_tables()
    for cp in range(0x110000):
        c = chr(cp)
        if 0xD800 <= cp < 0xE000:
            assert kind[cp] == SEPARATOR
            continue
        if cp in (0x3099, 0x309A, 0xFF9E, 0xFF9F):
            want = VOICING
        elif c.isalnum() and unicodedata.name(c, "").startswith(BIGRAM_NAMES):
            want = BIGRAM
        else:
            want = WORD if c.isalnum() else SEPARATOR
        assert kind[cp] == want, hex(cp)
        assert chr(lower[cp]) == lower_code_point(fold_width(c)), hex(cp)


@given(st.lists(st.one_of(st.none(), cjk_texts), max_size=20), st.integers(1, 40))
def test_tokens_and_positions_match_the_reference(values, max_token_length) -> None:
    assert positions_by_row(values, max_token_length=max_token_length) == [
        analyze_positions(v, max_token_length) for v in values
    ]


@given(cjk_texts)
def test_query_terms_are_the_tokens(text) -> None:
    assert simple().terms(text) == analyze(text)


@given(st.lists(cjk_texts, max_size=12))
def test_spans_are_the_characters_each_gram_was_made_from(texts) -> None:
    stream = simple().analyze(pa.array(texts, pa.string()), spans=True)
    vocab = stream.vocab.to_pylist()
    for row, term, start, end in zip(stream.row, stream.term, stream.start, stream.end):
        piece = texts[row].encode("utf-8")[start:end].decode("utf-8")
        chars = [c for c in piece if unicodedata.category(c) != "Mn" and c not in "\uff9e\uff9f"]
        assert len(chars) == len(vocab[term]), (piece, vocab[term])
        assert simple().terms(piece) == [vocab[term]]


def test_examples() -> None:
    a = simple()
    assert a.terms("数据库管理系统") == ["数据", "据库", "库管", "管理", "理系", "系统"]
    assert a.terms("hello 世界 abc数据库def") == ["hello", "世界", "abc", "数据", "据库", "def"]
    assert a.terms("数") == ["数"] and a.terms("한국어") == ["한국", "국어"]
    assert a.terms("ｶﾞｷﾞ ＡＢＣ１２３ カ\u3099キ") == ["ガギ", "abc123", "ガキ"]
    assert a.terms("Hello World, naïve café") == ["hello", "world", "naïve", "café"]
    # Two runs of grams are one position apart, so "数据库" is not found across a comma.
    assert positions_by_row(["数据，据库 数"]) == [["数据", None, "据库", "数"]]
    assert positions_by_row(["数据a据库"]) == [["数据", "a", "据库"]]


def test_stop_words_leave_no_gap_and_keep_the_one_between_runs() -> None:
    stream = analyzer_for(make_analyzer_config("english")).analyze(pa.array(["the 数据，据库 and running 数"]))
    vocab = stream.vocab.to_pylist()
    assert [vocab[t] for t in stream.term] == ["数据", "据库", "run", "数"]
    assert stream.pos.tolist() == [0, 2, 3, 4] and stream.dl.tolist() == [4]


def test_segmenter_none_keeps_a_run_one_token_as_before() -> None:
    none = simple(segmenter="none")
    assert none.terms("数据库管理 ｶﾞｷﾞ ＡＢＣ") == ["数据库管理", "ｶﾞｷﾞ", "ａｂｃ"]
    assert none.terms("数据库") == analyze("数据库", segmenter="none")


def test_an_index_built_before_bigrams_reads_its_analysis_back_as_none() -> None:
    stored = AnalyzerConfig().to_json()
    del stored["segmenter"]  # (as written before issue 42)
    assert AnalyzerConfig.from_json(stored).segmenter == "none"
    assert AnalyzerConfig.from_json(AnalyzerConfig().to_json()).segmenter == "bigrams"


@given(st.lists(st.text(alphabet=st.characters(exclude_categories=("Cs",), max_codepoint=0x10FF), max_size=30),
                max_size=30), st.sampled_from(("simple", "english")))
def test_text_of_other_scripts_is_analyzed_as_before(sample, name) -> None:
    """Text with no character of those scripts and no full-width form: every token and
    position as without the segmenter."""
    a = analyzer_for(make_analyzer_config(name)).analyze(pa.array(sample, pa.string()))
    b = analyzer_for(make_analyzer_config(name, segmenter="none")).analyze(pa.array(sample, pa.string()))
    for field in ("row", "term", "pos", "dl"):
        assert np.array_equal(getattr(a, field), getattr(b, field))
    assert a.vocab.equals(b.vocab)


def test_ascii_folding_leaves_the_scripts_written_without_spaces_alone() -> None:
    """NFKD would strip kana of their voicing (ガ to カ) and take Hangul syllables apart;
    an index built before segmenters folds as it always did."""
    for name in ("folding", "english"):
        a = analyzer_for(make_analyzer_config(name))
        assert a.terms("ガイド 한국어 Café") == ["ガイ", "イド", "한국", "국어", "cafe"]
        assert a.normalize("ガイ") == "ガイ" and a.normalize("Café") == "cafe"
    old = analyzer_for(make_analyzer_config("folding", segmenter="none"))
    assert old.terms("ガイド Café") == ["カイト", "cafe"]
