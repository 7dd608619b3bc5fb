"""Edits of a statement's own text (DESIGN §3.1: "In a statement with full-text parts only
those parts are rewritten").

Lowering a search (sql/search/lower_select.py) decides on sqlglot's tree what changes: the searched
table becomes the search's result, each MATCH a truth value, score() a column, ``*`` the
table's columns. Generating the whole statement back from that tree would rewrite the
user's SQL too (``'1'::float`` became a DOUBLE PRECISION, ``* EXCLUDE (c)`` lost its
EXCLUDE), so each change is instead an edit of the original text at the place the tree's
nodes came from (their ``meta`` positions), and everything else stays as written. A
:class:`Splicer` that cannot place an edit is ``broken``: the caller generates the tree
instead, as before.
"""

from __future__ import annotations

from sqlglot import exp

from .classify import Token, tokenize

Edit = tuple[int, int, str]  # (start, end, replacement) in a statement's text
# Words that end an ORDER BY clause at its own depth.
_AFTER_ORDER = frozenset({"limit", "offset", "fetch", "union", "intersect", "except"})
# Words that end a WHERE clause at its own depth.
_AFTER_WHERE = _AFTER_ORDER | {"group", "having", "window", "qualify", "order"}


def spliced(text: str, edits: list[Edit]) -> str:
    """``text`` with ``edits`` (not overlapping) made."""
    out, at = [], 0
    for start, end, replacement in sorted(edits):
        out += [text[at:start], replacement]
        at = end
    return "".join(out) + text[at:]


class Splicer:
    """The edits of one statement's text, placed by the positions of its tree's nodes."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[Token] = tokenize(text)
        self._at = {t.start: i for i, t in enumerate(self.tokens)}
        self._at_end = {t.end: i for i, t in enumerate(self.tokens)}
        self.edits: list[Edit] = []
        self.broken = False

    def result(self) -> str | None:
        """The edited text, or None if an edit could not be placed."""
        if self.broken:
            return None
        spans = sorted(self.edits)
        if any(a[1] > b[0] for a, b in zip(spans, spans[1:])):
            return None  # (two edits of one place: generate instead)
        return spliced(self.text, spans)

    def _index(self, node: exp.Expression | None) -> int | None:
        """The index of the token ``node`` (an identifier, a literal, a function's name)
        starts at; None (and broken) if it has no position."""
        start = None if node is None else node.meta.get("start")
        index = None if start is None else self._at.get(start)
        if index is None:
            self.broken = True
        return index

    def _closing(self, index: int) -> int | None:
        """The index of the ``)`` that closes the ``(`` at token ``index``."""
        depth = 0
        for i in range(index, len(self.tokens)):
            token = self.tokens[i]
            if token.kind == "punct" and token.value in "()":
                depth += 1 if token.value == "(" else -1
                if depth == 0:
                    return i
        self.broken = True
        return None

    def replace_call(self, call: exp.Expression, replacement: str) -> None:
        """Replace a call (``MATCH(...)``, ``score()``), from its name to its ``)``."""
        name = self._index(call)
        close = None if name is None else self._parenthesized(name + 1)
        if close is not None:
            self.edits.append((self.tokens[name].start, self.tokens[close].end, replacement))

    def replace_window(self, window: exp.Window, replacement: str) -> None:
        """Replace a window function, from its name to the ``)`` of its ``OVER (...)``."""
        name = self._index(window.this)
        call = None if name is None else self._parenthesized(name + 1)
        if call is None:
            return
        if call + 1 >= len(self.tokens) or self.tokens[call + 1].value != "over":
            self.broken = True
            return
        close = self._parenthesized(call + 2)
        if close is not None:
            self.edits.append((self.tokens[name].start, self.tokens[close].end, replacement))

    def _parenthesized(self, index: int) -> int | None:
        """The index of the ``)`` closing the ``(`` that must be token ``index``; None (and
        broken) if there is none."""
        if index >= len(self.tokens) or self.tokens[index].value != "(":
            self.broken = True
            return None
        return self._closing(index)

    def replace_table(self, table: exp.Table, replacement: str) -> None:
        """Replace a table reference, from its name to its alias (if any)."""
        span = self.table_span(table)
        if span is not None:
            self.edits.append((*span, replacement))

    def table_span(self, table: exp.Table) -> tuple[int, int] | None:
        """Where a table reference is in the text, from its name to its alias (if any)."""
        name = self._index(table.this)
        alias = table.args.get("alias")
        last = self._index(alias.this) if alias is not None else name
        return None if name is None or last is None else (self.tokens[name].start, self.tokens[last].end)

    def wrap(self, derived: exp.Expression, head: str, tail: str) -> None:
        """Put ``head`` before a derived table's ``(`` and ``tail`` in place of its alias
        (``AS x``, with a column list if it has one), keeping the edits inside it."""
        alias = derived.args.get("alias")
        at = self._index(alias.this if alias is not None else None)
        if at is None:
            return
        end = self._closing(at + 1) if alias.columns and at + 1 < len(self.tokens) else at
        close = at - 1
        if close >= 0 and self.tokens[close].kind == "word" and self.tokens[close].value == "as":
            close -= 1
        opening, depth = None, 0
        for i in range(close, -1, -1):
            token = self.tokens[i]
            if token.kind == "punct" and token.value in "()":
                depth += 1 if token.value == ")" else -1
                if depth == 0:
                    opening = i
                    break
        if end is None or opening is None or close < 0 or self.tokens[close].value != ")":
            self.broken = True
            return
        self.edits.append((self.tokens[opening].start, self.tokens[opening].start, head))
        self.edits.append((self.tokens[close].end, self.tokens[end].end, tail))

    def order_end(self, order: exp.Order) -> int | None:
        """Where an ORDER BY clause's last key ends in the text (read before the tree changes)."""
        first = self._first(order.expressions[0])
        if first is None:
            return None
        depth, last = 0, first
        for i in range(first, len(self.tokens)):
            token = self.tokens[i]
            if token.kind == "punct" and token.value in "();":
                depth += {"(": 1, ")": -1, ";": -1}[token.value]
                if depth < 0:
                    break
            elif token.kind == "word" and depth == 0 and token.value in _AFTER_ORDER:
                break
            last = i
        return self.tokens[last].end

    def insert(self, at: int | None, text: str) -> None:
        """Insert ``text`` at offset ``at`` (None: a place not found)."""
        if at is None:
            self.broken = True
        else:
            self.edits.append((at, at, text))

    def _first(self, node: exp.Expression) -> int | None:
        """The index of ``node``'s first token that has a position (its leftmost leaf)."""
        starts = [n.meta["start"] for n in node.walk() if n.meta.get("start") is not None]
        if not starts:
            self.broken = True
            return None
        index = self._at.get(min(starts))
        if index is None:
            self.broken = True
        return index

    def replace_star(self, star: exp.Expression, replacement: str, column: exp.Column | None = None) -> None:
        """Replace ``*`` (or ``t.*`` when ``column`` is the qualified star) and its
        EXCLUDE/EXCEPT list, if any, by ``replacement`` (its REPLACE and RENAME stay)."""
        first = self._index(column.args.get("table") if column is not None else star)
        at = self._index(star) if column is not None else first
        if first is None or at is None:
            return
        end = at
        if at + 1 < len(self.tokens) and self.tokens[at + 1].kind == "word" and self.tokens[at + 1].value in ("exclude", "except"):
            end = at + 1
            if end + 1 < len(self.tokens) and self.tokens[end + 1].value == "(":
                close = self._closing(end + 1)
                if close is None:
                    return
                end = close
            else:
                end += 1  # (EXCLUDE one_column)
        self.edits.append((self.tokens[first].start, self.tokens[end].end, replacement))

    def excluded(self, star: exp.Expression) -> list[str]:
        """The text of each column a star's EXCLUDE/EXCEPT names, as written."""
        names = [c.this if isinstance(c, exp.Column) else c for c in star.args.get("except_") or []]
        return [self.text[self.tokens[i].start:self.tokens[i].end] for i in map(self._index, names) if i is not None]

    def conjunct_texts(self, conjuncts: list[exp.Expression]) -> list[str] | None:
        """The text of each of a WHERE clause's top-level ``AND`` operands (``conjuncts``,
        sqlglot's, in order; placed by :meth:`conjunct_spans`) with the edits made in it so
        far, so a prefilter DataFusion runs is the user's own SQL; None (nothing broken: the
        caller generates them) where they cannot be placed."""
        spans = self.conjunct_spans(conjuncts)
        if spans is None:
            return None
        texts = []
        for begin, end in spans:  # (with the edits made in them so far: text functions' calls)
            inside = [(a - begin, b - begin, r) for a, b, r in self.edits if begin <= a and b <= end]
            if any(a < end and b > begin and not (begin <= a and b <= end) for a, b, _ in self.edits):
                return None
            texts.append(spliced(self.text[begin:end], inside))
        return texts

    def conjunct_spans(self, conjuncts: list[exp.Expression]) -> list[tuple[int, int]] | None:
        """Where each of a WHERE clause's top-level ``AND`` operands is in the text, for
        ``conjuncts`` (sqlglot's, in order); None (nothing broken) when the text does not
        split into exactly those (a parenthesised group of ANDs is one piece of text but
        several conjuncts) or a conjunct has no position to check it by. A piece has no OR
        at its top (``a AND b OR c`` is one conjunct, an OR, but two pieces), so pieces
        joined by AND read as the conjuncts they are."""
        spans = [self._span(c) for c in conjuncts]
        if not spans or any(s is None for s in spans):
            return None
        start = self._clause_start(spans[0][0])
        if start is None:
            return None
        pieces = self._pieces(start)
        if len(pieces) != len(conjuncts) or any(
                not (lo <= first and last <= hi) for (lo, hi), (first, last) in zip(pieces, spans)):
            return None
        return [(self.tokens[lo].start, self.tokens[hi].end) for lo, hi in pieces]

    def _span(self, node: exp.Expression) -> tuple[int, int] | None:
        """The indexes of the first and last tokens of ``node``'s positioned leaves."""
        starts = [n.meta["start"] for n in node.walk() if n.meta.get("start") is not None]
        ends = [n.meta["end"] for n in node.walk() if n.meta.get("end") is not None]
        if not starts or not ends:
            return None
        first = self._at.get(min(starts))
        last = self._at_end.get(max(ends) + 1)
        return None if first is None or last is None else (first, last)

    def _clause_start(self, index: int) -> int | None:
        """The index of the first token after the ``WHERE`` that token ``index`` is in."""
        depth = 0
        for i in range(index - 1, -1, -1):
            token = self.tokens[i]
            if token.kind == "punct" and token.value in "()":
                depth += 1 if token.value == ")" else -1
            elif token.kind == "word" and token.value == "where" and depth <= 0:
                return i + 1
        return None

    def _pieces(self, start: int) -> list[tuple[int, int]]:
        """The (first, last) token indexes of the operands of the top-level ANDs of the
        clause from token ``start`` to its end (``BETWEEN x AND y``'s AND is not one)."""
        pieces, depth, between, first = [], 0, 0, start
        i = start
        while i < len(self.tokens):
            token = self.tokens[i]
            if token.kind == "punct" and token.value in "();":
                depth += {"(": 1, ")": -1, ";": -1}[token.value]
                if depth < 0:
                    break
            elif token.kind == "word" and depth == 0:
                if token.value in _AFTER_WHERE:
                    break
                if token.value == "between":
                    between += 1
                elif token.value == "and" and between:
                    between -= 1
                elif token.value == "and":
                    pieces.append((first, i - 1))
                    first = i + 1
            i += 1
        pieces.append((first, i - 1))
        return [(lo, hi) for lo, hi in pieces if lo <= hi]
