"""``fts_tokenize(text [, analyzer])``: the terms an index would see, as ``list<utf8>``."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .arguments import per_group, take, validity
from .text_query import resolve_analyzer

RETURN_TYPE = pa.list_(pa.string())


def fts_tokenize(text: pa.Array, analyzer: pa.Array, language: pa.Array) -> pa.Array:
    """``fts_tokenize_with(text, analyzer, language)`` over one batch: each text's terms in
    position order (after stemming, folding and stop words, a text of a column stemmed by
    its rows' languages in the language ``language`` names), repeats kept."""

    def compute(args: tuple, rows: np.ndarray | None) -> pa.Array:
        (an,) = args
        values = take(text, rows)
        stream = resolve_analyzer(an, "fts_tokenize").analyze(values, languages=take(language, rows))
        offsets = np.zeros(len(values) + 1, dtype=np.int32)
        np.cumsum(stream.dl, out=offsets[1:])
        terms = stream.vocab.take(pa.array(stream.term)).cast(pa.string())
        return pa.ListArray.from_arrays(pa.array(offsets), terms, mask=pa.array(~validity(values)))

    return per_group(len(text), [analyzer], compute)
