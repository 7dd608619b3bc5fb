"""The tokenizer kernel (kernels/tokenizer.pyx) on what the analyzer's tests cannot feed it
(docs/design.md: "Analysis"): malformed UTF-8 read byte for byte as the kernel always has
(Arrow validates strings, but terms and ids must never depend on the build), term ids in
order of first occurrence across many hash table growths, and seed terms first."""

from __future__ import annotations

import numpy as np

from datafusion_fts.analysis.unicode_tables import word_tables
from datafusion_fts.kernels.tokenizer import remap_tokens, tokenize, tokenize_spans

NO_SEED = (np.zeros(0, np.uint8), np.zeros(1, np.int64))


def buffers(values: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    data = np.frombuffer(b"".join(values), np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(v) for v in values])]).astype(np.int64)
    return data, offsets, np.ones(len(values), np.uint8)


def terms(vocab_bytes: np.ndarray, vocab_offsets: np.ndarray) -> list[bytes]:
    raw = vocab_bytes.tobytes()
    return [raw[a:b] for a, b in zip(vocab_offsets[:-1].tolist(), vocab_offsets[1:].tolist())]


def test_malformed_utf8_is_read_as_the_kernel_always_has():
    values = [
        b"ab\xc1\x81cd",  # an overlong 'A': a word character, lowercased
        b"x\x80y",  # a stray continuation byte reads as a 2-byte lead: 0x80 0x79 is '9'
        b"ab\xe6\x9d",  # a sequence cut by the value's end: not a word character
        b"\xed\xa0\x80q",  # an encoded surrogate: never a word character
        b"\xf4\x90\x80\x80z",  # past U+10FFFF
        b"\xc3",
    ]
    tables = word_tables()
    row, term, pos, dl, vb, vo, start, end = tokenize_spans(*buffers(values), *tables, 40, *NO_SEED)
    assert terms(vb, vo) == [b"abacd", b"x9", b"ab", b"q", b"z"]
    assert row.tolist() == term.tolist() == [0, 1, 2, 3, 4] and pos.tolist() == [0] * 5
    assert dl.tolist() == [1, 1, 1, 1, 1, 0]
    assert start.tolist() == [0, 0, 0, 3, 4] and end.tolist() == [6, 3, 2, 4, 5]


def test_ids_follow_first_occurrence_through_table_growth():
    words = [f"w{i}é" for i in range(20_000)]  # the table starts at 4,096 slots
    seed = [b"zz", b"w5\xc3\xa9"]
    seed_bytes = np.frombuffer(b"".join(seed), np.uint8)
    seed_offsets = np.array([0, 2, len(seed_bytes)], np.int64)
    text = " ".join(words + words[::-7]).upper().encode()
    _, term, pos, dl, vb, vo = tokenize(
        *buffers([text]), *word_tables(), 40, seed_bytes, seed_offsets
    )
    vocab = terms(vb, vo)
    assert vocab[:2] == seed
    assert len(vocab) == len(set(vocab)) == len(words) + 1
    assert [vocab[t].decode() for t in term.tolist()] == words + words[::-7]
    assert pos.tolist() == list(range(len(term))) and dl.tolist() == [len(term)]


def test_remap_drops_tokens_without_leaving_position_gaps():
    row = np.array([0, 0, 0, 2, 2], np.int32)
    term = np.array([0, 1, 2, 1, 0], np.int32)
    pos = np.array([0, 1, 2, 0, 1], np.int32)
    out_row, out_term, out_pos, dl = remap_tokens(row, term, pos, np.array([5, -1, 7], np.int32), 3)
    assert out_row.tolist() == [0, 0, 2] and out_term.tolist() == [5, 7, 5]
    assert out_pos.tolist() == [0, 1, 0] and dl.tolist() == [2, 0, 1]


def test_remap_keeps_the_gap_between_runs_of_grams():
    """Row 0: grams at 0 and 2 (a gap between two runs), a dropped token at 3, one at 4."""
    row = np.zeros(4, np.int32)
    term = np.array([0, 1, 2, 0], np.int32)
    pos = np.array([0, 2, 3, 4], np.int32)
    out_row, out_term, out_pos, dl = remap_tokens(row, term, pos, np.array([0, 1, -1], np.int32), 1)
    assert out_term.tolist() == [0, 1, 0] and out_pos.tolist() == [0, 2, 3] and dl.tolist() == [3]
