"""``fts_match(text, query)``: whether each text matches a query string, for plain filters.

Query-string semantics (DESIGN §4, §5.3 matching only): true exactly when a search for
the query in a table holding only that text would return it (see :mod:`.text_query`).
No index and no scores; the text goes through the analyzer as a column would.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .arguments import per_group, take, validity
from .text_query import BatchMatch, compile_query, resolve_analyzer


def fts_match(text: pa.Array, query: pa.Array, analyzer: pa.Array, column: pa.Array) -> pa.Array:
    """``fts_match_with(text, query, analyzer, column)`` over one batch."""

    def compute(args: tuple, rows: np.ndarray | None) -> pa.Array:
        q, an, col = args
        values = take(text, rows)
        if q is None:
            return pa.nulls(len(values), pa.bool_())
        compiled = compile_query(q, resolve_analyzer(an, "fts_match"), col, "fts_match", foreign_leaves=False)
        matched = np.zeros(len(values), dtype=np.bool_)
        matched[BatchMatch(compiled, values).matched_rows()] = True
        return pa.array(matched, pa.bool_(), mask=~validity(values))

    return per_group(len(text), [query, analyzer, column], compute)
