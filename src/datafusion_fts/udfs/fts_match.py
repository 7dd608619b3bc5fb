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


def match_mask(query: TextQuery, values: pa.Array) -> np.ndarray:
    """Whether ``query`` matches each text (False for a null text)."""
    matched = np.zeros(len(values), dtype=np.bool_)
    rows = candidates(query, values)
    if rows is None:
        matched[BatchMatch(query, values).matched_rows()] = True
        return matched & validity(values)
    # Texts with none of the query's terms: as the empty text.
    if len(BatchMatch(query, pa.array([""], pa.string())).matched_rows()):
        matched[:] = True
    matched[rows] = False
    subset = values.take(pa.array(rows)) if len(rows) < len(values) else values
    matched[rows[BatchMatch(query, subset).matched_rows()]] = True
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
