"""What a build step reports: rate and ETA from the measured time, and the two forms of
callback (a BuildProgress, or the original ``(done, total)`` of the tokenizing phase)."""

from __future__ import annotations

import pytest

from datafusion_fts.index.building import build_progress
from datafusion_fts.index.building.build_progress import (
    COMMITTING,
    MERGING,
    TOKENIZING,
    BuildProgress,
    BuildReporter,
)


def test_rate_and_eta_come_from_the_rows_done_and_the_time_taken() -> None:
    assert BuildProgress("c", TOKENIZING, 0, 100, 2.0).rate == 0.0
    assert BuildProgress("c", TOKENIZING, 0, 100, 2.0).eta_s is None  # nothing measured yet
    assert BuildProgress("c", TOKENIZING, 10, 100, 0.0).eta_s is None
    step = BuildProgress("c", TOKENIZING, 25, 100, 0.5)
    assert step.rate == 50.0 and step.eta_s == pytest.approx(1.5)
    assert BuildProgress("c", MERGING, 100, 100, 4.0).eta_s == 0.0


def test_a_one_argument_callback_gets_every_step_of_every_phase(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([10.0, 12.0, 13.0])  # (the phase's start, its first report, the next)
    monkeypatch.setattr(build_progress.time, "monotonic", lambda: next(clock))
    steps: list[BuildProgress] = []
    reporter = BuildReporter(steps.append, "body")
    reporter.start(TOKENIZING, 8)
    reporter.advance(8)
    assert steps == [BuildProgress("body", TOKENIZING, 0, 8, 2.0), BuildProgress("body", TOKENIZING, 8, 8, 3.0)]


def test_a_two_argument_callback_gets_the_tokenized_rows_only() -> None:
    calls: list[tuple[int, int]] = []
    reporter = BuildReporter(lambda done, total: calls.append((done, total)), "body")
    reporter.start(TOKENIZING, 5)
    reporter.advance(2)
    reporter.advance(3)
    reporter.start(MERGING, 5)
    reporter.advance(5)
    reporter.start(COMMITTING, 5)
    assert calls == [(0, 5), (2, 5), (5, 5)]


def test_a_callable_without_a_readable_signature_is_taken_for_the_two_argument_form() -> None:
    # (builtins such as getattr have none; they were callable with (done, total) before)
    assert build_progress._takes_counts(getattr)
    assert build_progress._takes_counts(lambda *args: None)
    assert not build_progress._takes_counts(lambda step: None)

