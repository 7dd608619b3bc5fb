"""Build index segments from token streams, and merge segments (DESIGN §2, §7).

A build tokenizes a bounded chunk of rows, inverts it into a segment, and repeats; chunks
are then merged into larger segments while the merged size stays under a budget. That
keeps memory bounded by the chunk size on tables larger than RAM.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..analysis import TokenStream
from ..storage.manifest import CODEC_BP128, SegmentMeta
from .postings_codec import DamagedPostings, scatter_positions, scatter_postings
from .postings_kernel import BLOCK_SIZE, block_metadata, invert
from .segment import Segment
from .sorted_terms import sort_terms, term_buffers, union_terms


def _sorted_vocab(stream: TokenStream, term_ids: np.ndarray | None = None) -> tuple[pa.LargeStringArray, np.ndarray]:
    """The used terms (only stream ids ``term_ids`` when given) in sorted order, and each
    stream term id's new id (-1 for a term left out)."""
    counts = np.bincount(stream.term, minlength=len(stream.vocab))
    if term_ids is not None:
        wanted = np.zeros(len(counts), dtype=np.bool_)
        wanted[term_ids] = True
        counts[~wanted] = 0
    used = sort_terms(*term_buffers(stream.vocab), np.flatnonzero(counts))
    new_id = np.full(len(stream.vocab), -1, dtype=np.int32)
    new_id[used] = np.arange(len(used), dtype=np.int32)
    return stream.vocab.take(pa.array(used)), new_id


def _finish(
    seg_id: str, lo: int, hi: int, base: int, count: int, terms: pa.LargeStringArray,
    post_offsets: np.ndarray, rows: np.ndarray, tfs: np.ndarray,
    pos_offsets: np.ndarray, positions: np.ndarray, dl: np.ndarray,
) -> Segment:
    block_offsets, max_tf, min_dl, last_row = block_metadata(post_offsets, rows, tfs, dl, BLOCK_SIZE)
    meta = SegmentMeta(
        id=seg_id, lo=lo, hi=hi, base=base, count=count,
        n_docs=int(np.count_nonzero(dl)), total_tokens=int(dl.sum(dtype=np.int64)),
        n_terms=len(terms), n_postings=len(rows), codec=CODEC_BP128,
    )
    return Segment(
        meta=meta, terms=terms, post_offsets=post_offsets, rows=rows, tfs=tfs,
        pos_offsets=pos_offsets, positions=positions, dl=dl, block_offsets=block_offsets,
        block_max_tf=max_tf, block_min_dl=min_dl, block_last_row=last_row,
    )


def build_segment(
    seg_id: str, lo: int, hi: int, covered: tuple[int, int], row_ids: np.ndarray,
    stream: TokenStream | None, with_positions: bool, term_ids: np.ndarray | None = None,
) -> Segment:
    """A segment over [lo, hi] covering the committed rows ``covered`` (inclusive; empty
    when first > last), of which the live ones, ``row_ids`` (ascending), are tokenized in
    ``stream``. Deleted rows inside ``covered`` are covered too, with no tokens.

    With ``term_ids`` (stream term ids) only those terms get postings; every row's length
    is still exact. Such a segment answers queries on those terms only (a query's view
    of an unindexed tail)."""
    base = covered[0]
    count = max(0, covered[1] - covered[0] + 1)
    if len(row_ids) == 0 or stream is None:
        empty64 = np.zeros(1, dtype=np.int64)
        return _finish(
            seg_id, lo, hi, base, count, pa.array([], pa.large_string()), empty64,
            np.zeros(0, np.uint32), np.zeros(0, np.uint32),
            empty64 if with_positions else np.zeros(0, np.int64), np.zeros(0, np.uint32),
            np.zeros(count, np.uint32),
        )
    local = (row_ids - base).astype(np.uint32)
    dl = np.zeros(count, dtype=np.uint32)
    dl[local] = stream.dl
    terms, new_id = _sorted_vocab(stream, term_ids)
    token_rows, token_terms, token_pos = local[stream.row], new_id[stream.term], stream.pos
    if term_ids is not None:
        keep = token_terms >= 0
        token_rows, token_terms, token_pos = token_rows[keep], token_terms[keep], token_pos[keep]
    post_offsets, rows, tfs, pos_offsets, positions = invert(
        token_rows, token_terms, token_pos, len(terms), with_positions
    )
    return _finish(seg_id, lo, hi, base, count, terms, post_offsets, rows, tfs, pos_offsets, positions, dl)


def merge_segments(seg_id: str, segments: list[Segment]) -> Segment:
    """One segment holding the rows of ``segments`` (disjoint, ascending row ranges), built
    in memory (written bit-packed, see :meth:`.Segment.to_arrays`).

    Each merged term's postings are the inputs' postings in segment order, so row ids stay
    ascending: the term dictionaries merge in one pass, and each input's postings (and
    positions) are decoded to their places by a compiled loop, a block at a time.
    """
    with_positions = all(s.has_positions for s in segments)
    lo = min(s.meta.lo for s in segments)
    hi = max(s.meta.hi for s in segments)
    segments = [s for s in segments if s.meta.count > 0] or segments[:1]
    base = segments[0].meta.base
    count = segments[-1].meta.base + segments[-1].meta.count - base
    terms, gids = union_terms([s.terms for s in segments])
    total = np.zeros(len(terms), dtype=np.int64)
    for seg, gid in zip(segments, gids):
        total[gid] += np.diff(seg.post_offsets)  # (a segment's terms map to distinct ids)
    post_offsets = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(total, out=post_offsets[1:])
    n_post = int(post_offsets[-1])
    rows = np.empty(n_post, dtype=np.uint32)
    tfs = np.empty(n_post, dtype=np.uint32)
    dl = np.zeros(count, dtype=np.uint32)
    written = np.zeros(len(terms), dtype=np.int64)
    starts = []
    for seg, gid in zip(segments, gids):
        shift = seg.meta.base - base
        try:
            starts.append(scatter_postings(
                seg.source, seg.post_offsets, seg.block_offsets, gid, shift, post_offsets, written, rows, tfs
            ))
        except DamagedPostings as exc:
            raise seg.damaged(exc) from exc
        dl[shift : shift + seg.meta.count] = seg.dl
    if with_positions:
        pos_offsets = np.zeros(n_post + 1, dtype=np.int64)
        np.cumsum(tfs, out=pos_offsets[1:])
        positions = np.empty(int(pos_offsets[-1]), dtype=np.uint32)
        for seg, start in zip(segments, starts):
            try:
                scatter_positions(
                    seg.source, seg.position_source, seg.post_offsets, seg.block_offsets, start, pos_offsets, positions
                )
            except DamagedPostings as exc:
                raise seg.damaged(exc) from exc
    else:
        pos_offsets = np.zeros(0, dtype=np.int64)
        positions = np.zeros(0, dtype=np.uint32)
    return _finish(seg_id, lo, hi, base, count, terms, post_offsets, rows, tfs, pos_offsets, positions, dl)
