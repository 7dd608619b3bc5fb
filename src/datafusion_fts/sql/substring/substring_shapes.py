"""Statements with substring predicates remembered by shape, as sql/search/search_templates.py
remembers searches: an application sends the same ``... WHERE body LIKE '%x%'`` again and
again with other patterns, and sqlglot's parse and the walk finding the predicates
(sql/substring/lower_substring.py) cost ~0.4 ms of a 3 ms statement warm, about twice that
after other work.

A template keeps, per table read by its candidates, the reference's place in the text
and its substring conjuncts as first parsed, with the shape's literal behind each string
literal in them. A statement of the same shape binds a copy of each conjunct to its own
literals and reads it again as the slow path does (``substring_conjunct``), so what it
asks follows its own patterns. Places are kept in the shape's key (each literal one
character there) and moved by the statement's literals.

Not remembered: a statement where whether a conjunct is read at all depends on a
literal's content (an ESCAPE, a regular expression's flags), one with regular expressions
outside its conjuncts (``SubstringRead.probes``), one whose conjuncts hold a literal
sqlglot does not keep as a string literal (``INTERVAL '1 day'``), one with a part not
placed in its text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from ..text.shapes import Shape
from .lower_substring import SubstringRead, substring_conjunct

# What a table's name was looked up as while the reads were found (its SQL schema and
# columns with an n-gram index, or None: not a managed table).
Found = Any


@dataclass(frozen=True)
class _Conjunct:
    column: str
    node: exp.Expression  # (never changed: a copy is bound)
    literals: tuple[int, ...]  # (the shape's literal of each string literal of node.walk(), in order)
    span: tuple[int, int]  # (in the key)


@dataclass(frozen=True)
class _Read:
    table: str
    alias: str
    span: tuple[int, int]  # (in the key)
    conjuncts: tuple[_Conjunct, ...]
    names: frozenset[str] | None  # (SubstringRead.names: the statement's identifiers)


@dataclass(frozen=True)
class SubstringTemplate:
    """The substring reads of a statement's shape (see the module's docstring)."""

    explain: bool
    tables: tuple[tuple[str, Found], ...]  # (each table looked up, and what was found)
    reads: tuple[_Read, ...]

    def fits(self, sql: str, shape: Shape, look_up: Callable[[str], Found]) -> bool:
        """Whether the tables looked up are as they were."""
        return all(look_up(name) == found for name, found in self.tables)

    def bind(self, sql: str, shape: Shape) -> list[SubstringRead] | None:
        """The reads of statement ``sql`` (of this shape); None where one of its conjuncts,
        bound to the statement's literals, is not read as one (the caller parses it)."""
        place = _text_place(shape)
        reads = []
        for read in self.reads:
            conjuncts = []
            for c in read.conjuncts:
                node = c.node.copy()
                for literal, i in zip(_string_literals(node), c.literals):
                    literal.set("this", shape.literal(sql, i))
                made = substring_conjunct(node, (place(c.span[0]), place(c.span[1])), sql)
                if made is None or made[1].column != c.column:
                    return None
                conjuncts.append(made[1])
            reads.append(SubstringRead(read.table, read.alias, (place(read.span[0]), place(read.span[1])),
                                       tuple(conjuncts), read.names))
        return reads


def substring_template(sql: str, shape: Shape, explain: bool, statement: exp.Expression,
                       reads: list[SubstringRead], tables: Mapping[str, Found]) -> SubstringTemplate | None:
    """The template of statement ``sql`` (parsed as ``statement``; ``reads``, found while
    looking up ``tables``), or None if it is not one to remember."""
    if not reads or reads[0].probes or any(
            isinstance(n, exp.Escape) or (isinstance(n, (exp.RegexpLike, exp.RegexpILike)) and n.args.get("flag") is not None)
            for n in statement.walk()):
        return None  # (probes: regular expressions outside the conjuncts, whose literals it would not bind)
    key = _key_place(shape)
    starts = {lo: i for i, (lo, _) in enumerate(shape.spans)}
    out = []
    for read in reads:
        if read.span is None:
            return None
        conjuncts = []
        for c in read.conjuncts:
            if c.span is None:
                return None
            literals = [starts.get(n.meta.get("start", -1)) for n in _string_literals(c.node)]
            inside = [i for i, (lo, hi) in enumerate(shape.spans) if c.span[0] <= lo and hi <= c.span[1]]
            if None in literals or sorted(literals) != inside:  # type: ignore[type-var]
                return None  # (a literal of its text is not a string literal of its tree)
            conjuncts.append(_Conjunct(c.column, c.node, tuple(literals), (key(c.span[0]), key(c.span[1]))))  # type: ignore[arg-type]
        out.append(_Read(read.table, read.alias, (key(read.span[0]), key(read.span[1])), tuple(conjuncts), read.names))
    return SubstringTemplate(explain, tuple(tables.items()), tuple(out))


def _string_literals(node: exp.Expression) -> list[exp.Literal]:
    return [n for n in node.walk() if isinstance(n, exp.Literal) and n.is_string]


def _key_place(shape: Shape) -> Callable[[int], int]:
    """A place in the statement's text (never inside a literal) -> its place in the key."""
    return lambda at: at - sum(hi - lo - 1 for lo, hi in shape.spans if hi <= at)


def _text_place(shape: Shape) -> Callable[[int], int]:
    """A place in the key -> its place in the text of a statement of the shape."""
    widths = [hi - lo - 1 for lo, hi in shape.spans]
    in_key = [lo - sum(widths[:i]) for i, (lo, _) in enumerate(shape.spans)]
    return lambda at: at + sum(w for w, k in zip(widths, in_key) if k < at)
