"""Hypothesis strategies for differential tests against tests/reference.py.

- ``corpora()``: RefTable instances with 1-3 text columns, 0-40 rows, values drawn from a
  tiny vocabulary (many ties), unicode words, punctuation, None, "" and the occasional
  token over 40 UTF-8 bytes.
- ``query_trees(columns, words)``: random query trees (Match, Prefix, Phrase — sloppy,
  ordered and prefix —, MultiMatch, Boolean, Boost) over those columns, nesting depth <= 3.
- ``search_params(row_ids)``: limit / offset / include_row_ids for ``ref_search``.
- ``corpus_and_query()``: a corpus and a query tree over its columns.
"""

from __future__ import annotations

from hypothesis import strategies as st

from datafusion_fts.query.tree import Boolean, Boost, Match, MultiMatch, Phrase, Prefix

try:  # tests/ as a package or tests/ on sys.path (pytest's rootdir-relative import)
    from tests.reference import RefTable
except ImportError:  # pragma: no cover - depends on how pytest imports tests/
    from reference import RefTable

COLUMN_NAMES = ("title", "body", "tags")

# Few distinct terms (after lowercasing) so that scores tie often.
COMMON_WORDS = ("a", "b", "c", "alpha", "beta", "Alpha", "ALPHA", "alphabet", "bet")
UNICODE_WORDS = ("café", "naïve", "İstanbul", "straße", "東京", "ΣΊΣΥΦΟΣ", "x²", "٣٤",
                 # scripts written without spaces (bigrams; runs that share characters)
                 "数据", "数据库", "据库", "库", "数据库数", "ｶﾞｷﾞ", "한국어")
# Over the 40-byte limit: dropped by the analyzer (positions do not count them).
LONG_WORDS = ("z" * 41, "é" * 21)
# At the limit exactly: kept.
EDGE_WORDS = ("y" * 40, "é" * 20)
SEPARATORS = (" ", " ", " ", ", ", "-", "... ", "\t", "/", "!?", " — ", "\n", "_", "，")

# Words a query draws from: corpus words plus near misses for fuzzy matching and words
# that occur nowhere.
QUERY_WORDS = (
    COMMON_WORDS
    + UNICODE_WORDS
    + ("alpah", "alpa", "bta", "betaa", "cafe", "istanbul", "strasse", "東", "gamma", "zz", "数", "据", "ガギ", "国")
)

BOOSTS = (1.0, 0.5, 2.0, 1.7)
NEGATIVE_BOOSTS = (0.0, 0.5, 1.0, 2.0)


@st.composite
def corpus_words(draw) -> str:
    """One word of a column value: mostly common words, sometimes unicode or long ones."""
    kind = draw(st.integers(0, 19))
    if kind < 14:
        return draw(st.sampled_from(COMMON_WORDS))
    if kind < 18:
        return draw(st.sampled_from(UNICODE_WORDS))
    if kind < 19:
        return draw(st.sampled_from(EDGE_WORDS))
    return draw(st.sampled_from(LONG_WORDS))


@st.composite
def texts(draw, words=corpus_words(), max_words: int = 8) -> str:
    """Words joined by punctuation separators, with optional leading/trailing punctuation."""
    chosen = draw(st.lists(words, min_size=0, max_size=max_words))
    out = draw(st.sampled_from(("", "", "", "(", "¡", " ")))
    for i, word in enumerate(chosen):
        if i:
            out += draw(st.sampled_from(SEPARATORS))
        out += word
    out += draw(st.sampled_from(("", "", "", ".", ")", "!", " ")))
    return out


@st.composite
def values(draw) -> str | None:
    """A column value: None, "", only punctuation (each 1 in 12), or text."""
    kind = draw(st.integers(0, 11))
    if kind == 0:
        return None
    if kind == 1:
        return ""
    if kind == 2:
        return draw(st.sampled_from((" ", "...", "—", "!?")))
    return draw(texts())


@st.composite
def corpora(
    draw,
    min_rows: int = 0,
    max_rows: int = 40,
    min_columns: int = 1,
    max_columns: int = 3,
    deletes: bool = True,
    params: bool = False,
    token_limits: bool = False,
    sparse: bool = False,
) -> RefTable:
    """A RefTable with row ids 0..n-1 and 1-3 text columns (named from COLUMN_NAMES).

    ``deletes``: mark a random subset of rows deleted (with ``sparse``, often most of
    them: a table after a long history). ``params``: sometimes set a column's (k1, b).
    ``token_limits``: sometimes set a column's max_token_length.
    """
    columns = draw(
        st.lists(
            st.sampled_from(COLUMN_NAMES),
            min_size=min_columns,
            max_size=max_columns,
            unique=True,
        )
    )
    n = draw(st.integers(min_rows, max_rows))
    rows = {row_id: {c: draw(values()) for c in columns} for row_id in range(n)}
    deleted: set[int] = set()
    if deletes and n and draw(st.booleans()):
        deleted = set(draw(st.lists(st.integers(0, n - 1), max_size=max(1, n // 3))))
        if sparse and draw(st.booleans()):
            deleted = set(range(n)) - set(draw(st.lists(st.integers(0, n - 1), max_size=max(1, n // 3))))
    column_params: dict[str, tuple[float, float]] = {}
    if params:
        for c in columns:
            if draw(st.booleans()):
                column_params[c] = (
                    draw(st.sampled_from((0.0, 0.5, 1.2, 2.0))),
                    draw(st.sampled_from((0.0, 0.3, 0.75, 1.0))),
                )
    limits: dict[str, int] = {}
    if token_limits:
        for c in columns:
            if draw(st.booleans()):
                limits[c] = draw(st.sampled_from((1, 5, 40, 255)))
    return RefTable(
        rows=rows,
        deleted=deleted,
        params=column_params,
        max_token_length=limits,
        columns=list(columns),
    )


def table_columns(table: RefTable) -> list[str]:
    """The table's columns: ``table.columns`` if set, else the row keys in first-seen order."""
    if table.columns:
        return list(table.columns)
    seen: dict[str, None] = {}
    for values_ in table.rows.values():
        for c in values_:
            seen.setdefault(c, None)
    return list(seen)


# ------------------------------------------------------------------------------ queries


@st.composite
def query_texts(draw, words, max_words: int = 3) -> str:
    """1-3 query words (0 now and then), joined by spaces or punctuation."""
    min_words = 0 if draw(st.integers(0, 9)) == 0 else 1
    chosen = draw(st.lists(st.sampled_from(words), min_size=min_words, max_size=max_words))
    out = ""
    for i, word in enumerate(chosen):
        if i:
            out += draw(st.sampled_from((" ", " ", ", ", "-")))
        out += word
    return out


@st.composite
def matches(draw, columns, words) -> Match:
    column = draw(st.sampled_from(columns))
    text = draw(query_texts(words))
    operator = draw(st.sampled_from(("or", "and")))
    boost = draw(st.sampled_from(BOOSTS))
    if draw(st.integers(0, 3)) == 0:
        return Match(
            column,
            text,
            operator=operator,
            boost=boost,
            fuzziness=draw(st.integers(1, 2)),
            prefix_length=draw(st.integers(0, 2)),
            max_expansions=draw(st.sampled_from((1, 2, 3, 4, 5, 50))),
        )
    return Match(column, text, operator=operator, boost=boost)


@st.composite
def prefixes(draw, columns, words) -> Prefix:
    word = draw(st.sampled_from(words))
    cut = draw(st.integers(0, len(word)))
    return Prefix(
        draw(st.sampled_from(columns)),
        word[:cut],
        boost=draw(st.sampled_from(BOOSTS)),
        max_expansions=draw(st.sampled_from((1, 2, 3, 4, 5, 50))),
    )


@st.composite
def phrases(draw, columns, words) -> Phrase:
    """Sloppy (any order) or ordered phrases, a quarter of them phrase prefixes whose
    last word is cut short now and then."""
    text = draw(query_texts(words, max_words=3))
    prefix = draw(st.integers(0, 3)) == 0
    if prefix and text:
        text = text[: len(text) - draw(st.integers(0, 2))]
    return Phrase(
        draw(st.sampled_from(columns)),
        text,
        slop=draw(st.integers(0, 3)),
        boost=draw(st.sampled_from(BOOSTS)),
        in_order=draw(st.booleans()),
        prefix=prefix,
        max_expansions=draw(st.sampled_from((1, 2, 3, 50))),
    )


@st.composite
def multi_matches(draw, columns, words) -> MultiMatch:
    chosen = draw(st.permutations(columns))
    chosen = chosen[: draw(st.integers(1, len(chosen)))]
    boosts = None
    if draw(st.booleans()):
        boosts = tuple(draw(st.sampled_from(BOOSTS)) for _ in chosen)
    return MultiMatch(
        draw(query_texts(words)),
        tuple(chosen),
        boosts=boosts,
        operator=draw(st.sampled_from(("or", "and"))),
    )


def leaf_queries(columns, words) -> st.SearchStrategy:
    """Match (most often), Prefix, Phrase or MultiMatch."""
    columns = list(columns)
    words = list(words)
    return st.one_of(
        st.one_of(matches(columns, words), matches(columns, words)),
        st.one_of(prefixes(columns, words), phrases(columns, words)),
        multi_matches(columns, words),
    )


@st.composite
def booleans(draw, clauses: st.SearchStrategy) -> Boolean:
    """A Boolean with 0-3 clauses in each of must, should, must_not."""
    clause_lists = st.lists(clauses, min_size=0, max_size=3)
    return Boolean(
        must=tuple(draw(clause_lists)),
        should=tuple(draw(clause_lists)),
        must_not=tuple(draw(clause_lists)),
    )


@st.composite
def boosts(draw, clauses: st.SearchStrategy) -> Boost:
    return Boost(
        draw(clauses),
        draw(clauses),
        negative_boost=draw(st.sampled_from(NEGATIVE_BOOSTS)),
    )


def query_trees(columns, words=QUERY_WORDS, max_depth: int = 3) -> st.SearchStrategy:
    """A query tree over ``columns`` with text from ``words``: a leaf, or a Boolean /
    Boost whose children are trees of depth at most ``max_depth - 1``."""
    leaves = leaf_queries(columns, words)
    if max_depth <= 0:
        return leaves
    children = st.deferred(lambda: query_trees(columns, words, max_depth - 1))
    compound = st.one_of(booleans(children), booleans(children), boosts(children))
    return st.one_of(leaves, compound)  # half leaves, half compound


@st.composite
def search_params(draw, row_ids) -> dict:
    """Keyword arguments for ref_search: limit (None, 0..45), offset, include_row_ids."""
    row_ids = sorted(row_ids)
    limit = draw(st.one_of(st.none(), st.integers(0, 45)))
    offset = draw(st.sampled_from((0, 0, 0, 1, 2, 5)) | st.integers(0, 45))
    include = None
    if draw(st.integers(0, 3)) == 0:
        include = []
        if row_ids:
            include = draw(st.lists(st.sampled_from(row_ids), unique=True))
    return {"limit": limit, "offset": offset, "include_row_ids": include}


def table_words(table: RefTable) -> list[str]:
    """The raw words (split on anything not alphanumeric, case kept) of a table's values."""
    seen: dict[str, None] = {}
    for values_ in table.rows.values():
        for value in values_.values():
            word = ""
            for c in (value or "") + " ":
                if c.isalnum():
                    word += c
                elif word:
                    seen.setdefault(word, None)
                    word = ""
    return sorted(seen)


@st.composite
def corpus_and_query(draw, max_depth: int = 3, **corpus_kwargs):
    """(table, query) with the query over the table's columns, its words drawn from
    the table's own words (so that most queries match something) and QUERY_WORDS."""
    table = draw(corpora(**corpus_kwargs))
    columns = table_columns(table) or ["title"]
    words = list(QUERY_WORDS) + table_words(table) * 3
    return table, draw(query_trees(columns, words, max_depth))
