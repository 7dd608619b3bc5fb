"""The n-gram index's analysis (segmenter "trigrams"): every character case-folded, in
overlapping trigrams, each distinct one of a row once; and the folding agrees with DataFusion's ILIKE and ``~*``."""

from __future__ import annotations

import random

import datafusion
import numpy as np
import pyarrow as pa

from datafusion_fts.analysis import analyzer_for
from datafusion_fts.analysis.analyzer import NGRAM_ANALYZER
from datafusion_fts.analysis.unicode_tables import MAX_CODE_POINT, fold_tables


def grams(texts: list[str | None]) -> list[list[str]]:
    stream = analyzer_for(NGRAM_ANALYZER).analyze(pa.array(texts, pa.large_string()))
    vocab = stream.vocab.to_pylist()
    out: list[list[str]] = [[] for _ in texts]
    for row, term in zip(stream.row.tolist(), stream.term.tolist()):
        out[row].append(vocab[term])
    return out


def test_every_character_counts_folded_in_order_each_gram_once() -> None:
    assert grams(["Ab C!", "ab", None, "", "STRAẞE", "ﬃx", "abcabcab"]) == [
        ["ab ", "b c", " c!"], [], [], [], ["str", "tra", "ras", "ass", "sse"], ["ffi", "fix"], ["abc", "bca", "cab"]]


def test_grams_are_the_distinct_ones_of_python_s_casefold_in_pieces_of_any_size() -> None:
    rnd = np.random.default_rng(3)
    alphabet = list("aAbß ẞİıσςΣǅ中😀é") + ["e\u0301"]
    texts = ["".join(rnd.choice(alphabet, size=rnd.integers(0, 30))) for _ in range(5000)]
    expected = [list(dict.fromkeys(t.casefold()[i : i + 3] for i in range(len(t.casefold()) - 2))) for t in texts]
    assert grams(texts) == expected  # (5,000 rows: cut into pieces run apart, vocabularies joined)


def test_characters_datafusion_takes_as_equal_fold_alike() -> None:
    """For cased code points c and every cased d, ``d ILIKE c`` (and ``~*``) in DataFusion
    implies that d's fold holds c's: so a text matching a pattern holds the pattern's
    grams. c ranges over the code points whose folding is unusual (several characters,
    not the lowercase, a case class of three or more) and a sample of the rest (every c
    of the 2,928 against every d: 0 exceptions, run once, 4 minutes)."""
    fold, _ = fold_tables()
    cased = [chr(cp) for cp in range(MAX_CODE_POINT) if not 0xD800 <= cp < 0xE000
             and (chr(cp).lower() != chr(cp) or chr(cp).upper() != chr(cp) or fold[cp] != cp)]
    unusual = [c for c in cased if fold[ord(c)] < 0 or c.casefold() != c.lower()
               or len({c, c.lower(), c.upper(), c.title(), c.casefold()}) > 2]
    patterns = sorted(set(unusual) | set(random.Random(7).sample(cased, 150)))
    ctx = datafusion.SessionContext()
    ctx.register_record_batches("x", [[pa.record_batch([pa.array(cased)], names=["a"])]])
    wrong = []
    for c in patterns:
        literal = c.replace("'", "''")
        for predicate in (f"a ILIKE '{literal}'", f"a ~* '{literal}'"):
            found = ctx.sql(f"SELECT a FROM x WHERE {predicate}").to_arrow_table().column(0).to_pylist()
            assert c in found
            wrong += [(c, d) for d in found if c.casefold() not in d.casefold()]
    assert len(patterns) > 300 and wrong == []
