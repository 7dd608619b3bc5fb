"""Which statements of a SQL text are ours, decided from its tokens, without parsing
(docs/design.md: "SQL"; DESIGN §3.1 "SQL it does not own is DataFusion's").

``db.sql`` hands a statement with no full-text feature to DataFusion as the user wrote it.
Deciding that must cost next to nothing and must not need sqlglot, which cannot parse every
statement DataFusion can (``EXPLAIN FORMAT TREE``, a table named ``values``, dialect
settings). So a text is first searched for the few words a statement of ours must hold
(substring searches, about a microsecond); a text without any is DataFusion's. Only a
text with one of them is split into tokens (strings, quoted identifiers and comments
skipped, as DataFusion's tokenizer skips them) and each statement classified by its first
words, as sqlglot's own ``STATEMENT_PARSERS`` dispatch on them:

- ``SEARCH``: MATCH(, score(, score_explain(, a text function's short form, or ``_rowid``
  beside a managed table's name: parsed and lowered (sql/search/lower_select.py);
- ``FTS``: CREATE FULLTEXT INDEX, CREATE NGRAM INDEX, OPTIMIZE, SET fts.*, and EXPLAIN of a statement of ours;
- ``CREATE_TABLE``, ``INSERT``, ``UPDATE``, ``DELETE``, ``DROP``: DDL and DML that create
  or change a managed table (sql/managed_dml.py), with where the table's name is, and
  ``EXPLAIN_WRITE``, the EXPLAIN of such an INSERT, UPDATE or DELETE;
- ``DATAFUSION``: everything else, the text as written.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, replace
from typing import Callable, NamedTuple

from ...errors import SqlError
from ...session.catalog import DEFAULT_CATALOG, DEFAULT_SCHEMA


class Kind(enum.Enum):
    DATAFUSION = "datafusion"
    SEARCH = "search"
    FTS = "fts"
    CREATE_TABLE = "create table"
    INSERT = "insert"
    UPDATE = "update"
    DELETE = "delete"
    DROP = "drop"
    EXPLAIN_WRITE = "explain write"  # (EXPLAIN of INSERT, UPDATE or DELETE of a managed table)
    SUBSTRING = "substring"  # (DataFusion's, naming a table with an n-gram index beside LIKE, ~, ...)


# Calls that make a statement a search: MATCH, score(), score_explain() and the short
# forms of the text functions (udfs/install.py FUNCTIONS), rewritten with their analyzer.
SEARCH_CALLS = frozenset({"match", "score", "score_explain", "highlight", "snippet", "fts_match", "fts_tokenize"})
ROWID = "_rowid"
# Every statement of ours holds one of these words (several statements a ';'). A text holding
# none as a substring is DataFusion's: a few substring searches of the lowered text (1 us
# for a 90-character statement, where one regular expression of them took 9 us). One that
# holds one only as part of a word ("scores") is tokenized and found not ours.
_TRIGGERS = tuple(sorted(SEARCH_CALLS | {ROWID, "fulltext", "optimize", "fts", "create", "insert", "update",
                                         "delete", "drop", ";"}))
_TOKEN = re.compile(
    r"""\s*(?:(?P<line_comment>--[^\n]*)
    |(?P<comment>/\*)
    |(?P<string>[eE]'(?:[^'\\]++|\\.|'')*+'?|'(?:[^']++|'')*+'?)
    |(?P<dollar>\$(?:[^\W\d]\w*)?\$)
    |(?P<quoted>"(?:[^"]++|"")*+"?|`[^`]*+`?)
    |(?P<word>[^\W\d]\w*)
    |(?P<number>\d[\w.]*)
    |(?P<punct>\S))""",
    re.VERBOSE,
)


class Token(NamedTuple):
    """A token: its kind ("word", lowercased in ``value``; "quoted", unquoted in ``value``;
    "punct"; "literal"), and where it is. (A named tuple: a statement has dozens, and a
    frozen dataclass took twice as long to make.)"""

    kind: str
    value: str
    start: int
    end: int


@dataclass(frozen=True)
class Statement:
    """One statement of a text: its own text, its tokens (offsets into that text), its kind,
    and for DDL/DML on a managed table the token span of that table's name."""

    text: str
    start: int  # (in the whole text)
    kind: Kind
    tokens: tuple[Token, ...] = ()
    target: tuple[int, int] | None = None  # token indexes [lo, hi) of the table's name
    target_name: str | None = None


def _comment_end(text: str, at: int) -> int:
    """The end of the (nested, as DataFusion nests them) block comment opened at ``at``."""
    depth, i = 0, at
    while i < len(text):
        if text.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif text.startswith("*/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    return len(text)


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text`` DataFusion's tokenizer would see: words, quoted identifiers,
    punctuation, and literals (strings and numbers, their content not read)."""
    tokens: list[Token] = []
    append = tokens.append
    at = 0
    while at < len(text):
        m = _TOKEN.match(text, at)
        kind = m.lastgroup if m is not None else None
        if m is None or kind is None:  # (trailing white space)
            break
        start, end = m.span(kind)
        if kind == "word":
            append(Token("word", text[start:end].lower(), start, end))
        elif kind == "punct":
            append(Token("punct", text[start:end], start, end))
        elif kind == "quoted":
            append(_quoted(text[start:end], start, end))
        elif kind == "comment":  # (nested, to its end)
            end = _comment_end(text, start)
        elif kind == "dollar":  # (to the same tag)
            close = text.find(m.group(kind), end)
            end = len(text) if close < 0 else close + len(m.group(kind))
            append(Token("literal", "", start, end))
        elif kind != "line_comment":
            append(Token("literal", "", start, end))
        at = end
    return tokens


def _quoted(raw: str, start: int, end: int) -> Token:
    closed = len(raw) > 1 and raw[-1] == raw[0]
    return Token("quoted", raw[1:-1 if closed else None].replace('""', '"'), start, end)


def _name_at(tokens: list[Token], i: int) -> tuple[list[str], int]:
    """The parts of a (qualified) name starting at token ``i`` (each unquoted; a word as
    written and lowercased, for DataFusion folds unquoted names), and the index past it."""
    parts: list[str] = []
    while i < len(tokens) and tokens[i].kind in ("word", "quoted"):
        parts.append(tokens[i].value)
        if i + 1 < len(tokens) and tokens[i + 1].value == "." and tokens[i + 1].kind == "punct":
            i += 2
        else:
            i += 1
            break
    return parts, i


def _managed_name(parts: list[str], managed: Callable[[str], bool]) -> str | None:
    """The managed table ``parts`` names: unqualified, or qualified by the session's default
    schema (and catalog), where managed tables live (session/catalog.py)."""
    if not parts or len(parts) > 3:
        return None
    if len(parts) >= 2 and parts[-2] != DEFAULT_SCHEMA or len(parts) == 3 and parts[0] != DEFAULT_CATALOG:
        return None
    return parts[-1] if managed(parts[-1]) else None


def _words(tokens: list[Token], i: int, *words: str) -> bool:
    """Whether the tokens from ``i`` are these words."""
    return all(i + j < len(tokens) and tokens[i + j].kind == "word" and tokens[i + j].value == w
               for j, w in enumerate(words))


def is_search(tokens: list[Token] | tuple[Token, ...], managed: Callable[[str], bool]) -> bool:
    """Whether a statement has search parts: a call of MATCH, score(), score_explain() or a
    text function's short form, or ``_rowid`` beside a managed table's name."""
    rowid = named = False
    for i, token in enumerate(tokens):
        if token.kind == "word" and token.value in SEARCH_CALLS:
            if i + 1 < len(tokens) and tokens[i + 1].value == "(" and tokens[i + 1].kind == "punct":
                return True
        if token.kind in ("word", "quoted"):
            rowid = rowid or token.value == ROWID
            named = named or managed(token.value)
    return rowid and named


# The words of the predicates an n-gram index answers (sql/substring/lower_substring.py).
_SUBSTRING_WORDS = re.compile(r"like|~|regexp_like|strpos|position|starts_with|ends_with", re.IGNORECASE)


def reads_substrings(statement: Statement, ngram_tables: Callable[[], frozenset[str]]) -> Statement:
    """``statement`` as one of kind ``SUBSTRING`` where it is DataFusion's but may read a
    table of ``ngram_tables()`` (those with an n-gram index) by a substring predicate:
    a few substring searches for the others, as :func:`split` spends."""
    if statement.kind is not Kind.DATAFUSION or not _SUBSTRING_WORDS.search(statement.text):
        return statement
    tables = ngram_tables()
    if not tables or not any(w in tables or w.lower() in tables for w in _WORD.findall(statement.text)):
        return statement
    return replace(statement, kind=Kind.SUBSTRING)


def _explained(tokens: list[Token]) -> int:
    """Where the statement an EXPLAIN explains starts (past ANALYZE, VERBOSE, FORMAT x and
    a parenthesised option list)."""
    i = 1
    while i < len(tokens):
        if _words(tokens, i, "analyze") or _words(tokens, i, "verbose"):
            i += 1
        elif _words(tokens, i, "format"):
            i += 2
        elif tokens[i].value == "(" and tokens[i].kind == "punct" and i == 1:
            depth = 0
            while i < len(tokens):
                depth += {"(": 1, ")": -1}.get(tokens[i].value, 0) if tokens[i].kind == "punct" else 0
                i += 1
                if depth == 0:
                    break
        else:
            break
    return i


def _kind(tokens: list[Token], managed: Callable[[str], bool]) -> tuple[Kind, tuple[int, int] | None, str | None]:
    """The kind of one statement, and for DDL/DML on a managed table its name's span and name.
    DDL and DML that write a managed table are recognised first: their own queries may
    search too (sql/managed_dml.py runs those through the search path)."""
    if not tokens:
        return Kind.DATAFUSION, None, None
    first = tokens[0].value if tokens[0].kind == "word" else ""
    if first == "explain":
        inner = _explained(tokens)
        kind, target, name = _kind(tokens[inner:], managed)
        if kind in (Kind.INSERT, Kind.UPDATE, Kind.DELETE) and target is not None:
            return Kind.EXPLAIN_WRITE, (inner + target[0], inner + target[1]), name
        return (Kind.DATAFUSION if kind is Kind.DATAFUSION else Kind.FTS), None, None
    if first == "optimize" or (first == "create" and (_words(tokens, 1, "fulltext") or _words(tokens, 1, "ngram"))):
        return Kind.FTS, None, None
    if first == "set" and len(tokens) > 2:
        second = tokens[1]
        if (second.kind == "word" and second.value == "fts" and tokens[2].value == "."
                or second.kind == "quoted" and second.value.lower().startswith("fts.")):
            return Kind.FTS, None, None
    written = _written(tokens, first, managed)
    if written is not None:
        return written
    return (Kind.SEARCH if is_search(tokens, managed) else Kind.DATAFUSION), None, None


_WRITES = {"insert": (Kind.INSERT, ("into", "overwrite")), "update": (Kind.UPDATE, ()), "delete": (Kind.DELETE, ("from",))}


def _written(tokens: list[Token], first: str, managed: Callable[[str], bool]) -> tuple[Kind, tuple[int, int], str] | None:
    """CREATE TABLE in the session's schema, INSERT, UPDATE, DELETE or DROP TABLE of a
    managed table: its kind, its name's span and its name; None for any other statement."""
    if first == "create":
        i = 1
        while _words(tokens, i, "or") or _words(tokens, i, "replace") or _words(tokens, i, "temporary") \
                or _words(tokens, i, "temp") or _words(tokens, i, "unbounded"):
            i += 1
        if not _words(tokens, i, "table"):
            return None  # (CREATE EXTERNAL TABLE, VIEW, SCHEMA, ...: DataFusion's own)
        i += 3 if _words(tokens, i + 1, "if", "not", "exists") else 0
        parts, end = _name_at(tokens, i + 1)
        if not parts or _managed_name(parts, lambda _: True) is None:
            return None  # (another schema's: DataFusion's own table)
        return Kind.CREATE_TABLE, (i + 1, end), parts[-1]
    if first in _WRITES:
        kind, words = _WRITES[first]
        i = 1
        if words:
            if not any(_words(tokens, 1, w) for w in words):
                return None
            i = 3 if first == "insert" and _words(tokens, 2, "table") else 2
        parts, end = _name_at(tokens, i)
        name = _managed_name(parts, managed)
        return None if name is None else (kind, (i, end), name)
    if first == "drop" and _words(tokens, 1, "table"):
        i = 4 if _words(tokens, 2, "if", "exists") else 2
        while i < len(tokens):
            parts, end = _name_at(tokens, i)
            name = _managed_name(parts, managed)
            if name is not None:
                return Kind.DROP, (i, end), name
            if not (end < len(tokens) and tokens[end].value == ","):
                break
            i = end + 1
    return None


# The first word of a statement, past white space, comments and opening parentheses.
_FIRST_WORD = re.compile(r"(?:\s+|--[^\n]*|/\*.*?\*/|\()*([^\W\d]\w*)", re.DOTALL)
# Words that start the statements whose kind needs their tokens (the project's, DDL, DML).
_TOKENIZED = frozenset({"create", "insert", "update", "delete", "drop", "explain", "optimize", "set"})
# A call of MATCH, score(), score_explain() or a text function: a search.
_SEARCH_CALL = re.compile(r"\b(?:" + "|".join(sorted(SEARCH_CALLS)) + r")\s*\(", re.IGNORECASE)
_WORD = re.compile(r"\w+")


def split(text: str) -> list[Statement]:
    """The statements of ``text``, split at ``;`` (not yet classified: a statement's kind may
    depend on what the ones before it created). One statement is not tokenized unless its
    kind needs it (:func:`classify`)."""
    lowered = text.lower()
    if not any(word in lowered for word in _TRIGGERS):
        return [Statement(text, 0, Kind.DATAFUSION)]
    if ";" not in text:
        return [Statement(text, 0, Kind.SEARCH)]  # (a kind to find: see classify)
    tokens = tokenize(text)
    out: list[Statement] = []
    begin, lo = 0, 0
    for i in range(len(tokens) + 1):
        if i < len(tokens) and not (tokens[i].kind == "punct" and tokens[i].value == ";"):
            continue
        end = tokens[i].start if i < len(tokens) else len(text)
        if i > lo:
            own = tuple(Token(t.kind, t.value, t.start - begin, t.end - begin) for t in tokens[lo:i])
            out.append(Statement(text[begin:end], begin, Kind.SEARCH, own))
        begin, lo = end + 1, i + 1
    return out or [Statement(text, 0, Kind.DATAFUSION)]


def classify(statement: Statement, managed: Callable[[str], bool]) -> Statement:
    """``statement`` with its kind; ``managed(name)`` tells whether a name is a managed
    table's. A statement :func:`split` found no trigger word in stays DataFusion's. One that
    starts with a query's word (SELECT, WITH, VALUES, ...) is told from its text without
    tokens: a search when it calls MATCH, score() or a text function, or names ``_rowid``
    beside a managed table (a call written inside a string makes it a search needlessly:
    it is parsed, nothing is edited, and DataFusion runs it as written)."""
    if statement.kind is Kind.DATAFUSION:
        return statement
    tokens = statement.tokens
    if not tokens:
        first = _FIRST_WORD.match(statement.text)
        if first is None or first.group(1).lower() not in _TOKENIZED:
            text = statement.text
            words = _WORD.findall(text) if ROWID in text.lower() else ()
            searches = _SEARCH_CALL.search(text) is not None or (
                any(w.lower() == ROWID for w in words) and any(managed(w) or managed(w.lower()) for w in words))
            return Statement(text, statement.start, Kind.SEARCH if searches else Kind.DATAFUSION)
        tokens = tuple(tokenize(statement.text))
    kind, target, name = _kind(list(tokens), managed)
    return replace(statement, kind=kind, target=target, target_name=name, tokens=tokens)


# DataFusion plans a statement by recursion on the calling thread, and one nested a few
# thousand levels deep (3,500 UNION ALLs, 12,000 '+') overflows that thread's stack and kills
# the process; it answers an unknown function with the known names nearest to it, by an edit
# distance from each (a name of 1 MB took 3.6 s). Statements past these are refused before
# DataFusion sees them.
MAX_DEPTH = 1_000
MAX_FUNCTION_NAME = 128
_LONG_CALL = re.compile(r"\b[^\W\d]\w{%d,}\s*\(" % MAX_FUNCTION_NAME)  # (from word starts: linear)
# Operators that chain, by precedence class: a chain of one class is a tree as deep as it is
# long (a + b - c + ...), whatever its members.
_CHAINING = {**dict.fromkeys("+-", "+"), **dict.fromkeys("*/%", "*"), **dict.fromkeys("|&^", "|"),
             **dict.fromkeys("<>=!", "="), "and": "and", "or": "or", "union": "union", "intersect": "union",
             "except": "union"}


def _could_nest(text: str) -> bool:
    """Whether ``text`` has parentheses and chaining operators enough to nest past
    :data:`MAX_DEPTH` (counted by ``str.count``: a long text of anything else is not
    tokenized for its depth). The statement itself is one level, so ``MAX_DEPTH`` marks can
    already nest one level too deep."""
    lowered = text.lower()
    marks = sum(text.count(c) for c in "(+-*/%|&^<>=!")
    marks += sum(lowered.count(w) for w in ("and", "or", "union", "intersect", "except"))
    return marks >= MAX_DEPTH


def refusal(statement: Statement) -> tuple[str, int] | None:
    """Why ``statement`` must not reach DataFusion, and where (an offset in its text); None
    if it may. Cheap where it cannot apply: a text shorter than the depth needs is not
    tokenized, nor one without a long name before a '('."""
    text = statement.text
    long_call = _LONG_CALL.search(text) is not None
    if not long_call and (len(text) < MAX_DEPTH or not _could_nest(text)):
        return None
    tokens = statement.tokens or tuple(tokenize(text))
    if long_call:
        for i, token in enumerate(tokens[:-1]):
            if token.kind == "word" and len(token.value) > MAX_FUNCTION_NAME and tokens[i + 1].value == "(":
                return f"no function has a name longer than {MAX_FUNCTION_NAME} characters", token.start
    # Depth: parentheses, and per parenthesised group the longest chain of one precedence
    # class of operators.
    groups: list[dict[str, int]] = [{}]
    deepest = 0
    for token in tokens:
        value = token.value
        if token.kind == "punct" and value == "(":
            groups.append({})
        elif token.kind == "punct" and value == ")" and len(groups) > 1:
            groups.pop()
        elif (token.kind == "punct" or token.kind == "word") and value in _CHAINING:
            group, kind = groups[-1], _CHAINING[value]
            group[kind] = group.get(kind, 0) + 1
            deepest = max(deepest, len(groups) + group[kind])
        deepest = max(deepest, len(groups))
        if deepest > MAX_DEPTH:
            return (f"the statement nests more than {MAX_DEPTH:,} levels deep (each operator of a chain, "
                    "each UNION counts one)"), 0
    return None


def offset_of(sql: str, line: int, column: int) -> int:
    """0-based offset of 1-based (line, column) in ``sql``."""
    lines = sql.split("\n")
    line = max(1, min(line, len(lines)))
    return sum(len(text) + 1 for text in lines[: line - 1]) + max(0, column - 1)


# DataFusion's parser and tokenizer errors, and where they say they are (if they do).
_ENGINE_SYNTAX = re.compile(r'^SQL error: (?:ParserError|TokenizerError)\("(.*?)(?: at Line: (\d+), Column: (\d+))?"\)$', re.S)


def engine_syntax_error(sql: str, message: str, start: int = 0) -> SqlError | None:
    """DataFusion's refusal to parse a statement of ``sql`` beginning at ``start`` (its
    error ``message``) as a :class:`SqlError` pointing where DataFusion says, or at the end
    of the statement for an unexpected end; None for any other error."""
    found = _ENGINE_SYNTAX.match(message)
    if found is None:
        return None
    text, line, column = found.groups()
    statement = sql[start:]
    at = offset_of(statement, int(line), int(column)) if line else len(statement.rstrip())
    return SqlError(text, sql, start + at)
