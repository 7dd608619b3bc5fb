"""Cutting shell input and scripts into statements and backslash commands."""

from __future__ import annotations

import pytest

from datafusion_fts.cli.sql_script import Piece, is_complete, split_script


def texts(script: str) -> list[tuple[str, bool]]:
    return [(p.text, p.command) for p in split_script(script)]


def test_pieces_keep_their_offsets_into_the_script() -> None:
    script = "-- lead\nSELECT 1;\n  SELECT 'a;b'\n  ;\n\\timing on\n/* c */ SELECT \"x;y\" FROM t;\n \\d docs\nSELECT 3"
    pieces = split_script(script)
    assert [(p.text, p.command, p.keyword) for p in pieces] == [
        ("-- lead\nSELECT 1;", False, "SELECT"),
        ("SELECT 'a;b'\n  ;", False, "SELECT"),
        ("\\timing on", True, ""),
        ('/* c */ SELECT "x;y" FROM t;', False, "SELECT"),
        ("\\d docs", True, ""),
        ("SELECT 3", False, "SELECT"),
    ]
    for piece in pieces:
        assert script[piece.offset : piece.offset + len(piece.text)] == piece.text


def test_a_backslash_inside_a_statement_is_sql_not_a_command() -> None:
    # A line starting with '\' while a statement is open belongs to that statement.
    assert texts("SELECT\n\\d\n;") == [("SELECT\n\\d\n;", False)]


def test_several_statements_on_one_line_and_empty_ones() -> None:
    assert texts("SELECT 1; SELECT 2;;  ;") == [("SELECT 1;", False), ("SELECT 2;", False)]


@pytest.mark.parametrize("script", ["", "   \n", "-- only a comment\n", "/* block */"])
def test_nothing_to_run(script: str) -> None:
    assert split_script(script) == []


def test_an_unterminated_string_is_one_statement_so_it_gets_its_error() -> None:
    assert split_script("SELECT 1;\nSELECT 'open") == [
        Piece("SELECT 1;", 0, keyword="SELECT"),
        Piece("SELECT 'open", 10),
    ]


@pytest.mark.parametrize(
    ("text", "complete"),
    [
        ("SELECT 1;", True),
        ("SELECT 1", False),
        ("SELECT 1\nFROM t", False),
        ("SELECT 1\nFROM t\n;", True),
        ("SELECT 1; -- trailing comment", True),
        ("SELECT 'a;", False),  # the ';' is inside an open string
        ('SELECT "a;', False),
        ("SELECT 1 /* open comment ;", False),
        ("\\d", True),
        ("  \\timing on", True),
        ("quit", True),
        ("EXIT", True),
        ("", True),
        ("-- just a comment", True),
        ("SELECT 1; SELECT", False),
    ],
)
def test_enter_runs_only_a_complete_input(text: str, complete: bool) -> None:
    assert is_complete(text) is complete
