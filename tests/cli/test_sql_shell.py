"""The interactive shell: driven through prompt_toolkit's pipe input, and once for real in
a pseudo-terminal."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
import threading
import time
from collections.abc import AsyncGenerator
from pathlib import Path

import pyarrow as pa
import pytest
from prompt_toolkit.history import FileHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

import datafusion_fts as fts
from datafusion_fts.cli.sql_shell import Shell, SqlRunner

UP, CTRL_C = "\x1b[A", "\x03"
WAIT_S = 60.0


class ReadyHistory(FileHistory):
    """A FileHistory that tells when a prompt has loaded it. The shell reloads its history
    at each prompt, in the background; keys sent before that are typed ahead of it, and
    Up would find nothing to recall. So the driver types each input only when told."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.ready = threading.Semaphore(0)

    async def load(self) -> AsyncGenerator[str, None]:
        async for item in super().load():
            yield item
        self.ready.release()


def run_shell(library: Path, history: Path, inputs: list[str]) -> str:
    """Type each of ``inputs`` at a fresh prompt (an input may hold several lines: one
    multi-line statement) and return everything the shell printed."""
    db = fts.connect(library)
    buffer = io.StringIO()
    console = Console(file=buffer, width=120)
    runner = SqlRunner(db, console, console, console)
    ready = ReadyHistory(history)
    finished = threading.Event()
    with create_pipe_input() as pipe:

        def type_inputs() -> None:
            for text in inputs:
                while not ready.ready.acquire(timeout=0.05):
                    if finished.is_set():
                        return
                pipe.send_text(text)
            while not finished.is_set() and not ready.ready.acquire(timeout=0.05):
                pass
            pipe.close()  # end of input: Ctrl-D

        typist = threading.Thread(target=type_inputs, daemon=True)
        typist.start()
        try:
            Shell(runner, "library", ready, input=pipe, output=DummyOutput()).run()
        finally:
            finished.set()
            typist.join(WAIT_S)
    return buffer.getvalue()


def entries(history: Path) -> list[str]:
    return list(reversed(list(FileHistory(str(history)).load_history_strings())))


def test_multi_line_statements_run_at_the_semicolon_and_are_one_history_entry(
    library: Path, tmp_path: Path
) -> None:
    history = tmp_path / "history"
    out = run_shell(library, history, ["SELECT id\nFROM docs\nWHERE id > 4\nORDER BY id;\n"])
    assert re.search(r"id\s*\n\s+int64\s*\n\s*─+\s*\n\s+5\s*\n\s+6\s*\n", out), out
    assert "2 rows" in out
    assert entries(history) == ["SELECT id\nFROM docs\nWHERE id > 4\nORDER BY id;"]


def test_history_persists_and_up_recalls_the_last_statement(library: Path, tmp_path: Path) -> None:
    history = tmp_path / "history"
    run_shell(library, history, ["SELECT 'first' AS x;\n", "SELECT 'second' AS x;\n"])
    # A new session: Up recalls the last statement of the last one; three Ups, the first.
    out = run_shell(library, history, [UP + "\n", UP + UP + UP + "\n"])
    assert out.count("second") == 1 and out.count("first") == 1, out
    assert out.index("second") < out.index("first")
    # (A statement run again right after itself is not stored twice.)
    assert entries(history) == ["SELECT 'first' AS x;", "SELECT 'second' AS x;", "SELECT 'first' AS x;"]


def test_errors_show_a_caret_and_keep_the_session(library: Path, tmp_path: Path) -> None:
    out = run_shell(library, tmp_path / "h", [
        "SELECT id\nFROM docs\nWHERE MATCH(body, '\"open phrase');\n",
        "SELECT 1/0;\n",
        "SELECT 42 AS answer;\n",
    ])
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("error at line 3"))
    assert "unterminated phrase" in lines[at]
    assert lines[at + 1] == "  3 │ WHERE MATCH(body, '\"open phrase');"
    assert lines[at + 2] == "    │                    ^"
    assert "error: " in out and "Divide by zero" in out and "Traceback" not in out
    assert re.search(r"answer\s*\n\s+int64\s*\n\s*─+\s*\n\s+42", out)


def test_ctrl_c_clears_the_input(library: Path, tmp_path: Path) -> None:
    out = run_shell(library, tmp_path / "h", ["SELECT 'dropped'\n" + CTRL_C, "SELECT 'kept' AS x;\n"])
    assert "kept" in out and "dropped" not in out


def test_timing_explain_and_describe_in_the_shell(library: Path, tmp_path: Path) -> None:
    out = run_shell(library, tmp_path / "h", [
        "\\timing\n",
        "EXPLAIN SELECT id FROM docs\nWHERE MATCH(body, 'quick');\n",
        "\\d docs\n",
        "\\timing off\n",
        "SELECT 1;\n",
    ])
    assert "Timing is on." in out and "Timing is off." in out
    assert len(re.findall(r"^Time: \d+\.\d{3} ms$", out, re.MULTILINE)) == 1
    assert re.search(r"^├── search plan\n│   └── GlobalTopK", out, re.MULTILINE), out
    assert "5 indexed · 0 unindexed tail · 1 fresh" in out


@pytest.mark.parametrize("quit_input", ["\\q\n", "quit\n", "exit\n"])
def test_quit_ends_the_session(library: Path, tmp_path: Path, quit_input: str) -> None:
    out = run_shell(library, tmp_path / "h", ["SELECT 'before' AS x;\n", quit_input, "SELECT 'after';\n"])
    assert "before" in out and "after" not in out


def test_a_bug_prints_its_traceback_and_the_session_goes_on(
    library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only errors of the user's input are messages; a bug in this package keeps its
    # traceback, but does not end the session.
    real_sql = fts.Database.sql

    def sql(self: fts.Database, text: str):  # type: ignore[no-untyped-def]
        if "boom" in text:
            raise AssertionError("an internal invariant broke")
        return real_sql(self, text)

    monkeypatch.setattr(fts.Database, "sql", sql)
    out = run_shell(library, tmp_path / "h", ["SELECT 'boom';\n", "SELECT 'alive' AS x;\n"])
    assert "Traceback" in out and "AssertionError: an internal invariant broke" in out
    assert "alive" in out


# -- the real thing, in a terminal --------------------------------------------------------
class Terminal:
    """The installed ``datafusion-fts`` on a pseudo-terminal, typed at like a person."""

    def __init__(self, args: list[str]) -> None:
        self.master, slave = pty.openpty()
        env = dict(os.environ, TERM="xterm", COLUMNS="120", LINES="50",
                   PROMPT_TOOLKIT_NO_CPR="1")
        command = [str(Path(sys.executable).parent / "datafusion-fts"), *args]
        self.process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave,
                                        env=env, close_fds=True)
        os.close(slave)
        self.screen = ""

    def expect(self, pattern: str) -> None:
        """Read until the (plain text of the) output matches ``pattern``."""
        deadline = time.monotonic() + WAIT_S
        while not re.search(pattern, self.plain()):
            if time.monotonic() > deadline:
                raise AssertionError(f"no {pattern!r} in:\n{self.plain()}")
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.screen += os.read(self.master, 65536).decode(errors="replace")
                except OSError:  # the process closed the terminal
                    raise AssertionError(f"exited before {pattern!r}:\n{self.plain()}") from None

    def plain(self) -> str:
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", self.screen)

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self, failed: bool) -> int:
        if failed:
            self.process.kill()
        code = self.process.wait(WAIT_S)
        os.close(self.master)
        return code


def test_the_installed_shell_in_a_terminal(library: Path, tmp_path: Path) -> None:
    history = tmp_path / "history"
    term = Terminal(["sql", str(library), "--history", str(history)])
    failed = True
    try:
        term.expect(r"library\.db=>")
        term.type("SELECT count(*) AS n\r")
        term.expect(r"\n\s*->")  # Enter before the ';' opens a continuation line
        term.type("FROM docs;\r")
        term.expect(r"1 row")
        term.type("SELECT nope FROM docs;\r")
        term.expect(r"No field named nope")
        term.type("\\q\r")
        failed = False
    finally:
        code = term.close(failed)
    assert code == 0
    out = term.plain()
    assert re.search(r"\n\s+6\s*\n", out), out
    assert "Traceback" not in out
    assert entries(history) == ["SELECT count(*) AS n\nFROM docs;", "SELECT nope FROM docs;", "\\q"]


def test_a_shell_left_open_sees_another_process_insert_flush_and_optimize(library: Path, tmp_path: Path) -> None:
    term = Terminal(["sql", str(library), "--history", str(tmp_path / "history")])
    count = "SELECT count(*) AS n FROM docs WHERE MATCH(body, 'zebra');\r"
    failed = True
    try:
        term.expect(r"library\.db=>")
        term.type(count)
        term.expect(r"\n\s+0\s*\n")
        writer = fts.connect(library)  # this process writes; the shell only reads
        docs = writer.table("docs")
        docs.insert(pa.table({"id": [7], "title": ["Zebras"], "body": ["a zebra"]}))
        term.type(count)
        term.expect(r"\n\s+1\s*\n")  # in the log only: the shell replayed it
        docs.flush()
        docs.insert(pa.table({"id": [8], "title": ["More"], "body": ["zebra zebra"]}))
        docs.optimize()
        term.type(count)
        term.expect(r"\n\s+2\s*\n")
        term.type("\\q\r")
        failed = False
    finally:
        code = term.close(failed)
    assert code == 0
    assert "Traceback" not in term.plain()
