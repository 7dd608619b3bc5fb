"""The defaults of an index, defined once: BM25's parameters, positions, the analyzers.

A leaf module (it imports nothing), so the command line can show them in ``--help``
without loading the engine, and the manifest, the planner, the scorer and the CLI all
read the same values.
"""

from __future__ import annotations

from typing import Any

# BM25 term-frequency saturation and length normalization (Robertson's usual values,
# Lucene's and Tantivy's defaults).
K1 = 1.2
B = 0.75
# Whether an index stores token positions (phrase and proximity queries need them).
POSITIONS = False
# The analyzer an index uses when none is named, and what each name stands for: the base
# settings, which options given next to the name override. Error messages and docs list
# these keys.
ANALYZER = "simple"
NAMED_ANALYZERS: dict[str, dict[str, Any]] = {
    "simple": {},
    "folding": {"ascii_folding": True},
    "english": {"ascii_folding": True, "stop_words": "english", "stemmer": "english"},
    # Dictionary words instead of bigrams, each behind its pip extra (analysis/segmenters.py).
    "chinese": {"segmenter": "jieba"},
    "japanese": {"segmenter": "sudachi"},
    "icu": {"segmenter": "icu"},
}
# Tokens longer than this many UTF-8 bytes are dropped.
MAX_TOKEN_LENGTH = 40
