"""Many rows asked for out of order (a search without a limit, by score): fetched in
bounded memory, each page decompressed as few times as it can be.

A fetch reads rows in row-id order and the caller wants them in its own order. Fetching
everything, then reordering, holds the rows twice: the 93,213 bodies (64 MB) of one
frequent term of the 1M-row benchmark corpus grew the process by 163 MB. Two ways hold
about the output once:

* **In slices** of the asked order (``step`` rows each), each fetched and put in order
  on its own: the output plus one slice. A page holding rows of several slices is
  decompressed once for each: 84,917 times for that term's 56,348 pages.
* **In two passes** over windows of the rows in row-id order: the first reads the text
  columns' value lengths (and keeps the other columns, which are small), the second
  copies each value straight to its place in the output, laid out from those lengths.
  Every text page is decompressed twice: better when a result covers most rows of its
  pages (a term in 30% of the corpus's rows: 160,626 page reads in two passes, 277,250
  in slices).

:func:`take_out_of_order` counts both from the pages the rows sit in, when the store can
tell them, and takes the cheaper.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa

from .huge_pages import empty_bytes
from .parquet_values import bytes_array
from .reorder_rows import byte_lengths, copy_values, is_bytes, reorder_rows

Take = Callable[[np.ndarray, list[str]], pa.Table]


def take_out_of_order(
    take: Take, row_ids: np.ndarray, columns: list[str], schema: pa.Schema,
    page_keys: Callable[[np.ndarray, str], np.ndarray | None], step: int,
) -> pa.Table:
    """``columns`` (of ``schema``) of ``row_ids`` in the order given, through ``take``
    (which fetches ids in ascending order at once). ``page_keys(row_ids, column)``: a key
    per id of the page holding it (equal within a page, negative for rows held in
    memory), or None when unknown. On the caller's thread: two slices at once on a
    thread pool took longer for the 93,213- and 305,055-row queries in interleaved runs on
    this project's 2-core test machine (with another job running there)."""
    text = [c for c in columns if is_bytes(schema.field(c).type)]
    if text and _two_passes_read_less(page_keys(row_ids, text[0]), step):
        return _in_two_passes(take, row_ids, columns, schema, text, step)
    return pa.concat_tables(take(row_ids[start : start + step], columns) for start in range(0, len(row_ids), step))


def _two_passes_read_less(keys: np.ndarray | None, step: int) -> bool:
    """Whether reading every page twice reads fewer pages than reading each once per
    slice it has rows of."""
    if keys is None:
        return False
    stored = np.flatnonzero(keys >= 0)
    pages, page = np.unique(keys[stored], return_inverse=True)
    slice_of = stored // step
    slices = int(slice_of[-1]) + 1 if len(stored) else 1
    per_slice = len(np.unique(page.astype(np.int64) * slices + slice_of))  # (distinct page, slice pairs)
    return 2 * len(pages) < per_slice


def _in_two_passes(take: Take, row_ids: np.ndarray, columns: list[str], schema: pa.Schema, text: list[str],
                   step: int) -> pa.Table:
    """See the module docstring: the text columns written once, into their final place."""
    n = len(row_ids)
    by_row = np.argsort(row_ids, kind="stable")
    windows = [by_row[lo : lo + step] for lo in range(0, n, step)]
    other = [c for c in columns if c not in text]
    lengths = {c: np.zeros(n, dtype=np.int64) for c in text}
    valid = {c: np.ones(n, dtype=np.bool_) for c in text}

    def measure(at: np.ndarray) -> pa.Table:
        """Pass 1 over one window: its text values' lengths; its other columns."""
        window = take(row_ids[at], columns)
        for c in text:
            lengths[c][at] = byte_lengths(window.column(c))
            valid[c][at] = window.column(c).is_valid().to_numpy(zero_copy_only=False)
        return window.select(other)

    kept = [measure(at) for at in windows]
    offsets, out = {}, {}
    for c in text:
        offsets[c] = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths[c], out=offsets[c][1:])
        out[c] = empty_bytes(int(offsets[c][-1]))
    everything = np.arange(step, dtype=np.int64)
    for at in windows:  # (pass 2: each window's text values copied to their places)
        window = take(row_ids[at], text)
        for c in text:
            copy_values(window.column(c), everything[: len(at)], at, offsets[c], out[c])
    arrays = {c: bytes_array(schema.field(c).type, valid[c], offsets[c], out[c]) for c in text}
    if other:
        rest = reorder_rows(pa.concat_tables(kept), np.argsort(by_row, kind="stable"))
        arrays.update((c, rest.column(c)) for c in other)
    return pa.table([arrays[c] for c in columns], schema=pa.schema([schema.field(c) for c in columns]))
