"""``datafusion-fts sql DB``: an interactive SQL shell, or a script runner with ``-c``/stdin.

Both modes cut their input the same way (:mod:`.sql_script`) and run each piece through
one :class:`SqlRunner`: statements go to ``db.sql``, backslash commands to
:data:`COMMANDS`. They differ in what an error does: the shell prints it and prompts
again; a script stops at the first error and exits with status 1, so a failed statement
never runs the ones that depended on it.

The shell uses prompt_toolkit rather than the standard ``readline``: a statement of
several lines is edited as one buffer and kept in the history as one entry (readline
keeps lines), Enter runs the statement only once it ends in ``;`` (else it opens a new
line), it highlights SQL and completes names, it behaves the same on every platform
(readline is missing on Windows and is libedit on macOS), and its input and output can
be swapped for a pipe, which is how the tests drive it.
"""

from __future__ import annotations

import enum
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import click
import pyarrow as pa
from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.lexers import PygmentsLexer
from prompt_toolkit.output import Output
from pygments.lexers.sql import SqlLexer
from rich import box
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from ..database import Database
from ..errors import FtsError
from ..settings import REGISTRY
from .common import BuildBars, error_text, is_engine_error, open_database, plural, progress, stderr_console
from .describe import describe_view, tables_overview
from .options import MAX_ROWS
from .render import EXPLAIN_COLUMNS, STREAM_WRITERS, explain_tree, write_table
from .sql_script import QUIT_WORDS, Piece, is_complete, split_script

# Statements whose result is rows; any other statement answering one `status` column is
# reporting what it did, and prints as a message.
QUERY_KEYWORDS = {"SELECT", "WITH", "VALUES", "SHOW", "EXPLAIN", "DESCRIBE", "TABLE", "("}


class Outcome(enum.Enum):
    OK = "ok"
    ERROR = "error"
    QUIT = "quit"


@dataclass
class SqlRunner:
    """Runs statements and backslash commands on ``db`` and prints what they return.

    ``out`` gets results; ``notes`` gets status messages and timings (stdout in the
    table format, stderr in the machine formats, so CSV or JSON on stdout stay data);
    ``errors`` gets errors. ``binary`` is where CSV and JSON bytes go. ``builds`` (the
    database's progress callback, when progress shows) draws the index builds a statement
    runs, and is put away before the statement's result prints.
    """

    db: Database
    out: Console
    notes: Console
    errors: Console
    fmt: str = "table"
    max_rows: int = MAX_ROWS
    binary: IO[bytes] | None = None
    timing: bool = False
    history: str | None = None  # shown by \help
    builds: BuildBars | None = None
    _first_result: bool = field(default=True, repr=False)

    def run(self, text: str) -> Outcome:
        """Every piece of ``text`` in order, stopping at an error or ``\\q``."""
        pieces = split_script(text)
        for piece in pieces:
            if piece.command:
                outcome = self.command(piece)
            else:
                outcome = self.statement(piece, text, len(pieces) > 1)
            if outcome is not Outcome.OK:
                return outcome
        return Outcome.OK

    # -- statements -------------------------------------------------------------------
    def statement(self, piece: Piece, text: str, several: bool) -> Outcome:
        start = time.perf_counter()
        try:
            with self.builds if self.builds is not None else nullcontext():
                result = self.db.sql(piece.text)
            self.show(result, piece)
        except KeyboardInterrupt:
            self.errors.print(Text("cancelled", style="bold red"))
            return Outcome.ERROR
        except Exception as exc:
            if not isinstance(exc, FtsError) and not is_engine_error(exc):
                raise
            shown = error_text(exc, text, piece.offset, piece.text)
            self.errors.print(shown)
            if several and not shown.plain.startswith("error at line"):
                line = text.count("\n", 0, piece.offset) + 1
                self.errors.print(Text(f"  in the statement at line {line}: "
                                       f"{piece.text.splitlines()[0]}", style="dim"))
            return Outcome.ERROR
        if self.timing:
            self.notes.print(Text(f"Time: {(time.perf_counter() - start) * 1000:.3f} ms",
                                  style="dim"))
        return Outcome.OK

    def show(self, df: Any, piece: Piece) -> None:
        """Consume the DataFrame's stream (DataFusion runs a query only as it is read) and
        print it in the runner's format."""
        reader = pa.RecordBatchReader.from_stream(df)
        schema = reader.schema
        if not len(schema):
            for _ in reader:  # a DataFusion DDL statement, or a DML one with no output
                pass
            self.notes.print(Text("OK", style="green"))
            return
        if schema.names == ["status"] and piece.keyword not in QUERY_KEYWORDS:
            for value in reader.read_all().column(0).to_pylist():
                self.notes.print(Text(str(value), style="green"))
            return
        if self.fmt == "table" and piece.keyword == "EXPLAIN" and schema.names == EXPLAIN_COLUMNS:
            self.out.print(explain_tree(reader.read_all()))
            return
        self._rows(schema, reader)

    def _rows(self, schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> None:
        if self.fmt == "table":
            write_table(self.out, batches, schema, self.max_rows)
            return
        binary = self.binary if self.binary is not None else sys.stdout.buffer
        if not self._first_result and self.fmt == "csv":
            binary.write(b"\n")  # results of several statements: one blank line apart
        self._first_result = False
        STREAM_WRITERS[self.fmt](binary, batches, schema)

    # -- backslash commands -----------------------------------------------------------
    def command(self, piece: Piece) -> Outcome:
        name, *args = piece.text.split()
        found = COMMAND_NAMES.get(name)
        if found is None:
            self.errors.print(Text(f"error: unknown command {name}; \\help lists the commands",
                                   style="bold red"))
            return Outcome.ERROR
        try:
            return found.run(self, args)
        except (FtsError, click.UsageError) as exc:
            message = exc.format_message() if isinstance(exc, click.UsageError) else None
            self.errors.print(error_text(exc) if message is None
                              else Text(f"error: {message}", style="bold red"))
            return Outcome.ERROR

    def set_timing(self, args: list[str]) -> Outcome:
        if args and args[0].lower() not in ("on", "off"):
            raise click.UsageError(f"\\timing takes on or off, not {args[0]!r}")
        self.timing = (args[0].lower() == "on") if args else not self.timing
        self.notes.print(f"Timing is {'on' if self.timing else 'off'}.")
        return Outcome.OK

    def describe(self, args: list[str]) -> Outcome:
        if len(args) > 1:
            raise click.UsageError("\\d takes at most one table name")
        views = describe_view(self.db, args[0]) if args else [tables_overview(self.db)]
        for view in views:
            self.out.print(view)
        return Outcome.OK

    def help(self, args: list[str]) -> Outcome:
        commands = RichTable(title="commands", title_justify="left", box=box.SIMPLE_HEAD)
        commands.add_column("command")
        commands.add_column("what it does")
        for command in COMMANDS:
            usage = " ".join((", ".join(command.names), command.args)).strip()
            commands.add_row(usage, command.help)
        self.out.print(commands)
        self.out.print(HELP_TEXT.format(history=self.history or "none (--history '')"))
        return Outcome.OK


@dataclass(frozen=True)
class Command:
    """A backslash command: its names, arguments and help (what \\help prints)."""

    names: tuple[str, ...]
    args: str
    help: str
    run: Callable[[SqlRunner, list[str]], Outcome]


COMMANDS: tuple[Command, ...] = (
    Command(("\\d",), "[TABLE]", "list tables, or describe one: columns, indexes, rows per tier",
            SqlRunner.describe),
    Command(("\\timing",), "[on|off]", "show each statement's time (toggles without argument)",
            SqlRunner.set_timing),
    Command(("\\help", "\\?"), "", "this help", SqlRunner.help),
    Command(("\\q", "\\quit"), "", "quit (also: quit, exit, Ctrl-D)",
            lambda runner, args: Outcome.QUIT),
)
COMMAND_NAMES = {name: command for command in COMMANDS for name in command.names}

HELP_TEXT = """\
A statement runs when Enter follows its closing [bold];[/]; before that, Enter starts a
new line (Alt-Enter runs the statement as it is). Ctrl-C clears the input, Ctrl-D quits.
Up and Down walk the history (Ctrl-R searches it): {history}

SQL is DataFusion's plus full-text search, for example:
  [cyan]SELECT id, score() AS s FROM docs WHERE MATCH(body, 'alpha "beta gamma"') ORDER BY s DESC LIMIT 10;[/]
  [cyan]CREATE FULLTEXT INDEX ON docs (body) WITH (positions = true);[/]   [cyan]OPTIMIZE docs;[/]
  [cyan]EXPLAIN SELECT ...;[/] (shown as a tree)   [cyan]SET fts.force_plan = 'flat_scan';[/]
The SQL reference is docs/guide/sql.md; the shell's own page is docs/guide/cli.md."""


# -- the interactive shell -----------------------------------------------------------------
_WORD = re.compile(r"[A-Za-z0-9_.]+")
KEYWORDS = (
    "SELECT", "FROM", "WHERE", "MATCH", "score()", "ORDER BY", "GROUP BY", "LIMIT", "OFFSET",
    "AND", "OR", "NOT", "AS", "DESC", "ASC", "JOIN", "ON", "HAVING", "DISTINCT", "COUNT",
    "INSERT INTO", "VALUES", "DELETE FROM", "CREATE TABLE", "CREATE FULLTEXT INDEX ON",
    "WITH", "OPTIMIZE", "EXPLAIN", "ANALYZE", "SET", "DROP TABLE", "_rowid",
)


class NameCompleter(Completer):
    """Completes SQL keywords, table and column names, ``fts.*`` settings and backslash
    commands, matching the word before the cursor case-insensitively."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def _words(self) -> list[str]:
        words = list(KEYWORDS) + list(REGISTRY)
        for name in self.db.table_names():
            words.append(name)
            words.extend(self.db.snapshot(name).schema.names)
        return words

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterator[Completion]:
        if document.text_before_cursor.lstrip().startswith("\\") and " " not in document.text_before_cursor.strip():
            typed = document.text_before_cursor.lstrip()
            for name in COMMAND_NAMES:
                if name.startswith(typed):
                    yield Completion(name, start_position=-len(typed))
            return
        word = document.get_word_before_cursor(pattern=_WORD)
        if not word:
            return
        for candidate in dict.fromkeys(self._words()):
            if candidate.lower().startswith(word.lower()) and candidate != word:
                text = candidate.lower() if word.islower() and candidate.isupper() else candidate
                yield Completion(text, start_position=-len(word))


class Shell:
    """The interactive loop: a prompt_toolkit session feeding a :class:`SqlRunner`."""

    def __init__(self, runner: SqlRunner, name: str, history: History,
                 input: Input | None = None, output: Output | None = None) -> None:
        self.runner = runner
        self.name = name
        self.session: PromptSession[str] = PromptSession(
            history=history,
            multiline=Condition(lambda: not is_complete(self.session.default_buffer.text)),
            lexer=PygmentsLexer(SqlLexer),
            completer=NameCompleter(runner.db),
            complete_while_typing=False,
            auto_suggest=AutoSuggestFromHistory(),
            enable_history_search=False,
            prompt_continuation=lambda width, line, wrapped: "-> ".rjust(width),
            input=input,
            output=output,
        )

    def run(self) -> None:
        db = self.runner.db
        self.runner.out.print(Text.assemble(
            ("datafusion-fts", "bold"), f" sql on {db.path}  ·  {plural(len(db.table_names()), 'table')}  ·  ",
            ("\\help", "bold"), " for help, ", ("\\q", "bold"), " to quit",
        ))
        while True:
            try:
                text = self.session.prompt(f"{self.name}=> ")
            except KeyboardInterrupt:
                continue  # Ctrl-C clears the input, as in psql
            except EOFError:
                break
            if text.strip().lower() in QUIT_WORDS:
                break
            try:
                outcome = self.runner.run(text)
            except Exception:  # noqa: BLE001 (a bug in this package: show it, keep the session)
                self.runner.errors.print_exception()
                continue
            if outcome is Outcome.QUIT:
                break


def history_for(path: str | None) -> tuple[History, str | None]:
    """The shell's history: the file at ``path`` (created when missing), in memory for ''."""
    if not path:
        return InMemoryHistory(), None
    file = Path(os.path.expanduser(path))
    file.parent.mkdir(parents=True, exist_ok=True)
    return FileHistory(str(file)), str(file)


def run_sql(db_path: Path, commands: tuple[str, ...], fmt: str, max_rows: int, timing: bool,
            history: str, show_progress: bool | None) -> None:
    """``sql``: the interactive shell when standard input is a terminal and no -c was
    given, else each script run in turn (exit status 1 at the first error). Index builds
    (``CREATE FULLTEXT INDEX``, ``OPTIMIZE``) show progress bars as ``index`` does."""
    db = open_database(db_path, create=True)
    interactive = not commands and sys.stdin.isatty()
    machine = fmt != "table"
    console, enabled = stderr_console(show_progress)
    builds = BuildBars(progress(console, enabled=enabled), "indexing ") if enabled else None
    db.progress = builds
    runner = SqlRunner(
        db, Console(), Console(stderr=machine), Console(stderr=True), fmt, max_rows,
        timing=timing, builds=builds,
    )
    if interactive:
        shell_history, runner.history = history_for(history)
        Shell(runner, db_path.name or str(db_path), shell_history).run()
        return
    for script in commands or (sys.stdin.read(),):
        outcome = runner.run(script)
        if outcome is Outcome.ERROR:
            click.get_current_context().exit(1)
        if outcome is Outcome.QUIT:
            break
