"""The CLI on a database whose storage cannot be written (issue 34, item 4): the read
commands (``search``, ``stats``, ``sql`` with SELECT, DESCRIBE and ``\\d``) answer as on
the writable original, the write commands fail with the read-only error and change
nothing. The storage is a ``tmpfs`` remounted read-only (tests/read_only_mount.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import invoke
from read_only_mount import listing, read_only_copy

READS = (
    ("search", "{db}", "docs", "quick", "--format", "json"),
    ("search", "{db}", "docs", "quick OR cat", "--limit", "3"),
    ("stats", "{db}"),
    ("sql", "{db}", "--format", "json", "-c",
     "SELECT id, title FROM docs WHERE MATCH(body, 'quick') ORDER BY score() DESC, id"),
    ("sql", "{db}", "--format", "csv", "-c", "SELECT count(*) AS n FROM docs; DESCRIBE docs"),
    ("sql", "{db}", "-c", "\\d", "-c", "\\d docs"),
)
WRITES = (
    ("sql", "{db}", "-c", "INSERT INTO docs VALUES (7, 'x', 'quick')"),
    ("sql", "{db}", "-c", "OPTIMIZE docs"),
    ("sql", "{db}", "-c", "CREATE TABLE made (a VARCHAR)"),
    ("index", "{db}", "docs", "title"),
    ("optimize", "{db}", "docs"),
    ("repair", "{db}"),
    ("import", "{db}", "docs", "{file}"),
)


@pytest.fixture
def mounted(library: Path) -> Iterator[Path]:
    with read_only_copy(library) as path:
        yield path


def run(args: tuple[str, ...], db: Path, file: Path | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the command (``file``: a file to import), the
    database's path written as <db>, a search's time as N ms, lines without trailing
    blanks."""
    result = invoke(*(a.format(db=db, file=file) for a in args))
    out = re.sub(r"\d+\.\d ms", "N ms", result.stdout.replace(str(db), "<db>"))
    out = "\n".join(line.rstrip() for line in out.splitlines())  # (a title padded to its time's width)
    return result.exit_code, out, result.stderr.replace(str(db), "<db>")


@pytest.mark.parametrize("args", READS, ids=lambda args: " ".join(args[:1] + args[2:])[:60])
def test_read_commands_answer_on_a_read_only_mount_as_on_the_original(
    library: Path, mounted: Path, args: tuple[str, ...]
) -> None:
    before = listing(mounted)
    code, out, err = run(args, mounted)
    assert code == 0, err
    assert (code, out) == run(args, library)[:2]
    assert listing(mounted) == before
    if "--format" in args and "json" in args:
        assert json.loads(out)  # (rows: not an empty answer)


def test_search_reads_the_fresh_rows_on_a_read_only_mount(mounted: Path) -> None:
    code, out, err = run(("search", "{db}", "docs", "cat", "--format", "jsonl"), mounted)
    assert code == 0, err
    assert [json.loads(line)["title"] for line in out.splitlines()] == ["Cats"]  # (in the log only)


@pytest.mark.parametrize("args", WRITES, ids=lambda args: " ".join(args[:1] + args[2:])[:40])
def test_write_commands_fail_clearly_on_a_read_only_mount(mounted: Path, tmp_path: Path, args: tuple[str, ...]) -> None:
    rows = tmp_path / "more.jsonl"
    rows.write_text(json.dumps({"id": 9, "title": "More", "body": "a quick owl"}) + "\n")
    before = listing(mounted)
    code, out, err = run(args, mounted, rows)
    assert code == 1, out + err
    said = " ".join(err.split())
    assert "was opened read-only (its storage cannot be written" in said and "Read-only file system" in said, said
    assert "Traceback" not in out + err
    assert listing(mounted) == before
