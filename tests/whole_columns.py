"""A switch for tests: every fetch of a column the page reader reads page by page reads it
whole instead (``PageReader._reads_whole``), as fetches of many rows of narrow columns
do; the tables of tests are too small to take that path by themselves."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from datafusion_fts.storage.parquet import page_reader


@contextlib.contextmanager
def whole_columns(on: bool = True) -> Iterator[None]:
    """Fetches read columns whole for the duration, if ``on``."""
    saved = page_reader.NARROW_BYTES, page_reader.WHOLE_MIN_ROWS, page_reader.WHOLE_DENSITY
    if on:
        page_reader.NARROW_BYTES, page_reader.WHOLE_MIN_ROWS, page_reader.WHOLE_DENSITY = 1 << 40, 1, 1 << 40
    try:
        yield
    finally:
        page_reader.NARROW_BYTES, page_reader.WHOLE_MIN_ROWS, page_reader.WHOLE_DENSITY = saved
