"""Run sqllogictest records on plain DataFusion and through ``db.sql``, and compare
(issue 31; DESIGN §3.1 "SQL it does not own is DataFusion's").

A record of a ``.slt`` file (sqllogictest's format, as DataFusion's own
``datafusion/sqllogictest/test_files`` use it) is a ``statement`` or a ``query`` and its SQL.
What the file expects is not read: the reference is what ``ctx.sql`` answers on a plain
``SessionContext`` configured as DataFusion's own runner configures it. Each record runs
in order in each *setup*, and a setup's outcome of a record is compared with DataFusion's:

- ``identical``: the same column names, the same Arrow types and the same values (in the
  same order when the statement orders its rows and the record does not ask for sorting),
  or an error in both;
- ``error``: DataFusion answers and the setup raises;
- ``different``: the setup answers, and DataFusion answered otherwise or refused. This is
  the outcome that must never happen: a silent wrong answer;
- ``rounding``, ``layout``, ``plan`` and ``functions``: differences that are not wrong
  answers (see :func:`compare`).

Used by the suite on our own records (tests/sql/parity/*.slt) and by the script
tests/sql/datafusion_parity.py on DataFusion's files.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import datafusion
import pyarrow as pa

import datafusion_fts as fts
from datafusion_fts.sql.text.classify import tokenize

SETUPS = ("datafusion", "memory", "directory")
_HEADER = re.compile(r"^(statement|query)\b(.*)$")
_ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)
_WORD = re.compile(r"\w+")
_ANALYZE = re.compile(r"\s*explain\s*(?:\(\s*)?analyze\b", re.IGNORECASE)  # (EXPLAIN ANALYZE, EXPLAIN (ANALYZE, ...))
# The table a CREATE TABLE makes (a managed table in db.sql's setups).
_CREATED = re.compile(r"^\s*create\s+(?:or\s+replace\s+)?(?:unbounded\s+)?table\s+(?:if\s+not\s+exists\s+)?\"?(\w+)",
                      re.IGNORECASE)


@dataclass(frozen=True)
class Record:
    """One statement or query of a ``.slt`` file: the number of its SQL's first line, and the SQL."""

    line: int
    kind: str  # "statement" or "query"
    sql: str
    sort: bool  # the record asks for its rows to be compared sorted (rowsort, valuesort)
    part: str = ""  # the file it was included from (``include``), if not the file itself

    def where(self, name: str) -> str:
        """Where the record is written: ``name.slt:line``, or the included part's line."""
        return f"{name}.slt > {self.part}:{self.line}" if self.part else f"{name}.slt:{self.line}"


def read_slt(path: Path) -> list[Record]:
    """The records of the ``.slt`` file at ``path``, with those of the files its ``include``
    lines name (a glob relative to its directory, in name order, as sqllogictest reads them)."""
    def include(pattern: str) -> list[Record]:
        return [record if record.part else replace(record, part=part.name)
                for part in sorted(path.parent.glob(pattern)) for record in read_slt(part)]

    return parse_slt(path.read_text(), include)


def parse_slt(text: str, include: Callable[[str], list[Record]] | None = None) -> list[Record]:
    """The records of a ``.slt`` file's ``text``, in order (an ``include`` line's from
    ``include``). Records conditioned on another engine (``onlyif x``, ``skipif
    datafusion``) are left out; ``halt`` ends the file."""
    lines = text.split("\n")
    records: list[Record] = []
    i, skip = 0, False
    while i < len(lines):
        line = lines[i].rstrip("\r")
        stripped = line.strip()
        if stripped.startswith("onlyif "):
            skip = skip or stripped.split()[1] != "datafusion"
        elif stripped.startswith("skipif "):
            skip = skip or stripped.split()[1] == "datafusion"
        elif stripped == "halt":
            break
        elif stripped.startswith("include ") and include is not None:
            records.extend(include(stripped.split(maxsplit=1)[1]))
        header = _HEADER.match(line)
        if header is None:
            i += 1
            if not stripped:
                skip = False
            continue
        kind, rest = header.group(1), header.group(2).split()
        start = i + 1
        i = start
        body = []
        while i < len(lines) and lines[i].strip() and lines[i].rstrip("\r") != "----":
            body.append(lines[i].rstrip("\r"))
            i += 1
        while i < len(lines) and lines[i].strip():  # the expected answer: not read
            i += 1
        if body and not skip:
            sort = any(mode in rest for mode in ("rowsort", "valuesort"))
            records.append(Record(start + 1, kind, "\n".join(body), sort))
        skip = False
    return records


@dataclass
class Outcome:
    """What running a record gave: a table, or an error's message."""

    names: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    error: str | None = None
    searched: bool = False  # (run with a search added: with_search)

    def describe(self) -> str:
        if self.error is not None:
            return "error: " + self.error.split("\n")[0][:200]
        shown = ", ".join(f"{n}: {t}" for n, t in zip(self.names, self.types))
        return f"[{shown}] {len(self.rows)} rows: {list(self.rows[:3])}"


def _value(value: Any) -> str:
    """A value as compared: floats by their bits' meaning (NaN equal to NaN, -0.0 apart
    from 0.0), containers element by element."""
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return repr(value)


def _values(column: pa.ChunkedArray) -> list[str]:
    """A column's values as compared; types pyarrow cannot turn into Python values
    (some extension types, dates past Python's, odd decimals) by their printed form, row by row."""
    try:
        return [_value(v) for v in column.to_pylist()]
    except (KeyError, ValueError, ArithmeticError, NotImplementedError, pa.ArrowException):
        return [str(column.slice(i, 1)) for i in range(len(column))]


def outcome_of(run: Callable[[str], Any], sql: str) -> Outcome:
    """Run ``sql`` with ``run`` (``ctx.sql`` or ``db.sql``) and collect its answer, as
    DataFusion's runner does (DML runs when its result is collected)."""
    try:
        table = run(sql).to_arrow_table()
    except BaseException as err:  # (a panic inside DataFusion is a BaseException)
        if isinstance(err, (KeyboardInterrupt, SystemExit)):
            raise
        return Outcome(error=f"{type(err).__name__}: {err}")
    rows = tuple(zip(*(_values(column) for column in table.columns))) if table.num_columns else ()
    return Outcome(tuple(table.column_names), tuple(str(f.type) for f in table.schema), rows)


def _close(a: tuple[tuple[str, ...], ...], b: tuple[tuple[str, ...], ...]) -> bool:
    """Whether two row lists differ only in the last bits of floats (relative 1e-9)."""
    if len(a) != len(b):
        return False
    for row_a, row_b in zip(a, b):
        for x, y in zip(row_a, row_b):
            if x == y:
                continue
            try:
                fx, fy = float(x), float(y)
            except ValueError:
                return False
            if not math.isclose(fx, fy, rel_tol=1e-9):
                return False
    return True


def compare(record: Record, reference: Outcome, other: Outcome, managed: frozenset[str] = frozenset()) -> str:
    """``identical``, ``error``, ``different`` (see the module's docstring), or one of two
    differences that are not wrong answers, counted apart and listed in the report:
    ``rounding`` (floats apart in their last bits: an aggregate summed in another order,
    over another split of the same rows) and ``plan`` (EXPLAIN of a statement reading a
    managed table, one of ``managed``: its plan reads the table's parts, the ``__fts_``
    tables, in other partitions; and EXPLAIN ANALYZE, whose timings differ anyway). A plan
    that differs only in how an in-memory table's rows are split into partitions and batches
    (``partitions=1, partition_sizes=[2]``, or their bytes in a tree plan) is ``layout``.
    A listing of the session's functions (``SHOW FUNCTIONS``) that holds DataFusion's rows
    and, besides them, only rows of the project's own functions, which ``connect``
    registered in the session and a statement may call, is ``functions``."""
    if reference.error is not None or other.error is not None:
        if other.error is None:
            return "different"
        return "identical" if reference.error is not None else "error"
    if (reference.names, reference.types) != (other.names, other.types):
        return "different"
    ordered = not record.sort and _ORDER_BY.search(record.sql) is not None
    if (reference.rows if ordered else Counter(reference.rows)) == (other.rows if ordered else Counter(other.rows)):
        return "identical"
    if "function_name" in reference.names:
        at = reference.names.index("function_name")
        extra, missing = Counter(other.rows) - Counter(reference.rows), Counter(reference.rows) - Counter(other.rows)
        if not missing and all(row[at].strip("'") in project_functions() for row in extra):
            return "functions"
    explain = record.sql.lstrip().lower().startswith("explain")
    if explain and _without_layout(reference.rows) == _without_layout(other.rows):
        return "layout"
    if explain and (
            any("__fts_" in v for row in other.rows for v in row)
            or set(_WORD.findall(record.sql.lower())) & managed
            or _ANALYZE.match(record.sql)):
        return "plan"
    if _close(reference.rows if ordered else tuple(sorted(reference.rows)),
              other.rows if ordered else tuple(sorted(other.rows))):
        return "rounding"
    return "different"


_LAYOUT = re.compile(r"partitions=\d+, partition_sizes=\[[\d, ]*\]|MemoryTable \(partitions=\d+\)"
                     r"|│ *bytes: \d+ *│")  # (EXPLAIN FORMAT TREE: an in-memory table's batches' size)


def _without_layout(rows: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
    """An EXPLAIN's rows with the partitions and batch counts of in-memory tables blanked."""
    return tuple(tuple(_LAYOUT.sub("(layout)", v) for v in row) for row in rows)


@functools.cache
def project_functions() -> frozenset[str]:
    """The names of the functions ``fts.install`` registers in a session."""
    plain, ours = session(), session()
    fts.install(ours)

    def names(ctx: datafusion.SessionContext) -> set[str]:
        return {row["function_name"] for row in ctx.sql("SHOW FUNCTIONS").to_pylist()}

    return frozenset(names(ours) - names(plain))


def session() -> datafusion.SessionContext:
    """A session configured as DataFusion's sqllogictest runner configures its own: four
    target partitions, information_schema on."""
    config = datafusion.SessionConfig().with_target_partitions(4).with_information_schema(True)
    return datafusion.SessionContext(config)


def runner(setup: str, directory: Path | None = None, searched: bool = False,
           prepare: Callable[[datafusion.SessionContext], datafusion.SessionContext] | None = None,
           ) -> tuple[Callable[[str], Any], Any]:
    """The function that runs SQL in ``setup`` and what keeps it alive (the database). The
    reference is DataFusion's own session; where searches are added to records it has the
    project's functions installed (``fts.install``: a search is ``fts_match`` there). Every
    setup's session is first given to ``prepare`` (tables a file expects: slt_setups.py)."""
    ctx = session()
    if prepare is not None:
        ctx = prepare(ctx)
    if setup == "datafusion":
        if searched:
            fts.install(ctx)
        return ctx.sql, ctx
    db = fts.connect(str(directory) if setup == "directory" else None, ctx=ctx)
    return db.sql, db


# Words after which a query's FROM clause has ended, at its own depth.
_AFTER_FROM = frozenset({"where", "group", "order", "having", "window", "qualify"})
_AFTER_WHERE = _AFTER_FROM - {"where"}
_TEXT_TYPES = ("string", "large_string", "string_view")


def with_search(sql: str, run: Callable[[str], Any], setup: str) -> str | None:
    """``sql`` with a full-text condition on a text column of the one table it reads added
    to its WHERE (issue 31: "the same records with a full-text feature added where it
    fits"): ``MATCH(c, 'w')`` through ``db.sql``, ``fts_match(c, 'w')`` on DataFusion, the
    same rows (a text function answers as a search of that one text would), ``w`` the first
    word of the column's least value. None where it does not fit: a statement that is not
    one SELECT from one named table, one with LIMIT (which rows are kept is DataFusion's
    choice), a table without a text column or a word."""
    tokens = tokenize(sql)
    words = [t.value for t in tokens if t.kind == "word"]
    if not tokens or tokens[0].value != "select" or ";" in (t.value for t in tokens if t.kind == "punct") \
            or {"limit", "fetch", "union", "intersect", "except", "join", "offset"} & set(words):
        return None
    depth, at_from, name, end, where = 0, None, None, len(sql), None
    for i, token in enumerate(tokens):
        if token.kind == "punct" and token.value in "()":
            depth += 1 if token.value == "(" else -1
            continue
        if depth != 0 or token.kind != "word":
            if depth == 0 and at_from is not None and token.value == "," and where is None:
                return None  # (several tables)
            continue
        if token.value == "from" and at_from is None:
            at_from = i
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if nxt is None or nxt.kind not in ("word", "quoted") or (i + 2 < len(tokens) and tokens[i + 2].value == "."):
                return None
            name = nxt.value
        elif at_from is not None and token.value == "where" and where is None:
            where = i
        elif at_from is not None and token.value in _AFTER_WHERE:
            end = token.start
            break
    if name is None:
        return None
    try:
        schema = run(f"SELECT * FROM {quote(name)} LIMIT 0").schema()
        column = next((f.name for f in schema if str(f.type) in _TEXT_TYPES), None)
        if column is None:
            return None
        least = run(f"SELECT min({quote(column)}) AS v FROM {quote(name)}")  # (the same in every setup)
        values = [v for v in least.to_pydict()["v"] if v is not None]
    except Exception:  # (the record itself will say what is wrong)
        return None
    found = re.search(r"[^\W_]+", values[0]) if values else None
    if found is None:
        return None
    term = found.group().lower()
    call = f"{'fts_match' if setup == 'datafusion' else 'MATCH'}({quote(column)}, '{term}')"
    body = sql[:end].rstrip()
    if where is not None:
        start = tokens[where].end
        return f"{body[:start]} {call} AND ({body[start:]}) {sql[end:]}".rstrip()
    return f"{body} WHERE {call} {sql[end:]}".rstrip()


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def run_records(records: list[Record], setup: str, directory: Path | None = None, searched: bool = False,
                prepare: Callable[[datafusion.SessionContext], datafusion.SessionContext] | None = None,
                ) -> list[Outcome]:
    """Every record's outcome in ``setup``, in order, in one fresh session (given to
    ``prepare`` first); with ``searched``, each query record that :func:`with_search` fits
    runs with its search (its outcome marked ``searched``)."""
    run, keep = runner(setup, directory, searched, prepare)
    try:
        outcomes = []
        for record in records:
            sql = with_search(record.sql, run, setup) if searched and record.kind == "query" else None
            outcome = outcome_of(run, sql if sql is not None else record.sql)
            outcome.searched = sql is not None
            outcomes.append(outcome)
        return outcomes
    finally:
        del keep


# The differences that are not wrong answers and may be DataFusion's own run-to-run variation.
_ARBITRARY = frozenset({"rounding", "layout", "plan"})


@dataclass
class Tally:
    """Counts of one setup over some records, and the records that were not identical."""

    counts: Counter = field(default_factory=Counter)
    answered: Counter = field(default_factory=Counter)  # (records DataFusion answers)
    cases: list[tuple[str, Record, Outcome, Outcome, str]] = field(default_factory=list)

    def add(self, name: str, records: list[Record], reference: list[Outcome], other: list[Outcome],
            again: Sequence[list[Outcome]] = ()) -> None:
        """Count ``other``'s outcomes against ``reference``'s. With ``again`` (DataFusion's
        further runs of the same records), where DataFusion's own runs answer otherwise, a
        difference that is not a wrong answer (rounding, layout, plan), or an answer one of
        DataFusion's runs gave, is ``varies``: DataFusion's answer is not one answer there
        (EXPLAIN ANALYZE's timings, a parallel float sum, a hash set's order per process)."""
        created: set[str] = set()
        for i, (record, ref, out) in enumerate(zip(records, reference, other)):
            made = _CREATED.match(record.sql)
            if made is not None:
                created.add(made.group(1).lower())
            verdict = compare(record, ref, out, frozenset(created))
            runs = [ref, *(run[i] for run in again)]
            if verdict in _ARBITRARY | {"different"} and any(compare(record, ref, r) != "identical" for r in runs) and (
                    verdict != "different" or any(compare(record, r, out) == "identical" for r in runs)):
                verdict = "varies"
            self.counts[verdict] += 1
            if ref.error is None:
                self.answered[verdict] += 1
            if verdict != "identical":
                self.cases.append((name, record, ref, out, verdict))
