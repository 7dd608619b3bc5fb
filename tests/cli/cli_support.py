"""What the CLI tests share: a small corpus, a CliRunner helper."""

from __future__ import annotations

import gc
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pyarrow as pa
from click.testing import CliRunner, Result

import datafusion_fts as fts
from datafusion_fts.cli import main

T = TypeVar("T")

COMMITTED = pa.table({
    "id": [1, 2, 3, 4, 5],
    "title": ["Foxes", "Bears", "Query engines", "Dogs", "Tabs\tand\nnewlines"],
    "body": [
        "the quick brown fox jumps over the lazy dog",
        "brown bears and brown foxes",
        "a quick query engine",
        "the lazy dog sleeps",
        "a very long body " + "word " * 40,
    ],
})
FRESH = pa.table({"id": [6], "title": ["Cats"], "body": ["a quick cat"]})


def on_db(path: Path, action: Callable[[fts.Database], T]) -> T:
    """``action(db)`` on the database at ``path``; then the Database is dropped, which
    releases the directory's writer lock for the CLI that the test runs next in this
    process. ``action`` returns plain data, not handles that would keep it alive."""
    db = fts.connect(path)
    try:
        return action(db)
    finally:
        del db
        gc.collect()


def invoke(*args: str, input: str | None = None, width: int = 200) -> Result:
    """Run the CLI as a script would (stdin is not a terminal), wide enough that rich
    does not wrap."""
    return CliRunner().invoke(main, list(args), input=input, env={"COLUMNS": str(width)})


def phase_lines(stderr: str, lead: str) -> dict[str, int]:
    """The rows of each phase the build progress reported as finished (the lines
    ``{lead}: PHASE N rows in S s (R rows/s)``), checking each line's rate."""
    found = {}
    for phase, rows, rate in re.findall(rf"{re.escape(lead)}: (\w+) ([\d,]+) rows? in [\d.]+ s \(([\d,]+) rows/s\)", stderr):
        assert int(rate.replace(",", "")) > 0
        found[phase] = int(rows.replace(",", ""))
    return found
