"""Random SQL statements and query strings against a small database, each call judged: ok,
an FtsError (by class), any other exception (a failure; so is an EngineError that only
carries a Python exception raised in a function of ours), or longer than ``SLOW`` seconds
(a failure). Issue 19 asks for only FtsErrors and no call over 2 s in 10,000 of each.

Pure noise rarely gets past a tokenizer, so a case is one of three: built from the grammar
(SELECTs with MATCH, score(), text functions, fts_search, paging, SET fts.*, writes to a
scratch table; query strings with fields, phrases, slop, prefixes, fuzziness, boosts,
groups and operators), the same with one mutation (a token dropped, doubled, swapped or
replaced, a hostile value spliced in: huge integers, 1e999, lone surrogates, NUL, deep
nesting, very long text), or raw random text. Each case has a random generator of its own
(seeded by the run's seed, its kind and its number), so any case can be run again alone.

A query string is run twice: by ``Table.search`` and inside a SQL ``MATCH``.

Run as a script for the long run (docs/guide/guarantees.md quotes its counts):
``python tests/fuzz_inputs.py [N] [SEED]`` runs N statements and N query strings. Cases
run in a child process, so a crash (a segmentation fault, an abort) or a hang is reported
with its case and the run goes on after it.
"""

from __future__ import annotations

import json
import queue
import random
import re
import subprocess
import sys
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

import datafusion_fts as fts
from datafusion_fts.errors import EngineError, FtsError, FtsNotice
from datafusion_fts.settings import REGISTRY

SLOW = 2.0  # seconds: a call taking longer is a failure
KINDS = ("sql", "query")

VOCAB = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "the", "a", "x1", "42",
         "café", "naïve", "straße", "日本", "δέλτα", "ﬁne", "İstanbul", "e\u0301"]
# Integers and things that are almost integers, for LIMIT, OFFSET, k, slop and settings.
NUMBERS = ["0", "1", "2", "3", "10", "100", "-1", "-0", "1.5", "0.0", "1e3", "1e999", "-1e999",
           "1e-999", "2147483647", "2147483648", "4294967296", "9223372036854775807",
           "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
           "18446744073709551616", "1" + "0" * 40]
SQL_VALUES = NUMBERS + ["NULL", "'x'", "'10'", "''", "true", "(1+1)", "1/0", "CAST(1 AS BIGINT)",
                        "'auto'", "'indexed'", "'hybrid'", "'flat_scan'", "'local'", "'true'", "off",
                        "on", "'on'", "'\udc80'", "'a\x00b'"]
QUERY_NUMBERS = NUMBERS + ["", ".5", "abc", "١", "²", "0x10", "nan", "inf"]
# fts.executor = 'ray' would start a Ray cluster: its values here never say 'ray'.
SETTINGS = sorted(REGISTRY) + ["fts.nope", "FTS.FORCE_PLAN", "fts."]
SQL_TOKENS = ["SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "MATCH", "score()", "(", ")", ",", ";",
              "'", '"', "*", "=", "<", ">=", "LIMIT", "OFFSET", "ORDER BY", "GROUP BY", "DESC", "JOIN",
              "ON", "AS", "NULL", "IN", "LIKE", "IS", "EXPLAIN", "ANALYZE", "SET", "UNION ALL", "--",
              "/*", "::", "||", "docs", "body", "title", "_rowid", "fts_search", "\\"]
QUERY_TOKENS = ["AND", "OR", "NOT", "&&", "||", "+", "-", "!", "(", ")", '"', ":", "*", "~", "^",
                "\\", "body:", "title:", "nope:", " ", "  "]
ODD_TEXT = ["\ud800", "\udfff", "\x00", "\u200b", "\u202e", "\ufeff", "\U0001F600", "Ａ", "ß", "\r\n",
            "\t", "\x1b", "\x7f", "\u0301"]
RAW_ALPHABET = "abcxyz019 \t\n()[],;'\"*+-/=<>.:!^~&|\\_%"


def sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# -- hostile values ----------------------------------------------------------------------------

def hostile(rng: random.Random) -> str:
    """A value meant to break something: odd characters, deep nesting, many terms, long text."""
    kind = rng.randrange(7)
    if kind == 0:
        return rng.choice(ODD_TEXT)
    if kind == 1:
        n = rng.choice((99, 100, 101, 1_000, 5_000, 20_000))
        return "(" * n + rng.choice(VOCAB) + ")" * n
    if kind == 2:
        n = rng.choice((100, 1_000, 10_000, 10_001))
        return rng.choice((" ", " OR ", " AND ", " + ")).join(rng.choice(VOCAB) for _ in range(n))
    if kind == 3:
        n = rng.choice((1_000, 100_000, 1_000_000))
        word = rng.choice(VOCAB)
        return (word * (n // len(word) + 1))[:n]
    if kind == 4:
        return rng.choice(NUMBERS)
    if kind == 5:  # (sqlglot parses these chains in a loop: a deep tree without recursion)
        n = rng.choice((999, 3_000, 12_000))
        return rng.choice((" + 1", " OR x = 1", " || 'a'", " UNION ALL SELECT 1")) * n
    return "".join(rng.choice(ODD_TEXT + VOCAB) for _ in range(rng.randint(1, 20)))


def raw_text(rng: random.Random, tokens: list[str]) -> str:
    """Random characters, or random tokens of the language, or both."""
    n = rng.randint(0, 120)
    pieces = [rng.choice(RAW_ALPHABET) if rng.random() < 0.6 else rng.choice(tokens + ODD_TEXT + VOCAB)
              for _ in range(n)]
    return "".join(pieces) if rng.random() < 0.5 else " ".join(pieces)


_PIECE = re.compile(r"\s+|\w+|'(?:[^']|'')*'|\"[^\"]*\"|.", re.S)


def mutate(rng: random.Random, text: str, tokens: list[str]) -> str:
    """``text`` with one change: a piece dropped, doubled, swapped with the next, replaced,
    inserted, a hostile value spliced in, or the text cut."""
    pieces = _PIECE.findall(text) or [""]
    i = rng.randrange(len(pieces))
    kind = rng.randrange(7)
    if kind == 0:
        del pieces[i]
    elif kind == 1:
        pieces.insert(i, pieces[i])
    elif kind == 2 and i + 1 < len(pieces):
        pieces[i], pieces[i + 1] = pieces[i + 1], pieces[i]
    elif kind == 3:
        pieces[i] = rng.choice(tokens)
    elif kind == 4:
        pieces.insert(i, rng.choice(tokens) + " ")
    elif kind == 5:
        pieces.insert(i, hostile(rng))
    else:
        return text[: rng.randrange(len(text) + 1)]
    return "".join(pieces)


# -- query strings -----------------------------------------------------------------------------

def _suffix(rng: random.Random, phrase: bool) -> str:
    r = rng.random()
    if r < 0.6:
        return ""
    if r < 0.7:
        return "*"
    if r < 0.85:
        return "~" + ("" if not phrase and rng.random() < 0.3 else rng.choice(QUERY_NUMBERS))
    return "^" + rng.choice(QUERY_NUMBERS)


def _word(rng: random.Random) -> str:
    word = rng.choice(VOCAB)
    if rng.random() < 0.05:
        word = rng.choice(("a\\:b", "a\\*", "\\(x\\)", "x\\", "\\\\", "and", "or", "not", "AND"))
    return word


def grammar_query(rng: random.Random, depth: int = 0) -> str:
    """A query string from the grammar (query/parser.py's), mostly valid."""
    r = rng.random()
    if depth >= 4 or r < 0.35:
        return _word(rng) + _suffix(rng, False)
    if r < 0.5:
        words = " ".join(_word(rng) for _ in range(rng.randint(0, 4)))
        return f'"{words}"' + _suffix(rng, True)
    if r < 0.6:
        field = rng.choice(("body", "title", "body", "nope", "id", "_rowid", "a.b", "1x"))
        return f"{field}:" + grammar_query(rng, depth + 1)
    if r < 0.7:
        return "(" + grammar_query(rng, depth + 1) + ")" + ("" if rng.random() < 0.9 else _suffix(rng, False))
    if r < 0.8:
        return rng.choice(("+", "-", "!", "NOT ")) + grammar_query(rng, depth + 1)
    op = rng.choice((" ", " ", " AND ", " OR ", " && ", " || ", " NOT ", "\n"))
    return grammar_query(rng, depth + 1) + op + grammar_query(rng, depth + 1)


def drawn(rng: random.Random, grammar: Callable[[random.Random], str], tokens: list[str], words: list[str],
          from_grammar: float) -> str:
    """A text from ``grammar`` (a share ``from_grammar``), mutated with ``tokens`` and
    ``words`` (up to 90 %), or raw ``tokens`` (10 %)."""
    r = rng.random()
    if r < from_grammar:
        return grammar(rng)
    if r < 0.9:
        return mutate(rng, grammar(rng), tokens + words)
    return raw_text(rng, tokens)


def query_case(rng: random.Random) -> str:
    """A query string: from the grammar (60 %), mutated (30 %) or raw (10 %)."""
    return drawn(rng, grammar_query, QUERY_TOKENS, VOCAB, 0.6)


# -- SQL ---------------------------------------------------------------------------------------

def _number(rng: random.Random) -> str:
    return rng.choice(NUMBERS) if rng.random() < 0.5 else rng.choice(("1", "3", "5", "10", "20"))


def _query_literal(rng: random.Random) -> str:
    return sql_string(grammar_query(rng) if rng.random() < 0.9 else query_case(rng))


def _text_column(rng: random.Random, table: str) -> str:
    return {"docs": rng.choice(("body", "body", "title")), "notes": "body", "plain": "txt"}[table]


def _select_item(rng: random.Random, table: str, searching: bool) -> str:
    col = _text_column(rng, table)
    q = _query_literal(rng)
    options = [f"{col}", "_rowid" if table != "plain" else "k", "count(*)", "*", f"length({col})",
               f"highlight({col}, {q})", f"snippet({col}, {q}, {_number(rng)})",
               f"snippet({col}, {q}, {_number(rng)}, '[', ']', '..')", f"fts_match({col}, {q})",
               f"fts_tokenize({col})", f"fts_tokenize({col}, {sql_string(rng.choice(('simple', 'english', 'folding', 'nope')))})",
               f"highlight({col}, {q}, '<', '>')", f"bm25({col})", _number(rng)]
    if searching:
        options += ["score()", "score() AS s", "score_explain()", "score() * 2 AS s2"]
    return rng.choice(options)


def _predicate(rng: random.Random, table: str, depth: int = 0) -> str:
    r = rng.random()
    col = _text_column(rng, table)
    if depth < 2 and r < 0.25:
        op = rng.choice((" AND ", " OR ", " AND NOT "))
        return f"({_predicate(rng, table, depth + 1)}{op}{_predicate(rng, table, depth + 1)})"
    if r < 0.6:
        cols = col if table != "docs" or rng.random() < 0.8 else "(title, body)"
        return f"MATCH({cols}, {_query_literal(rng)})"
    number = "year" if table == "docs" else ("id" if table == "notes" else "k")
    return rng.choice((
        f"{number} > {_number(rng)}", f"{number} = {_number(rng)}", f"{col} LIKE '%a%'",
        f"fts_match({col}, {_query_literal(rng)})", f"{col} IS NULL", "_rowid IN (1, 2, 3)",
        f"NOT MATCH({col}, {_query_literal(rng)})",
    ))


def _select(rng: random.Random) -> str:
    table = rng.choice(("docs", "docs", "docs", "notes", "plain"))
    where = _predicate(rng, table)
    searching = "MATCH(" in where
    items = ", ".join(_select_item(rng, table, searching) for _ in range(rng.randint(1, 3)))
    sql = f"SELECT {items} FROM {table} WHERE {where}"
    if rng.random() < 0.6:
        sql += " ORDER BY " + rng.choice(("score() DESC", "score()", "_rowid", "1", "s DESC"))
    if rng.random() < 0.7:
        sql += f" LIMIT {_number(rng)}"
    if rng.random() < 0.3:
        sql += f" OFFSET {_number(rng)}"
    return sql


def _fts_search(rng: random.Random) -> str:
    args = [sql_string(rng.choice(("docs", "notes", "plain", "nope", "__fts_x"))),
            sql_string(rng.choice(("body", "title", "txt", "id"))), _query_literal(rng), _number(rng)]
    if rng.random() < 0.2:
        args = args[: rng.randrange(len(args))] or args + [_number(rng)]
    return f"SELECT * FROM fts_search({', '.join(args)}) AS s" + (" LIMIT 3" if rng.random() < 0.3 else "")


def _set(rng: random.Random) -> str:
    return f"SET {rng.choice(SETTINGS)} = {rng.choice(SQL_VALUES)}"


def _write(rng: random.Random) -> str:
    """A statement on the table ``scratch`` (its rows do not matter to other cases)."""
    value = rng.choice((sql_string(grammar_query(rng)), "'a\x00b'", "'\udc80'", "NULL", _number(rng)))
    options = ", ".join(f"{rng.choice(('k1', 'b', 'positions', 'analyzer', 'stemmer', 'nope'))} = "
                        f"{rng.choice(SQL_VALUES)}" for _ in range(rng.randint(0, 2)))
    return rng.choice((
        f"INSERT INTO scratch VALUES ({_number(rng)}, {value})",
        f"INSERT INTO scratch (body) VALUES ({value})",
        "INSERT INTO scratch SELECT id, body FROM notes WHERE id < 3",
        f"DELETE FROM scratch WHERE {_predicate(rng, 'notes')}",
        "CREATE FULLTEXT INDEX ON scratch (body)" + (f" WITH ({options})" if options else ""),
        "OPTIMIZE scratch", "UPDATE scratch SET body = 'x'", "TRUNCATE scratch", "DROP TABLE nope",
        f"CREATE TABLE IF NOT EXISTS scratch2 (id BIGINT, body {rng.choice(('VARCHAR', 'TEXT', 'INT', 'NOPE'))})",
        "DROP TABLE scratch2",
    ))


def grammar_sql(rng: random.Random) -> str:
    """A statement (or two, ``;``-separated) from the grammar, mostly valid."""
    r = rng.random()
    if r < 0.55:
        sql = _select(rng)
    elif r < 0.65:
        sql = _fts_search(rng)
    elif r < 0.72:
        sql = "EXPLAIN " + ("ANALYZE " if rng.random() < 0.3 else "") + _select(rng)
    elif r < 0.85:
        sql = _set(rng) + ("; " + _select(rng) if rng.random() < 0.7 else "")
    elif r < 0.9:
        sql = f"SELECT count(*) FROM docs WHERE {_predicate(rng, 'docs').replace('MATCH', 'fts_match')}"
    else:
        sql = _write(rng)
    return sql


def sql_case(rng: random.Random) -> str:
    """A SQL text: from the grammar (55 %), mutated (35 %) or raw (10 %)."""
    return drawn(rng, grammar_sql, SQL_TOKENS, SQL_VALUES, 0.55)


# -- the database and the judge --------------------------------------------------------------

def build(path: Path) -> fts.Database:
    """``docs`` (300 rows, ``body`` indexed with positions and ``title``, 20 fresh rows on
    top), ``notes`` (no index), ``scratch`` (for writes) and ``plain``, a DataFusion table
    that is not managed (searched by flat scans)."""
    rng = random.Random(11)

    def text(lo: int, hi: int) -> str:
        return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(lo, hi)))

    db = fts.connect(path)
    docs = db.create_table("docs", pa.table({
        "id": pa.array(range(300), pa.int64()),
        "title": [text(1, 3) if i % 7 else None for i in range(300)],
        "body": [text(1, 12) for _ in range(300)],
        "year": pa.array([1990 + i % 35 for i in range(300)], pa.int32()),
    }))
    docs.create_index("body", positions=True)
    docs.create_index("title")
    docs.insert(pa.table({
        "id": pa.array(range(300, 320), pa.int64()), "title": [text(1, 3) for _ in range(20)],
        "body": [text(1, 12) for _ in range(20)], "year": pa.array([2024] * 20, pa.int32()),
    }))
    db.create_table("notes", pa.table({"id": pa.array(range(50), pa.int64()), "body": [text(0, 8) for _ in range(50)]}))
    scratch = db.create_table("scratch", pa.table({"id": pa.array(range(5), pa.int64()), "body": [text(1, 5) for _ in range(5)]}))
    scratch.create_index("body")
    db.ctx.register_record_batches("plain", [[pa.record_batch({"k": list(range(40)), "txt": [text(1, 6) for _ in range(40)]})]])
    return db


def warm_up(db: fts.Database) -> None:
    """Compile (or load) every search kernel the cases reach, so a first use is not timed."""
    docs = db.table("docs")
    queries = ["alpha", "alpha beta", "+alpha +beta", "alpha -beta", "+alpha -beta gamma", '"alpha beta"',
               '"alpha beta"~2', '"alpha be"*', "alph*", "alpha~1", "alpha^2 beta", "title:alpha body:beta",
               "(alpha OR beta) AND -gamma", "alpha AND (beta OR gamma^3)", " OR ".join(VOCAB * 4)]
    for plan in ("auto", "indexed", "hybrid", "flat_scan"):
        db.settings.set("fts.force_plan", plan)
        for q in queries:
            for call in (lambda: docs.search(q, limit=10), lambda: docs.search(q, limit=None, offset=3),
                         lambda: db.sql(f"SELECT _rowid, score() FROM docs WHERE MATCH(body, {sql_string(q)}) "
                                        "AND year > 2000 ORDER BY score() DESC LIMIT 5").to_arrow_table()):
                try:
                    call()
                except FtsError:
                    pass
    reset(db)
    for sql in ("SELECT snippet(body, 'alpha', 3) AS s, highlight(title, 'beta') AS h, fts_match(body, 'a') AS m, "
                "fts_tokenize(body) AS t, score_explain() AS e FROM docs WHERE MATCH(body, 'alpha') LIMIT 3",
                "SELECT * FROM fts_search('docs', 'body', 'alpha', 3)", "SELECT * FROM fts_search('plain', 'txt', 'alpha', 3)",
                "SELECT _rowid FROM notes WHERE MATCH(body, 'alpha beta')", "EXPLAIN ANALYZE SELECT _rowid FROM docs WHERE MATCH(body, 'a')"):
        db.sql(sql).to_arrow_table()


def reset(db: fts.Database) -> None:
    """Settings back to their defaults (a case's SET holds for that case only)."""
    for name, setting in REGISTRY.items():
        db.settings.set(name, setting.default)


_PYERR = re.compile(r"PyErr \{ type: <class '([\w.]+)'>")


def judge(call: Callable[[], Any]) -> tuple[str, float, str]:
    """(outcome, seconds, detail): outcome ``ok``, an FtsError's class name, or ``!`` and the
    class of anything else raised (then detail is its message)."""
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.simplefilter("ignore", FtsNotice)  # (advice, not an error)
            call()
        outcome, detail = "ok", ""
    except EngineError as err:
        # A Python exception that is no FtsError, raised in a function DataFusion called:
        # DataFusion passes it on as its own error (PyErr), a failure of ours.
        python = _PYERR.search(str(err))
        outcome, detail = ("!EngineError(" + python.group(1) + ")", str(err)[:300]) if python else ("EngineError", "")
    except FtsError as err:
        outcome, detail = type(err).__name__, ""
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as err:  # (a Rust panic is a pyo3 PanicException, a BaseException)
        outcome, detail = "!" + type(err).__name__, str(err)[:300]
    return outcome, time.perf_counter() - start, detail


def case_input(kind: str, seed: int, i: int) -> tuple[str, random.Random]:
    """The text of case ``i`` of ``kind``, and its generator for the rest of the case."""
    rng = random.Random(f"{seed}:{kind}:{i}")
    return (sql_case(rng) if kind == "sql" else query_case(rng)), rng


def clipped(text: str) -> str:
    return text[:400] + (f"... ({len(text):,} chars)" if len(text) > 400 else "")


def case_calls(db: fts.Database, kind: str, seed: int, i: int) -> list[tuple[str, str, Callable[[], Any]]]:
    """Case ``i`` of ``kind``: (call name, input, call) for each call it makes."""
    text, rng = case_input(kind, seed, i)
    if kind == "sql":
        return [("sql", text, lambda: db.sql(text).to_arrow_table())]
    q = text
    docs = db.table("docs")
    limit = rng.choice((10, 10, 1, 100, None))
    offset = rng.choice((0, 0, 5))
    columns = rng.choice(("body", "(title, body)"))
    sql = (f"SELECT _rowid, score() AS s FROM docs WHERE MATCH({columns}, {sql_string(q)}) "
           "ORDER BY s DESC LIMIT 10")
    return [("search", q, lambda: docs.search(q, limit=limit, offset=offset)),
            ("match", q, lambda: db.sql(sql).to_arrow_table())]


def run_case(db: fts.Database, kind: str, seed: int, i: int) -> Iterator[dict[str, Any]]:
    """Each call of case ``i`` judged: {call, outcome, seconds}, with the input and detail
    for a failure (any other exception, or slower than SLOW)."""
    try:
        for call, text, fn in case_calls(db, kind, seed, i):
            outcome, seconds, detail = judge(fn)
            result: dict[str, Any] = {"i": i, "call": call, "outcome": outcome, "seconds": seconds}
            if outcome.startswith("!") or seconds > SLOW:
                result.update(input=clipped(text), detail=detail)
            yield result
    finally:
        reset(db)


# -- the script: cases in a child process -----------------------------------------------------

HANG = 120.0  # seconds without a word from the child: it is killed and the case reported


def child(kind: str, start: int, n: int, seed: int, path: str) -> None:
    """Run cases ``start``..``n-1`` of ``kind``, one JSON line per call, a ``begin`` line
    before each case (what the parent reports if this process dies in it)."""
    db = build(Path(path))
    warm_up(db)
    for i in range(start, n):
        print(json.dumps({"begin": i}), flush=True)
        for result in run_case(db, kind, seed, i):
            print(json.dumps(result), flush=True)


def _lines(stream: Any, into: queue.Queue) -> None:
    """Hand the child's lines to the parent, then None at its end."""
    for line in stream:
        into.put(line)
    into.put(None)


def run(kind: str, n: int, seed: int, root: Path) -> tuple[Counter, list[dict[str, Any]], tuple[float, str, int]]:
    """Outcomes of ``n`` cases of ``kind`` (counted per call and outcome), the failures and
    the slowest call (seconds, call, case)."""
    counts: Counter = Counter()
    failures: list[dict[str, Any]] = []
    slowest = (0.0, "", -1)
    start = 0
    while start < n:
        proc = subprocess.Popen([sys.executable, __file__, "--child", kind, str(start), str(n), str(seed),
                                 str(root / f"{kind}-{start}")], stdout=subprocess.PIPE, text=True)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_lines, args=(proc.stdout, lines), daemon=True).start()
        current, hung = None, False
        while True:
            try:
                line = lines.get(timeout=HANG)
            except queue.Empty:
                proc.kill()
                hung = True
                break
            if line is None:
                break
            item = json.loads(line)
            if "begin" in item:
                current = item["begin"]
                continue
            counts[(item["call"], item["outcome"])] += 1
            slowest = max(slowest, (item["seconds"], item["call"], item["i"]))
            if item["outcome"].startswith("!") or item["seconds"] > SLOW:
                failures.append(item)
        code = proc.wait()
        if code == 0:
            break
        if current is None:
            raise RuntimeError(f"the {kind} child failed before its first case (exit {code})")
        outcome = f"!hang (silent for {HANG:.0f} s)" if hung else f"!crash (exit {code})"
        counts[(kind, outcome.split()[0])] += 1
        failures.append({"i": current, "call": kind, "outcome": outcome, "input": clipped(case_input(kind, seed, current)[0])})
        start = current + 1
    return counts, failures, slowest


def report(failures: list[dict[str, Any]]) -> list[str]:
    """Exceptions grouped by call, class and message (with the count and the first case);
    slow calls one by one."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    lines = []
    for f in failures:
        if f["outcome"].startswith("!"):
            groups.setdefault((f["call"], f["outcome"], f.get("detail", "")[:100]), []).append(f)
        else:
            lines.append(f"{f['call']} case {f['i']}: {f['seconds']:.2f} s, {f['outcome']}: {f['input']!a}")
    for (call, outcome, detail), found in groups.items():
        first = found[0]
        lines.append(f"{call} {outcome} x{len(found)} (first: case {first['i']}) {detail!a}: {first.get('input', '')!a}")
    return lines


def main(argv: list[str]) -> int:
    import tempfile

    if argv[:1] == ["--child"]:
        child(argv[1], int(argv[2]), int(argv[3]), int(argv[4]), argv[5])
        return 0
    n = int(argv[0]) if argv else 1000
    seed = int(argv[1]) if len(argv) > 1 else 19
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for kind in KINDS:
            begin = time.perf_counter()
            counts, failures, slowest = run(kind, n, seed, Path(tmp))
            print(f"{kind}: {n:,} cases, {sum(counts.values()):,} calls, {time.perf_counter() - begin:.0f} s "
                  f"(slowest call {slowest[0]:.2f} s: {slowest[1]} case {slowest[2]})")
            for call in sorted({c for c, _ in counts}):
                outcomes = sorted(((o, k) for (c, o), k in counts.items() if c == call), key=lambda x: -x[1])
                print(f"  {call:7} " + "  ".join(f"{o} {k:,}" for o, k in outcomes))
            slow = [f for f in failures if not f["outcome"].startswith("!")]
            print(f"  failures: {len(failures) - len(slow)} exceptions or crashes, {len(slow)} over {SLOW:g} s")
            for line in report(failures):
                print("   ", line)
            failed = failed or bool(failures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
