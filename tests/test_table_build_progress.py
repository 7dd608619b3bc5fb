"""Index builds report their phases in order (create_index, build_segment, optimize, and SQL's
CREATE FULLTEXT INDEX and OPTIMIZE through the database's callback), with counts that only
grow within a phase and reach its total, and a rate and ETA from the measured time."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby

import pyarrow as pa
import pytest

import datafusion_fts as fts
from datafusion_fts.index.building import build_range
from datafusion_fts.index.building.build_progress import (
    COMMITTING,
    MERGING,
    PHASES,
    TOKENIZING,
    WRITING,
    BuildProgress,
)
from datafusion_fts.query import Match

PIECES = 4  # data fragments of ROWS rows each (a scan batch each)
ROWS = 60


def body(i: int) -> str:
    return f"common word{i % 7} w{i}"


def fragmented(db: fts.Database) -> fts.Table:
    """PIECES fragments of ROWS rows: with one-byte chunks, a chunk each."""
    t = db.create_table("docs", pa.table({"body": [body(i) for i in range(ROWS)]}))
    for piece in range(1, PIECES):
        t.bulk_insert(pa.table({"body": [body(i) for i in range(piece * ROWS, (piece + 1) * ROWS)]}))
    return t


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every scan batch a chunk of its own, and every two chunks merged while building."""
    monkeypatch.setattr(build_range, "BUILD_CHUNK_BYTES", 1)
    monkeypatch.setattr(build_range, "CHUNKS_PER_MERGE", 2)
    yield


def check_steps(steps: list[BuildProgress], phases: tuple[str, ...], column: str = "body") -> dict[str, int]:
    """The steps follow ``phases`` in order, each phase once, its done only growing up to
    its total, with a sane rate and ETA; the total of each phase."""
    assert tuple(phase for phase, _ in groupby(s.phase for s in steps)) == phases
    totals = {}
    for phase, run in groupby(steps, key=lambda s: s.phase):
        seen = list(run)
        assert {s.column for s in seen} == {column}
        assert len({s.total for s in seen}) == 1
        assert [s.done for s in seen] == sorted(s.done for s in seen)
        assert seen[0].done == 0 and seen[-1].done == seen[-1].total
        assert [s.elapsed_s for s in seen] == sorted(s.elapsed_s for s in seen)
        for s in seen:
            assert s.eta_s is None or s.eta_s >= 0
            if s.done and s.elapsed_s > 0:
                assert s.rate > 0 and s.eta_s is not None
        totals[phase] = seen[0].total
    return totals


def test_create_index_reports_each_phase_and_the_chunks_it_merges(small_chunks: None) -> None:
    t = fragmented(fts.connect())
    steps: list[BuildProgress] = []
    t.create_index("body", progress=steps.append)
    totals = check_steps(steps, PHASES)
    assert totals == {TOKENIZING: PIECES * ROWS, MERGING: PIECES * ROWS, WRITING: PIECES * ROWS,
                      COMMITTING: PIECES * ROWS}
    tokenized = [s.done for s in steps if s.phase == TOKENIZING]
    assert tokenized == [0, *range(ROWS, PIECES * ROWS + 1, ROWS)]  # a chunk at a time
    # The chunks merged while building and at the end make one segment, as one chunk does.
    assert len(t.snapshot().meta.indexes["body"].segments) == 1
    found = t.search(Match("body", "word3"), limit=None, columns=[]).to_pylist()
    whole = fragmented(fts.connect())
    whole.create_index("body")
    assert found == whole.search(Match("body", "word3"), limit=None, columns=[]).to_pylist()


def test_a_two_argument_callback_still_gets_the_rows_tokenized(small_chunks: None) -> None:
    t = fragmented(fts.connect())
    calls: list[tuple[int, int]] = []
    t.create_index("body", progress=lambda done, total: calls.append((done, total)))
    assert calls == [(done, PIECES * ROWS) for done in range(0, PIECES * ROWS + 1, ROWS)]


def test_an_empty_table_reports_its_phases_over_no_rows() -> None:
    t = fts.connect().create_table("docs", pa.table({"body": pa.array([], pa.string())}))
    steps: list[BuildProgress] = []
    t.create_index("body", progress=steps.append)
    assert check_steps(steps, PHASES) == dict.fromkeys(PHASES, 0)


def test_build_segment_merges_its_chunks_into_one_segment(small_chunks: None) -> None:
    t = fragmented(fts.connect())
    steps: list[BuildProgress] = []
    meta = t.build_segment("body", (ROWS, 3 * ROWS - 1), progress=steps.append)
    assert check_steps(steps, PHASES) == dict.fromkeys(PHASES, 2 * ROWS)
    assert (meta.lo, meta.hi, meta.count) == (ROWS, 3 * ROWS - 1, 2 * ROWS)


def test_optimize_reports_the_rebuild_and_the_merge_of_each_index() -> None:
    t = fragmented(fts.connect())
    t.create_index("body")
    t.insert(pa.table({"body": [body(i) for i in range(PIECES * ROWS, PIECES * ROWS + 10)]}))
    t.flush()  # (the flushed rows' own segment)
    t.delete("_rowid = 5")
    steps: list[BuildProgress] = []
    t.optimize(progress=steps.append)
    totals = check_steps(steps, PHASES)
    # The segment with a deleted row is rebuilt from its live rows; then it and the other
    # segment (both spanning their deleted rows too) merge into one.
    assert totals[TOKENIZING] == PIECES * ROWS - 1
    assert totals[MERGING] == totals[WRITING] == PIECES * ROWS + 10
    assert len(t.snapshot().meta.indexes["body"].segments) == 1


def test_an_optimize_with_nothing_to_change_stops_after_merging() -> None:
    t = fragmented(fts.connect())
    t.create_index("body")
    steps: list[BuildProgress] = []
    t.optimize(progress=steps.append)
    assert check_steps(steps, (TOKENIZING, MERGING)) == {TOKENIZING: 0, MERGING: 0}


def test_sql_builds_report_to_the_database_callback_unless_given_their_own() -> None:
    steps: list[BuildProgress] = []
    db = fts.connect(progress=steps.append)
    fragmented(db)
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    check_steps(steps, PHASES)
    steps.clear()
    db.sql("DELETE FROM docs WHERE _rowid = 3; OPTIMIZE docs")
    assert check_steps(steps, PHASES)[TOKENIZING] == PIECES * ROWS - 1
    steps.clear()
    own: list[BuildProgress] = []
    db.table("docs").create_index("body", progress=own.append)
    assert steps == [] and check_steps(own, PHASES)
