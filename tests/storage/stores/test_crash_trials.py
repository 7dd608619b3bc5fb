"""kill -9 during a flush and during OPTIMIZE loses no acknowledged row, changes no answer and
leaves no file missing or behind (tests/crash_trials.py kills each at every durable step and
at random moments as a script; here a few kills each)."""

from __future__ import annotations

from pathlib import Path

import pytest
from crash_trials import setup, trial


@pytest.mark.parametrize(("operation", "stops"), [
    # the fragment written and fsynced under its .tmp name; committed, the log not emptied
    ("flush", ("2", "committed:1")),
    # the fresh rows flushed (committed); an index segment renamed into place, uncommitted
    ("optimize", ("committed:1", "commit:3")),
])
def test_a_killed_operation_leaves_a_database_that_opens_whole(operation: str, stops: tuple[str, ...], tmp_path: Path) -> None:
    pristine, script, expected = setup(tmp_path, operation)
    for stop in stops:
        result = trial(pristine, tmp_path / "work", script, operation, expected, stop=stop)
        assert not result["finished"], f"{operation} ended before {stop}"
