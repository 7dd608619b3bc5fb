"""``highlight`` and ``snippet``: texts with the tokens that match a query wrapped in tags.

Matching is :mod:`.text_query`'s (each text its own one-row collection, through the
analyzer, so stemmed and folded forms match); the tags go around each matched token's
original characters, found by the byte spans the tokenizer records. A phrase marks only
the tokens of its whole occurrences (with the query's slop); a fuzzy or prefix leaf marks
the text's own expansions of it.

A snippet is the window of at most ``max_tokens`` consecutive tokens holding the most
distinct matched terms, then the most matched tokens (the earliest such window, moved to
centre its matches), with the ellipsis where the text is cut. A text the query does not
match gives its first ``max_tokens`` tokens.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .arguments import per_group, positive_ints, string_array, string_buffers, take, validity
from ..kernels.render import best_windows, render
from .text_query import BatchMatch, TextQuery, candidates, compile_query, resolve_analyzer

DEFAULT_PRE = "<b>"
DEFAULT_POST = "</b>"
DEFAULT_ELLIPSIS = "…"
DEFAULT_MAX_TOKENS = 20


def _marks(match: BatchMatch, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets per row, start, end) of the kept tokens' spans, in token order."""
    stream = match.stream
    assert stream.start is not None and stream.end is not None
    counts = np.bincount(stream.row[keep], minlength=match.n_rows)
    offsets = np.zeros(match.n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets, stream.start[keep].astype(np.int64), stream.end[keep].astype(np.int64)


def _render(
    values: pa.Array,
    valid: np.ndarray,
    window: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    marks: tuple[np.ndarray, np.ndarray, np.ndarray],
    pre: pa.Array,
    post: pa.Array,
    ellipsis: pa.Array,
) -> pa.Array:
    data, offsets, _ = string_buffers(values)
    tags = [string_buffers(t)[:2] for t in (pre, post, ellipsis)]
    win_lo, win_hi, lead, trail = window
    out, out_offsets = render(
        data, offsets, _bytes(valid), win_lo, win_hi, _bytes(lead), _bytes(trail), *marks, *tags[0], *tags[1], *tags[2]
    )
    return string_array(out, out_offsets, valid)


def _bytes(mask: np.ndarray) -> np.ndarray:
    """A bool mask as the bytes the kernels read."""
    return np.ascontiguousarray(mask, dtype=np.bool_).view(np.uint8)


def _match(text: pa.Array, query: str, analyzer: str | None, column: str | None, function: str) -> BatchMatch:
    compiled = compile_query(query, resolve_analyzer(analyzer, function), column, function)
    return BatchMatch(compiled, text, spans=True)


def highlighted(query: TextQuery, values: pa.Array, valid: np.ndarray, pre: pa.Array, post: pa.Array) -> pa.Array:
    """``values`` with ``query``'s matched tokens wrapped in ``pre``/``post`` (null where not
    ``valid``). Only texts that may hold a query term can have a token to wrap, so the
    others are not tokenized."""
    n = len(values)
    rows = candidates(query, values)
    if rows is not None and len(rows) < n:
        match = BatchMatch(query, values.take(pa.array(rows)), spans=True)
        sub_offsets, starts, ends = _marks(match, match.marked())
        counts = np.zeros(n, dtype=np.int64)
        counts[rows] = np.diff(sub_offsets)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        marks = (offsets, starts, ends)
    else:
        match = BatchMatch(query, values, spans=True)
        marks = _marks(match, match.marked())
    lengths = np.diff(string_buffers(values)[1])
    zeros = np.zeros(n, dtype=np.bool_)
    window = (np.zeros(n, dtype=np.int64), lengths, zeros, zeros)
    return _render(values, valid, window, marks, pre, post, pre)


def highlight(
    text: pa.Array, query: pa.Array, pre: pa.Array, post: pa.Array, analyzer: pa.Array, column: pa.Array
) -> pa.Array:
    """``highlight_with(text, query, pre, post, analyzer, column)`` over one batch."""

    def compute(args: tuple, rows: np.ndarray | None) -> pa.Array:
        q, an, col = args
        values, tags = take(text, rows), [take(a, rows) for a in (pre, post)]
        valid = validity(values, *tags)
        n = len(values)
        if q is None:
            return pa.nulls(n, pa.string())
        compiled = compile_query(q, resolve_analyzer(an, "highlight"), col, "highlight")
        return highlighted(compiled, values, valid, *tags)

    return per_group(len(text), [query, analyzer, column], compute)


def snippet(
    text: pa.Array,
    query: pa.Array,
    max_tokens: pa.Array,
    pre: pa.Array,
    post: pa.Array,
    ellipsis: pa.Array,
    analyzer: pa.Array,
    column: pa.Array,
) -> pa.Array:
    """``snippet_with(text, query, max_tokens, pre, post, ellipsis, analyzer, column)``."""
    width = positive_ints(max_tokens, "snippet", "max_tokens")

    def compute(args: tuple, rows: np.ndarray | None) -> pa.Array:
        q, an, col = args
        values, tags = take(text, rows), [take(a, rows) for a in (pre, post, ellipsis)]
        valid = validity(values, take(max_tokens, rows), *tags)
        if q is None:
            return pa.nulls(len(values), pa.string())
        match = _match(values, q, an, col, "snippet")
        stream = match.stream
        assert stream.start is not None and stream.end is not None
        marked = match.marked()
        key = np.where(marked, stream.term, -1).astype(np.int64)
        tok_offsets = np.zeros(match.n_rows + 1, dtype=np.int64)
        np.cumsum(stream.dl, out=tok_offsets[1:])
        first, stop = best_windows(tok_offsets, key, width if rows is None else width[rows], len(stream.vocab))
        n_tokens = np.diff(tok_offsets)
        lengths = np.diff(string_buffers(values)[1])
        lead, trail = first > 0, stop < n_tokens
        # A cut window starts at its first token and ends after its last (one padding
        # entry keeps the indices of rows without tokens in range).
        starts = np.append(stream.start, 0).astype(np.int64)
        ends = np.append(stream.end, 0).astype(np.int64)
        win_lo = np.where(lead, starts[tok_offsets[:-1] + first], 0)
        win_hi = np.where(trail, ends[np.maximum(tok_offsets[:-1] + stop - 1, 0)], lengths)
        local = np.arange(len(stream.row), dtype=np.int64) - tok_offsets[stream.row]
        inside = (local >= first[stream.row]) & (local < stop[stream.row])
        window = (win_lo.astype(np.int64), win_hi.astype(np.int64), lead, trail)
        return _render(values, valid, window, _marks(match, marked & inside), *tags)

    return per_group(len(text), [query, analyzer, column], compute)
