"""Hand-computed sanity checks of the brute-force reference (tests/reference.py).

The engine is compared against the reference bit for bit, so the reference itself is
pinned here on small cases worked out by hand with math.log.
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datafusion_fts.query.tree import Boolean, Boost, Match, MultiMatch, Phrase, Prefix

try:
    from tests.reference import (
        RefTable,
        analyze,
        fuzzy_group,
        java_order_key,
        levenshtein,
        phrase_prefix_parts,
        phrase_tf,
        prefix_group,
        ref_search,
        sloppy_phrase_tf,
    )
    from tests.strategies import corpus_and_query, search_params
except ImportError:  # tests/ is on sys.path rather than importable as a package
    from reference import (
        RefTable,
        analyze,
        fuzzy_group,
        java_order_key,
        levenshtein,
        phrase_prefix_parts,
        phrase_tf,
        prefix_group,
        ref_search,
        sloppy_phrase_tf,
    )
    from strategies import corpus_and_query, search_params

K1, B = 1.2, 0.75


def bm25(idf: float, tf: float, dl: float, avgdl: float, k1: float = K1, b: float = B) -> float:
    """Rule 3 written out once more, independently of the reference."""
    return (idf * (k1 + 1.0) * tf) / (tf + k1 * ((1.0 - b) + (b * dl) / avgdl))


def idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


@pytest.fixture
def small() -> RefTable:
    """body: N = 3 rows with tokens (row 3 has none), total = 6, avgdl = 2.0;
    df(a) = 2, df(b) = 1, df(c) = 2."""
    return RefTable(
        rows={
            0: {"body": "a b"},
            1: {"body": "A, a -- c!"},
            2: {"body": "c"},
            3: {"body": None},
        }
    )


# ------------------------------------------------------------------------- analysis


def test_analyze_simple_rules():
    assert analyze(None) == []
    assert analyze("") == []
    assert analyze(" ,.!? ") == []
    assert analyze("Hello, World!") == ["hello", "world"]
    assert analyze("x² ٣٤ 東京") == ["x²", "٣٤", "東京"]
    # per code point simple lowercase: İ -> i (not "i̇"), final sigma stays σ, ß stays ß
    assert analyze("İstanbul ΣΊΣΥΦΟΣ straße") == ["istanbul", "σίσυφοσ", "straße"]
    assert analyze("naïve_café-ALPHA") == ["naïve", "café", "alpha"]


def test_analyze_token_length_in_utf8_bytes():
    assert analyze("z" * 40) == ["z" * 40]
    assert analyze("z" * 41) == []
    assert analyze("é" * 20) == ["é" * 20]  # 40 bytes
    assert analyze("é" * 21) == []  # 42 bytes
    assert analyze("abc abcdef", max_token_length=5) == ["abc"]
    # positions do not count dropped tokens
    assert analyze("a " + "z" * 41 + " b") == ["a", "b"]


# ---------------------------------------------------------------------------- BM25


def test_single_term_scores_by_hand(small):
    idf_a = math.log(1.6)  # ln(1 + (3 - 2 + 0.5) / (2 + 0.5))
    got = ref_search(small, Match("body", "a"))
    assert [r for r, _ in got] == [1, 0]
    # row 1: tf 2, dl 3 -> idf * 2.2 * 2 / (2 + 1.2 * (0.25 + 0.75 * 3 / 2)) = idf * 4.4 / 3.65
    assert got[0][1] == pytest.approx(idf_a * 4.4 / 3.65, rel=1e-15)
    assert got[0][1] == pytest.approx(0.5665797174469143, rel=1e-15)
    # row 1, the exact float operations of rule 3
    c = math.log(1.0 + (3 - 2 + 0.5) / (2 + 0.5)) * (1.2 + 1.0)
    assert got[0][1] == (c * 2.0) / (2.0 + 1.2 * ((1.0 - 0.75) + (0.75 * 3.0) / 2.0))
    # row 0: tf 1, dl 2 = avgdl -> idf * 2.2 / 2.2
    assert got[1][1] == pytest.approx(idf_a, rel=1e-15)
    assert got[1][1] == (c * 1.0) / (1.0 + 1.2 * ((1.0 - 0.75) + (0.75 * 2.0) / 2.0))


def test_multi_term_or_and_and(small):
    s_a1 = bm25(idf(3, 2), 2.0, 3.0, 2.0)
    s_c1 = bm25(idf(3, 2), 1.0, 3.0, 2.0)
    s_c2 = bm25(idf(3, 2), 1.0, 1.0, 2.0)
    s_a0 = bm25(idf(3, 2), 1.0, 2.0, 2.0)
    got = dict(ref_search(small, Match("body", "a c")))
    assert got == {1: 0.0 + s_a1 + s_c1, 0: s_a0, 2: s_c2}
    assert ref_search(small, Match("body", "a c", operator="and")) == [(1, 0.0 + s_a1 + s_c1)]
    # query order decides the summation order; a repeated term counts once
    assert dict(ref_search(small, Match("body", "c a A")))[1] == 0.0 + s_c1 + s_a1
    # boost multiplies the sum
    assert dict(ref_search(small, Match("body", "a c", boost=2.0)))[1] == (s_a1 + s_c1) * 2.0


def test_unknown_and_empty_terms(small):
    assert ref_search(small, Match("body", "")) == []
    assert ref_search(small, Match("body", "!!")) == []
    assert ref_search(small, Match("body", "zzz")) == []
    # "and" with a term outside the vocabulary matches nothing; "or" ignores it
    assert ref_search(small, Match("body", "a zzz", operator="and")) == []
    assert [r for r, _ in ref_search(small, Match("body", "a zzz"))] == [1, 0]
    # a column absent from every row reads as None
    assert ref_search(small, Match("title", "a")) == []


def test_statistics_global_and_live_only(small):
    # include_row_ids restricts the result, not N / df / avgdl
    full = dict(ref_search(small, Match("body", "a")))
    assert ref_search(small, Match("body", "a"), include_row_ids=[0, 2, 99]) == [(0, full[0])]
    # deleting row 2 changes the statistics: N = 2, total = 5, avgdl = 2.5, df(a) = 2
    small.deleted.add(2)
    got = dict(ref_search(small, Match("body", "a")))
    assert got[0] == bm25(idf(2, 2), 1.0, 2.0, 2.5)
    assert got[1] == bm25(idf(2, 2), 2.0, 3.0, 2.5)


def test_per_column_params():
    table = RefTable(rows={0: {"t": "a b"}, 1: {"t": "a"}}, params={"t": (2.0, 0.0)})
    got = dict(ref_search(table, Match("t", "a")))
    assert got[0] == bm25(idf(2, 2), 1.0, 2.0, 1.5, k1=2.0, b=0.0)
    assert got[0] == got[1]  # b = 0: no length normalisation


# -------------------------------------------------------------------------- order


def test_java_order_key():
    values = [1.0, -0.0, float("nan"), -math.inf, 0.0, math.inf, -1.0]
    ordered = sorted(values, key=lambda s: java_order_key(s, 0))
    assert math.isnan(ordered[0])
    assert ordered[1:4] == [math.inf, 1.0, 0.0]
    assert math.copysign(1.0, ordered[3]) == 1.0
    assert ordered[4] == 0.0 and math.copysign(1.0, ordered[4]) == -1.0
    assert ordered[5:] == [-1.0, -math.inf]
    # NaNs are equal to each other: row id decides
    assert java_order_key(float("nan"), 1) < java_order_key(-float("nan"), 2)
    assert java_order_key(0.5, 1) < java_order_key(0.5, 2)


def test_ties_by_row_id_and_paging():
    table = RefTable(rows={r: {"t": "x y"} for r in (7, 3, 5, 4)})
    table.rows[4] = {"t": "x"}  # shorter: scores higher
    got = ref_search(table, Match("t", "x"))
    assert [r for r, _ in got] == [4, 3, 5, 7]
    assert got[1][1] == got[2][1] == got[3][1] < got[0][1]
    assert ref_search(table, Match("t", "x"), limit=2, offset=1) == got[1:3]
    assert ref_search(table, Match("t", "x"), limit=0) == []
    assert ref_search(table, Match("t", "x"), offset=3) == got[3:]
    assert ref_search(table, Match("t", "x"), limit=10, offset=10) == []


def test_column_none_is_an_error(small):
    with pytest.raises(ValueError):
        ref_search(small, Match(None, "a"))
    with pytest.raises(ValueError):
        ref_search(small, Boolean(should=[Match("body", "a"), Phrase(None, "a b")]))


# -------------------------------------------------------------------- compounds


def test_boolean_rules(small):
    s_a = dict(ref_search(small, Match("body", "a")))
    s_c = dict(ref_search(small, Match("body", "c")))
    # neither MUST nor SHOULD: every live row (even without tokens), score 0.0
    small.deleted.add(0)
    assert ref_search(small, Boolean()) == [(1, 0.0), (2, 0.0), (3, 0.0)]
    small.deleted.clear()
    s_a = dict(ref_search(small, Match("body", "a")))
    s_c = dict(ref_search(small, Match("body", "c")))
    assert ref_search(small, Boolean(must_not=[Match("body", "a")])) == [(2, 0.0), (3, 0.0)]
    # SHOULD only: at least one must match; matching SHOULD scores add in clause order
    got = dict(ref_search(small, Boolean(should=[Match("body", "c"), Match("body", "a")])))
    assert got == {0: 0.0 + s_a[0], 1: 0.0 + s_c[1] + s_a[1], 2: 0.0 + s_c[2]}
    # MUST decides the rows; SHOULD adds to them
    got = dict(ref_search(small, Boolean(must=[Match("body", "c")], should=[Match("body", "a")])))
    assert got == {1: 0.0 + s_c[1] + s_a[1], 2: 0.0 + s_c[2]}
    # every MUST is required; MUST_NOT excludes and adds nothing
    assert dict(ref_search(small, Boolean(must=[Match("body", "a"), Match("body", "c")]))) == {
        1: 0.0 + s_a[1] + s_c[1]
    }
    got = ref_search(
        small, Boolean(should=[Match("body", "a")], must_not=[Match("body", "c")])
    )
    assert got == [(0, 0.0 + s_a[0])]


def test_boost_rule(small):
    s_a = dict(ref_search(small, Match("body", "a")))
    s_c = dict(ref_search(small, Match("body", "c")))
    got = dict(ref_search(small, Boost(Match("body", "c"), Match("body", "a"), 0.5)))
    assert got == {1: s_c[1] - (0.5 * s_a[1]), 2: s_c[2]}
    # negative_boost 2.0 can push a score below zero, and the order follows
    got = ref_search(small, Boost(Match("body", "c"), Match("body", "a"), 2.0))
    assert got == [(2, s_c[2]), (1, s_c[1] - (2.0 * s_a[1]))]
    assert got[1][1] < 0.0


def test_multi_match_is_its_expansion():
    table = RefTable(
        rows={0: {"title": "a", "body": "b a"}, 1: {"title": "b", "body": "a a"}, 2: {}}
    )
    mm = MultiMatch("a b", ("title", "body"), boosts=(2.0, 0.5))
    manual = Boolean(
        should=[Match("title", "a b", boost=2.0), Match("body", "a b", boost=0.5)]
    )
    assert ref_search(table, mm) == ref_search(table, manual)
    # each leaf with its own column's statistics
    title_a = bm25(idf(2, 1), 1.0, 1.0, 1.0)
    body_b = bm25(idf(2, 1), 1.0, 2.0, 2.0)
    body_a = bm25(idf(2, 2), 1.0, 2.0, 2.0)
    assert dict(ref_search(table, mm))[0] == 0.0 + (0.0 + title_a) * 2.0 + (
        0.0 + body_b + body_a
    ) * 0.5


# ------------------------------------------------------------------------- phrase


def test_phrase_tf_and_slop():
    assert phrase_tf(["a", "b"], ["a", "b"], 0) == 1
    assert phrase_tf(["a", "x", "b"], ["a", "b"], 0) == 0
    assert phrase_tf(["a", "x", "b"], ["a", "b"], 1) == 1
    assert phrase_tf(["a", "x", "y", "b"], ["a", "b"], 1) == 0
    assert phrase_tf(["b", "a"], ["a", "b"], 2) == 0  # order matters
    assert phrase_tf(["a", "a", "a"], ["a", "a"], 0) == 2  # starts 0 and 1
    assert phrase_tf(["a", "b", "b"], ["a", "b"], 1) == 1  # one start, two ends
    assert phrase_tf(["a", "b", "a", "b"], ["a", "b"], 0) == 2
    assert phrase_tf(["a", "x", "b", "y", "c"], ["a", "b", "c"], 1) == 0
    assert phrase_tf(["a", "x", "b", "y", "c"], ["a", "b", "c"], 2) == 1
    assert phrase_tf(["a", "c", "b"], ["a", "b", "c"], 5) == 0  # needs c after b
    assert phrase_tf(["a", "a"], ["a"], 0) == 2


def test_phrase_scores_by_hand():
    table = RefTable(
        rows={
            0: {"t": "a b a b"},
            1: {"t": "a x b"},
            2: {"t": "b a"},
            3: {"t": "a " + "z" * 41 + " b"},  # dropped token leaves no gap
        }
    )
    # N = 4, total = 4 + 3 + 2 + 2 = 11, avgdl = 2.75, df(a) = df(b) = 4
    idf_ab = 0.0 + idf(4, 4) + idf(4, 4)
    got = dict(ref_search(table, Phrase("t", "a b")))
    assert got == {0: bm25(idf_ab, 2.0, 4.0, 2.75), 3: bm25(idf_ab, 1.0, 2.0, 2.75)}
    got = dict(ref_search(table, Phrase("t", "A-b", slop=1, boost=2.0)))
    assert set(got) == {0, 1, 3}
    assert got[1] == bm25(idf_ab, 1.0, 3.0, 2.75) * 2.0
    # a repeated term counts its idf once per phrase position
    got = dict(ref_search(table, Phrase("t", "a a", slop=1)))
    assert got == {0: bm25(0.0 + idf(4, 4) + idf(4, 4), 1.0, 4.0, 2.75)}
    # empty phrase or a term outside the vocabulary: no match
    assert ref_search(table, Phrase("t", "...")) == []
    assert ref_search(table, Phrase("t", "a q")) == []


def test_sloppy_phrase_tf_by_hand():
    # any order: a transposition costs 2
    assert sloppy_phrase_tf(["b", "a"], ["a", "b"], 2) == 1
    assert sloppy_phrase_tf(["b", "a"], ["a", "b"], 1) == 0
    assert sloppy_phrase_tf(["b", "x", "a"], ["a", "b"], 2) == 0
    assert sloppy_phrase_tf(["b", "x", "a"], ["a", "b"], 3) == 1
    assert sloppy_phrase_tf(["a", "x", "b"], ["a", "b"], 1) == 1
    assert sloppy_phrase_tf(["c", "b", "a"], ["a", "b", "c"], 4) == 1  # reversed: c at -2, a at +2
    assert sloppy_phrase_tf(["c", "b", "a"], ["a", "b", "c"], 3) == 0
    # one match per lead stretch, not one per pair: four b's with one a count once
    assert sloppy_phrase_tf(["b", "b", "b", "b", "a"], ["a", "b"], 5) == 1
    assert sloppy_phrase_tf(["a", "b", "b", "b", "b"], ["a", "b"], 5) == 1
    assert sloppy_phrase_tf(["a", "b", "x", "a", "b"], ["a", "b"], 1) == 2
    # a repeated term takes distinct positions
    assert sloppy_phrase_tf(["a"], ["a", "a"], 5) == 0
    assert sloppy_phrase_tf(["a", "x", "a"], ["a", "a"], 1) == 1
    assert sloppy_phrase_tf(["a", "a", "a"], ["a", "a"], 0) == 2  # as the exact phrase
    assert sloppy_phrase_tf(["a", "b", "a"], ["a", "b", "a"], 0) == 1
    assert sloppy_phrase_tf(["b", "a", "a"], ["a", "b", "a"], 2) == 1
    assert sloppy_phrase_tf(["a", "a"], ["a"], 0) == 2
    assert sloppy_phrase_tf(["a", "b"], ["a", "q"], 9) == 0


def _a_match_exists(tokens: list[str], terms: list[str], slop: int) -> bool:
    """Lucene's condition, by brute force: one distinct position per phrase term whose
    offsets (position minus place in the phrase) differ by at most ``slop``."""
    where = [[p for p, token in enumerate(tokens) if token == term] for term in terms]
    for chosen in itertools.product(*where):
        if len(set(chosen)) == len(chosen):
            shifted = [p - i for i, p in enumerate(chosen)]
            if max(shifted) - min(shifted) <= slop:
                return True
    return False


@given(
    st.lists(st.sampled_from("abc"), max_size=9),
    st.lists(st.sampled_from("abc"), min_size=1, max_size=4),
    st.integers(0, 5),
)
def test_sloppy_phrase_tf_counts_exactly_when_lucene_matches(tokens, terms, slop):
    tf = sloppy_phrase_tf(tokens, terms, slop)
    assert (tf > 0) == _a_match_exists(tokens, terms, slop)
    if slop == 0:
        assert tf == phrase_tf(tokens, terms, 0)  # the exact phrase, counted by starts
    # more slop never loses a match, and the in-order phrase is a sloppy one
    assert tf == 0 or sloppy_phrase_tf(tokens, terms, slop + 1) > 0
    assert phrase_tf(tokens, terms, slop) == 0 or tf > 0


def test_phrase_prefix_parts():
    assert phrase_prefix_parts("big bad wo") == ("big bad ", "wo")
    assert phrase_prefix_parts("big, Bad-Wo!") == ("big, Bad-", "Wo")
    assert phrase_prefix_parts("wo") == ("", "wo")
    assert phrase_prefix_parts("... ") == ("... ", None)


def test_sloppy_and_prefix_phrase_scores_by_hand():
    table = RefTable(
        rows={
            0: {"t": "big bad wolf"},
            1: {"t": "bad big wolf"},
            2: {"t": "big bad woman and wolf"},
            3: {"t": "big wolf"},
        }
    )
    # N = 4, total = 3 + 3 + 5 + 2 = 13, avgdl = 3.25
    avgdl = 3.25
    idf_big_bad = 0.0 + idf(4, 4) + idf(4, 3)
    got = dict(ref_search(table, Phrase("t", "big bad", slop=2)))
    assert got == {r: bm25(idf_big_bad, 1.0, dl, avgdl) for r, dl in ((0, 3.0), (1, 3.0), (2, 5.0))}
    assert set(dict(ref_search(table, Phrase("t", "big bad", slop=1)))) == {0, 2}
    assert set(dict(ref_search(table, Phrase("t", "big bad", slop=2, in_order=True)))) == {0, 2}
    # "big bad wo"*: wo -> woman, wolf (sorted); each expansion a phrase of its own
    wolf = bm25(idf_big_bad + idf(4, 4), 1.0, 3.0, avgdl)
    woman = bm25(idf_big_bad + idf(4, 1), 1.0, 5.0, avgdl)
    got = dict(ref_search(table, Phrase("t", "big bad wo", prefix=True, boost=2.0)))
    assert got == {0: (0.0 + wolf) * 2.0, 2: (0.0 + woman) * 2.0}
    # max_expansions=1 keeps only "wolf" (the smallest)
    assert set(dict(ref_search(table, Phrase("t", "big bad wo", prefix=True, max_expansions=1)))) == {0}
    # slop applies to every expanded phrase
    assert set(dict(ref_search(table, Phrase("t", "bad big wo", slop=2, prefix=True)))) == {0, 1, 2}
    assert ref_search(table, Phrase("t", "big bad zz", prefix=True)) == []
    assert ref_search(table, Phrase("t", "!!", prefix=True)) == []


# --------------------------------------------------------------- fuzzy and prefix


def test_levenshtein():
    assert levenshtein("", "") == 0
    assert levenshtein("abc", "") == 3
    assert levenshtein("alpha", "alpah") == 2  # a transposition is two edits
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("straße", "strasse") == 2  # over code points
    assert levenshtein("東京", "東") == 1


def test_fuzzy_expansion_order():
    vocab = ["beta", "alphx", "alpah", "alphas", "alpha", "alp", "blpha", "lpha"]
    # distance 0 first, then distance 1 by term: alphas, alphx, blpha, lpha
    assert fuzzy_group("alpha", vocab, 1, 0, 50) == ["alpha", "alphas", "alphx", "blpha", "lpha"]
    assert fuzzy_group("alpha", vocab, 1, 0, 2) == ["alpha", "alphas"]
    assert fuzzy_group("alpha", vocab, 1, 1, 50) == ["alpha", "alphas", "alphx"]
    assert fuzzy_group("alpha", vocab, 2, 0, 50) == [
        "alpha", "alphas", "alphx", "blpha", "lpha", "alp", "alpah",
    ]
    # the query term itself need not be in the vocabulary
    assert fuzzy_group("alphz", vocab, 1, 3, 50) == ["alpha", "alphx"]
    # fuzziness 0: the term itself, if present
    assert fuzzy_group("alpha", vocab, 0, 0, 50) == ["alpha"]
    assert fuzzy_group("gamma", vocab, 0, 0, 50) == []
    # a prefix_length beyond the term's length fixes the whole term, as in Lucene: only
    # extensions of it remain within reach
    assert fuzzy_group("al", ["al", "alp", "a"], 1, 5, 50) == ["al", "alp"]


def test_fuzzy_match_scores():
    table = RefTable(rows={0: {"t": "alpha"}, 1: {"t": "alphas alpha"}, 2: {"t": "beta"}})
    # N = 3, total = 4, avgdl = 4/3; df(alpha) = 2, df(alphas) = 1
    avgdl = 4 / 3
    got = dict(ref_search(table, Match("t", "alphx", fuzziness=1)))
    assert got == {
        0: 0.0 + bm25(idf(3, 2), 1.0, 1.0, avgdl),
        1: 0.0 + bm25(idf(3, 2), 1.0, 2.0, avgdl),
    }
    # expansions in (distance, term) order: alpha (1), alphas (2); summed in that order
    got = dict(ref_search(table, Match("t", "alphx", fuzziness=2)))
    assert got[1] == 0.0 + bm25(idf(3, 2), 1.0, 2.0, avgdl) + bm25(idf(3, 1), 1.0, 2.0, avgdl)
    got = dict(ref_search(table, Match("t", "alphx", fuzziness=2, max_expansions=1)))
    assert got == {
        0: 0.0 + bm25(idf(3, 2), 1.0, 1.0, avgdl),
        1: 0.0 + bm25(idf(3, 2), 1.0, 2.0, avgdl),
    }
    # prefix_length keeps the first characters fixed
    assert ref_search(table, Match("t", "xlpha", fuzziness=1, prefix_length=1)) == []
    assert {r for r, _ in ref_search(table, Match("t", "xlpha", fuzziness=1))} == {0, 1}
    # overlapping groups: each group scores its terms again
    got = dict(ref_search(table, Match("t", "alpha alphx", fuzziness=1, max_expansions=1)))
    s = bm25(idf(3, 2), 1.0, 1.0, avgdl)
    assert got[0] == 0.0 + s + s
    # "and" needs every group non-empty and present
    assert ref_search(table, Match("t", "alphx qqq", operator="and", fuzziness=1)) == []


def test_prefix():
    vocab = ["alphabet", "alpha", "alp", "beta", "alphas", "άλφα"]
    assert prefix_group("ALP", vocab, 50) == ["alp", "alpha", "alphabet", "alphas"]
    assert prefix_group("alph", vocab, 2) == ["alpha", "alphabet"]
    assert prefix_group("Ά", vocab, 50) == ["άλφα"]
    assert prefix_group("al p", vocab, 50) == []  # not tokenized
    assert prefix_group("", vocab, 50) == sorted(vocab)
    table = RefTable(rows={0: {"t": "alpha alphabet"}, 1: {"t": "alp"}, 2: {"t": "beta"}})
    avgdl = 4 / 3
    got = dict(ref_search(table, Prefix("t", "Alph", boost=0.5)))
    assert got == {
        0: (0.0 + bm25(idf(3, 1), 1.0, 2.0, avgdl) + bm25(idf(3, 1), 1.0, 2.0, avgdl)) * 0.5
    }


# ---------------------------------------------------------------- strategies smoke


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus_and_query())
def test_reference_runs_on_generated_data(table_and_query):
    table, query = table_and_query
    full = ref_search(table, query)
    live = set(table.live_row_ids())
    assert {r for r, _ in full} <= live
    assert len({r for r, _ in full}) == len(full)
    keys = [java_order_key(s, r) for r, s in full]
    assert keys == sorted(keys)
    # paging is a slice of the full order
    assert ref_search(table, query, limit=3, offset=2) == full[2:5]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus_and_query(max_depth=1), search_params(range(40)))
def test_include_row_ids_restricts_without_rescoring(table_and_query, params):
    table, query = table_and_query
    full = ref_search(table, query)
    include = params["include_row_ids"]
    got = ref_search(table, query, **params)
    expected = full if include is None else [(r, s) for r, s in full if r in set(include)]
    limit, offset = params["limit"], params["offset"]
    expected = expected[offset:] if limit is None else expected[offset : offset + limit]
    assert got == expected
