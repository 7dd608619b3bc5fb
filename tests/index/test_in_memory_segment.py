"""InMemorySegment: binary-search lookups first, a dictionary once lookups have cost as
much as building one; both give the ids a persisted segment's dictionary gives."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from datafusion_fts.analysis import analyzer_for
from datafusion_fts.analysis.analyzer import AnalyzerConfig
from datafusion_fts.index.building.builder import build_segment
from datafusion_fts.index.segment import InMemorySegment


def test_lookups_agree_before_and_after_the_dictionary_is_built():
    words = [f"w{i:04d}" for i in range(500)]
    stream = analyzer_for(AnalyzerConfig()).analyze(pa.array([" ".join(words[i::7]) for i in range(7)]))
    segment = build_segment("s", 0, 6, (0, 6), np.arange(7), stream, False)
    memory = InMemorySegment.of(segment)
    probes = words + ["absent", "w9999", ""]
    first = [memory.term_id(w) for w in probes[:5]]
    assert memory._lookup is None  # 5 lookups cost less than a 500-term dictionary
    rest = [memory.term_id(w) for w in probes[5:]]
    assert memory._lookup is not None
    assert first + rest == [segment.term_id(w) for w in probes]
    assert rest[-3:] == [-1, -1, -1]


def test_a_term_searched_for_again_is_remembered_not_searched():
    words = [f"w{i:04d}" for i in range(500)]
    stream = analyzer_for(AnalyzerConfig()).analyze(pa.array([" ".join(words[i::7]) for i in range(7)]))
    segment = build_segment("s", 0, 6, (0, 6), np.arange(7), stream, False)
    memory = InMemorySegment.of(segment)
    for _ in range(50):  # as often as a query asks: statistics, then postings
        assert [memory.term_id(w) for w in ("w0003", "absent")] == [segment.term_id("w0003"), -1]
    assert memory._lookups == 2 and memory._lookup is None  # two searches, no dictionary yet
