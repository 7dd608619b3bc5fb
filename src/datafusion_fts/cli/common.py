"""What every command shares: opening a database, progress bars, and error messages.

Errors are the CLI's most visible output after results, so they are rendered in one
place: a :class:`~datafusion_fts.errors.SqlError` or
:class:`~datafusion_fts.errors.QuerySyntaxError` shows its line with a caret under the
offending span; any other :class:`~datafusion_fts.errors.FtsError`, and DataFusion's own
errors, show as one red message, never as a traceback.
"""

from __future__ import annotations

import re
import shutil
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import click
import pyarrow as pa
from rich.cells import cell_len
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TransferSpeedColumn,
)
from rich.table import Column
from rich.text import Text

from ..database import Database, connect
from ..errors import EngineError, FtsError, FtsNotice, QuerySyntaxError, SqlError
from ..index.building.build_progress import BuildProgress
from ..udfs.error_bridge import engine_message, is_datafusion_error
from .options import check_database, check_database_path
from .sql_script import find_name

CELL_CHARS = 60


def shorten(value: Any, width: int = CELL_CHARS) -> str:
    """A cell's text on one line and at most ``width`` characters, so tables stay readable
    in an 80-column terminal whatever the data holds."""
    text = "" if value is None else " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def plural(count: int, noun: str) -> str:
    """``1 row``, ``2 rows``, ``1,000 rows``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


# -- databases -----------------------------------------------------------------------------
def open_database(path: Path, create: bool = False) -> Database:
    """The database at ``path``. Without ``create`` the directory must be a database
    already: ``connect`` would otherwise quietly turn a mistyped path into an empty one.
    With ``create`` a new or empty directory becomes a database; one this command made is
    removed again when the command ends having written nothing (it failed, or only read),
    as sqlite3 makes its file at the first write."""
    if create:
        check_database_path(path)
    else:
        check_database(path)
    made = not path.exists()
    db = connect(path)
    command = click.get_current_context(silent=True)
    if made and command is not None:
        def unmake() -> None:
            if db.manifest.version == 0 and not db.manifest.tables:
                shutil.rmtree(path, ignore_errors=True)

        command.call_on_close(unmake)
    return db


def column_list(text: str | None) -> list[str] | None:
    """``--columns a,b`` as a list; None when not given."""
    if text is None:
        return None
    return [name.strip() for name in text.split(",") if name.strip()]


# -- progress ------------------------------------------------------------------------------
def stderr_console(show_progress: bool | None) -> tuple[Console, bool]:
    """The console progress bars draw on (stderr, so stdout stays data) and whether to."""
    console = Console(stderr=True)
    return console, console.is_terminal if show_progress is None else show_progress


class BuildRateColumn(ProgressColumn):
    """An index build's own measured rate and ETA (its :class:`BuildProgress`, kept in the
    task's ``step`` field), not rich's estimate from the bar's samples."""

    def __init__(self) -> None:
        super().__init__(table_column=Column(no_wrap=True))

    def render(self, task: Task) -> Text:
        step: BuildProgress | None = task.fields.get("step")
        if step is None:
            return Text("")
        eta = "-:--:--" if step.eta_s is None else _clock(step.eta_s)
        return Text(f"{step.rate:,.0f} rows/s ETA {eta}", style="progress.data.speed")


def _clock(seconds: float) -> str:
    whole = int(seconds + 0.5)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def progress(
    console: Console, unit: Literal["rows", "bytes"] = "rows", enabled: bool = True
) -> Progress:
    """One progress layout for loading and indexing: counts of rows (with an index
    build's rate and ETA), or bytes read; ``enabled=False`` shows nothing
    (``--no-progress``, or output that is not a terminal)."""
    counts = (
        (MofNCompleteColumn(), BuildRateColumn())
        if unit == "rows" else (DownloadColumn(), TransferSpeedColumn(), TimeElapsedColumn())
    )
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description:<22}", table_column=Column(no_wrap=True)),
        BarColumn(bar_width=None),  # (what the other columns leave, so a line fits in 80)
        *counts,
        console=console,
        disable=not enabled,
        expand=True,
    )


class BuildBars:
    """An index-build progress callback: a bar per column built, showing ``{prefix}column:
    phase`` (``indexing body: merging``), the phase's rows done of its total, and the
    measured rate and ETA. Each phase that finishes over some rows also leaves a line
    (rows, seconds, rows/s), so every phase shows in a log as well: off a terminal a bar
    is drawn once, at the end. A context manager: leaving it stops the bars and forgets
    them (the SQL runner's next statement starts afresh)."""

    def __init__(self, bars: Progress, prefix: str) -> None:
        self.bars = bars
        self.prefix = prefix
        self._tasks: dict[str, TaskID] = {}

    def __call__(self, step: BuildProgress) -> None:
        self.bars.start()  # (for a build started by a SQL statement; else already drawing)
        description = f"{self.prefix}{step.column}: {step.phase}"
        task = self._tasks.get(step.column)
        if task is None:
            task = self._tasks[step.column] = self.bars.add_task(description)
        self.bars.update(task, description=description, completed=step.done, total=step.total, step=step)
        if step.total and step.done == step.total and not self.bars.disable:
            self.bars.console.print(Text(
                f"{description} {plural(step.total, 'row')} in {step.elapsed_s:.2f} s "
                f"({step.rate:,.0f} rows/s)", style="dim",
            ))

    def __enter__(self) -> BuildBars:
        return self

    def __exit__(self, *exc: object) -> None:
        self.bars.stop()
        for task in self._tasks.values():
            self.bars.remove_task(task)
        self._tasks.clear()


@contextmanager
def fts_notices(console: Console) -> Iterator[None]:
    """Print each :class:`FtsNotice` (advice such as the index a scanning MATCH lacks) as
    it is issued, every time, in yellow: a command's or a shell statement's user reads it
    there, not as a Python warning with a file and line."""
    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(category, FtsNotice):
            console.print(Text(f"notice: {message}", style="yellow"))
        else:
            shown(message, category, *args, **kwargs)

    with warnings.catch_warnings():
        warnings.simplefilter("always", FtsNotice)
        shown = warnings.showwarning
        warnings.showwarning = show
        yield


# -- errors --------------------------------------------------------------------------------
def is_engine_error(exc: BaseException) -> bool:
    """DataFusion's errors (its Python binding raises plain ``Exception``/``ValueError``
    with the engine's message) and Arrow's: reported as messages. Any other exception is
    a bug in this package, and keeps its traceback."""
    return is_datafusion_error(exc) or isinstance(exc, pa.ArrowException)


def caret_text(message: str, text: str, offset: int, length: int = 1) -> Text:
    """``message`` with the line of ``text`` holding ``offset`` and a caret under the
    ``length`` characters from there (cut at the line's end), aligned in terminal cells so
    tabs and wide characters do not shift it."""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    line_text = text[start : end if end >= 0 else len(text)].expandtabs(4)
    before = text[start:offset].expandtabs(4)
    line_no = text.count("\n", 0, offset) + 1
    column = offset - start + 1
    span = text[offset : offset + length].split("\n", 1)[0]
    carets = "^" * max(1, cell_len(span.expandtabs(4)))
    gutter = str(line_no)
    headline, _, more = message.partition("\n")
    out = Text()
    out.append(f"error at line {line_no}, column {column}: ", style="bold red")
    out.append(headline, style="bold red")
    out.append(f"\n  {gutter} │ ", style="dim")
    out.append(line_text)
    out.append(f"\n  {' ' * len(gutter)} │ ", style="dim")
    out.append(" " * cell_len(before) + carets, style="bold red")
    if more:  # the rest of a long message (DataFusion's hints) under the caret
        out.append("\n" + more, style="red")
    return out


# DataFusion's errors carry no position, but these name what they could not resolve; the
# caret goes under the first identifier so spelled in the statement.
_NAMED_IN_ERROR = (
    re.compile(r"No field named (?:[\w\"]+\.)*\"?(\w+)\"?"),
    re.compile(r"table '(?:[^'.]+\.)*([^'.]+)' not found"),
    re.compile(r"Invalid function '([^']+)'"),
)


def error_text(exc: BaseException, script: str | None = None, base: int = 0,
               statement: str | None = None) -> Text:
    """How the CLI shows ``exc``. A positioned error whose text is the statement found at
    ``base`` in ``script`` points into the whole script, so line numbers are the file's;
    a DataFusion error naming an unknown column, table or function in ``statement`` (at
    ``base``) points at its first mention."""
    if isinstance(exc, (SqlError, QuerySyntaxError)):
        text, offset = exc.text, exc.offset
        if script is not None and script.startswith(text, base):
            text, offset = script, base + offset
        return caret_text(exc.message, text, offset, exc.length)
    if isinstance(exc, FtsError) and not isinstance(exc, EngineError):
        return Text(f"error: {exc}", style="bold red")
    message = engine_message(exc)
    if script is not None and statement is not None:
        for pattern in _NAMED_IN_ERROR:
            match = pattern.search(message)
            found = find_name(statement, match.group(1)) if match else None
            if found is not None:
                return caret_text(message, script, base + found[0], found[1])
    return Text(f"error: {message}", style="bold red")
