"""A brute-force BM25 reference (docs/design.md: "1. Purpose and invariants"), in plain Python, for
differential tests.

The engine is tested against this module for bit-identical float64 results, so every
function below follows one numbered rule of the project's semantic decisions, spelled
out in its docstring, with the float operations in exactly the stated order. Nothing
here is clever or fast: corpora in tests are tiny, so everything is recomputed per
query from the raw column values.

Rules (numbers referred to below):

1. analyzer "simple"         2. statistics              3. idf and term score
4. Match                     5. Prefix                  6. Phrase
7. MultiMatch                8. Boolean                 9. Boost
10. order, include_row_ids, limit/offset, column None -> ValueError
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from datafusion_fts.query.tree import Boolean, Boost, Match, MultiMatch, Phrase, Prefix

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75
DEFAULT_MAX_TOKEN_LENGTH = 40


@dataclass
class RefTable:
    """A table as the reference sees it.

    ``rows`` maps a row id to its column values (a column missing from a row's dict is
    read as None). ``deleted`` holds ids of rows that are not live. ``params`` gives a
    column's (k1, b), default (1.2, 0.75); ``max_token_length`` a column's analyzer
    limit in UTF-8 bytes, default 40. ``columns`` optionally names the text columns in
    schema order (useful for a table with no rows); the reference itself never needs it.
    """

    rows: dict[int, dict[str, str | None]]
    deleted: set[int] = field(default_factory=set)
    params: dict[str, tuple[float, float]] = field(default_factory=dict)
    max_token_length: dict[str, int] = field(default_factory=dict)
    columns: list[str] = field(default_factory=list)

    def live_row_ids(self) -> list[int]:
        """Ids of the live rows, ascending."""
        return sorted(r for r in self.rows if r not in self.deleted)


# ---------------------------------------------------------------------------- rule 1


def lower_code_point(c: str) -> str:
    """Rule 1: simple (one code point to one code point) lowercase mapping.

    ``str.lower`` maps only U+0130 (İ) to two code points ("i" + U+0307); the simple
    mapping keeps the first one.
    """
    lowered = c.lower()
    return lowered if len(lowered) == 1 else lowered[0]


def lowercase(text: str) -> str:
    """Rule 1 (also used by rule 5): lowercase each code point on its own."""
    return "".join(lower_code_point(c) for c in text)


# Rule 1's scripts written without spaces: letters whose Unicode names begin so.
BIGRAM_NAMES = ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH", "HIRAGANA", "KATAKANA",
                "HALFWIDTH KATAKANA", "HANGUL", "HALFWIDTH HANGUL", "IDEOGRAPHIC")


def fold_width(c: str) -> str:
    """Rule 1: a full-width ASCII character is its ASCII one; a half-width Katakana or
    Hangul one its NFKC form (when that is one character)."""
    cp = ord(c)
    if 0xFF01 <= cp <= 0xFF5E:
        return chr(cp - 0xFEE0)
    if 0xFF61 <= cp <= 0xFFDC:
        folded = unicodedata.normalize("NFKC", c)
        return folded if len(folded) == 1 else c
    return c


def analyze_positions(text: str | None, max_token_length: int = DEFAULT_MAX_TOKEN_LENGTH,
                      segmenter: str = "bigrams") -> list[str | None]:
    """Rule 1: the "simple" analyzer, a token at each position (None: a position no token
    holds).

    Words are maximal runs of code points with ``c.isalnum()`` (Unicode L* or N*) that are
    not of a script written without spaces, each lowercased per code point. With
    ``segmenter="bigrams"`` a maximal run of those (``BIGRAM_NAMES``; each character width
    folded, a voicing mark U+3099/U+FF9E, U+309A/U+FF9F composed (NFC) into the kana before
    it, else a separator) gives each pair of neighbours in order, or its one character
    alone; when a run of two or more follows another with no token between, one position
    is left empty before it. With ``"none"`` every isalnum code point is a word's, as is a
    half-width mark. A token longer than ``max_token_length`` UTF-8 bytes (after
    lowercasing) is dropped and leaves no position.
    """
    if not text:
        return []
    out: list[str | None] = []
    after_grams = False

    def emit(token: str) -> None:
        if len(token.encode("utf-8")) <= max_token_length:
            out.append(token)

    def bigram(c: str) -> bool:
        return (segmenter == "bigrams" and c.isalnum() and c not in "\uff9e\uff9f"
                and unicodedata.name(c, "").startswith(BIGRAM_NAMES))

    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if bigram(c):
            run: list[str] = []
            while i < n:
                c = text[i]
                if bigram(c):
                    run.append(lower_code_point(fold_width(c)))
                elif c in "\u3099\uff9e\u309a\uff9f" and run:
                    mark = "\u3099" if c in "\u3099\uff9e" else "\u309a"
                    composed = unicodedata.normalize("NFC", run[-1] + mark)
                    if len(composed) != 1 or not 0x3040 <= ord(run[-1]) < 0x3100:
                        break
                    run[-1] = composed
                else:
                    break
                i += 1
            if len(run) == 1:
                emit(run[0])
                after_grams = False
                continue
            if after_grams:
                out.append(None)
            for a, b in zip(run, run[1:]):
                emit(a + b)
            after_grams = True
        elif c.isalnum() and not (segmenter == "bigrams" and c in "\uff9e\uff9f"):
            word = []
            while i < n and text[i].isalnum() and not bigram(text[i]) and not (
                    segmenter == "bigrams" and text[i] in "\uff9e\uff9f"):
                word.append(lower_code_point(fold_width(text[i]) if segmenter == "bigrams" else text[i]))
                i += 1
            token = "".join(word)
            if len(token.encode("utf-8")) <= max_token_length:
                out.append(token)
                after_grams = False
        else:
            i += 1
    while out and out[-1] is None:  # (a position left empty before no token)
        out.pop()
    return out


def analyze(text: str | None, max_token_length: int = DEFAULT_MAX_TOKEN_LENGTH,
            segmenter: str = "bigrams") -> list[str]:
    """Rule 1: the tokens of ``text`` in order (a query's terms: positions left empty
    are not kept)."""
    return [t for t in analyze_positions(text, max_token_length, segmenter) if t is not None]


# ---------------------------------------------------------------------------- rule 2


class ColumnStats:
    """Rule 2: one column's tokens per live row and its global statistics.

    N = live rows with at least one token, total = sum of their token counts,
    avgdl = total / N, df(t) = live rows containing t, vocabulary = terms with df > 0.
    Statistics never depend on ``include_row_ids``.
    """

    def __init__(self, table: RefTable, column: str) -> None:
        limit = table.max_token_length.get(column, DEFAULT_MAX_TOKEN_LENGTH)
        self.k1, self.b = table.params.get(column, (DEFAULT_K1, DEFAULT_B))
        self.tokens: dict[int, list[str | None]] = {}  # (None: a position no token holds)
        self.lengths: dict[int, int] = {}
        self.tf: dict[int, Counter[str]] = {}
        self.df: Counter[str] = Counter()
        self.N = 0
        self.total = 0
        for row_id in table.live_row_ids():
            tokens = analyze_positions(table.rows[row_id].get(column), limit)
            self.tokens[row_id] = tokens
            self.tf[row_id] = Counter(t for t in tokens if t is not None)
            self.lengths[row_id] = dl = sum(self.tf[row_id].values())
            if dl:
                self.N += 1
                self.total += dl
                self.df.update(self.tf[row_id].keys())
        self.vocabulary: list[str] = sorted(self.df)
        self.max_token_length = limit

    @property
    def avgdl(self) -> float:
        return self.total / self.N

    def dl(self, row_id: int) -> int:
        return self.lengths[row_id]

    def idf(self, term: str) -> float:
        """Rule 3: idf = ln(1 + (N - df + 0.5) / (df + 0.5))."""
        df = self.df[term]
        return math.log(1.0 + (self.N - df + 0.5) / (df + 0.5))

    def bm25(self, idf: float, tf: int, dl: int) -> float:
        """Rule 3: the BM25 formula, exactly these float operations in this order."""
        k1, b = self.k1, self.b
        tf_f = float(tf)
        dl_f = float(dl)
        c = idf * (k1 + 1.0)
        return (c * tf_f) / (tf_f + k1 * ((1.0 - b) + (b * dl_f) / self.avgdl))

    def term_score(self, term: str, row_id: int) -> float:
        """Rule 3: the score of one term in one row that contains it."""
        return self.bm25(self.idf(term), self.tf[row_id][term], self.dl(row_id))


# ---------------------------------------------------------------------------- rule 4


def levenshtein(a: str, b: str) -> int:
    """Rule 4: edit distance over code points (insert, delete, substitute cost 1)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(
                min(
                    previous[j] + 1,  # delete ca
                    current[j - 1] + 1,  # insert cb
                    previous[j - 1] + (ca != cb),  # substitute (or keep)
                )
            )
        previous = current
    return previous[-1]


def fuzzy_group(
    term: str,
    vocabulary: Iterable[str],
    fuzziness: int,
    prefix_length: int,
    max_expansions: int,
) -> list[str]:
    """Rule 4: the expansion group of one query term.

    fuzziness 0: [term] if it is in the vocabulary, else []. Otherwise the vocabulary
    terms v with levenshtein(term, v) <= fuzziness that start with term[:prefix_length]
    (as Lucene: a term shorter than prefix_length is all prefix), sorted by (distance, v),
    the first max_expansions.
    """
    vocabulary = set(vocabulary)
    if fuzziness == 0:
        return [term] if term in vocabulary else []
    candidates = []
    for v in vocabulary:
        if not v.startswith(term[:prefix_length]):
            continue
        distance = levenshtein(term, v)
        if distance <= fuzziness:
            candidates.append((distance, v))
    candidates.sort()
    return [v for _, v in candidates[:max_expansions]]


def query_terms(text: str, max_token_length: int) -> list[str]:
    """Rule 4: analyzed tokens of the query text, de-duplicated, first occurrence order."""
    return list(dict.fromkeys(analyze(text, max_token_length)))


def score_groups(stats: ColumnStats, groups: list[list[str]], operator: str, boost: float):
    """Rules 4 and 5: rows matching the groups, scored as sum of present terms times boost.

    "or": a row matches if it contains a term of any group; "and": a term of every group
    (so an empty group matches nothing). acc = 0.0, then + each present term's score,
    group by group, term by term, in order; the score is acc * boost.
    """
    result: dict[int, float] = {}
    if not groups:
        return result
    for row_id, tf in stats.tf.items():
        hits = [any(t in tf for t in group) for group in groups]
        if not (all(hits) if operator == "and" else any(hits)):
            continue
        acc = 0.0
        for group in groups:
            for term in group:
                if term in tf:
                    acc = acc + stats.term_score(term, row_id)
        result[row_id] = acc * boost
    return result


def lone_char(term: str) -> bool:
    """Rule 4: a term that is one character of a script written without spaces (a run of
    one character, as the query gives it)."""
    return len(term) == 1 and analyze_positions(term + term) == [term + term]


def gram_group(char: str, vocabulary: Iterable[str]) -> list[str]:
    """Rule 4: every vocabulary term holding ``char`` as a gram's character (the
    character alone, or a bigram with it), ascending: so a query of one character finds
    every row holding it."""
    return sorted(v for v in vocabulary if len(v) <= 2 and char in v)


def eval_match(stats: ColumnStats, node: Match) -> dict[int, float]:
    """Rule 4: Match. A term is its group of fuzzy expansions (fuzziness > 0), else itself;
    a text that is one lone character alone (:func:`lone_char`) is its gram group."""
    terms = query_terms(node.text, stats.max_token_length)
    if not node.fuzziness and len(terms) == 1 and lone_char(terms[0]):
        return score_groups(stats, [gram_group(terms[0], stats.vocabulary)], node.operator, node.boost)
    groups = [
        fuzzy_group(q, stats.vocabulary, node.fuzziness, node.prefix_length, node.max_expansions)
        for q in terms
    ]
    return score_groups(stats, groups, node.operator, node.boost)


# ---------------------------------------------------------------------------- rule 5


def prefix_group(prefix: str, vocabulary: Iterable[str], max_expansions: int) -> list[str]:
    """Rule 5: vocabulary terms starting with the lowercased (not tokenized) prefix,
    ascending in Python str order, the first max_expansions."""
    p = lowercase(prefix)
    return sorted(v for v in vocabulary if v.startswith(p))[:max_expansions]


def eval_prefix(stats: ColumnStats, node: Prefix) -> dict[int, float]:
    """Rule 5: Prefix, one group scored like an "or" Match."""
    group = prefix_group(node.prefix, stats.vocabulary, node.max_expansions)
    return score_groups(stats, [group], "or", node.boost)


# ---------------------------------------------------------------------------- rule 6


def phrase_tf(tokens: list[str | None], terms: list[str], slop: int, offsets: list[int] | None = None) -> int:
    """Rule 6 (in order, and every phrase with slop 0): the number of distinct start
    positions p1 for which positions p1 < p2 < ... < pn exist with tokens[p_i] == terms[i],
    p_i - p_(i-1) >= o_i - o_(i-1) and pn - p1 - (o_n - o_1) <= slop, where o are the
    terms' ``offsets`` in the phrase (default 0, 1, 2, ...; the query's text leaves a gap
    where its tokens do)."""
    n = len(terms)
    o = list(range(n)) if offsets is None else offsets

    def completes(i: int, previous: int, last_allowed: int) -> bool:
        # Can terms[i:] be placed at increasing positions at least their gaps after
        # `previous`, none past `last_allowed`?
        if i == n:
            return True
        for p in range(previous + o[i] - o[i - 1], min(last_allowed, len(tokens) - 1) + 1):
            if tokens[p] == terms[i] and completes(i + 1, p, last_allowed):
                return True
        return False

    count = 0
    for p1, token in enumerate(tokens):
        if token == terms[0] and completes(1, p1, p1 + (o[n - 1] - o[0]) + slop):
            count += 1
    return count


def sloppy_phrase_tf(tokens: list[str | None], terms: list[str], slop: int, offsets: list[int] | None = None) -> int:
    """Rule 6: the number of matches Lucene's sloppy phrase scan (SloppyPhraseMatcher
    .nextMatch) counts, the terms in any order.

    Term i of the phrase reads its positions p as p - o_i (its "shifted" positions; o its
    ``offsets``, default i). A
    phrase of one term counts that term's positions. Otherwise each term holds one
    current position: at the start its first one, except that the j-th occurrence of a
    repeated term starts at that term's j-th position (occurrences of one term always
    hold distinct positions, in phrase order). Then, until a term runs out:

    - the lead is the term with the smallest shifted position (ties: the earlier term),
      ``following`` the smallest shifted position of the other terms, ``end`` the largest;
    - match_length = end - the lead's shifted position; while the lead's next position,
      shifted, is still <= following, the lead moves there and match_length takes the
      smaller of itself and end - the new shifted position;
    - a match is counted if match_length <= slop;
    - the lead moves to its next position (if it has none, the scan ends); each later
      occurrence of the lead's term that is not after it moves to the position after the
      previous occurrence's (if there is none, the scan ends).
    """
    n = len(terms)
    where = {t: [p for p, token in enumerate(tokens) if token == t] for t in terms}
    if n == 1:
        return len(where[terms[0]])
    at: list[int] = []  # index into where[terms[i]] of term i's current position
    for i, term in enumerate(terms):
        at.append(terms[:i].count(term))
    if any(at[i] >= len(where[terms[i]]) for i in range(n)):
        return 0

    o = list(range(n)) if offsets is None else offsets

    def shifted(i: int) -> int:
        return where[terms[i]][at[i]] - o[i]

    count = 0
    while True:
        lead = min(range(n), key=lambda i: (shifted(i), i))
        following = min(shifted(i) for i in range(n) if i != lead)
        end = max(shifted(i) for i in range(n))
        match_length = end - shifted(lead)
        mine = where[terms[lead]]
        while at[lead] + 1 < len(mine) and mine[at[lead] + 1] - o[lead] <= following:
            at[lead] += 1
            match_length = min(match_length, end - shifted(lead))
        if match_length <= slop:
            count += 1
        at[lead] += 1
        if at[lead] == len(mine):
            return count
        previous = lead
        for j in range(lead + 1, n):
            if terms[j] == terms[lead]:
                if at[j] <= at[previous]:
                    at[j] = at[previous] + 1
                    if at[j] == len(mine):
                        return count
                previous = j


def phrase_prefix_parts(text: str) -> tuple[str, str | None]:
    """Rule 6: a phrase prefix's text before its last word, and that word (None if the
    text has no word); words are maximal runs of ``c.isalnum()``, as in rule 1."""
    chars = list(text)
    while chars and not chars[-1].isalnum():
        chars.pop()
    if not chars:
        return text, None
    word: list[str] = []
    while chars and chars[-1].isalnum():
        word.insert(0, chars.pop())
    return "".join(chars), "".join(word)


def placed(text: str, max_token_length: int) -> tuple[list[str], list[int]]:
    """Rule 6: a phrase text's terms and their offsets (positions from the first)."""
    at = [(p, t) for p, t in enumerate(analyze_positions(text, max_token_length)) if t is not None]
    return [t for _, t in at], [p - at[0][0] for p, _ in at]  # (both empty when it has no term)


def one_phrase_scores(stats: ColumnStats, terms: list[str], slop: int, in_order: bool,
                      offsets: list[int] | None = None) -> dict[int, float]:
    """Rule 6: the unboosted score of one phrase in each row where it matches.
    idf_phrase = 0.0 + idf of each term, one per phrase position; tf as ``phrase_tf``
    when ``in_order`` or ``slop`` is 0, else as ``sloppy_phrase_tf``."""
    result: dict[int, float] = {}
    if not terms or any(t not in stats.df for t in terms):
        return result
    idf_phrase = 0.0
    for term in terms:
        idf_phrase = idf_phrase + stats.idf(term)
    for row_id, tokens in stats.tokens.items():
        if in_order or slop == 0:
            tf = phrase_tf(tokens, terms, slop, offsets)
        else:
            tf = sloppy_phrase_tf(tokens, terms, slop, offsets)
        if tf >= 1:
            result[row_id] = stats.bm25(idf_phrase, tf, stats.dl(row_id))
    return result


def eval_phrase(stats: ColumnStats, node: Phrase) -> dict[int, float]:
    """Rule 6: Phrase. Without ``prefix``: the phrase's score times boost. With it: the
    last word, lowercased, expands as a Prefix does (rule 5, with the leaf's
    max_expansions); the terms of the text before it plus each expansion make one phrase;
    a row matches if any does, and scores acc = 0.0 + each matching phrase's score, in
    expansion order, then acc * boost. A phrase's terms keep their places in its text
    (``placed``), an expansion right after the last."""
    if not node.prefix:
        terms, offsets = placed(node.text, stats.max_token_length)
        if len(terms) == 1 and lone_char(terms[0]):  # (a quoted character: its gram group)
            return score_groups(stats, [gram_group(terms[0], stats.vocabulary)], "or", node.boost)
        scores = one_phrase_scores(stats, terms, node.slop, node.in_order, offsets)
        return {row_id: score * node.boost for row_id, score in scores.items()}
    head, word = phrase_prefix_parts(node.text)
    if word is None:
        return {}
    fixed, offsets = placed(head, stats.max_token_length)
    totals: dict[int, float] = {}
    for expansion in prefix_group(word, stats.vocabulary, node.max_expansions):
        places = offsets + [offsets[-1] + 1] if offsets else [0]
        for row_id, score in one_phrase_scores(stats, fixed + [expansion], node.slop, node.in_order, places).items():
            totals[row_id] = totals.get(row_id, 0.0) + score
    return {row_id: acc * node.boost for row_id, acc in totals.items()}


# ---------------------------------------------------------------------- rules 7 - 9


class Evaluator:
    """Evaluates a query tree to {row id: score} over the live rows (rules 4 - 9),
    analyzing each column once per query."""

    def __init__(self, table: RefTable) -> None:
        self.table = table
        self._stats: dict[str, ColumnStats] = {}

    def stats(self, column: str | None) -> ColumnStats:
        """Rule 10: a leaf on no column is an error."""
        if column is None:
            raise ValueError("a query leaf is bound to no column")
        if column not in self._stats:
            self._stats[column] = ColumnStats(self.table, column)
        return self._stats[column]

    def eval(self, node) -> dict[int, float]:
        if isinstance(node, Match):
            return eval_match(self.stats(node.column), node)
        if isinstance(node, Prefix):
            return eval_prefix(self.stats(node.column), node)
        if isinstance(node, Phrase):
            return eval_phrase(self.stats(node.column), node)
        if isinstance(node, MultiMatch):
            return self.eval_multi_match(node)
        if isinstance(node, Boolean):
            return self.eval_boolean(node)
        if isinstance(node, Boost):
            return self.eval_boost(node)
        raise TypeError(f"not a query node: {node!r}")

    def eval_multi_match(self, node: MultiMatch) -> dict[int, float]:
        """Rule 7: a MultiMatch is its .expand()."""
        return self.eval(node.expand())

    def eval_boolean(self, node: Boolean) -> dict[int, float]:
        """Rule 8: Boolean.

        Rows: every MUST clause's if there is a MUST, else any SHOULD clause's if there is
        a SHOULD, else every live row; minus the rows of any MUST_NOT clause.
        Score: acc = 0.0; + each MUST score in order; + each matching SHOULD score in order.
        """
        must = [self.eval(c) for c in node.must]
        should = [self.eval(c) for c in node.should]
        must_not = [self.eval(c) for c in node.must_not]
        if must:
            rows = [r for r in self.table.live_row_ids() if all(r in m for m in must)]
        elif should:
            rows = [r for r in self.table.live_row_ids() if any(r in s for s in should)]
        else:
            rows = self.table.live_row_ids()
        result: dict[int, float] = {}
        for row_id in rows:
            if any(row_id in m for m in must_not):
                continue
            acc = 0.0
            for m in must:
                acc = acc + m[row_id]
            for s in should:
                if row_id in s:
                    acc = acc + s[row_id]
            result[row_id] = acc
        return result

    def eval_boost(self, node: Boost) -> dict[int, float]:
        """Rule 9: rows of positive; pos - (negative_boost * neg) where negative matches."""
        positive = self.eval(node.positive)
        negative = self.eval(node.negative)
        result: dict[int, float] = {}
        for row_id, pos in positive.items():
            if row_id in negative:
                result[row_id] = pos - (node.negative_boost * negative[row_id])
            else:
                result[row_id] = pos
        return result


# --------------------------------------------------------------------------- rule 10


def java_order_key(score: float, row_id: int):
    """Rule 10: sort key for ascending sort = score descending as Java's Double.compare
    (NaN above +inf, all NaNs equal, +0.0 above -0.0), then row id ascending."""
    if math.isnan(score):
        return (0, 0.0, 0, row_id)
    negative_zero = score == 0.0 and math.copysign(1.0, score) < 0.0
    return (1, -score, 1 if negative_zero else 0, row_id)


def ref_search(
    table: RefTable,
    query,
    limit: int | None = None,
    offset: int = 0,
    include_row_ids=None,
) -> list[tuple[int, float]]:
    """Rule 10: the ordered (row id, score) list of the matched rows, restricted to
    ``include_row_ids`` (statistics stay global), sliced [offset : offset + limit]."""
    scores = Evaluator(table).eval(query)
    hits = list(scores.items())
    if include_row_ids is not None:
        included = set(include_row_ids)
        hits = [(r, s) for r, s in hits if r in included]
    hits.sort(key=lambda hit: java_order_key(hit[1], hit[0]))
    if limit is None:
        return hits[offset:]
    return hits[offset : offset + limit]
