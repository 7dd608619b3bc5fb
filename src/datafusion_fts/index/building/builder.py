"""Build index segments from token streams, and merge segments (docs/design.md: "Building and
merging").

A build tokenizes a bounded chunk of rows, inverts it into a segment, and repeats; chunks
are then merged into larger segments while the merged size stays under a budget. That
keeps memory bounded by the chunk size on tables larger than RAM.
"""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np
import pyarrow as pa

from ...analysis import TokenStream
from ...kernels.invert import BLOCK_SIZE, block_metadata, invert
from ...kernels.postings_codec import (
    PAD,
    DamagedPostings,
    pack_positions,
    pack_postings,
    scatter_positions,
    scatter_postings,
)
from ...kernels.sorted_terms import sort_terms
from ...storage.files.manifest import SegmentMeta
from ..segment import Segment, codec_for, ordinals, packed_rows
from ..sorted_terms import term_buffers, union_terms


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
    block_offsets, impact_tf, impact_dl, last_row = block_metadata(post_offsets, rows, tfs, dl, BLOCK_SIZE)
    n_docs = int(np.count_nonzero(dl))
    meta = SegmentMeta(
        id=seg_id, lo=lo, hi=hi, base=base, count=count, n_docs=n_docs, total_tokens=int(dl.sum(dtype=np.int64)),
        n_terms=len(terms), n_postings=len(rows), codec=codec_for(count, n_docs),
    )
    return Segment(
        meta=meta, terms=terms, post_offsets=post_offsets, rows=rows, tfs=tfs,
        pos_offsets=pos_offsets, positions=positions, dl=dl, block_offsets=block_offsets,
        block_max_tf=impact_tf, block_min_dl=impact_dl, block_last_row=last_row,
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


# A merge decodes and re-packs at most about this many postings at a time (a single term
# with more is one batch): its scratch memory, beside the packed inputs and output.
MERGE_BATCH_POSTINGS = 1 << 22


def merge_segments(
    seg_id: str, segments: list[Segment], packed: bool = True, map_: Callable[..., Iterable[dict]] = map
) -> Segment:
    """One segment holding the rows of ``segments`` (disjoint, ascending row ranges).

    Each merged term's postings are the inputs' postings in segment order, so row ids stay
    ascending: the term dictionaries merge in one pass, and each input's postings (and
    positions) are decoded to their places by a compiled loop, a block at a time. A
    ``packed`` merge (the segments written to disk) works through the merged terms in
    batches of about ``MERGE_BATCH_POSTINGS`` postings, decoding and bit-packing one batch
    at a time (``map_`` may run them in parallel), so it never holds the postings
    unpacked; otherwise (segments read where they are built) the result holds one uint32
    per row, term frequency and position.
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
    dl = np.zeros(count, dtype=np.uint32)
    for seg in segments:
        dl[seg.meta.base - base : seg.meta.base - base + seg.meta.count] = seg.dl
    n_docs = int(np.count_nonzero(dl))
    meta = SegmentMeta(
        id=seg_id, lo=lo, hi=hi, base=base, count=count, n_docs=n_docs, total_tokens=int(dl.sum(dtype=np.int64)),
        n_terms=len(terms), n_postings=int(post_offsets[-1]), codec=codec_for(count, n_docs),
    )
    merge = _MergeInputs(segments, gids, base, post_offsets, dl, with_positions, ordinals(meta.codec, dl))
    if not packed:
        arrays = merge.batch((0, len(terms)), pack=False)
        return Segment(meta=meta, terms=terms, post_offsets=post_offsets, dl=dl, **arrays)
    pieces = list(map_(merge.batch, _term_batches(post_offsets, MERGE_BATCH_POSTINGS)))
    return Segment(meta=meta, terms=terms, post_offsets=post_offsets, dl=dl, ords=merge.ords,
                   **_concat_packed(pieces, with_positions))


def _term_batches(post_offsets: np.ndarray, size: int) -> list[tuple[int, int]]:
    """Consecutive term ranges [t0, t1) of about ``size`` postings each (at least one term)."""
    n_terms = len(post_offsets) - 1
    cuts = [0]
    while cuts[-1] < n_terms:
        t = int(np.searchsorted(post_offsets, post_offsets[cuts[-1]] + size, side="right")) - 1
        cuts.append(min(n_terms, max(t, cuts[-1] + 1)))
    return list(zip(cuts, cuts[1:])) or [(0, 0)]


class _MergeInputs:
    """The inputs of one merge, and the merge of a batch of its terms."""

    def __init__(
        self, segments: list[Segment], gids: list[np.ndarray], base: int, post_offsets: np.ndarray,
        dl: np.ndarray, with_positions: bool, ords: np.ndarray,
    ) -> None:
        self.segments, self.gids, self.base = segments, gids, base
        self.post_offsets, self.dl, self.with_positions = post_offsets, dl, with_positions
        self.ords = ords  # (the merged segment's ordinals: made once, not per batch)

    def batch(self, terms: tuple[int, int], pack: bool = True) -> dict[str, np.ndarray]:
        """The merged postings of terms [t0, t1): their block metadata, and their postings
        bit-packed (``pack``) or one uint32 each. Offsets count from the batch's start."""
        t0, t1 = terms
        offsets = self.post_offsets[t0 : t1 + 1] - self.post_offsets[t0]
        n = int(offsets[-1])
        rows = np.empty(n, dtype=np.uint32)
        tfs = np.empty(n, dtype=np.uint32)
        written = np.zeros(t1 - t0, dtype=np.int64)
        placed = []
        for seg, gid in zip(self.segments, self.gids):
            a, b = (int(x) for x in np.searchsorted(gid, (t0, t1)))  # (gid ascends)
            if a == b:
                continue
            post, blocks = seg.post_offsets[a : b + 1], seg.block_offsets[a : b + 1]
            seg.verify_terms(a, b, self.with_positions)
            try:
                starts = scatter_postings(
                    seg.source, post, blocks, gid[a:b] - t0, seg.meta.base - self.base, offsets, written, rows, tfs
                )
            except DamagedPostings as exc:
                raise seg.damaged(exc) from exc
            placed.append((seg, post, blocks, starts))
        if self.with_positions:
            pos_offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(tfs, out=pos_offsets[1:])
            positions = np.empty(int(pos_offsets[-1]), dtype=np.uint32)
            for seg, post, blocks, starts in placed:
                try:
                    scatter_positions(seg.source, seg.position_source, post, blocks, starts, pos_offsets, positions)
                except DamagedPostings as exc:
                    raise seg.damaged(exc) from exc
        else:
            pos_offsets, positions = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint32)
        block_offsets, impact_tf, impact_dl, last_row = block_metadata(offsets, rows, tfs, self.dl, BLOCK_SIZE)
        out = {"block_offsets": block_offsets, "block_max_tf": impact_tf, "block_min_dl": impact_dl,
               "block_last_row": last_row}
        if not pack:
            return {**out, "rows": rows, "tfs": tfs, "pos_offsets": pos_offsets, "positions": positions}
        out["block_bits"], out["block_words"], out["post_words"] = pack_postings(
            offsets, packed_rows(rows, self.ords), tfs, block_offsets
        )
        if self.with_positions:
            out["block_pos_words"], out["pos_words"] = pack_positions(offsets, pos_offsets, positions, block_offsets)
        return out


def _concat_packed(pieces: list[dict[str, np.ndarray]], with_positions: bool) -> dict[str, np.ndarray]:
    """The packed arrays of consecutive term batches as one segment's: offsets shifted by
    what came before, each word array's padding kept once, at the end. The pieces' word
    arrays are released as they are copied, so joining them holds one copy at a time."""
    blocks = ("block_bits", "block_max_tf", "block_min_dl", "block_last_row")
    out = {name: np.concatenate([p[name] for p in pieces]) for name in blocks}
    out["block_offsets"] = _chain([p["block_offsets"] for p in pieces])
    out["block_words"] = _chain([p["block_words"] for p in pieces])
    out["post_words"] = _join_words(pieces, "post_words", "block_words")
    if with_positions:
        out["block_pos_words"] = _chain([p["block_pos_words"] for p in pieces])
        out["pos_words"] = _join_words(pieces, "pos_words", "block_pos_words")
    return out


def _chain(offsets: list[np.ndarray]) -> np.ndarray:
    """Offset arrays (each from 0) of consecutive pieces as one."""
    shifts = np.cumsum([0] + [int(o[-1]) for o in offsets])
    return np.concatenate([o[:-1] + shift for o, shift in zip(offsets, shifts)] + [shifts[-1:]]).astype(np.int64)


def _join_words(pieces: list[dict[str, np.ndarray]], name: str, offsets: str) -> np.ndarray:
    """The pieces' word arrays ``name`` (each used up to its last offset) end to end, then
    ``PAD`` zero words; each piece's array is dropped once copied."""
    sizes = [int(p[offsets][-1]) for p in pieces]
    out = np.empty(sum(sizes) + PAD, dtype=np.uint32)
    at = 0
    for piece, n in zip(pieces, sizes):
        out[at : at + n] = piece.pop(name)[:n]
        at += n
    out[at:] = 0
    return out
