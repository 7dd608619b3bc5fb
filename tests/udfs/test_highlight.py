"""highlight(): matched tokens wrapped, original characters kept (issue 8)."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import COMMON_WORDS, query_trees, values

from datafusion_fts.analysis import analyzer_for, make_analyzer_config
from datafusion_fts.query.tree import Boost, Match, Phrase, Prefix
from datafusion_fts.udfs.arguments import string_buffers, validity
from datafusion_fts.udfs.highlight import _marks, _render, highlighted
from datafusion_fts.udfs.text_query import BatchMatch, TextQuery

GOLDEN = [
    # unicode: case per code point (İ), ß, words of other scripts
    ("Straße in İSTANBUL, straße!", "straße istanbul", None, "<b>Straße</b> in <b>İSTANBUL</b>, <b>straße</b>!"),
    ("東京 大阪 東京大阪", "東京", None, "<b>東京</b> 大阪 <b>東京</b>大阪"),  # (bigrams, issue 42)
    ("数据库管理系统 数据，据库", "数据库", None, "<b>数据库</b>管理系统 <b>数据</b>，<b>据库</b>"),
    ("数据库管理系统 数据，据库", '"数据库"', None, "<b>数据库</b>管理系统 数据，据库"),
    ("ｶﾞｷﾞの数と数据", "数", None, "ｶﾞｷﾞの<b>数</b>と<b>数</b>据"),
    ("ｶﾞｷﾞの数と数据", "がぎ ガギ", None, "<b>ｶﾞｷﾞ</b>の数と数据"),
    # stemming: the english analyzer's stems match, the original words are kept
    ("The runners were running quickly; a run.", "run", "english",
     "The runners were <b>running</b> quickly; a <b>run</b>."),
    # folding
    ("Crème brûlée at the CAFÉ", "creme cafe", "folding", "<b>Crème</b> brûlée at the <b>CAFÉ</b>"),
    # overlapping matches: a token matched by two leaves, phrase occurrences sharing tokens
    ("quick fox quick", 'fox "quick fox"', None, "<b>quick</b> <b>fox</b> quick"),
    ("a a a", '"a a"', None, "<b>a</b> <b>a</b> <b>a</b>"),
    # phrases: whole occurrences only, with the query's slop
    ("quick brown fox", '"quick fox"', None, "quick brown fox"),
    ("quick brown fox and quick red lazy fox", '"quick fox"~1', None,
     "<b>quick</b> brown <b>fox</b> and quick red lazy fox"),
    ("quick brown fox and quick red lazy fox", '"quick fox"~2', None,
     "<b>quick</b> brown <b>fox</b> and <b>quick</b> red lazy <b>fox</b>"),
    ("the fox and the hound", '"fox hound"', "english", "the <b>fox</b> and the <b>hound</b>"),  # stop words leave no gap
    # sloppy phrases take their terms in any order (a transposition costs 2)
    ("fox quick", '"quick fox"~2', None, "<b>fox</b> <b>quick</b>"),
    ("fox quick", '"quick fox"~1', None, "fox quick"),
    ("brown fox, the quick one", '"quick brown fox"~4', None, "<b>brown</b> <b>fox</b>, the <b>quick</b> one"),
    # phrase prefixes: whole occurrences of the expanded phrases
    ("big bad wolf, big bad woman, bad wolf", '"big bad wo"*', None,
     "<b>big</b> <b>bad</b> <b>wolf</b>, <b>big</b> <b>bad</b> <b>woman</b>, bad wolf"),
    # prefix and fuzzy leaves highlight their expansions
    ("alphabet alpha alps beta", "alp*", None, "<b>alphabet</b> <b>alpha</b> <b>alps</b> beta"),
    ("color colour colder", "colr~1", None, "<b>color</b> colour colder"),
    ("color colour colder", "colr~2", None, "<b>color</b> <b>colour</b> <b>colder</b>"),
    # only what makes the text match
    ("alpha gamma", "(alpha AND beta) OR gamma", None, "alpha <b>gamma</b>"),
    ("lazy fox", "+fox -lazy", None, "lazy fox"),
    ("Fox, FOX; fox.", "fox^2", None, "<b>Fox</b>, <b>FOX</b>; <b>fox</b>."),
    # a leaf on another column is taken to hold (the row is a hit), never highlighted
    ("lazy fox quick", "title:fox AND quick", None, "lazy fox <b>quick</b>"),
    ("", "fox", None, ""),
    ("...", "fox", None, "..."),
]


@pytest.mark.parametrize("text, query, analyzer, expected", GOLDEN)
def test_golden(session, text, query, analyzer, expected):
    got = session.one("highlight_with(t, q, '<b>', '</b>', a, NULL, NULL)", t=text, q=query, a=analyzer)
    assert got == expected
    if analyzer is None:
        assert session.one("highlight(t, q)", t=text, q=query) == expected


def test_column_scopes_name_the_text(session):
    """With the text's column name, ``body:`` leaves are the text's and ``title:`` ones not."""
    got = session.one("highlight_with(t, 'body:fox title:quick', '[', ']', NULL, 'body', NULL)", t="lazy fox quick")
    assert got == "lazy [fox] quick"


def test_tags_and_queries_per_row(session):
    got = session.rows("highlight_with(t, q, p, s, NULL, NULL, NULL)",
                       t=["a b", "a b", "a b"], q=["a", "b", "a b"], p=["<", "[", "{"], s=[">", "]", "}"])
    assert got == ["<a> b", "a [b]", "{a} {b}"]


def test_nulls_in_nulls_out(session):
    got = session.rows("highlight_with(t, q, p, s, NULL, NULL, NULL)",
                       t=[None, "a", "a", "a"], q=["a", None, "a", "a"], p=["<", "<", None, "<"], s=[">", ">", ">", None])
    assert got == [None, None, None, None]


def _batch(tree, texts, analyzer="simple"):
    return BatchMatch(TextQuery(tree, "body", analyzer_for(make_analyzer_config(analyzer))), pa.array(texts, pa.string()), spans=True)


def _marked_words(match: BatchMatch, texts) -> list[list[str]]:
    s, marked = match.stream, match.marked()
    out: list[list[str]] = [[] for _ in texts]
    for i in np.flatnonzero(marked):
        out[s.row[i]].append(texts[s.row[i]].encode()[s.start[i]:s.end[i]].decode())
    return out


def _joined(match: BatchMatch, row: int, text: str) -> list[str]:
    """The text of row ``row``'s marked tokens, overlapping ones (neighbouring bigrams)
    joined: what the tags wrap."""
    s, marked = match.stream, match.marked()
    spans: list[list[int]] = []
    for i in np.flatnonzero(marked & (s.row == row)):
        if spans and s.start[i] < spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], int(s.end[i]))
        else:
            spans.append([int(s.start[i]), int(s.end[i])])
    return [text.encode()[a:b].decode() for a, b in spans]


def test_each_text_expands_to_its_own_best_expansions():
    """A prefix/fuzzy leaf marks at most max_expansions of the text's own candidates, the
    smallest by (distance, term): each text is its own one-row collection."""
    texts = ["alpha alps alphabet", "alps beta", "alphabet alps alps"]
    assert _marked_words(_batch(Prefix("body", "alp", max_expansions=1), texts), texts) == [
        ["alpha"], ["alps"], ["alphabet"]]
    assert _marked_words(_batch(Prefix("body", "alp", max_expansions=2), texts), texts) == [
        ["alpha", "alphabet"], ["alps"], ["alphabet", "alps", "alps"]]
    # color is 1 edit away, colder and colour 2: the best two are color, then colder.
    fuzzy = Match("body", "colr", fuzziness=2, max_expansions=2)
    texts = ["colder colour color", "colour"]
    assert _marked_words(_batch(fuzzy, texts), texts) == [["colder", "color"], ["colour"]]


def test_a_phrase_prefix_expands_to_each_texts_own_best_expansions():
    """With max_expansions=1 a text's only expansion of "wo" is its smallest term starting
    with it: "wolf" where it has one, even when "big bad woman" is there too."""
    texts = ["big bad woman wolf", "big bad wolf woman", "big bad woman"]
    tree = Phrase("body", "big bad wo", prefix=True, max_expansions=1)
    match = _batch(tree, texts)
    assert match.matched_rows().tolist() == [1, 2]
    assert _marked_words(match, texts) == [[], ["big", "bad", "wolf"], ["big", "bad", "woman"]]


def test_boost_negatives_are_not_highlighted():
    texts = ["good bad", "bad"]
    assert _marked_words(_batch(Boost(Match("body", "good"), Match("body", "bad"), 0.5), texts), texts) == [["good"], []]


@given(st.lists(values(), max_size=8), query_trees(["body"], COMMON_WORDS + ("x", "alph"), max_depth=2))
def test_tags_only_wrap_tokens_of_matching_texts(texts, tree):
    """Removing the tags gives the text back; a text the query does not match is unchanged;
    what is wrapped is whole tokens of the query's terms (neighbouring bigrams as one)."""
    match = _batch(tree, texts)
    matched = set(match.matched_rows().tolist())
    s, marked = match.stream, match.marked()
    assert all(s.row[i] in matched for i in np.flatnonzero(marked))
    n = len(texts)
    values_ = pa.array(texts, pa.string())
    lengths = np.diff(string_buffers(values_)[1])
    zeros = np.zeros(n, dtype=np.bool_)
    tags = [pa.array(["\x01"] * n, pa.string()), pa.array(["\x02"] * n, pa.string())]
    rendered = _render(values_, validity(values_), (np.zeros(n, np.int64), lengths, zeros, zeros),
                       _marks(match, marked, values_), *tags, tags[0]).to_pylist()
    for row, (text, got) in enumerate(zip(texts, rendered)):
        if text is None:
            assert got is None
            continue
        assert got.replace("\x01", "").replace("\x02", "") == text
        if row not in matched:
            assert got == text
        assert re.findall("\x01(.*?)\x02", got, re.DOTALL) == _joined(match, row, text)
    # The function answers texts that cannot hold a query term without tokenizing them.
    assert highlighted(match.query, values_, validity(values_), *tags).to_pylist() == rendered
