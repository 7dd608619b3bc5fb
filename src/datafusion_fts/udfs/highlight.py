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
import pyarrow.compute as pc

from .arguments import per_group, positive_ints, string_array, string_buffers, take, validity
from ..kernels.render import best_windows, render
from .text_query import BatchMatch, TextQuery, candidates, compile_query, lone_chars, resolve_analyzer

DEFAULT_PRE = "<b>"
DEFAULT_POST = "</b>"
DEFAULT_ELLIPSIS = "…"
DEFAULT_MAX_TOKENS = 20


def _marks(match: BatchMatch, keep: np.ndarray, values: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets per row, start, end) of the spans to mark in ``values`` (the texts
    ``match`` read): the kept tokens', a bigram that only a lone character of the query
    matched narrowed to that character, and overlapping spans made one (neighbouring
    bigrams share a character: "数据库" is marked once)."""
    stream = match.stream
    assert stream.start is not None and stream.end is not None
    rows = stream.row[keep].astype(np.int64)
    starts, ends = stream.start[keep].astype(np.int64), stream.end[keep].astype(np.int64)
    lone, exact = lone_chars(match.query)
    if lone and len(rows):
        starts, ends = _narrowed(stream.vocab, stream.term[keep], rows, starts, ends, values, lone, exact)
    if len(rows) > 1:
        order = np.lexsort((starts, rows))
        rows, starts, ends = rows[order], starts[order], ends[order]
        reach = np.maximum.accumulate(rows * (1 << 32) + ends) - rows * (1 << 32)  # (per row)
        first = np.ones(len(rows), dtype=np.bool_)
        first[1:] = (rows[1:] != rows[:-1]) | (starts[1:] >= reach[:-1])
        at = np.flatnonzero(first)
        rows, starts, ends = rows[at], starts[at], np.maximum.reduceat(ends, at)
    counts = np.bincount(rows, minlength=match.n_rows)
    offsets = np.zeros(match.n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets, starts, ends


# Voicing marks a kana's bytes may carry in a text (the tokenizer composed them into it).
_VOICING = np.array([0xE38299, 0xE3829A, 0xEFBE9E, 0xEFBE9F], dtype=np.int64)


def _narrowed(vocab: pa.Array, terms: np.ndarray, rows: np.ndarray, starts: np.ndarray, ends: np.ndarray,
              values: pa.Array, lone: frozenset[str], exact: frozenset[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each bigram token that no other term of the query names cut to the characters of
    it that are lone characters of the query (the split: its first character's UTF-8
    bytes, and a voicing mark composed into it)."""
    pairs = pc.equal(pc.utf8_length(vocab), 2).fill_null(False)
    lone_set = pa.array(sorted(lone), pa.large_string())
    firsts = pc.and_(pairs, pc.is_in(pc.utf8_slice_codeunits(vocab, 0, 1), value_set=lone_set))
    seconds = pc.and_(pairs, pc.is_in(pc.utf8_slice_codeunits(vocab, 1, 2), value_set=lone_set))
    named = pc.is_in(vocab, value_set=pa.array(sorted(exact), pa.large_string()))
    first_in = pc.and_not(firsts, named).to_numpy(zero_copy_only=False)[terms]
    second_in = pc.and_not(seconds, named).to_numpy(zero_copy_only=False)[terms]
    cut = first_in != second_in
    if not cut.any():
        return starts, ends
    data, offsets, _ = string_buffers(values)
    at = offsets[rows[cut]] + starts[cut]
    lead = data[at].astype(np.int64)
    length = np.where(lead < 0x80, 1, np.where(lead < 0xE0, 2, np.where(lead < 0xF0, 3, 4)))
    after = at + length
    padded = np.append(data, np.zeros(3, dtype=np.uint8)).astype(np.int64)
    mark = (padded[after] << 16) | (padded[after + 1] << 8) | padded[after + 2]
    split = starts[cut] + length + np.where(np.isin(mark, _VOICING), 3, 0)
    starts, ends = starts.copy(), ends.copy()
    keep_first = first_in[cut]
    ends[cut] = np.where(keep_first, split, ends[cut])
    starts[cut] = np.where(keep_first, starts[cut], split)
    return starts, ends


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


def _match(text: pa.Array, query: str, analyzer: str | None, column: str | None, function: str,
           languages: pa.Array) -> BatchMatch:
    compiled = compile_query(query, resolve_analyzer(analyzer, function), column, function)
    return BatchMatch(compiled, text, spans=True, languages=languages)


def highlighted(query: TextQuery, values: pa.Array, valid: np.ndarray, pre: pa.Array, post: pa.Array,
                languages: pa.Array | None = None) -> pa.Array:
    """``values`` with ``query``'s matched tokens wrapped in ``pre``/``post`` (null where not
    ``valid``), each text in the language ``languages`` names for it. Only texts that may
    hold a query term can have a token to wrap, so the others are not tokenized."""
    n = len(values)
    rows = candidates(query, values)
    if rows is not None and len(rows) < n:
        subset = values.take(pa.array(rows))
        match = BatchMatch(query, subset, spans=True,
                           languages=None if languages is None else languages.take(pa.array(rows)))
        sub_offsets, starts, ends = _marks(match, match.marked(), subset)
        counts = np.zeros(n, dtype=np.int64)
        counts[rows] = np.diff(sub_offsets)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        marks = (offsets, starts, ends)
    else:
        match = BatchMatch(query, values, spans=True, languages=languages)
        marks = _marks(match, match.marked(), values)
    lengths = np.diff(string_buffers(values)[1])
    zeros = np.zeros(n, dtype=np.bool_)
    window = (np.zeros(n, dtype=np.int64), lengths, zeros, zeros)
    return _render(values, valid, window, marks, pre, post, pre)


def highlight(
    text: pa.Array, query: pa.Array, pre: pa.Array, post: pa.Array, analyzer: pa.Array, column: pa.Array,
    language: pa.Array,
) -> pa.Array:
    """``highlight_with(text, query, pre, post, analyzer, column, language)`` over one batch."""

    def compute(args: tuple, rows: np.ndarray | None) -> pa.Array:
        q, an, col = args
        values, tags = take(text, rows), [take(a, rows) for a in (pre, post)]
        valid = validity(values, *tags)
        n = len(values)
        if q is None:
            return pa.nulls(n, pa.string())
        compiled = compile_query(q, resolve_analyzer(an, "highlight"), col, "highlight")
        return highlighted(compiled, values, valid, *tags, take(language, rows))

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
    language: pa.Array,
) -> pa.Array:
    """``snippet_with(text, query, max_tokens, pre, post, ellipsis, analyzer, column,
    language)`` over one batch."""
    width = positive_ints(max_tokens, "snippet", "max_tokens")

    def compute(args: tuple, rows: np.ndarray | None) -> pa.Array:
        q, an, col = args
        values, tags = take(text, rows), [take(a, rows) for a in (pre, post, ellipsis)]
        valid = validity(values, take(max_tokens, rows), *tags)
        if q is None:
            return pa.nulls(len(values), pa.string())
        match = _match(values, q, an, col, "snippet", take(language, rows))
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
        return _render(values, valid, window, _marks(match, marked & inside, values), *tags)

    return per_group(len(text), [query, analyzer, column], compute)
