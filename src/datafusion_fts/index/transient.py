"""A transient index of a few terms over one tokenized batch: what a scan builds to
evaluate a query over rows no segment covers (flat scan, unindexed tail, fresh tier)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..analysis import TokenStream
from ..kernels.invert import invert
from .bm25 import ColumnStats, norms
from .term_postings import TermPostings, present


def lookup_terms(stream: TokenStream, terms: Sequence[str]) -> np.ndarray:
    """Stream term ids of ``terms`` (-1 where absent); ``terms`` that are as many as the
    stream's seeds are its seeds (ids 0..n_seed-1 already)."""
    if stream.n_seed == len(terms) and len(terms):
        return np.arange(len(terms), dtype=np.int64)
    return find_terms(stream, terms)


def find_terms(stream: TokenStream, terms: Sequence[str]) -> np.ndarray:
    """Stream term ids of ``terms`` (-1 where absent), looked up in its vocabulary."""
    if not len(terms):
        return np.zeros(0, dtype=np.int64)
    found = pc.index_in(pa.array(list(terms), pa.large_string()), value_set=stream.vocab)
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


class TransientIndex:
    """Postings of ``terms`` in one batch whose rows have ids ``row_ids``."""

    def __init__(self, stream: TokenStream, row_ids: np.ndarray, terms: Sequence[str], with_positions: bool) -> None:
        self.row_ids = row_ids
        self.dl = stream.dl
        self.index = {t: i for i, t in enumerate(terms)}
        ids = lookup_terms(stream, terms)
        remap = np.full(len(stream.vocab) + 1, -1, dtype=np.int32)
        present = ids >= 0
        remap[ids[present]] = np.flatnonzero(present).astype(np.int32)
        if stream.n_seed == len(terms):
            keep = stream.term < len(terms)
        else:
            keep = remap[stream.term] >= 0
        self.post_offsets, self.rows, self.tfs, self.pos_offsets, self.positions = invert(
            stream.row[keep], remap[stream.term[keep]], stream.pos[keep], len(terms), with_positions
        )
        self._norms: tuple[tuple[int, int], np.ndarray] | None = None

    def postings(
        self, term: str, stats: ColumnStats, positions: bool, within: np.ndarray | None = None
    ) -> TermPostings | None:
        i = self.index.get(term)
        if i is None:
            return None
        a, b = int(self.post_offsets[i]), int(self.post_offsets[i + 1])
        if a == b:
            return None
        key = (stats.n_docs, stats.total_tokens)
        if self._norms is None or self._norms[0] != key:
            self._norms = (key, norms(self.dl, stats))
        local = self.rows[a:b]
        rows = self.row_ids[local]
        if not positions:
            tp = TermPostings(rows, self.tfs[a:b], self._norms[1][local])
        else:
            po = self.pos_offsets[a : b + 1]
            tp = TermPostings(
                rows, self.tfs[a:b], self._norms[1][local], po - po[0], self.positions[po[0] : po[-1]]
            )
        return tp if within is None else tp.take(present(tp.rows, within))
