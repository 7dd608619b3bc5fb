"""An immutable index segment: a term dictionary, postings, positions, document lengths
and block metadata over a contiguous range of row ids.

A segment is a bag of named Arrow arrays (memory-mapped Arrow IPC on disk). Row ids are
stored relative to ``base``. Postings come in one of two layouts (see
kernels/postings_codec.pyx): bit-packed blocks (codec ``bp128``, what every segment is
written as) or one uint32 per row, term frequency and position (codec ``u32``: segments
written before, and segments built in memory, which are read where they are built).
Reading either goes through the same compiled loaders. A segment whose row ids are
mostly deleted (``OPTIMIZE`` after a long history: row ids are stable, so its range spans
them all) packs its rows as their ordinals among its rows holding text (codec
``bp128-ordinals``; :func:`codec_for`): its postings then take about what a fresh build's
do, and read the same rows.

Opening a persisted segment maps its files, verifies their checksums but for the
postings and positions (:mod:`..storage.checksums`) and checks its offsets (:meth:`Segment.
from_arrays`); postings are read when a query reaches them, their regions verified the
first time (:meth:`Segment.verify`), and terms are found by binary search in the sorted
dictionary, so a segment costs no memory per term or posting until it is read (the
operating system pages in what queries touch).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields, replace

import numpy as np
import pyarrow as pa

from ..errors import StorageError
from ..kernels.invert import BLOCK_IMPACTS
from ..kernels.postings_codec import (
    PAD,
    DamagedPositions,
    DamagedPostings,
    check_layout,
    check_positions,
    count_postings,
    gather,
    live_counts,
    pack_positions,
    pack_postings,
    rank,
)
from ..kernels.sorted_terms import find_term
from ..storage.files.checksums import LazyRegions
from ..storage.files.manifest import CODEC_BP128, CODEC_ORDINALS, CODEC_U32, SegmentMeta
from ..storage.stores.shared import SharedStore
from .sorted_terms import term_buffers

# Arrays of every segment, then of each layout, with their types.
_COMMON = {
    "terms": None, "post_offsets": np.int64, "dl": np.uint32, "block_offsets": np.int64,
    "block_max_tf": (np.uint16, np.uint32), "block_min_dl": (np.uint16, np.uint32), "block_last_row": np.uint32,
}
_LAYOUTS = {
    CODEC_U32: {**_COMMON, "rows": np.uint32, "tfs": np.uint32, "pos_offsets": np.int64, "positions": np.uint32},
    CODEC_BP128: {
        **_COMMON, "block_bits": np.uint8, "block_words": np.int64, "post_words": np.uint32,
        "block_pos_words": np.int64, "pos_words": np.uint32,
    },
}
_LAYOUTS[CODEC_ORDINALS] = _LAYOUTS[CODEC_BP128]
# The arrays a query reads a few terms of: their regions are verified when first read.
_LAZY = frozenset({"post_words", "pos_words"})
# Terms found (or not) a segment remembers: a query looks each term up for its
# statistics, then for its postings.
_FOUND_MAX = 4096


def _none(dtype: type) -> np.ndarray:
    return np.zeros(0, dtype=dtype)


def sparse(count: int, n_docs: int) -> bool:
    """Whether fewer than half of a segment's ``count`` row ids hold text: its rows are
    mostly deleted."""
    return 2 * n_docs < count


def codec_for(count: int, n_docs: int) -> str:
    """The codec a segment is written in: ``bp128-ordinals`` where its rows are sparse,
    whose postings would otherwise take about a bit more per posting for each doubling
    of the row ids per row holding text (20,000 live rows among 355,000 ids: 4 bits)."""
    return CODEC_ORDINALS if sparse(count, n_docs) else CODEC_BP128


def ordinals(codec: str, dl: np.ndarray) -> np.ndarray:
    """In a segment of codec ``bp128-ordinals``, the local rows holding text (a nonzero
    length), ascending: the row of each ordinal; empty in other codecs, which pack rows as
    they are. Nothing on disk holds them; they follow from the row lengths."""
    return np.flatnonzero(dl).astype(np.uint32) if codec == CODEC_ORDINALS else _none(np.uint32)


def _np(array: pa.Array) -> np.ndarray:
    return array.to_numpy(zero_copy_only=True) if len(array) else np.zeros(0, array.type.to_pandas_dtype())


@dataclass
class Segment:
    """The arrays of one segment. The arrays of the layout it does not use are empty."""

    meta: SegmentMeta
    terms: pa.LargeStringArray
    post_offsets: np.ndarray
    dl: np.ndarray
    block_offsets: np.ndarray
    # Per block, its (tf, dl) impact points (kernels/invert.pyx block_metadata):
    # ``impacts`` each, block j's at [j * impacts, (j + 1) * impacts). A segment of format 2
    # keeps one, the block's max tf and min dl, hence the names.
    block_max_tf: np.ndarray
    block_min_dl: np.ndarray
    block_last_row: np.ndarray
    rows: np.ndarray = field(default_factory=lambda: _none(np.uint32))
    tfs: np.ndarray = field(default_factory=lambda: _none(np.uint32))
    pos_offsets: np.ndarray = field(default_factory=lambda: _none(np.int64))
    positions: np.ndarray = field(default_factory=lambda: _none(np.uint32))
    block_bits: np.ndarray = field(default_factory=lambda: _none(np.uint8))
    block_words: np.ndarray = field(default_factory=lambda: _none(np.int64))
    post_words: np.ndarray = field(default_factory=lambda: _none(np.uint32))
    block_pos_words: np.ndarray = field(default_factory=lambda: _none(np.int64))
    pos_words: np.ndarray = field(default_factory=lambda: _none(np.uint32))
    # Codec ``bp128-ordinals``, packed: the row of each ordinal (:func:`ordinals`, made
    # when the segment is); else empty.
    ords: np.ndarray = field(default_factory=lambda: _none(np.uint32))
    _buffers: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _found: dict[str, int] = field(default_factory=dict, repr=False)
    _lazy: dict[str, LazyRegions] = field(default_factory=dict, repr=False)
    _verified: set[tuple[int, bool]] = field(default_factory=set, repr=False)  # (term id, positions)

    def __post_init__(self) -> None:
        if self.packed and not len(self.ords):
            self.ords = ordinals(self.meta.codec, self.dl)
        # Read-only whatever their source (memory maps are, arrays built in memory are
        # not): a segment is immutable once made, and a kernel writing into one of its
        # arrays by mistake raises instead of changing what later searches read.
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    @classmethod
    def open(cls, meta: SegmentMeta, store: SharedStore) -> "Segment":
        """The persisted segment ``meta`` names in ``store``, its files verified (those of
        the postings and positions as queries read them)."""
        arrays, lazy = store.read_segment(meta.id, meta.checksums, _LAZY)
        seg = cls.from_arrays(meta, arrays)
        seg._lazy = lazy
        return seg

    def write_to(self, store: SharedStore) -> "Segment":
        """Write this segment's files to ``store``; the segment as written (its meta holding
        the crc32 of its checksum file, for the manifest)."""
        checksums = store.write_segment(self.meta.id, self.to_arrays(), self.compressed)
        return replace(self, meta=replace(self.meta, checksums=checksums))

    @property
    def compressed(self) -> frozenset[str]:
        """The arrays written compressed (ZSTD): the row lengths of a segment whose rows
        are mostly deleted (built over a long history: ``OPTIMIZE`` after many deletes),
        which are mostly zeros. A query reads every row length (the norms), so they are
        decompressed once when the segment opens; uncompressed, the row lengths of a
        table of 20,000 live rows among 355,000 row ids took 1.4 MB where a fresh build's
        take 80 KB (compressed: 52 KB). Other arrays stay memory-mapped as they are."""
        return frozenset({"dl"}) if sparse(self.meta.count, self.meta.n_docs) else frozenset()

    @classmethod
    def from_arrays(cls, meta: SegmentMeta, arrays: dict[str, pa.Array]) -> "Segment":
        """The segment of ``arrays`` (as :meth:`to_arrays` gave them, or as a segment of
        codec ``u32`` was written), its offsets checked: damage is a StorageError naming
        the file, before any kernel follows an offset."""
        layout = _LAYOUTS.get(meta.codec)
        if layout is None:
            raise StorageError(f"index segment {meta.id} has an unknown codec {meta.codec!r}")
        values: dict[str, object] = {}
        for name, dtype in layout.items():
            array = arrays.get(name)
            where = f"index segment file index/{meta.id}/{name}.arrow"
            if array is None:
                raise StorageError(f"{where} is missing")
            if dtype is None:
                if not pa.types.is_large_string(array.type):
                    raise StorageError(f"{where} holds {array.type}, not large_string")
                values[name] = array
                continue
            allowed = dtype if isinstance(dtype, tuple) else (dtype,)
            if array.type.to_pandas_dtype() not in allowed or array.null_count:
                raise StorageError(f"{where} holds {array.type}, not {' or '.join(str(np.dtype(d)) for d in allowed)}")
            values[name] = _np(array)
        seg = cls(meta=meta, **values)  # type: ignore[arg-type]
        seg._check()
        return seg

    def _check(self) -> None:
        """Raise a StorageError naming the first file whose offsets do not fit."""
        meta = self.meta
        data, offsets = term_buffers(self.terms)
        packed = meta.codec != CODEC_U32
        n_postings = meta.n_postings if packed else len(self.rows)
        problem, name = "", ""
        if len(self.dl) != meta.count:
            problem, name = f"{len(self.dl)} row lengths for {meta.count} rows", "dl"
        elif meta.codec == CODEC_ORDINALS and len(self.ords) != meta.n_docs:
            problem, name = f"{len(self.ords)} rows hold text, not {meta.n_docs}", "dl"
        elif not packed and len(self.tfs) != len(self.rows):
            problem, name = "not one term frequency per row", "tfs"
        elif (len(self.block_max_tf) != self.impacts * len(self.block_last_row)
              or len(self.block_min_dl) != len(self.block_max_tf) or not 1 <= self.impacts <= BLOCK_IMPACTS):
            problem, name = "the block metadata differ in length", "block_max_tf"
        elif packed and len(self.post_words) < PAD:
            problem, name = "no packed postings", "post_words"
        else:
            problem, name = check_layout(
                self.post_offsets, self.block_offsets, self.block_last_row, meta.count, n_postings,
                self.block_bits, self.block_words, len(self.post_words), offsets, len(data),
            )
        if not problem and len(self.pos_offsets) and len(self.pos_offsets) != n_postings + 1:
            problem, name = "not one position offset per posting", "pos_offsets"
        if not problem and len(self.pos_words):
            problem, name = check_positions(len(self.block_last_row), self.block_pos_words, len(self.pos_words))
        if problem:
            raise StorageError(f"index segment file index/{meta.id}/{name}.arrow is damaged: {problem}")

    def to_arrays(self) -> dict[str, pa.Array]:
        """The arrays to write: the ``bp128`` layout (packed here when built in memory)."""
        out = {name: pa.array(getattr(self, name)) for name in _COMMON if name != "terms"}
        out["terms"] = self.terms
        if self.packed:
            packed = {name: getattr(self, name) for name in _LAYOUTS[CODEC_BP128] if name not in _COMMON}
        else:
            rows = packed_rows(self.rows, ordinals(self.meta.codec, self.dl))
            bits, words_at, words = pack_postings(self.post_offsets, rows, self.tfs, self.block_offsets)
            packed = {"block_bits": bits, "block_words": words_at, "post_words": words}
            packed["block_pos_words"], packed["pos_words"] = (
                pack_positions(self.post_offsets, self.pos_offsets, self.positions, self.block_offsets)
                if len(self.pos_offsets) else (_none(np.int64), _none(np.uint32))
            )
        out.update({name: pa.array(value) for name, value in packed.items()})
        return out

    def pack(self) -> "Segment":
        """This segment in the ``bp128`` layout (itself when it is): what a build holds
        of the chunks it has inverted, until it merges them."""
        return self if self.packed else Segment.from_arrays(self.meta, self.to_arrays())

    @property
    def packed(self) -> bool:
        """Whether the postings are bit-packed (``bp128``) rather than one uint32 each."""
        return len(self.post_words) > 0

    @property
    def source(self) -> tuple[np.ndarray, ...]:
        """The postings as the compiled readers take them (kernels/postings_codec.pyx)."""
        return self.post_words, self.block_words, self.block_bits, self.rows, self.tfs, self.block_last_row, self.ords

    @property
    def position_source(self) -> tuple[np.ndarray, ...]:
        return self.pos_words, self.block_pos_words, self.pos_offsets, self.positions

    @property
    def impacts(self) -> int:
        """Impact points per block (see ``block_max_tf``): 1 in segments of format 2."""
        blocks = len(self.block_last_row)
        return len(self.block_max_tf) // blocks if blocks else 1

    @property
    def has_positions(self) -> bool:
        return len(self.pos_offsets) > 0 or len(self.pos_words) > 0 or int(self.post_offsets[-1]) == 0

    def damaged(self, exc: DamagedPostings) -> StorageError:
        """The StorageError naming this segment's file that ``exc`` (from a compiled reader)
        found damaged."""
        if isinstance(exc, DamagedPositions):
            name = "pos_words" if self.packed else "positions"
        else:
            name = "post_words" if self.packed else "rows"
        return StorageError(f"index segment file index/{self.meta.id}/{name}.arrow is damaged: {exc}")

    def term_id(self, term: str) -> int:
        """The id of ``term`` in this segment, or -1 (binary search, remembered)."""
        found = self._found.get(term)
        if found is None:
            if self._buffers is None:
                self._buffers = term_buffers(self.terms)
            found = find_term(*self._buffers, term.encode("utf-8"))
            if len(self._found) < _FOUND_MAX:
                self._found[term] = found
        return found

    def verify(self, term_ids: np.ndarray, positions: bool) -> None:
        """Verify the checksums of the postings (and ``positions``) of ``term_ids`` (-1:
        absent) before a kernel reads them: each region once per process. A term verified
        once costs a set lookup after (a call ~2 us, where the offsets' arithmetic took
        15-40)."""
        if self._lazy:
            todo = [t for t in term_ids.tolist() if t >= 0 and (t, positions) not in self._verified]
            if todo:
                ids = np.array(todo, dtype=np.int64)
                self._verify(self.block_offsets[ids], self.block_offsets[ids + 1], positions)
                self._verified.update((t, positions) for t in todo)

    def verify_terms(self, t0: int, t1: int, positions: bool) -> None:
        """Verify the postings (and ``positions``) of terms [t0, t1) (see :meth:`verify`)."""
        if self._lazy:
            self._verify(self.block_offsets[t0 : t0 + 1], self.block_offsets[t1 : t1 + 1], positions)

    def _verify(self, first: np.ndarray, last: np.ndarray, positions: bool) -> None:
        """Verify the words of blocks [first[i], last[i]) and the PAD words after them; an
        array verified whole leaves ``_lazy`` (so a segment read through costs nothing)."""
        for name, at in (("post_words", self.block_words), ("pos_words", self.block_pos_words)):
            regions = self._lazy.get(name)
            if regions is not None and (positions or name == "post_words"):
                regions.verify(at[first], at[last] + PAD)
                if regions.complete:
                    self._lazy.pop(name, None)

    def term_range(self, term_id: int) -> tuple[int, int, int]:
        """The term's postings [start, end) and its first block."""
        return self.post_offsets.item(term_id), self.post_offsets.item(term_id + 1), self.block_offsets.item(term_id)

    def rank(self, term_id: int, row: int) -> int:
        """The first of the term's postings whose local row is >= ``row``."""
        self.verify(np.array([term_id]), False)
        try:
            return int(rank(self.source, *self.term_range(term_id), row))
        except DamagedPostings as exc:
            raise self.damaged(exc) from exc

    def read(
        self, term_id: int, a: int, b: int, within: np.ndarray | None, drop: np.ndarray, positions: bool,
        tfs: bool = True,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The term's postings a..b (local rows, tfs unless not ``tfs``, and with
        ``positions`` position offsets from 0 and positions), only at local rows of
        ``within`` when given (both ascending) and not at rows of ``drop``."""
        if positions and not self.has_positions:
            raise StorageError(f"index segment {self.meta.id} has no positions (its files are incomplete)")
        use = within is not None
        self.verify(np.array([term_id]), positions)
        try:
            return gather(
                self.source, self.position_source, *self.term_range(term_id), a, b,
                within if within is not None else _none(np.int64), use, drop, positions, tfs,
            )
        except DamagedPostings as exc:
            raise self.damaged(exc) from exc

    def count_postings(self, term_id: int, a: int, b: int, drop: np.ndarray, codes: np.ndarray, shift: int,
                    counts: np.ndarray, seen: np.ndarray | None = None) -> None:
        """Count the term's postings a..b not at local rows of ``drop`` (ascending) by a
        column's ``codes`` (storage/coded_rows.py): ``counts[codes[row + shift]]`` one
        more for each, but for rows marked in ``seen`` (one byte a code), which it marks."""
        self.verify(np.array([term_id]), False)
        try:
            count_postings(self.source, *self.term_range(term_id), a, b, drop, codes, shift, counts,
                        _none(np.uint8) if seen is None else seen)
        except DamagedPostings as exc:
            raise self.damaged(exc) from exc

    def live_counts(self, lo: int, hi: int, drop: np.ndarray) -> np.ndarray:
        """Per term, its postings at local rows [lo, hi) not in ``drop`` (ascending)."""
        self.verify_terms(0, len(self.post_offsets) - 1, False)
        try:
            return live_counts(self.source, self.post_offsets, self.block_offsets, lo, hi, drop)
        except DamagedPostings as exc:
            raise self.damaged(exc) from exc


def packed_rows(rows: np.ndarray, ords: np.ndarray) -> np.ndarray:
    """Local ``rows`` (of postings) as a segment whose :func:`ordinals` are ``ords`` packs
    them: their ordinals, or themselves where ``ords`` is empty."""
    return np.searchsorted(ords, rows).astype(np.uint32) if len(ords) else rows


# A binary-search lookup costs about as much as putting this many terms in a dict.
_LOOKUP_COST_IN_TERMS = 50


@dataclass
class InMemorySegment(Segment):
    """A segment built in memory for a short life (fresh rows, a query's unindexed tail).

    Its term lookups binary-search the sorted terms until they have cost about what a
    dictionary of its vocabulary costs to build, then build one (a ski-rental rule: never
    more than twice the better of the two). A segment that few queries read never pays
    for a dictionary of every term it holds, and a cached tail that many queries read
    stops searching."""

    _lookup: dict[str, int] | None = field(default=None, repr=False)
    _lookups: int = field(default=0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def of(cls, segment: Segment) -> "InMemorySegment":
        own = ("_buffers", "_found", "_lazy", "_verified")
        return cls(**{f.name: getattr(segment, f.name) for f in fields(Segment) if f.name not in own})

    def term_id(self, term: str) -> int:
        if self._lookup is not None:
            return self._lookup.get(term, -1)
        found = self._found.get(term)
        if found is not None:
            return found
        self._lookups += 1
        if self._lookups * _LOOKUP_COST_IN_TERMS >= len(self.terms):
            with self._lock:
                if self._lookup is None:
                    self._lookup = {t: i for i, t in enumerate(self.terms.to_pylist())}
            return self._lookup.get(term, -1)
        return super().term_id(term)
