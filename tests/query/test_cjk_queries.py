"""Queries over scripts written without spaces (issue 42): a quoted run of 1 to 4
characters finds exactly the rows whose text holds that string, and one character alone
(quoted or not) every row holding it, on every plan (indexed, flat scan, an unindexed tail
beside segments, fresh rows), with the reference's scores to the bit."""

from __future__ import annotations

import random
import re

import pyarrow as pa
import pytest
from reference import RefTable, ref_search

import datafusion_fts as fts
from datafusion_fts.query.tree import Match, Phrase

# Few characters, so runs share them and phrases hit often; separators that split runs
# (an ideographic comma, a space, Latin words) and some that do not occur in phrases.
CHARS = "数据库管理系统中文日本語"
SEPARATORS = ("", "", "", "", "，", " ", "。", " abc ", "、")


def _texts(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        runs = [
            "".join(rng.choice(CHARS) for _ in range(rng.randint(1, 6)))
            for _ in range(rng.randint(1, 5))
        ]
        text = runs[0]
        for run in runs[1:]:
            text += rng.choice(SEPARATORS) + run
        out.append(text)
    return out


def _phrases(rng: random.Random, texts: list[str], n: int) -> list[str]:
    """Strings of 1 to 4 characters: most cut from the texts (found), some drawn at random."""
    out = []
    for i in range(n):
        size = rng.randint(1, 4)
        if i % 3:
            text = rng.choice(texts)
            at = rng.randrange(len(text))
            out.append(text[at:at + size])
        else:
            out.append("".join(rng.choice(CHARS) for _ in range(size)))
    return [p for p in dict.fromkeys(out) if p.strip() and not any(c in p for c in "，。、 abc")]


def _table(texts: list[str], layout: str) -> fts.Table:
    db = fts.connect(config={"fts.memtable_rows": 10_000})
    ids = list(range(len(texts)))
    if layout == "tail":  # half the rows in a segment, half not indexed
        half = len(texts) // 2
        t = db.create_table("docs", pa.table({"id": ids[:half], "body": texts[:half]}))
        t.create_index("body")
        t.insert(pa.table({"id": ids[half:], "body": texts[half:]}))
        t.flush()
        return t
    t = db.create_table("docs", pa.table({"id": ids, "body": texts}))
    t.create_index("body")
    if layout == "flat_scan":
        db.settings.set("fts.force_plan", "flat_scan")
    return t


@pytest.mark.parametrize("layout", ["indexed", "flat_scan", "tail"])
def test_a_quoted_run_finds_exactly_the_rows_holding_it(layout: str) -> None:
    rng = random.Random(42)
    texts = _texts(rng, 400)
    phrases = _phrases(rng, texts, 4_000)
    assert len(phrases) >= 1_000
    t = _table(texts, layout)
    ref = RefTable(rows={i: {"body": x} for i, x in enumerate(texts)}, columns=["body"])
    wrong = []
    for i, phrase in enumerate(phrases):
        got = t.search(Phrase("body", phrase), limit=len(texts))
        want = {i for i, text in enumerate(texts) if phrase in text}
        rows = got.column("_rowid").to_pylist()
        if set(rows) != want:
            wrong.append(phrase)
            continue
        if i % 4:  # (scores: of a quarter of them)
            continue
        expected = ref_search(ref, Phrase("body", phrase), limit=len(texts))
        assert list(zip(rows, got.column("_score").to_pylist())) == expected, phrase
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("layout", ["indexed", "flat_scan", "tail"])
def test_one_character_finds_every_row_holding_it(layout: str) -> None:
    rng = random.Random(7)
    texts = _texts(rng, 200) + ["ｶﾞｷﾞ", "カ\u3099", "がぎ"]
    t = _table(texts, layout)
    ref = RefTable(rows={i: {"body": x} for i, x in enumerate(texts)}, columns=["body"])
    for char in CHARS + "ガ":
        query = Match("body", char)
        got = t.search(query, limit=len(texts))
        rows = got.column("_rowid").to_pylist()
        want = {i for i, text in enumerate(texts) if char in text}
        if char == "ガ":  # (width folded, a voicing mark composed)
            want = {len(texts) - 3, len(texts) - 2}
        assert set(rows) == want, char
        assert list(zip(rows, got.column("_score").to_pylist())) == ref_search(ref, query, limit=len(texts))


def test_a_query_string_mixes_words_and_runs() -> None:
    t = _table(["数据库 管理", "数据 管理", "管理系统 database", "系统"], "indexed")
    ids = lambda q: sorted(t.search(q, limit=10).column("id").to_pylist())  # noqa: E731
    assert ids('+数据 -库') == [1]
    assert ids('"数据库"') == [0] and ids('数据库') == [0, 1]
    assert ids('+系统 +database') == [2] and ids('系') == [2, 3]


@pytest.mark.parametrize("layout", ["indexed", "flat_scan", "tail"])
def test_a_quoted_phrase_of_two_runs_finds_them_with_only_separators_between(layout: str) -> None:
    """Two runs of two or more characters in one quoted phrase ("数据 据库"): the rows
    holding the first, then the second, with nothing but separators between them, or
    none (the tokenizer leaves a position between two runs; the phrase keeps it)."""
    rng = random.Random(11)
    texts = _texts(rng, 300)
    t = _table(texts, layout)
    ref = RefTable(rows={i: {"body": x} for i, x in enumerate(texts)}, columns=["body"])
    pairs = set()
    while len(pairs) < 300:
        text = rng.choice(texts)
        at = rng.randrange(len(text))
        a, b = rng.randint(2, 3), rng.randint(2, 3)
        pairs.add((text[at:at + a], text[at + a:at + a + b]) if rng.random() < 0.5
                  else ("".join(rng.choices(CHARS, k=a)), "".join(rng.choices(CHARS, k=b))))
    checked = 0
    for first, second in sorted(pairs):
        if not (len(first) >= 2 and len(second) >= 2 and all(c in CHARS for c in first + second)):
            continue
        query = Phrase("body", f"{first}，{second}")
        got = t.search(query, limit=len(texts))
        pattern = re.compile(re.escape(first) + r"[^\w]*" + re.escape(second))
        assert set(got.column("_rowid").to_pylist()) == {i for i, x in enumerate(texts) if pattern.search(x)}, query
        assert list(zip(got.column("_rowid").to_pylist(), got.column("_score").to_pylist())) == ref_search(
            ref, query, limit=len(texts))
        checked += 1
    assert checked >= 150
