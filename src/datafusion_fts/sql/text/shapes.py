"""Statements remembered by shape, so a repeated shape skips parsing (and, for a search,
lowering).

An application sends the same statement again and again with other literals:
``... WHERE MATCH(body, 'alpha beta') ...``, then ``'gamma'``; ``... LIKE '%abc%'``, then
``'%xyz%'``. A statement's *shape* is its text with every string literal masked. What a
kind of statement keeps of a shape (a search's template, sql/search/search_templates.py;
a substring statement's, sql/substring/substring_shapes.py) says itself whether a later
statement of the shape may use it (:class:`Remembered`). Anything unusual about the text
(comments, quoted identifiers, escapes, several statements) is simply not cached.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Protocol

_LITERAL = re.compile(r"'(?:[^']|'')*'")
# Text that makes a statement's shape unsafe to take from its masked text: comments,
# quoted identifiers, dollar quotes and escapes (literals the regex would misread), a
# second statement, and the mask itself.
_UNSAFE = re.compile(r"--|/\*|[\"$\\;\x00']")
_MASK = "\x00"
# Shapes a database remembers (least recently used forgotten first).
CAPACITY = 256


@dataclass(frozen=True)
class Shape:
    """A statement's text with its string literals masked, and where the literals are."""

    key: str
    spans: tuple[tuple[int, int], ...]

    def literal(self, sql: str, i: int) -> str:
        """The value of literal ``i`` of ``sql`` (quotes removed, '' unescaped)."""
        lo, hi = self.spans[i]
        return sql[lo + 1 : hi - 1].replace("''", "'")


def shape_of(sql: str) -> Shape | None:
    """The shape of a one-statement ``sql``, or None if it is not one to cache."""
    spans = tuple(m.span() for m in _LITERAL.finditer(sql))
    key = _LITERAL.sub(_MASK, sql)
    if _UNSAFE.search(key.replace(_MASK, "")) or "\\" in sql or not key.strip():
        return None  # (a backslash may escape a quote inside a literal, depending on the dialect)
    if any(lo and (sql[lo - 1].isalnum() or sql[lo - 1] in "_&") for lo, _ in spans):
        return None  # a prefixed literal (E'..', X'..', U&'..') reads otherwise
    return Shape(key, spans)


class Remembered(Protocol):
    """A template of a shape: a search statement's (:class:`Template`) or one with
    substring predicates (sql/substring_shapes.py)."""

    def fits(self, sql: str, shape: Shape, look_up: Callable[[str], Any]) -> bool:
        """Whether statement ``sql`` of the shape may use it, the tables as ``look_up``
        finds them now."""


class StatementCache:
    """Templates by shape, at most :data:`CAPACITY` of them (thread-safe)."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, Remembered] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, sql: str, shape: Shape, look_up: Callable[[str], Any]) -> Remembered | None:
        """The template of ``sql``'s shape, if it :meth:`~Remembered.fits` the statement
        and the tables (``look_up``: as its kind looks them up)."""
        with self._lock:
            found = self._items.get(shape.key)
            if found is not None:
                self._items.move_to_end(shape.key)
        return found if found is not None and found.fits(sql, shape, look_up) else None

    def put(self, shape: Shape, template: Remembered) -> None:
        with self._lock:
            self._items[shape.key] = template
            self._items.move_to_end(shape.key)
            while len(self._items) > CAPACITY:
                self._items.popitem(last=False)
