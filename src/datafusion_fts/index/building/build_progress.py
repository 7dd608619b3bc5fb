"""What an index build reports as it goes: its phase, rows done of the phase's total, and
the measured time, for progress bars and callbacks (a leaf module: it imports nothing of
the package, so the CLI and the builders both can).

A build of one column runs these phases, in order, each over a number of rows known when
it starts: ``tokenizing`` (rows read, tokenized and inverted into packed chunk segments,
counted a chunk at a time as each chunk is finished), ``merging`` (rows of the segments
merged into larger ones), ``writing`` (rows of the segments written to files) and
``committing`` (the rows the new index state commits, all at once). A phase with nothing
to do still reports once, as 0 of 0 rows; ``OPTIMIZE`` stops after ``merging`` when the
index is already as it would make it.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass
from typing import Callable, Union, cast

TOKENIZING = "tokenizing"
MERGING = "merging"
WRITING = "writing"
COMMITTING = "committing"
PHASES = (TOKENIZING, MERGING, WRITING, COMMITTING)


@dataclass(frozen=True)
class BuildProgress:
    """One step of a build of ``column``'s index: ``done`` of ``total`` rows of ``phase``,
    ``elapsed_s`` seconds (measured, monotonic) after the phase began."""

    column: str
    phase: str
    done: int
    total: int
    elapsed_s: float

    @property
    def rate(self) -> float:
        """Rows per second so far in this phase; 0.0 before any row is done."""
        return self.done / self.elapsed_s if self.done and self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds until the phase ends at its rate so far; None until a row is done (a
        phase reports whole chunks of rows, so the first report measures a real chunk)."""
        rate = self.rate
        return max(0.0, (self.total - self.done) / rate) if rate else None


# A callable of one argument gets every step as a BuildProgress; one that takes two gets
# ``(rows tokenized, rows to tokenize)``, the tokenizing phase only (the original form).
Progress = Union[Callable[[BuildProgress], None], Callable[[int, int], None]]


def _takes_counts(callback: Callable[..., None]) -> bool:
    """Whether ``callback`` can be called with ``(done, total)``: the original form, kept
    for it; a callable whose signature cannot be read is assumed to be of that form."""
    try:
        inspect.signature(callback).bind(0, 0)
    except TypeError:
        return False
    except ValueError:
        return True
    return True


class BuildReporter:
    """Times the phases of one column's build and hands each step to ``callback`` in the
    form it takes (with none it tells nobody: a Ray task's build, a build not followed)."""

    def __init__(self, callback: Progress | None, column: str) -> None:
        self.column = column
        self._send: Callable[[BuildProgress], None] | None
        if callback is None:
            self._send = None
        elif _takes_counts(callback):
            counts = cast(Callable[[int, int], None], callback)
            self._send = lambda step: counts(step.done, step.total) if step.phase == TOKENIZING else None
        else:
            self._send = cast(Callable[[BuildProgress], None], callback)
        self._phase = ""
        self._done = self._total = 0
        self._started = 0.0  # (time.monotonic() when the phase began)

    def start(self, phase: str, total: int) -> None:
        """Begin ``phase`` over ``total`` rows (its clock starts now)."""
        self._phase, self._done, self._total = phase, 0, total
        self._started = time.monotonic()
        self._report()

    def advance(self, rows: int) -> None:
        """``rows`` more rows of the current phase are done."""
        self._done += rows
        self._report()

    def _report(self) -> None:
        if self._send is not None:
            elapsed = time.monotonic() - self._started
            self._send(BuildProgress(self.column, self._phase, self._done, self._total, elapsed))
