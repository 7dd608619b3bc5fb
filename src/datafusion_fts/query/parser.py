"""The query-string language of docs/design.md: "The query tree and the query string": a
hand-written tokenizer and recursive-descent parser.

Lucene-style syntax compiles to the same immutable tree (:mod:`.tree`) that SQL and the Python
builder produce, so a query means the same thing however it was written. Grammar, lowest
precedence first (juxtaposition binds at the level of ``default_operator``)::

    query       := disjunction EOF
    disjunction := conjunction ((OR | "||" | <space, if default "or">) conjunction)*
    conjunction := unary ((AND | "&&" | <space, if default "and">) unary)*
    unary       := ["+" | "-" | NOT | "!"] primary
    primary     := [field ":"] (term | phrase | "(" disjunction ")")
    term        := word ["*"] ["~" [digits]] ["^" number]
    phrase      := '"' text '"' ["*"] ["~" digits] ["^" number]

A phrase's ``~n`` is Lucene's slop (the terms in any order, a transposition costing 2); a
``*`` after the closing quote makes its last word a prefix (Tantivy's phrase prefix,
Elasticsearch's ``match_phrase_prefix``). The query string has no ordered sloppy phrase,
as none of those languages has one: ``Phrase(..., in_order=True)`` builds it.

``+`` makes a clause MUST, ``-``/``NOT``/``!`` MUST_NOT; a clause without a modifier is SHOULD
at the OR level and MUST inside an AND chain. Consecutive plain words (no modifier, suffix
or ``*``, same columns) joined by juxtaposition merge into one Match/MultiMatch leaf, so a
term repeated in them counts once (docs/design.md: "Statistics and BM25"), as it does for the SQL
``MATCH``.

Every error is a :class:`~datafusion_fts.errors.QuerySyntaxError` pointing at the offending
span of the text.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from ..errors import InvalidArgument, QuerySyntaxError
from .tree import MAX_EXPANSIONS, OPERATORS, Boolean, Match, MultiMatch, Phrase, Prefix, Query

__all__ = ["parse"]

# Groups nest by recursion; the cap turns an absurd nesting into a syntax error instead of
# a RecursionError (each level costs about five Python frames).
_MAX_DEPTH = 100
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
_DIGITS = re.compile(r"[0-9]+")
_WORD_STOP = frozenset('()":^~*')  # end a word; "+", "-", "!" only matter at a token start
_ARG_STOP = frozenset('()"^~')  # end the argument of "^" or "~"


class _Kind(enum.Enum):
    TERM = "term"
    PHRASE = "phrase"
    FIELD = "field"
    LPAREN = "("
    RPAREN = ")"
    AND = "AND"
    OR = "OR"
    NOT = "NOT"
    PLUS = "+"
    MINUS = "-"
    CARET = "^"
    TILDE = "~"
    EOF = "end of query"


_SYMBOLS = {"&&": _Kind.AND, "||": _Kind.OR}
_SINGLE = {
    "(": _Kind.LPAREN,
    ")": _Kind.RPAREN,
    "+": _Kind.PLUS,
    "-": _Kind.MINUS,
    "!": _Kind.NOT,
    "^": _Kind.CARET,
    "~": _Kind.TILDE,
}
_KEYWORDS = {"AND": _Kind.AND, "OR": _Kind.OR, "NOT": _Kind.NOT}
_MODIFIERS = (_Kind.PLUS, _Kind.MINUS, _Kind.NOT)
_CLAUSE_START = frozenset({_Kind.TERM, _Kind.PHRASE, _Kind.FIELD, _Kind.LPAREN, *_MODIFIERS})


class _Token(NamedTuple):
    """A span ``[start, end)`` of the query text.

    ``text`` is the unescaped word, phrase or field name, or the argument of ``^``/``~``;
    ``prefix`` marks a word or a phrase that ended with ``*``.
    """

    kind: _Kind
    start: int
    end: int
    text: str = ""
    prefix: bool = False


# A word with no escape, ending where a word ends (not at ':' or '*'): most tokens, found
# by one regular expression instead of a character at a time.
_PLAIN_WORD = re.compile(r'(?!&&|\|\|)[^\s()+\-!^~":*\\][^\s()":^~*\\]*')
_SPACE = re.compile(r"\s*")
# Words of letters, digits and underscores, one space apart: no syntax in them.
_PLAIN_WORDS = re.compile(r"\w+(?: \w+)*")


# Terms a query string may hold by default (``fts.max_query_terms``): past it the query is
# refused as the tokenizer reaches it, before any parsing (Lucene's default clause limit
# is 1,024; Elasticsearch's was 1,024, now 4,096 and more, counting the terms fuzzy and
# prefix queries expand to). A word or phrase counts one; a fuzzy word (``~``) or a prefix
# (``*``) the MAX_EXPANSIONS terms it may expand to, each found by a pass over the column's
# vocabulary: 10,000 fuzzy words took 5-27 s.
MAX_QUERY_TERMS = 10_000


def _tokenize(text: str, max_terms: int = MAX_QUERY_TERMS) -> list[_Token]:
    """Split ``text`` into tokens ending with EOF; lexical errors, and more than
    ``max_terms`` words and phrases, are raised here."""
    tokens: list[_Token] = []
    i, n = 0, len(text)
    terms = counted = 0
    while True:
        while counted < len(tokens):
            token = tokens[counted]
            if token.kind in (_Kind.TERM, _Kind.PHRASE):
                terms += MAX_EXPANSIONS if token.prefix else 1
            elif token.kind is _Kind.TILDE and counted and tokens[counted - 1].kind is _Kind.TERM:
                terms += MAX_EXPANSIONS - 1  # (a fuzzy word; after a phrase, "~" is its slop)
            counted += 1
        if terms > max_terms:
            raise QuerySyntaxError(
                f"the query holds more than {max_terms:,} terms (fts.max_query_terms; a fuzzy or prefix "
                f"term counts as the {MAX_EXPANSIONS} it may expand to)",
                text, tokens[-1].start, tokens[-1].end - tokens[-1].start,
            )
        i = _SPACE.match(text, i).end()
        if i >= n:
            break
        plain = _PLAIN_WORD.match(text, i)
        if plain is not None and (plain.end() == n or text[plain.end()] not in "\\:*"):
            word, j = plain.group(), plain.end()
            keyword = _KEYWORDS.get(word)
            tokens.append(_Token(keyword, i, j) if keyword else _Token(_Kind.TERM, i, j, word))
            i = j
            continue
        c = text[i]
        if text.startswith(("&&", "||"), i):
            tokens.append(_Token(_SYMBOLS[text[i : i + 2]], i, i + 2))
            i += 2
        elif c in "^~":
            # The argument is taken whole and validated by the parser, so "^2x" is reported
            # as a bad number rather than as a boost followed by the term "x".
            j = i + 1
            while j < n and not text[j].isspace() and text[j] not in _ARG_STOP:
                j += 1
            tokens.append(_Token(_SINGLE[c], i, j, text[i + 1 : j]))
            i = j
        elif c in _SINGLE:
            tokens.append(_Token(_SINGLE[c], i, i + 1))
            i += 1
        elif c == '"':
            tokens.append(_phrase_token(text, i))
            i = tokens[-1].end
        elif c == ":":
            raise QuerySyntaxError("unexpected ':' with no field name before it", text, i)
        elif c == "*":
            raise QuerySyntaxError("'*' needs a prefix before it", text, i)
        else:
            tokens.append(_word_token(text, i))
            i = tokens[-1].end
    tokens.append(_Token(_Kind.EOF, n, n))
    return tokens


def _phrase_token(text: str, start: int) -> _Token:
    chars: list[str] = []
    j = start + 1
    while j < len(text):
        c = text[j]
        if c == '"':
            end = j + 1
            if end < len(text) and text[end] == "*":
                if end + 1 < len(text) and not text[end + 1].isspace() and text[end + 1] not in _ARG_STOP:
                    raise QuerySyntaxError("'*' is allowed only at the end of a phrase", text, end)
                return _Token(_Kind.PHRASE, start, end + 1, "".join(chars), prefix=True)
            return _Token(_Kind.PHRASE, start, end, "".join(chars))
        if c == "\\" and j + 1 < len(text):
            c = text[j + 1]
            j += 1
        chars.append(c)
        j += 1
    raise QuerySyntaxError("unterminated phrase: no closing '\"'", text, start)


def _word_token(text: str, start: int) -> _Token:
    """A term, a ``field:`` scope or an AND/OR/NOT keyword; escaped words are always terms."""
    chars: list[str] = []
    escaped = False
    j, n = start, len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            if j + 1 == n:
                raise QuerySyntaxError("'\\' at the end of the query escapes nothing", text, j)
            chars.append(text[j + 1])
            escaped = True
            j += 2
        elif c.isspace() or c in _WORD_STOP:
            break
        else:
            chars.append(c)
            j += 1
    word = "".join(chars)
    if j < n and text[j] == ":":
        if escaped or not _FIELD.fullmatch(word):
            raise QuerySyntaxError(
                f"{word!r} is not a field name (escape the ':' to search for it)",
                text,
                start,
                j - start,
            )
        return _Token(_Kind.FIELD, start, j + 1, word)
    if j < n and text[j] == "*":
        if j + 1 < n and not text[j + 1].isspace() and text[j + 1] not in _ARG_STOP:
            raise QuerySyntaxError("'*' is allowed only at the end of a term", text, j)
        return _Token(_Kind.TERM, start, j + 1, word, prefix=True)
    if not escaped and word in _KEYWORDS:
        return _Token(_KEYWORDS[word], start, j)
    return _Token(_Kind.TERM, start, j, word)


@dataclass(slots=True)
class _Operand:
    """A clause before its group places it in must/should/must_not.

    Plain words keep ``query=None`` and their ``words`` until merging with neighbours is
    decided; ``occur`` is ``"must"``/``"must_not"`` for a modifier, None for none.
    """

    query: Query | None = None
    occur: str | None = None
    words: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()

    @property
    def mergeable(self) -> bool:
        return self.query is None and self.occur is None


class _Parser:
    def __init__(self, text: str, columns: tuple[str, ...], operator: str, max_terms: int) -> None:
        self.text = text
        self.columns = columns
        self.operator = operator
        self.tokens = _tokenize(text, max_terms)
        self.pos = 0
        self.depth = 0

    # -- helpers -----------------------------------------------------------------------------

    def _peek(self) -> _Token:
        return self.tokens[self.pos]

    def _next(self) -> _Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def _source(self, token: _Token) -> str:
        return self.text[token.start : token.end]

    def _error(self, message: str, token: _Token) -> QuerySyntaxError:
        return QuerySyntaxError(message, self.text, token.start, token.end - token.start)

    def _unexpected(self, token: _Token) -> QuerySyntaxError:
        kind, src = token.kind, self._source(token)
        if kind in (_Kind.AND, _Kind.OR):
            return self._error(f"'{src}' needs a clause before it", token)
        if kind is _Kind.RPAREN:
            return self._error("unbalanced ')': no '(' opens it", token)
        if kind in (_Kind.CARET, _Kind.TILDE):
            return self._error(f"'{kind.value}' must directly follow a term or a phrase", token)
        if kind is _Kind.EOF:
            return self._error("unexpected end of query", token)
        return self._error(f"unexpected {src!r}", token)

    def _suffix(self, kind: _Kind, after: _Token) -> _Token | None:
        """The ``^``/``~`` token written right after ``after`` (no space), consumed."""
        token = self._peek()
        if token.kind is kind and token.start == after.end:
            self.pos += 1
            return token
        return None

    def _expect_operand(self, operator: _Token) -> None:
        if self._peek().kind not in _CLAUSE_START:
            raise self._error(f"'{self._source(operator)}' needs a clause after it", operator)

    def _argument_error(self, message: str, token: _Token) -> QuerySyntaxError:
        return QuerySyntaxError(message, self.text, token.start + 1, len(token.text))

    # -- grammar -----------------------------------------------------------------------------

    def group(self, columns: tuple[str, ...], opening: _Token | None) -> Query:
        """The clauses up to the matching ``)`` (or the end, at the top) as one query."""
        first = self._peek()
        if opening is not None and first.kind is _Kind.RPAREN:
            raise QuerySyntaxError(
                "empty group '()'", self.text, opening.start, first.end - opening.start
            )
        if opening is not None and first.kind is _Kind.EOF:
            raise self._error("unbalanced '(': no ')' closes it", opening)
        operands = self._disjunction(columns)
        end = self._peek()
        if opening is None and end.kind is not _Kind.EOF:
            raise self._unexpected(end)
        if opening is not None:
            if end.kind is _Kind.EOF:
                raise self._error("unbalanced '(': no ')' closes it", opening)
            if end.kind is not _Kind.RPAREN:
                raise self._unexpected(end)
            self.pos += 1
        return self._combine(operands)

    def _disjunction(self, columns: tuple[str, ...]) -> list[_Operand]:
        operands = [self._conjunction(columns)]
        juxtaposed: list[bool] = []
        while True:
            token = self._peek()
            if token.kind is _Kind.OR:
                self.pos += 1
                self._expect_operand(token)
                juxtaposed.append(False)
            elif self.operator == "or" and token.kind in _CLAUSE_START:
                juxtaposed.append(True)
            else:
                return self._merge(operands, juxtaposed)
            operands.append(self._conjunction(columns))

    def _conjunction(self, columns: tuple[str, ...]) -> _Operand:
        operands = [self._unary(columns)]
        juxtaposed: list[bool] = []
        while True:
            token = self._peek()
            if token.kind is _Kind.AND:
                self.pos += 1
                self._expect_operand(token)
                juxtaposed.append(False)
            elif self.operator == "and" and token.kind in _CLAUSE_START:
                juxtaposed.append(True)
            else:
                break
            operands.append(self._unary(columns))
        merged = self._merge(operands, juxtaposed)
        if len(merged) == 1:
            return merged[0]
        # Inside an AND chain a clause without a modifier is required.
        must = tuple(self._query(o) for o in merged if o.occur != "must_not")
        must_not = tuple(self._query(o) for o in merged if o.occur == "must_not")
        return _Operand(Boolean(must=must, must_not=must_not))

    def _unary(self, columns: tuple[str, ...]) -> _Operand:
        token = self._peek()
        if token.kind not in _MODIFIERS:
            return self._primary(columns)
        self.pos += 1
        following = self._peek()
        if following.kind in _MODIFIERS:
            raise self._error(
                f"'{self._source(following)}' cannot follow '{self._source(token)}'", following
            )
        self._expect_operand(token)
        occur = "must" if token.kind is _Kind.PLUS else "must_not"
        return replace(self._primary(columns), occur=occur)

    def _primary(self, columns: tuple[str, ...]) -> _Operand:
        token = self._peek()
        if token.kind is _Kind.FIELD:
            field = self._next()
            token = self._peek()
            if token.kind not in (_Kind.TERM, _Kind.PHRASE, _Kind.LPAREN):
                message = "must be followed by a term, a phrase or a group"
                raise self._error(f"'{self._source(field)}' {message}", field)
            columns = (field.text,)
        if token.kind is _Kind.LPAREN:
            return self._parenthesised(columns)
        if token.kind is _Kind.PHRASE:
            return self._phrase(columns)
        if token.kind is _Kind.TERM:
            return self._term(columns)
        raise self._unexpected(token)

    def _parenthesised(self, columns: tuple[str, ...]) -> _Operand:
        opening = self._next()
        if self.depth >= _MAX_DEPTH:
            raise self._error(f"groups nest deeper than {_MAX_DEPTH} levels", opening)
        self.depth += 1
        query = self.group(columns, opening)
        self.depth -= 1
        closing = self.tokens[self.pos - 1]
        caret = self._suffix(_Kind.CARET, closing)
        if caret is not None:
            raise self._error("boost on a group is not supported", caret)
        tilde = self._suffix(_Kind.TILDE, closing)
        if tilde is not None:
            raise self._error("'~' applies to a term or a phrase, not to a group", tilde)
        return _Operand(query)

    def _phrase(self, columns: tuple[str, ...]) -> _Operand:
        token = self._next()
        columns = self._need_columns(token, columns)
        if not token.text.strip():
            raise self._error("empty phrase", token)
        tilde = self._suffix(_Kind.TILDE, token)
        caret = self._suffix(_Kind.CARET, tilde or token)
        slop = self._slop(tilde) if tilde else 0
        boost = self._boost(caret) if caret else 1.0
        prefix = token.prefix
        return _Operand(
            self._per_column(columns, lambda c: Phrase(c, token.text, slop=slop, boost=boost, prefix=prefix))
        )

    def _term(self, columns: tuple[str, ...]) -> _Operand:
        token = self._next()
        columns = self._need_columns(token, columns)
        tilde = self._suffix(_Kind.TILDE, token)
        caret = self._suffix(_Kind.CARET, tilde or token)
        if token.prefix and tilde:
            raise self._error("a prefix term cannot also be fuzzy", tilde)
        if not (token.prefix or tilde or caret):
            return _Operand(words=(token.text,), columns=columns)
        boost = self._boost(caret) if caret else 1.0
        text, operator = token.text, self.operator
        if token.prefix:
            return _Operand(self._per_column(columns, lambda c: Prefix(c, text, boost=boost)))
        if tilde:
            fuzziness = self._fuzziness(tilde)
            return _Operand(
                self._per_column(
                    columns,
                    lambda c: Match(c, text, operator=operator, boost=boost, fuzziness=fuzziness),
                )
            )
        if len(columns) == 1:
            return _Operand(Match(columns[0], text, operator=operator, boost=boost))
        return _Operand(MultiMatch(text, columns, (boost,) * len(columns), operator))

    # -- building ----------------------------------------------------------------------------

    def _need_columns(self, token: _Token, columns: tuple[str, ...]) -> tuple[str, ...]:
        if not columns:
            raise self._error(
                f"no column to search for {self._source(token)!r}: "
                "pass default_columns or write field:term",
                token,
            )
        return columns

    @staticmethod
    def _per_column(columns: tuple[str, ...], make: Callable[[str], Query]) -> Query:
        """One leaf, or a SHOULD of one leaf per column (the MultiMatch reading of §5.3)."""
        if len(columns) == 1:
            return make(columns[0])
        return Boolean(should=tuple(make(c) for c in columns))

    def _merge(self, operands: list[_Operand], juxtaposed: list[bool]) -> list[_Operand]:
        """Join runs of plain words written side by side over the same columns into one leaf."""
        merged = [operands[0]]
        run: list[str] = []  # the words of a run joined to merged[-1] (once, at its end: linear)
        for operand, side_by_side in zip(operands[1:], juxtaposed, strict=True):
            last = merged[-1]
            if side_by_side and last.mergeable and operand.mergeable and last.columns == operand.columns:
                run.extend(operand.words)
                continue
            if run:
                merged[-1] = replace(last, words=last.words + tuple(run))
                run = []
            merged.append(operand)
        if run:
            merged[-1] = replace(merged[-1], words=merged[-1].words + tuple(run))
        return merged

    def _query(self, operand: _Operand) -> Query:
        if operand.query is not None:
            return operand.query
        text, columns = " ".join(operand.words), operand.columns
        if len(columns) == 1:
            return Match(columns[0], text, operator=self.operator)
        return MultiMatch(text, columns, operator=self.operator)

    def _combine(self, operands: list[_Operand]) -> Query:
        """The Boolean of a group's OR-level clauses; a lone SHOULD stands for itself."""
        clauses: dict[str, list[Query]] = {"must": [], "should": [], "must_not": []}
        for operand in operands:
            clauses[operand.occur or "should"].append(self._query(operand))
        if len(clauses["should"]) == 1 and not clauses["must"] and not clauses["must_not"]:
            return clauses["should"][0]
        return Boolean(
            must=tuple(clauses["must"]),
            should=tuple(clauses["should"]),
            must_not=tuple(clauses["must_not"]),
        )

    # -- numbers -----------------------------------------------------------------------------

    def _boost(self, caret: _Token) -> float:
        if not caret.text:
            raise self._error("'^' needs a number after it", caret)
        value = float(caret.text) if _DECIMAL.fullmatch(caret.text) else math.nan
        if not (math.isfinite(value) and value > 0):
            raise self._argument_error(
                f"boost must be a positive number, got {caret.text!r}", caret
            )
        return value

    def _fuzziness(self, tilde: _Token) -> int:
        if not tilde.text:
            return 2  # Lucene's "alpha~": the largest supported edit distance
        if not _DIGITS.fullmatch(tilde.text) or tilde.text.lstrip("0") not in ("", "1", "2"):
            raise self._argument_error(f"fuzziness must be 0, 1 or 2, got {tilde.text!r}", tilde)
        return int(tilde.text)

    def _slop(self, tilde: _Token) -> int:
        if not tilde.text:
            raise self._error("phrase slop needs a number after '~'", tilde)
        # The length cap keeps int() away from huge digit strings; no phrase is that long.
        if not _DIGITS.fullmatch(tilde.text) or len(tilde.text.lstrip("0")) > 9:
            raise self._argument_error(
                f"phrase slop must be a whole number, got {tilde.text!r}", tilde
            )
        return int(tilde.text)


def _default_columns(value: str | Sequence[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    columns = (value,) if isinstance(value, str) else tuple(value)
    if not columns or any(not isinstance(c, str) or not c for c in columns):
        raise InvalidArgument(
            f"default_columns must be None, a column name or non-empty names, got {value!r}"
        )
    if len(set(columns)) != len(columns):
        raise InvalidArgument(f"default_columns repeat a column: {columns}")
    return columns


def parse(
    text: str,
    default_columns: str | Sequence[str] | None = None,
    default_operator: str = "or",
    max_terms: int = MAX_QUERY_TERMS,
) -> Query:
    """Parse a Lucene-style query string (docs/design.md: "The query tree and the query string")
    into a query tree.

    Words without a ``field:`` search ``default_columns`` (several columns make a
    MultiMatch, or a SHOULD of per-column leaves); words written side by side are joined
    by ``default_operator``. Case is kept: each column's analyzer lowercases later.

    Args:
        text: The query string.
        default_columns: The column, or columns, searched by words without a field.
        default_operator: ``"or"`` or ``"and"``: how juxtaposed words combine.
        max_terms: The most terms the text may hold (``fts.max_query_terms``; a fuzzy or
            prefix term counts as the ``MAX_EXPANSIONS`` it may expand to).

    Returns:
        The query tree.

    Raises:
        QuerySyntaxError: The text does not parse; ``offset`` and ``length`` give the span.
        InvalidArgument: ``text``, ``default_columns`` or ``default_operator`` is malformed.

    Examples:
        >>> parse("alpha beta", "body") == Match("body", "alpha beta")
        True
        >>> parse("+alpha -beta", "body") == Boolean(
        ...     must=(Match("body", "alpha"),), must_not=(Match("body", "beta"),))
        True
        >>> parse('title:"big cat"~1^2') == Phrase("title", "big cat", slop=1, boost=2.0)
        True
        >>> parse('"big bad wo"*', "body") == Phrase("body", "big bad wo", prefix=True)
        True
        >>> parse("alpha AND", "body")
        Traceback (most recent call last):
        ...
        datafusion_fts.errors.QuerySyntaxError: 'AND' needs a clause after it at 1:7
          alpha AND
                ^^^

    """
    if not isinstance(text, str):
        raise InvalidArgument(f"query text must be a string, got {text!r}")
    if default_operator not in OPERATORS:
        raise InvalidArgument(
            f"default_operator must be one of {OPERATORS}, got {default_operator!r}"
        )
    columns = _default_columns(default_columns)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise QuerySyntaxError("not valid text: a lone surrogate cannot be encoded as UTF-8", text, err.start) from None
    if not text.strip():
        raise QuerySyntaxError("empty query", text, 0, len(text))
    if (len(columns) == 1 and text.count(" ") < max_terms and _PLAIN_WORDS.fullmatch(text)
            and not _KEYWORDS.keys() & set(text.split(" "))):
        # (the common query, a few plain words: the tree the parser makes of them, in a
        # fraction of its time; tests/query/test_parser.py checks the two agree)
        return Match(columns[0], text, operator=default_operator)
    return _Parser(text, columns, default_operator, max_terms).group(columns, None)
