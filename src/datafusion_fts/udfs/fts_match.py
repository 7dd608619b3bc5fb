"""``fts_match(text, query)``: whether each text matches a query string, for plain filters.

Query-string semantics (docs/design.md: "The query tree and the query string"; "Compound queries"
matching only): true exactly when a search for the query in a table holding only that text would
return it (see :mod:`.text_query`). No index and no scores; the text goes through the analyzer as a
column would.

Tokenizing is the whole cost, and a filter mostly meets texts holding none of the query's
terms: those (:func:`.text_query.candidates`) all match or all fail together, as the empty
text does, and are not tokenized.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .arguments import per_group, take, validity
from .text_query import BatchMatch, TextQuery, candidates, compile_query, resolve_analyzer


def match_mask(query: TextQuery, values: pa.Array, languages: pa.Array | None = None) -> np.ndarray:
    """Whether ``query`` matches each text (False for a null text), each in the language
    ``languages`` names for it (:class:`.text_query.BatchMatch`)."""
    matched = np.zeros(len(values), dtype=np.bool_)
    rows = candidates(query, values)
    if rows is None:
        matched[BatchMatch(query, values, languages=languages).matched_rows()] = True
        return matched & validity(values)
    # Texts with none of the query's terms: as the empty text.
    if len(BatchMatch(query, pa.array([""], pa.string())).matched_rows()):
        matched[:] = True
    matched[rows] = False
    subset = values.take(pa.array(rows)) if len(rows) < len(values) else values
    languages = None if languages is None or len(rows) == len(values) else languages.take(pa.array(rows))
    matched[rows[BatchMatch(query, subset, languages=languages).matched_rows()]] = True
    return matched & validity(values)


def fts_match(text: pa.Array, query: pa.Array, analyzer: pa.Array, column: pa.Array, language: pa.Array
              ) -> pa.Array:
    """``fts_match_with(text, query, analyzer, column, language)`` over one batch."""

    def compute(args: tuple, rows: np.ndarray | None) -> pa.Array:
        q, an, col = args
        values = take(text, rows)
        if q is None:
            return pa.nulls(len(values), pa.bool_())
        compiled = compile_query(q, resolve_analyzer(an, "fts_match"), col, "fts_match", foreign_leaves=False)
        return pa.array(match_mask(compiled, values, take(language, rows)), pa.bool_(), mask=~validity(values))

    return per_group(len(text), [query, analyzer, column], compute)
