"""Dictionary segmenters (issue 42): real segmentations, byte spans into the original value,
query terms equal to indexed tokens, and searches through the API and SQL. Each test needs
its segmenter's package and is skipped where that is not installed."""

from __future__ import annotations

import importlib.util

import pyarrow as pa
import pytest

import datafusion_fts
from datafusion_fts.analysis import AnalyzerConfig, analyzer_for, make_analyzer_config
from datafusion_fts.analysis.segmenters import DICTIONARY_SEGMENTERS, compose_voicing
from datafusion_fts.errors import InvalidArgument

# segmenter -> (text, its tokens): examples the packages' own documentation gives or that
# show what each is for.
EXAMPLES = {
    "jieba": ("我来到北京清华大学", ["我", "来到", "北京", "清华大学"]),
    "icu": ("ภาษาไทยง่ายนิดเดียว", ["ภาษา", "ไทย", "ง่าย", "นิด", "เดียว"]),
    "sudachi": ("東京都に住んでいます", ["東京都", "に", "住ん", "で", "い", "ます"]),
    "lindera": ("東京都に住んでいます", ["東京", "都", "に", "住ん", "で", "い", "ます"]),
}
# Width, case, voicing marks, punctuation, a code point beyond the BMP, Latin words.
MIXED = [
    "Hello, World! 東京都に住んでいます。ｶﾞｲﾄﾞ　テスト 𠀋x ＡＢＣ",
    None,
    "",
    "我来到北京清华大学，Ｐｙｔｈｏｎ３ 和 C++。",
    "ภาษาไทยง่ายนิดเดียว ພາສາລາວ",
]


def segmenter(name: str) -> object:
    pytest.importorskip(DICTIONARY_SEGMENTERS[name].module)
    return analyzer_for(make_analyzer_config("simple", segmenter=name))


def tokens(analyzer, values: list[str | None], spans: bool = False):
    stream = analyzer.analyze(pa.array(values, pa.string()), spans=spans)
    vocab = stream.vocab.to_pylist()
    return stream, [vocab[t] for t in stream.term.tolist()]


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_segments_words(name: str) -> None:
    text, expected = EXAMPLES[name]
    analyzer = segmenter(name)
    assert tokens(analyzer, [text])[1] == expected
    assert analyzer.terms(text) == expected


@pytest.mark.parametrize("name", sorted(DICTIONARY_SEGMENTERS))
def test_spans_positions_and_query_terms(name: str) -> None:
    analyzer = segmenter(name)
    stream, terms = tokens(analyzer, MIXED, spans=True)
    assert stream.dl.tolist() == [sum(1 for r in stream.row.tolist() if r == i) for i in range(len(MIXED))]
    by_row: dict[int, list[str]] = {}
    for row, term, pos, start, end in zip(
        stream.row.tolist(), terms, stream.pos.tolist(), stream.start.tolist(), stream.end.tolist()
    ):
        # Consecutive positions; the span's bytes, lowercased and folded, are the token.
        assert pos == len(by_row.setdefault(row, []))
        by_row[row].append(term)
        text = MIXED[row].encode("utf-8")[start:end].decode("utf-8")
        assert compose_voicing(pa.array([analyzer.normalize(text)], pa.large_string()))[0].as_py() == term
    for row, value in enumerate(MIXED):
        assert analyzer.terms(value or "") == by_row.get(row, [])
    assert "hello" in terms and not any("\uff01" <= c <= "\uff5e" for t in terms for c in t)  # (folded)
    assert "," not in "".join(terms) and "。" not in "".join(terms)


@pytest.mark.parametrize("name", ["icu", "sudachi", "lindera"])
def test_half_width_kana_compose_as_bigrams_do(name: str) -> None:
    analyzer = segmenter(name)
    assert "ガイド" in analyzer.terms("ｶﾞｲﾄﾞを読む")
    assert "ガイド" in analyzer.terms("ガイドを読む")


@pytest.mark.parametrize("name", sorted(DICTIONARY_SEGMENTERS))
def test_pieces_and_filters_agree(name: str) -> None:
    """Many rows (cut into pieces on threads) tokenize as each row alone; filters apply."""
    analyzer = segmenter(name)
    values = [v for v in MIXED if v] * 40
    _, terms = tokens(analyzer, values)
    alone = [t for v in values for t in analyzer.terms(v)]
    assert terms == alone
    stopped = analyzer_for(make_analyzer_config("simple", segmenter=name, stop_words=["hello"]))
    assert "hello" not in stopped.terms(MIXED[0])
    assert stopped.terms(MIXED[0]) == [t for t in analyzer.terms(MIXED[0]) if t != "hello"]


@pytest.mark.parametrize("name", sorted(DICTIONARY_SEGMENTERS))
def test_config_round_trips_or_names_the_extra(name: str) -> None:
    spec = DICTIONARY_SEGMENTERS[name]
    if importlib.util.find_spec(spec.module) is None:
        with pytest.raises(InvalidArgument, match=rf"datafusion-fts\[{spec.extra}\]"):
            make_analyzer_config("simple", segmenter=name)
        return
    config = make_analyzer_config("simple", segmenter=name)
    assert AnalyzerConfig.from_json(config.to_json()) == config


def test_unknown_segmenter_lists_every_name() -> None:
    with pytest.raises(InvalidArgument, match="jieba"):
        make_analyzer_config("simple", segmenter="nope")


DOCS = ["我来到北京清华大学", "他来到了网易杭研大厦", "北京大学生前来应聘"]


def test_chinese_search_through_the_api(tmp_path) -> None:
    pytest.importorskip("rjieba")
    db = datafusion_fts.connect(tmp_path)
    words = db.create_table("words", pa.table({"id": [0, 1, 2], "body": DOCS}))
    words.create_index("body", analyzer="chinese")
    grams = db.create_table("grams", pa.table({"id": [0, 1, 2], "body": DOCS}))
    grams.create_index("body")
    for table in (words, grams):
        assert sorted(table.search("北京", limit=10).column("id").to_pylist()) == [0, 2]
    assert words.search("大学生", limit=10).column("id").to_pylist() == [2]
    # Words, not bigrams: "京大" straddles 北京|大学生, and 大学 is inside the words 清华大学, 大学生.
    assert words.search("京大", limit=10).column("id").to_pylist() == []
    assert grams.search("京大", limit=10).column("id").to_pylist() == [2]
    assert words.search("大学", limit=10).column("id").to_pylist() == []
    assert sorted(grams.search("大学", limit=10).column("id").to_pylist()) == [0, 2]
    reopened = datafusion_fts.connect(tmp_path).table("words")
    assert reopened.search("清华大学", limit=10).column("id").to_pylist() == [0]
    # A fresh row (scanned beside the index's segments) is analyzed the same way.
    words.insert(pa.table({"id": [3], "body": ["清华大学在北京"]}))
    assert sorted(words.search("清华大学", limit=10).column("id").to_pylist()) == [0, 3]
    assert words.search("京大", limit=10).column("id").to_pylist() == []


def test_chinese_through_sql() -> None:
    pytest.importorskip("rjieba")
    db = datafusion_fts.connect()
    db.create_table("t", pa.table({"id": [0, 1, 2], "body": DOCS}))
    db.sql("CREATE FULLTEXT INDEX ON t (body) WITH (analyzer = 'chinese')")
    assert db.sql("SELECT id FROM t WHERE MATCH(body, '大厦')").to_pylist() == [{"id": 1}]
    rows = db.sql(
        "SELECT highlight_with(body, '北京', '[', ']', 'chinese', NULL, NULL) AS h, "
        "fts_tokenize_with(body, 'chinese', NULL) AS t FROM t WHERE id = 0"
    ).to_pylist()
    assert rows == [{"h": "我来到[北京]清华大学", "t": ["我", "来到", "北京", "清华大学"]}]
