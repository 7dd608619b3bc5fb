"""Cutting SQL text into statements and backslash commands, as psql does.

A statement ends at a ``;`` outside strings, quoted names and comments, found with the
SQL dialect's own tokenizer (so a ``;`` inside ``'...'`` never cuts). A line whose first
character is ``\\``, where no statement is under way, is a backslash command and ends
at the end of its line. The last statement of a script needs no ``;``.

Each piece keeps its offset in the text, so an error inside a statement points at the
line and column of the whole script or shell input.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from ..sql.text.dialect import Fts

QUIT_WORDS = ("quit", "exit")


@dataclass(frozen=True)
class Piece:
    """A statement (with its ``;``) or a backslash command, at ``offset`` in the text."""

    text: str
    offset: int
    command: bool = False  # a backslash command
    keyword: str = ""  # a statement's first word, upper case (EXPLAIN, SELECT, ...)


def _tokens(text: str) -> list[Token] | None:
    """The dialect's tokens of ``text``; None while a string or comment is left open."""
    try:
        return Fts().tokenize(text)
    except TokenError:
        return None


def _statements(text: str, start: int, end: int) -> tuple[list[Piece], int]:
    """The statements ended by a ``;`` in ``text[start:end]`` and where the rest begins."""
    tokens = _tokens(text[start:end])
    if tokens is None:
        return [], start
    pieces, begin, first = [], start, None
    for token in tokens:
        if first is None and token.token_type != TokenType.SEMICOLON:
            first = token
        if token.token_type == TokenType.SEMICOLON:
            if first is not None:
                piece_start = start + first.start
                # Keep comments written before the first token with the statement.
                lead = text[begin:piece_start]
                piece_start = begin + (len(lead) - len(lead.lstrip()))
                pieces.append(Piece(text[piece_start : start + token.end + 1], piece_start,
                                    keyword=first.text.upper()))
            begin, first = start + token.end + 1, None
    return pieces, begin


def split_script(text: str) -> list[Piece]:
    """Statements and backslash commands of ``text``, in order."""
    pieces: list[Piece] = []
    pending = 0  # where the text not yet cut begins
    position = 0
    for line in text.splitlines(keepends=True):
        line_start, position = position, position + len(line)
        if line.lstrip().startswith("\\") and _tokens(text[pending:line_start]) == []:
            indent = len(line) - len(line.lstrip())
            pieces.append(Piece(line.strip(), line_start + indent, command=True))
            pending = position
            continue
        found, pending = _statements(text, pending, position)
        pieces.extend(found)
    rest = text[pending:]
    tokens = _tokens(rest)
    if tokens is None or tokens:  # a last statement without ';' (or a broken one: its error)
        offset = pending + (len(rest) - len(rest.lstrip()))
        keyword = tokens[0].text.upper() if tokens else ""
        pieces.append(Piece(text[offset:].rstrip(), offset, keyword=keyword))
    return pieces


def is_complete(text: str) -> bool:
    """Whether Enter in the shell runs ``text`` (else it starts a new line): a backslash
    command, ``quit``/``exit``, or SQL ending in ``;`` (a blank input runs nothing)."""
    stripped = text.strip()
    if not stripped or stripped.startswith("\\") or stripped.lower() in QUIT_WORDS:
        return True
    tokens = _tokens(text)
    if tokens is None:
        return False
    return not tokens or tokens[-1].token_type == TokenType.SEMICOLON


def find_name(text: str, name: str) -> tuple[int, int] | None:
    """``(offset, length)`` of the first identifier token of ``text`` spelled ``name``
    (as SQL folds it: case-insensitively unless quoted), or None."""
    tokens = _tokens(text) or []
    for token in tokens:
        quoted = token.token_type == TokenType.IDENTIFIER
        if (quoted or token.text.isidentifier()) and (
            token.text == name or (not quoted and token.text.lower() == name.lower())
        ):
            return token.start, token.end - token.start + 1
    return None
