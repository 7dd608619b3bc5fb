"""What a text must contain to match a LIKE pattern or a regular expression: the literal
strings an n-gram index can look for (issue 43; docs/design.md: "Substring search").

A requirement is a tree: a string (the text holds it), :class:`AllOf` (every part holds),
:class:`AnyOf` (some part holds); None is no requirement (any text may match). Each is
*necessary*, never sufficient: the user's predicate is evaluated on the candidate rows by
DataFusion, so a requirement may ask less than the pattern does (a class, ``.``, a
repetition that may be absent ask nothing) but never more. Wherever a pattern's reading is
not certain, the answer is None, and the column is scanned.

LIKE follows DataFusion's reading: ``%`` any run, ``_`` one character, a backslash makes the
next character literal (one at the end is itself). Regular expressions follow the syntax of
Rust's ``regex`` crate, which DataFusion uses, the way Russ Cox's trigram index for Google
Code Search derives its queries: literals in sequence, alternation, groups and repetitions.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AllOf:
    parts: tuple["Need", ...]


@dataclass(frozen=True)
class AnyOf:
    parts: tuple["Need", ...]


Need = str | AllOf | AnyOf | None


def all_of(parts: list[Need]) -> Need:
    """Every one of ``parts`` (those that ask nothing left out)."""
    kept = tuple(p for p in parts if p)
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else AllOf(kept)


def any_of(parts: list[Need]) -> Need:
    """One of ``parts``: nothing, when one of them asks nothing."""
    if not parts or any(not p for p in parts):
        return None
    return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))


def like_need(pattern: str) -> Need:
    """The literal runs a text matching LIKE ``pattern`` holds."""
    runs: list[Need] = []
    run: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            run.append(pattern[i + 1] if i + 1 < len(pattern) else "\\")
            i += 2
            continue
        if c in "%_":
            runs.append("".join(run))
            run = []
        else:
            run.append(c)
        i += 1
    runs.append("".join(run))
    return all_of(runs)


class _Unsure(Exception):
    """A construct this reading does not know for certain: no requirement."""


# Escapes of one letter that match a class of characters or an empty place (a literal
# follows none of them); every other letter escape (\x41, \u{...}, \p{L}, \n) is unsure.
_CLASS_ESCAPES = frozenset("dDwWsSbBAz")
_FLAG_CHARS = frozenset("imsUuR-")


def regex_need(pattern: str) -> Need:
    """The literal runs a text in which ``pattern`` finds a match holds (None: unsure)."""
    try:
        parser = _Regex(pattern)
        need = parser.alternation()
        if parser.i != len(pattern):
            raise _Unsure
        return need
    except (_Unsure, IndexError, ValueError):
        return None


class _Regex:
    """A recursive-descent reading of a regular expression into a :data:`Need`."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def peek(self) -> str | None:
        return self.p[self.i] if self.i < len(self.p) else None

    def alternation(self) -> Need:
        branches = [self.concatenation()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.concatenation())
        return any_of(branches)

    def concatenation(self) -> Need:
        items: list[Need] = []
        run: list[str] = []

        def close() -> None:
            items.append("".join(run))
            run.clear()

        while self.peek() not in (None, "|", ")"):
            atom, literal = self.atom()
            low = self.repetition()
            required = low == _ONCE or low >= 1
            if literal is not None and low == _ONCE:
                run.append(literal)
            elif literal is not None and required:
                run.append(literal)  # (c+: c, then c again: the run ends after the first)
                close()
                run.append(literal)
            else:
                close()
                if required:
                    items.append(atom)
        close()
        return all_of(items)

    def atom(self) -> tuple[Need, str | None]:
        """The next atom: (its requirement, its character when it is one literal)."""
        c = self.p[self.i]
        self.i += 1
        if c == "(":
            self.group_flags()
            inner = self.alternation()
            if self.peek() != ")":
                raise _Unsure
            self.i += 1
            return inner, None
        if c == "[":
            self.skip_class()
            return None, None
        if c in ".^$":
            return None, None
        if c in "*+?{":
            raise _Unsure  # (a repetition of nothing: DataFusion's error to give)
        if c == "\\":
            e = self.p[self.i]
            self.i += 1
            if e == "\\":
                # (DataFusion's optimizer rewrites a regular expression of one literal into
                # LIKE '%literal%' without escaping its backslashes, which LIKE then reads as
                # escapes: 'a\\\\b' finds "ab", not "a\\b". Asking nothing holds either way.)
                return None, None
            if e.isascii() and not e.isalnum():
                return e, e  # (an escaped punctuation character is itself)
            if e in _CLASS_ESCAPES:
                return None, None
            raise _Unsure
        return c, c

    def group_flags(self) -> None:
        """Past a group's opening: ``(?:``, ``(?P<name>``, ``(?<name>``, ``(?flags:``; a
        bare ``(?flags)`` changes only flags, and ``x`` (spaces ignored) is unsure."""
        if self.peek() != "?":
            return
        self.i += 1
        if self.peek() == "P":
            self.i += 1
        if self.peek() == "<":
            end = self.p.index(">", self.i)
            self.i = end + 1
            return
        start = self.i
        while self.peek() in _FLAG_CHARS:
            self.i += 1
        if self.peek() not in (":", ")") or "x" in self.p[start : self.i]:
            raise _Unsure
        if self.peek() == ":":
            self.i += 1
        # (a bare "(?i)" reads as an empty group: the ")" closes it)

    def repetition(self) -> int:
        """The least number of times the quantifier after an atom repeats it (none: once)."""
        c = self.peek()
        if c in ("*", "?"):
            low = 0
            self.i += 1
        elif c == "+":
            low = 1
            self.i += 1
        elif c == "{":
            end = self.p.index("}", self.i)
            bounds = self.p[self.i + 1 : end].split(",")
            if len(bounds) > 2 or not bounds[0].strip().isdigit() or not all(
                    b.strip().isdigit() for b in bounds[1:] if b.strip()):
                raise _Unsure
            low = int(bounds[0])
            self.i = end + 1
        else:
            return _ONCE
        if self.peek() in ("?", "+"):  # (lazy or possessive: the same least count)
            self.i += 1
        return low

    def skip_class(self) -> None:
        """Past a bracketed class (nested classes, ``[:alpha:]``, escapes, a leading ``]``)."""
        depth = 1
        if self.peek() == "^":
            self.i += 1
        if self.peek() == "]":
            self.i += 1
        while depth:
            c = self.p[self.i]
            self.i += 1
            if c == "\\":
                self.i += 1
            elif c == "[":
                if self.peek() == ":":
                    self.i = self.p.index(":]", self.i + 1) + 2
                else:
                    depth += 1
                    if self.peek() == "^":
                        self.i += 1
                    if self.peek() == "]":
                        self.i += 1
            elif c == "]":
                depth -= 1


# (Repetition's count for an atom with no quantifier: exactly once, so a literal joins the run.)
_ONCE = -1
