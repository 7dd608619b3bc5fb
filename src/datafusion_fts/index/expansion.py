"""Fuzzy and prefix expansion over a vocabulary (docs/design.md: "Compound queries").

A fuzzy or prefix leaf stands for the vocabulary terms it reaches, at most
``max_expansions`` of them chosen by (distance, term) ascending. The choice is a property
of each term alone, so the global choice is the best of the per-source choices: a source
(segment or scanned batch) only ever needs to report its own best ``max_expansions``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..kernels.expansion import levenshtein_within


def _buffers(terms: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    terms = terms.cast(pa.large_string())
    bufs = terms.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64, count=terms.offset + len(terms) + 1)[terms.offset :]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return data, offsets


def fuzzy_candidates(
    vocab: pa.Array, term: str, fuzziness: int, prefix_length: int, max_expansions: int
) -> list[tuple[int, str]]:
    """The best ``max_expansions`` (distance, term) of ``vocab`` within ``fuzziness`` of
    ``term`` sharing its first ``prefix_length`` code points."""
    if len(vocab) == 0:
        return []
    fixed = term[:prefix_length]
    if fixed:
        vocab = vocab.filter(pc.starts_with(vocab, fixed))
    n_cp = len(term)
    lengths = pc.utf8_length(vocab)
    vocab = vocab.filter(
        pc.and_(pc.greater_equal(lengths, n_cp - fuzziness), pc.less_equal(lengths, n_cp + fuzziness))
    )
    if len(vocab) == 0:
        return []
    data, offsets = _buffers(vocab)
    query = np.array([ord(c) for c in term], dtype=np.int64)
    dist = levenshtein_within(data, offsets, query, fuzziness)
    hit = np.flatnonzero(dist >= 0)
    found = sorted(zip(dist[hit].tolist(), vocab.take(pa.array(hit)).to_pylist()))
    return found[:max_expansions]


def gram_candidates(vocab: pa.Array, char: str) -> list[tuple[int, str]]:
    """Every term of ``vocab`` holding the character ``char`` of a script written without
    spaces (``char`` alone, or a bigram with it), at distance 0: a query of one such
    character finds every row holding it, though the index keeps it inside bigrams."""
    if len(vocab) == 0:
        return []
    matches = vocab.filter(pc.and_(pc.less_equal(pc.utf8_length(vocab), 2), pc.match_substring(vocab, char)))
    return sorted((0, t) for t in matches.to_pylist())


def prefix_candidates(vocab: pa.Array, prefix: str, max_expansions: int) -> list[tuple[int, str]]:
    """The smallest ``max_expansions`` terms of ``vocab`` starting with ``prefix`` (distance 0)."""
    if len(vocab) == 0:
        return []
    matches = vocab.filter(pc.starts_with(vocab, prefix))
    if len(matches) > max_expansions:
        matches = matches.take(pc.sort_indices(matches)[:max_expansions])
    return sorted((0, t) for t in matches.to_pylist())[:max_expansions]
