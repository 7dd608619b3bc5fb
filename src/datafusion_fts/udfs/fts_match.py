"""``fts_match(text, query)``: whether each text matches a query string, for plain filters.

Query-string semantics (DESIGN §4, §5.3 matching only): true exactly when a search for
the query in a table holding only that text would return it (see :mod:`.text_query`).
No index and no scores; the text goes through the analyzer as a column would.

Tokenizing is the whole cost, and a filter mostly meets texts holding none of the query's
terms, so those are answered without it where a substring test is exact enough: every
term of a text is a lowercased run of its characters, so an ASCII text holding a term
holds it as a case-insensitive substring (a prefix leaf: its prefix). The texts that
fail every such test are the texts with none of the query's terms, which all match or
all fail together (as the empty text does). Stemmed terms need not be substrings of their
words and fuzzy terms are not known before tokenizing; those queries tokenize every text.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..query.tree import Match, Prefix, leaves
from .arguments import per_group, take, validity
from .text_query import BatchMatch, TextQuery, compile_query, resolve_analyzer


def _needles(query: TextQuery) -> list[str] | None:
    """Substrings one of which every text holding a query term contains (None: no such
    list, every text must be tokenized)."""
    if query.analyzer.config.stemmer is not None:
        return None
    needles: list[str] = []
    for leaf in leaves(query.tree):
        if isinstance(leaf, Match) and leaf.fuzziness:
            return None
        if isinstance(leaf, Prefix):
            needles.append(query.analyzer.normalize(leaf.prefix))
        else:
            needles.extend(query.analyzer.terms(leaf.text))
    if "" in needles:
        return None  # the empty prefix: every term
    return list(dict.fromkeys(needles))


def match_mask(query: TextQuery, values: pa.Array) -> np.ndarray:
    """Whether ``query`` matches each text (False for a null text)."""
    needles = _needles(query)
    if needles is None:
        candidates = None
    else:
        maybe = pc.invert(pc.string_is_ascii(values))
        for needle in needles:
            maybe = pc.or_(maybe, pc.match_substring(values, needle, ignore_case=True))
        candidates = np.flatnonzero(maybe.fill_null(False).to_numpy(zero_copy_only=False))
    matched = np.zeros(len(values), dtype=np.bool_)
    if candidates is None:
        matched[BatchMatch(query, values).matched_rows()] = True
        return matched & validity(values)
    # Texts with none of the query's terms: as the empty text.
    if len(BatchMatch(query, pa.array([""], pa.string())).matched_rows()):
        matched[:] = True
    matched[candidates] = False
    subset = values.take(pa.array(candidates)) if len(candidates) < len(values) else values
    matched[candidates[BatchMatch(query, subset).matched_rows()]] = True
    return matched & validity(values)


def fts_match(text: pa.Array, query: pa.Array, analyzer: pa.Array, column: pa.Array) -> pa.Array:
    """``fts_match_with(text, query, analyzer, column)`` over one batch."""

    def compute(args: tuple, rows: np.ndarray | None) -> pa.Array:
        q, an, col = args
        values = take(text, rows)
        if q is None:
            return pa.nulls(len(values), pa.bool_())
        compiled = compile_query(q, resolve_analyzer(an, "fts_match"), col, "fts_match", foreign_leaves=False)
        return pa.array(match_mask(compiled, values), pa.bool_(), mask=~validity(values))

    return per_group(len(text), [query, analyzer, column], compute)
