"""Seeded synthetic benchmark corpus: Zipf-distributed pseudo-words, fully vectorized.

Everything is a pure function of ``seed``, so benchmark runs on different machines index
byte-identical data. Rows are drawn in fixed whole blocks of ``_BLOCK_ROWS`` rows, each with its
own child random stream, and batches are cut out of those blocks: the output does not depend
on ``batch_rows``, and a smaller corpus is exactly a prefix of a larger one.

Run ``python benchmarks/corpus.py [n_rows]`` to write ``bench-data/corpus-<n>.parquet``.

Beside it, a real-text corpus (``CORPORA``): the docstrings of the running Python's standard
library (``datafusion_fts.demo_corpus``), whose query bands come from its own document
frequencies (``write_stdlib``, ``RankedTerms``) rather than from Zipf ranks.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

VOCAB_SIZE = 200_000
MIN_WORD_LEN = 2
MAX_WORD_LEN = 12
ZIPF_S = 1.0
BODY_MEAN_WORDS = 60.0
BODY_SIGMA = 0.6  # lognormal shape: long tail without making 400-word bodies common
BODY_MIN_WORDS = 5
BODY_MAX_WORDS = 400
TITLE_MIN_WORDS = 3
TITLE_MAX_WORDS = 9
ROW_GROUP_ROWS = 65_536
MAX_BATCH_ROWS = 1_000_000  # keeps one batch's body column far below the 2 GiB string limit

# Bump whenever the generated data changes, so stale cached Parquet files get rebuilt.
GENERATOR_VERSION = 1
_METADATA_KEY = b"datafusion_fts.bench_corpus"

# Rows are drawn in fixed-size blocks so the data is independent of the caller's batch size.
_BLOCK_ROWS = 16_384

# Half-open rank ranges [lo, hi) of the query-term frequency bands.
BANDS: dict[str, tuple[int, int]] = {
    "frequent": (0, 100),
    "medium": (1_000, 10_000),
    "rare": (50_000, 150_000),
}

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("body", pa.string(), nullable=False),
    ]
)


def _stream(seed: int, *key: int) -> np.random.Generator:
    """An independent random stream per (seed, purpose, block) so draws never interfere."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


@lru_cache(maxsize=4)
def _vocab_array(seed: int) -> pa.StringArray:
    """The ranked vocabulary as an Arrow array (index == frequency rank), built without loops.

    Words are random letter strings with uniform length in [2, 12]; duplicates (mostly among
    the short lengths) are removed keeping first occurrence, so rank order stays random.
    """
    rng = _stream(seed, 0)
    n_candidates = int(VOCAB_SIZE * 1.5)
    while True:
        lengths = rng.integers(MIN_WORD_LEN, MAX_WORD_LEN + 1, size=n_candidates, dtype=np.int64)
        letters = rng.integers(ord("a"), ord("z") + 1, size=(n_candidates, MAX_WORD_LEN),
                               dtype=np.uint8)
        mask = np.arange(MAX_WORD_LEN) < lengths[:, None]
        letters[~mask] = 0  # zero padding is unambiguous because letters are never 0
        keys = np.ascontiguousarray(letters).view(f"S{MAX_WORD_LEN}").ravel()
        _, first = np.unique(keys, return_index=True)
        if first.size >= VOCAB_SIZE:
            break
        n_candidates *= 2  # deterministic retry; unreachable with the default sizes
    keep = np.sort(first)[:VOCAB_SIZE]
    kept_lengths = lengths[keep]
    offsets = np.zeros(VOCAB_SIZE + 1, dtype=np.int32)
    np.cumsum(kept_lengths, out=offsets[1:])
    data = letters[keep][mask[keep]]  # row-major, so each word's letters are contiguous
    return pa.StringArray.from_buffers(
        VOCAB_SIZE, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data))
    )


# Inverse-CDF sampling goes through a guide table of 2**20 equal-probability buckets: a
# bucket maps straight to its first candidate rank and only buckets that straddle a rank
# boundary need a few vectorized correction steps, ~8x faster than a full searchsorted and
# bit-identical to ``np.searchsorted(cdf, u, side="right")``.
_GUIDE_BITS = 20
_MAX_CORRECTIONS = 16


@lru_cache(maxsize=1)
def _zipf_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Zipf(s) CDF over ranks (last entry exactly 1.0) plus its guide table.

    Returns ``(cdf, first, span, max_span)``: for ``u`` in bucket ``b`` the sampled rank lies
    in ``[first[b], first[b] + span[b]]``.
    """
    weights = 1.0 / np.arange(1, VOCAB_SIZE + 1, dtype=np.float64) ** ZIPF_S
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    cdf[-1] = 1.0
    n_buckets = 1 << _GUIDE_BITS
    edges = np.searchsorted(cdf, np.arange(n_buckets + 1) / n_buckets, side="right")
    edges = np.minimum(edges, VOCAB_SIZE - 1).astype(np.int32)
    span = np.diff(edges)
    return cdf, edges[:-1], span, int(span.max())


def vocabulary(seed: int = 42) -> list[str]:
    """The vocabulary ranked by frequency: element ``r`` is the word of Zipf rank ``r``."""
    return _vocab_array(seed).to_pylist()


def _sample_words(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` word ids (== ranks) drawn from the Zipf distribution by inverse CDF."""
    cdf, first, span, max_span = _zipf_tables()
    u = rng.random(count)
    if max_span > _MAX_CORRECTIONS:  # a much steeper ZIPF_S would make the tail loop long
        return np.searchsorted(cdf, u, side="right").astype(np.int32)
    bucket = (u * (1 << _GUIDE_BITS)).astype(np.int32)  # exact: scaling by a power of two
    ranks = first[bucket]
    todo = np.flatnonzero(span[bucket])
    u_todo, r_todo = u[todo], ranks[todo]
    for _ in range(max_span):
        r_todo += u_todo >= cdf[r_todo]  # never passes the last rank: cdf[-1] == 1.0 > u
    ranks[todo] = r_todo
    return ranks


class _Block:
    """The random draws of one fixed block of rows (lengths and flat word ids)."""

    __slots__ = ("title_off", "title_ids", "body_off", "body_ids")

    def __init__(self, seed: int, index: int, n_rows: int = _BLOCK_ROWS) -> None:
        rng = _stream(seed, 1, index)
        title_len = rng.integers(TITLE_MIN_WORDS, TITLE_MAX_WORDS + 1, size=n_rows)
        mu = np.log(BODY_MEAN_WORDS) - BODY_SIGMA**2 / 2  # so the lognormal mean is ~60
        body_len = np.clip(np.rint(rng.lognormal(mu, BODY_SIGMA, size=n_rows)),
                           BODY_MIN_WORDS, BODY_MAX_WORDS).astype(np.int64)
        self.title_off = np.concatenate(([0], np.cumsum(title_len)))
        self.body_off = np.concatenate(([0], np.cumsum(body_len)))
        self.title_ids = _sample_words(rng, int(self.title_off[-1]))
        self.body_ids = _sample_words(rng, int(self.body_off[-1]))


def _join(vocab: pa.StringArray, lengths: np.ndarray, ids: np.ndarray) -> pa.Array:
    """Space-join each row's words: take the words, wrap them in a list array, binary_join."""
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    words = vocab.take(pa.array(ids, type=pa.int32()))
    lists = pa.LargeListArray.from_arrays(pa.array(offsets, type=pa.int64()), words)
    return pc.binary_join(lists, " ")


def generate(n_rows: int, seed: int = 42, batch_rows: int = 100_000) -> Iterator[pa.RecordBatch]:
    """Yield the corpus as ``(id, title, body)`` batches of at most ``batch_rows`` rows.

    Memory stays proportional to ``batch_rows`` (plus the 200k-word vocabulary).
    """
    if n_rows < 0:
        raise ValueError(f"n_rows must be >= 0, got {n_rows}")
    if not 0 < batch_rows <= MAX_BATCH_ROWS:
        raise ValueError(f"batch_rows must be in 1..{MAX_BATCH_ROWS}, got {batch_rows}")
    vocab = _vocab_array(seed)
    cached: tuple[int, _Block] | None = None  # a block straddling two batches is drawn once
    for start in range(0, n_rows, batch_rows):
        stop = min(start + batch_rows, n_rows)
        t_len: list[np.ndarray] = []
        t_ids: list[np.ndarray] = []
        b_len: list[np.ndarray] = []
        b_ids: list[np.ndarray] = []
        for index in range(start // _BLOCK_ROWS, (stop - 1) // _BLOCK_ROWS + 1):
            block_start = index * _BLOCK_ROWS
            if cached is not None and cached[0] == index:
                block = cached[1]
            else:
                block = _Block(seed, index)  # always whole, so smaller corpora are prefixes
                cached = (index, block)
            lo = max(start, block_start) - block_start
            hi = min(stop, block_start + _BLOCK_ROWS) - block_start
            for off, ids, out_len, out_ids in (
                (block.title_off, block.title_ids, t_len, t_ids),
                (block.body_off, block.body_ids, b_len, b_ids),
            ):
                out_len.append(np.diff(off[lo : hi + 1]))
                out_ids.append(ids[off[lo] : off[hi]])
        title = _join(vocab, np.concatenate(t_len), np.concatenate(t_ids))
        body = _join(vocab, np.concatenate(b_len), np.concatenate(b_ids))
        ids_col = pa.array(np.arange(start, stop, dtype=np.int64))
        yield pa.RecordBatch.from_arrays([ids_col, title, body], schema=SCHEMA)


def _corpus_metadata(n_rows: int, seed: int) -> dict[bytes, bytes]:
    """Key-value metadata identifying a generated file, used to skip regeneration."""
    value = {"n_rows": n_rows, "seed": seed, "version": GENERATOR_VERSION}
    return {_METADATA_KEY: json.dumps(value, sort_keys=True).encode()}


def _is_current_metadata(path: Path, expected: dict[bytes, bytes]) -> bool:
    """True if ``path`` is a complete corpus file whose identifying metadata is ``expected``."""
    try:
        metadata = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException):
        return False
    return metadata.get(_METADATA_KEY) == expected[_METADATA_KEY]


def _is_current(path: Path, n_rows: int, seed: int) -> bool:
    """True if ``path`` is a complete corpus file generated with the same parameters."""
    return _is_current_metadata(path, _corpus_metadata(n_rows, seed))


def _write(target: Path, batches: Iterable[pa.RecordBatch], metadata: dict[bytes, bytes]) -> None:
    """Write ``batches`` to ``target`` in ~64k-row row groups under a temporary name, then
    rename, so an interrupted run never leaves a file that looks complete."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with pq.ParquetWriter(tmp, SCHEMA.with_metadata(metadata), compression="zstd") as writer:
            for batch in batches:
                writer.write_batch(batch, row_group_size=ROW_GROUP_ROWS)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_parquet(path: str | os.PathLike[str], n_rows: int, seed: int = 42) -> bool:
    """Stream the corpus to ``path`` in ~64k-row row groups; returns False if already there."""
    target = Path(path)
    if _is_current(target, n_rows, seed):
        return False
    _write(target, generate(n_rows, seed, batch_rows=ROW_GROUP_ROWS), _corpus_metadata(n_rows, seed))
    return True


class RankedTerms:
    """A corpus's candidate query terms by frequency rank (index == rank) and its bands, each a
    half-open rank range, so both corpora draw query terms the same way."""

    def __init__(self, terms: pa.Array, bands: dict[str, tuple[int, int]]) -> None:
        self.terms, self.bands = terms, bands

    def pick(self, band: str, count: int, rng_seed: int = 0) -> list[str]:
        """``count`` distinct terms whose rank lies in ``band`` (deterministic)."""
        if band not in self.bands:
            raise ValueError(f"unknown band {band!r}; expected one of {sorted(self.bands)}")
        lo, hi = self.bands[band]
        if not 0 <= count <= hi - lo:
            raise ValueError(f"count must be in 0..{hi - lo} for band {band!r}, got {count}")
        ranks = np.random.default_rng(rng_seed).choice(np.arange(lo, hi), size=count, replace=False)
        return self.terms.take(pa.array(ranks, type=pa.int64())).to_pylist()


def query_terms(seed: int, band: str, count: int, rng_seed: int = 0) -> list[str]:
    """``count`` distinct words whose frequency rank lies in ``band`` (deterministic).

    Bands are half-open rank ranges: "frequent" [0, 100), "medium" [1000, 10000),
    "rare" [50000, 150000).
    """
    return RankedTerms(_vocab_array(seed), BANDS).pick(band, count, rng_seed)


# -- the real-text corpus ---------------------------------------------------------------------
STDLIB_VERSION = 1  # bump when the stdlib file or its term list changes
# Query terms of real text: plain lowercase ASCII words of 3-40 letters that are not English
# stop words. Ours (the default `simple` analyzer), Tantivy's default tokenizer and Lance's
# `simple` one all split on non-alphanumerics and lowercase, so such a word is one and the same
# term in all three; none of them stems or drops stop words here (stop words are left out only
# because nobody searches for "the").
_PLAIN_WORD = r"[a-z]{3,40}"
# Real-text bands by document frequency (df): the 100 most frequent terms, terms in
# 0.1 %-1 % of the documents (below the frequent ones and above the rare ones, which a small
# corpus needs), and terms in 2-5 documents.
REAL_FREQUENT = 100
REAL_MEDIUM_DF = (0.001, 0.01)
REAL_RARE_DF = (2, 5)


def stdlib_table(limit: int | None = None) -> pa.Table:
    """The stdlib docstrings (optionally the first ``limit``) as ``SCHEMA``'s (id, title, body)."""
    from datafusion_fts.demo_corpus import stdlib_docstrings

    table = stdlib_docstrings(limit)
    return pa.Table.from_arrays([table.column(f.name) for f in SCHEMA], schema=SCHEMA)


def _stdlib_metadata(n_rows: int) -> dict[bytes, bytes]:
    """Identifies a stdlib corpus file: its rows, this Python (its stdlib is the text), the format."""
    value = {"corpus": "stdlib", "n_rows": n_rows, "python": sys.version, "version": STDLIB_VERSION}
    return {_METADATA_KEY: json.dumps(value, sort_keys=True).encode()}


def document_frequencies(body: pa.Array | pa.ChunkedArray) -> tuple[dict[str, int], dict[str, int]]:
    """Document frequency of every plain word (``_PLAIN_WORD``, not a stop word) of ``body``,
    tokenized by our default analyzer (the terms every system indexes alike), and the counts of
    all tokens and distinct terms (for the report)."""
    import re

    from datafusion_fts.analysis import analyzer_for, make_analyzer_config
    from datafusion_fts.analysis.stopwords import ENGLISH

    stream = analyzer_for(make_analyzer_config()).analyze(body)
    vocab = stream.vocab.to_pylist()
    pairs = np.unique(stream.row.astype(np.int64) * len(vocab) + stream.term)
    df = np.bincount(pairs % len(vocab), minlength=len(vocab)) if len(vocab) else np.zeros(0, np.int64)
    plain = re.compile(_PLAIN_WORD)
    stats = {"tokens": len(stream.term), "distinct_terms": len(vocab)}
    return {t: int(d) for t, d in zip(vocab, df) if plain.fullmatch(t) and t not in ENGLISH}, stats


def write_stdlib(path: Path, terms_path: Path, table: pa.Table) -> bool:
    """Write the stdlib corpus ``table`` to ``path`` and its terms ranked by document frequency
    (df descending, then alphabetically) to ``terms_path``; returns False if both are there."""
    metadata = _stdlib_metadata(table.num_rows)
    if terms_path.exists() and _is_current_metadata(path, metadata):
        return False
    body = table.column("body")
    df, stats = document_frequencies(body)
    ranked = sorted(df, key=lambda t: (-df[t], t))
    stats |= {"n_rows": table.num_rows, "body_bytes": pc.sum(pc.binary_length(body)).as_py() or 0,
              "python": sys.version.split()[0]}
    terms_path.parent.mkdir(parents=True, exist_ok=True)
    terms_path.write_text(json.dumps(stats | {"terms": ranked, "df": [df[t] for t in ranked]}))
    _write(path, table.to_batches(max_chunksize=ROW_GROUP_ROWS), metadata)
    return True


def real_bands(df: list[int], n_rows: int) -> dict[str, tuple[int, int]]:
    """Rank ranges of the real-text bands, from document frequencies sorted descending."""
    desc = -np.asarray(df, dtype=np.int64)  # ascending, for searchsorted

    def first_below(limit: float) -> int:  # first rank whose df < limit
        return int(np.searchsorted(desc, -limit, side="right"))

    medium_lo = max(REAL_FREQUENT, first_below(REAL_MEDIUM_DF[1] * n_rows))
    medium_hi = max(medium_lo, min(first_below(REAL_MEDIUM_DF[0] * n_rows), first_below(REAL_RARE_DF[1] + 1)))
    return {"frequent": (0, min(REAL_FREQUENT, len(df))), "medium": (medium_lo, medium_hi),
            "rare": (first_below(REAL_RARE_DF[1] + 1), first_below(REAL_RARE_DF[0]))}


def stdlib_terms(terms_path: Path) -> tuple[RankedTerms, dict]:
    """The ranked terms ``write_stdlib`` saved with their bands, and for the report the corpus's
    counts and per band its size and document-frequency range."""
    saved = json.loads(terms_path.read_text())
    df, n_rows = saved.pop("df"), saved["n_rows"]
    terms = saved.pop("terms")
    bands = real_bands(df, n_rows)
    info = saved | {"plain_terms": len(terms), "bands": {
        band: {"terms": hi - lo, "df_max": df[lo] if hi > lo else 0, "df_min": df[hi - 1] if hi > lo else 0}
        for band, (lo, hi) in bands.items()}}
    return RankedTerms(pa.array(terms, pa.string()), bands), info


def main(argv: list[str]) -> None:
    """Write ``bench-data/corpus-<n>.parquet`` under the repository root and report rows/s."""
    n_rows = int(argv[1].replace("_", "")) if len(argv) > 1 else 1_000_000
    path = Path(__file__).resolve().parents[1] / "bench-data" / f"corpus-{n_rows}.parquet"
    t0 = time.perf_counter()
    written = write_parquet(path, n_rows)
    elapsed = time.perf_counter() - t0
    if not written:
        print(f"{path} is up to date ({n_rows:,} rows); nothing to do")
        return
    size_mb = path.stat().st_size / 1e6
    print(f"wrote {n_rows:,} rows to {path} ({size_mb:,.1f} MB) in {elapsed:.1f} s "
          f"= {n_rows / elapsed:,.0f} rows/s")


if __name__ == "__main__":
    main(sys.argv)
