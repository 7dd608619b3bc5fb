"""Generated statements that put searches inside the rest of SQL, and their reference
(issue 41; DESIGN §3.2): every statement is built once as a small tree of its own, then
written twice, as the user writes it for ``db.sql`` (MATCH, score()) and as plain SQL for
a plain DataFusion session, where each searched source is a table holding its rows with
every MATCH's truth and BM25 score beside them, computed by the brute-force reference
(tests/reference.py) over the rows the source yields. So the reference knows nothing of
the engine's lowering: MATCH is a boolean column, score() the rule of DESIGN §3.2 written
out over those columns, and DataFusion answers the rest.

The shapes: joins of every kind with a MATCH on either side or in ON, MATCH at any depth
of AND / OR / NOT beside other predicates, in the select list and in CASE, two searched
tables, GROUP BY / HAVING, windows over score(), CTEs, derived tables, correlated and
uncorrelated subqueries, set operations, DISTINCT, and paging in every ORDER BY direction.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import datafusion
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

sys.path[:0] = [str(Path(__file__).resolve().parents[2])]  # (tests/: the reference, when run as a script)

from reference import Evaluator, RefTable
from whole_columns import whole_columns

import datafusion_fts as fts
from datafusion_fts.query.parser import parse

WORDS = ("alpha", "beta", "gamma", "delta", "red", "fox", "sky", "blue", "数据库", "据库")
# A query may also ask for one character of a script cut into bigrams (every row holding it).
QUERY_WORDS = WORDS + ("数",)
CATS = ("news", "blog", "wiki")


def corpus(seed: int) -> dict[str, pa.Table]:
    """The rows of the three tables: ``docs`` (searched in every setup), ``notes``
    (a managed table beside it) and ``people`` (a table of the session)."""
    rnd = random.Random(seed)

    def text(low: int, high: int) -> str | None:
        roll = rnd.random()
        if roll < 0.05:
            return None
        if roll < 0.08:
            return ""
        return " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(low, high)))

    n = 36
    docs = pa.table({
        "id": pa.array(range(1, n + 1), pa.int64()),
        "title": [text(1, 3) for _ in range(n)],
        "body": [text(2, 9) for _ in range(n)],
        "year": pa.array([rnd.randint(1990, 2024) for _ in range(n)], pa.int32()),
        "cat": [rnd.choice(CATS) for _ in range(n)],
    })
    notes = pa.table({
        "nid": pa.array(range(1, 25), pa.int64()),
        "did": pa.array([rnd.randint(1, n + 6) for _ in range(24)], pa.int64()),
        "text": [text(1, 5) for _ in range(24)],
    })
    people = pa.table({
        "pid": pa.array(range(1, 13), pa.int64()),
        "name": [text(1, 2) for _ in range(12)],
        "did": pa.array([rnd.randint(1, n + 4) for _ in range(12)], pa.int64()),
    })
    return {"docs": docs, "notes": notes, "people": people}


TEXT_COLUMNS = {"docs": ("title", "body"), "notes": ("text",), "people": ("name",)}


# ------------------------------------------------------------------------ the tree


@dataclass(eq=False)
class Source:
    """A FROM item: a table (``kind`` "docs", "notes", "people") or a relation over
    ``docs`` ("cte", "derived"), read under ``alias``; the MATCHes of it, in order."""

    kind: str
    alias: str
    year: int = 0  # (a relation's filter)
    matches: list[Match] = field(default_factory=list)

    @property
    def table(self) -> str:
        return "docs" if self.kind in ("cte", "derived") else self.kind

    @property
    def columns(self) -> tuple[str, ...]:
        return ("id", "title", "body", "year", "cat") if self.kind in ("cte", "derived") else COLUMNS[self.kind]


COLUMNS = {"docs": ("id", "title", "body", "year", "cat"), "notes": ("nid", "did", "text"),
           "people": ("pid", "name", "did")}


@dataclass(eq=False)
class Match:
    source: Source
    columns: tuple[str, ...]
    query: str
    n: int  # (its columns in the reference: m<n>, s<n>)

    def user(self) -> str:
        cols = [f"{self.source.alias}.{c}" for c in self.columns]
        target = cols[0] if len(cols) == 1 else "(" + ", ".join(cols) + ")"
        return f"MATCH({target}, '{self.query}')"

    def ref(self, env: Env) -> str:
        return f"{self.source.alias}.m{self.n}"


@dataclass(eq=False)
class Raw:
    """SQL that reads the same in both writings (a relational predicate, a column)."""

    text: str

    def user(self) -> str:
        return self.text

    def ref(self, env: Env) -> str:
        return self.text


@dataclass(eq=False)
class Op:
    """AND, OR (``parts``), NOT (one part), CASE WHEN ``parts[0]`` THEN ``parts[1]`` ELSE
    ``parts[2]``, COALESCE(``parts``); MAX or MIN of one part."""

    kind: str
    parts: list

    def user(self) -> str:
        return self._write([p.user() for p in self.parts])

    def ref(self, env: Env) -> str:
        return self._write([p.ref(env) for p in self.parts])

    def _write(self, parts: list[str]) -> str:
        if self.kind in ("MAX", "MIN"):
            return f"{self.kind.lower()}({parts[0]})"
        if self.kind in ("AND", "OR"):
            return "(" + f" {self.kind} ".join(parts) + ")"
        if self.kind == "NOT":
            return f"(NOT {parts[0]})"
        if self.kind == "CASE":
            return f"(CASE WHEN {parts[0]} THEN {parts[1]} ELSE {parts[2]} END)"
        return "COALESCE(" + ", ".join(parts) + ")"


@dataclass(eq=False)
class Score:
    """score() (or score(alias)) of ``source`` in ``select``."""

    source: Source
    select: Select
    named: bool

    def user(self) -> str:
        return f"score({self.source.alias})" if self.named else "score()"

    def ref(self, env: Env) -> str:
        return self.select.score_ref(self.source, env)


@dataclass(frozen=True)
class Env:
    """What the reference's writing reads: each searched source's table (by id), and
    whether ``docs`` is a view (then its ties go by its columns: it has no row ids)."""

    tables: dict[int, str]
    view: bool


def score_rule(node, source: Source, env: Env) -> str | None:
    """DESIGN §3.2's score of boolean ``node`` for ``source``, over the reference's columns:
    AND adds its parts, OR its true parts, CASE its branch taken, COALESCE its first
    non-NULL argument, NOT and the rest nothing (None)."""
    if isinstance(node, Match):
        return f"{source.alias}.s{node.n}" if node.source is source else None
    if isinstance(node, Op) and node.kind == "AND":
        parts = [p for p in (score_rule(x, source, env) for x in _chain(node)) if p is not None]
        return _added(parts)
    if isinstance(node, Op) and node.kind == "OR":
        parts = [f"CASE WHEN {x.ref(env)} THEN {s} ELSE 0.0 END" for x in _chain(node)
                 if (s := score_rule(x, source, env)) is not None]
        return _added(parts)
    if isinstance(node, Op) and node.kind == "CASE":
        then, otherwise = score_rule(node.parts[1], source, env), score_rule(node.parts[2], source, env)
        if then is None and otherwise is None:
            return None
        return f"CASE WHEN {node.parts[0].ref(env)} THEN {then or '0.0'} ELSE {otherwise or '0.0'} END"
    if isinstance(node, Op) and node.kind == "COALESCE":
        if all(score_rule(x, source, env) is None for x in node.parts):
            return None
        whens = " ".join(f"WHEN {x.ref(env)} IS NOT NULL THEN {score_rule(x, source, env) or '0.0'}"
                         for x in node.parts)
        return f"CASE {whens} ELSE 0.0 END"
    return None


def _chain(node: Op) -> list:
    """The operands of a chain of ANDs (or ORs), nested ones too: ``a AND (b AND c)`` adds
    three parts, as the Boolean tree of such MATCHes has three MUST clauses."""
    out = []
    for part in node.parts:
        out += _chain(part) if isinstance(part, Op) and part.kind == node.kind else [part]
    return out


def _added(parts: list[str]) -> str | None:
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "(" + " + ".join(["0.0", *parts]) + ")"


def _holds(node, source: Source) -> bool:
    if isinstance(node, Match):
        return node.source is source
    if isinstance(node, Op):
        return any(_holds(p, source) for p in node.parts)
    return False


@dataclass(eq=False)
class Join:
    kind: str  # "JOIN", "LEFT JOIN", ...
    source: Source
    on: object | None  # (None: a CROSS JOIN)


@dataclass(eq=False)
class Select:
    sources: list[Source]
    joins: list[Join] = field(default_factory=list)
    items: list[tuple[object, str]] = field(default_factory=list)  # (expression, alias)
    where: object | None = None
    group: list[str] = field(default_factory=list)
    having: str | None = None
    order: list[tuple[object, bool]] = field(default_factory=list)  # (key, descending)
    limit: int | None = None
    offset: int | None = None
    distinct: bool = False
    formulas: list = field(default_factory=list)  # (the boolean expressions MATCHes stand in, outside WHERE)

    def score_ref(self, source: Source, env: Env) -> str:
        """DESIGN §3.2's score() of ``source``: of WHERE where its MATCHes stand there, else
        of the one expression they stand in; NULL where the row does not exist."""
        missing = f"{source.alias}._rowid IS NULL"
        if self.where is not None and _holds(self.where, source):
            return f"(CASE WHEN {missing} THEN NULL ELSE {score_rule(self.where, source, env) or '0.0'} END)"
        formula = next(f for f in self.formulas if _holds(f, source))
        score = score_rule(formula, source, env) or "0.0"
        return f"(CASE WHEN {missing} THEN NULL WHEN {formula.ref(env)} THEN {score} ELSE 0.0 END)"

    def write(self, env: Env | None) -> str:
        """The SELECT as the user writes it (``env`` None), or as the reference reads it."""
        w = (lambda e: e.ref(env)) if env is not None else (lambda e: e.user())
        items = [f"{w(e)} AS {a}" if a else w(e) for e, a in self.items]
        out = "SELECT " + ("DISTINCT " if self.distinct else "") + ", ".join(items)
        out += " FROM " + self._source(self.sources[0], env)
        for source in self.sources[1:]:
            out += ", " + self._source(source, env)
        for join in self.joins:
            out += f" {join.kind} {self._source(join.source, env)}"
            if join.on is not None:
                out += f" ON {w(join.on)}"
        if self.where is not None:
            out += f" WHERE {w(self.where)}"
        if self.group:
            out += " GROUP BY " + ", ".join(self.group)
        if self.having:
            out += f" HAVING {self.having}"
        if self.order:
            keys, ties = [], []  # (the tie-break follows the user's last key)
            for key, desc in self.order:
                keys.append(f"{key if isinstance(key, str) else w(key)} {'DESC' if desc else 'ASC'}")
                scored = self._scored(key)
                if env is not None and scored is not None:
                    ties += [t for t in self._tie_break(scored, desc, env) if t not in ties]
            out += " ORDER BY " + ", ".join(keys + ties)
        if self.limit is not None:
            out += f" LIMIT {self.limit}"
        if self.offset is not None:
            out += f" OFFSET {self.offset}"
        return out

    def _scored(self, key) -> Source | None:
        """The source whose score an ORDER BY key is (by call, alias or position)."""
        if isinstance(key, Score):
            return key.source
        for i, (expression, alias) in enumerate(self.items):
            if isinstance(expression, Score) and key in (alias, str(i + 1)):
                return expression.source
        return None

    def _tie_break(self, source: Source, desc: bool, env: Env) -> list[str]:
        """§5.2's order after the score: row ids (a relation: its columns), ascending under
        a descending score; a grouping or DISTINCT SELECT has none."""
        if self.group or self.distinct or any(isinstance(k, str) and k.endswith("_rowid") for k, _ in self.order):
            return []
        direction = "ASC" if desc else "DESC"
        if source.kind in ("cte", "derived") or source.kind == "docs" and env.view:
            return [f"{source.alias}.{c} {direction}" for c in source.columns]
        return [f"{source.alias}._rowid {direction}"]

    def _source(self, source: Source, env: Env | None) -> str:
        if env is not None and source.matches:
            return f"{env.tables[id(source)]} AS {source.alias}"
        if source.kind == "derived":
            return f"(SELECT * FROM docs WHERE year > {source.year}) AS {source.alias}"
        if source.kind == "cte":
            return f"r AS {source.alias}"
        return f"{source.kind} AS {source.alias}"


@dataclass(eq=False)
class Statement:
    """A statement: one SELECT, a set operation of two, or a SELECT over a CTE; with the
    subqueries its SELECTs hold (each searched on its own)."""

    ordered: bool  # (whether its rows come in one order: compared in order, else as a bag)
    selects: list[Select]
    text: Callable[[Env | None], str]  # (the statement as the user writes it: None; or the reference)

    @property
    def user(self) -> str:
        return self.text(None)


# ------------------------------------------------------------------- the generator


class Generator:
    """Seeded statements; ``view``: ``docs`` is a view in this setup (no ``_rowid``)."""

    def __init__(self, seed: int, view: bool) -> None:
        self.rnd = random.Random(seed)
        self.view = view
        self.n = itertools.count()
        self.aliases = itertools.count()

    def query(self) -> str:
        r = self.rnd
        words = [r.choice(QUERY_WORDS) for _ in range(r.randint(1, 2))]
        kind = r.random()
        if kind < 0.5:
            return " ".join(words)
        if kind < 0.65:
            return f'"{" ".join(words)}"'
        if kind < 0.8:
            return f"+{words[0]} -{r.choice(QUERY_WORDS)}"
        if kind < 0.9:
            return " OR ".join(words)
        return f"{words[0][:3]}*"

    def match(self, source: Source) -> Match:
        columns = TEXT_COLUMNS[source.table]
        chosen = (self.rnd.choice(columns),) if len(columns) == 1 or self.rnd.random() < 0.8 else columns
        m = Match(source, chosen, self.query(), next(self.n))
        source.matches.append(m)
        return m

    def relational(self, source: Source) -> Raw:
        a, r = source.alias, self.rnd
        options = {
            "docs": [f"{a}.year > {r.randint(1995, 2020)}", f"{a}.cat = '{r.choice(CATS)}'", f"{a}.id % 3 = 0",
                     f"{a}.body IS NULL", f"{a}.title LIKE '%a%'"],
            "notes": [f"{a}.did > {r.randint(5, 30)}", f"{a}.nid % 2 = 0", f"{a}.text IS NOT NULL"],
            "people": [f"{a}.pid < {r.randint(3, 10)}", f"{a}.name LIKE '%e%'"],
        }[source.table]
        return Raw(r.choice(options))

    def predicate(self, sources: list[Source], depth: int, searched: list[Source]) -> object:
        """A boolean expression: MATCHes (of ``searched``) and relational predicates (of
        ``sources``) under AND / OR / NOT, CASE and COALESCE."""
        r = self.rnd
        roll = r.random()
        if depth <= 0 or roll < 0.35:
            if searched and r.random() < 0.6:
                return self.match(r.choice(searched))
            return self.relational(r.choice(sources))
        if roll < 0.65:
            return Op(r.choice(["AND", "OR"]), [self.predicate(sources, depth - 1, searched) for _ in range(r.randint(2, 3))])
        if roll < 0.8:
            return Op("NOT", [self.predicate(sources, depth - 1, searched)])
        if roll < 0.9 and searched:
            return Op("CASE", [self.relational(r.choice(sources)), self.match(r.choice(searched)),
                               self.predicate(sources, depth - 1, searched)])
        if searched:
            return Op("COALESCE", [self.match(r.choice(searched)), Raw(r.choice(["FALSE", "TRUE"]))])
        return self.relational(r.choice(sources))

    def source(self, kind: str) -> Source:
        return Source(kind, f"t{next(self.aliases)}", year=self.rnd.randint(1995, 2015))

    def key(self, source: Source) -> str:
        return {"docs": "id", "notes": "nid", "people": "pid", "cte": "id", "derived": "id"}[source.kind]

    def statement(self) -> Statement:
        shape = self.rnd.choice(["page", "page", "page", "single", "single", "join", "join", "two", "group",
                                 "window", "subquery", "relation", "setop", "distinct", "on", "inner_cte", "count",
                                 "facets"])
        return getattr(self, f"_{shape}")()

    def _wrap(self, select: Select, ordered: bool, with_cte: Source | None = None) -> Statement:
        cte = f"WITH r AS (SELECT * FROM docs WHERE year > {with_cte.year}) " if with_cte is not None else ""

        def text(env: Env | None) -> str:
            return cte + select.write(env)

        return Statement(ordered, [select], text)

    def _paging(self, select: Select, source: Source, score: Score | None) -> bool:
        """An ORDER BY in some direction, paged or not; whether it orders every row."""
        r = self.rnd
        key = self.key(source)
        total = False
        if score is not None and r.random() < 0.75:
            how = r.choice(["call", "alias", "position"])
            position = next(i for i, (e, _) in enumerate(select.items) if e is score) + 1
            scored = {"call": score, "alias": "s", "position": str(position)}[how]
            select.order.append((scored, r.random() < 0.75))
            if r.random() < 0.25 and source.kind not in ("cte", "derived") and not (source.kind == "docs" and self.view):
                select.order.append((f"{source.alias}._rowid", r.random() < 0.5))
            total = True
        else:
            select.order.append((f"{source.alias}.{key}", r.random() < 0.5))
            total = True
        if r.random() < 0.6:
            select.limit = r.randint(0, 6)
            if r.random() < 0.5:
                select.offset = r.randint(0, 5)
        return total

    def _single(self) -> Statement:
        r = self.rnd
        source = self.source(r.choice(["docs", "docs", "notes", "people"]))
        select = Select([source])
        select.where = self.predicate([source], r.randint(0, 3), [source])
        if not source.matches:
            select.where = Op("AND", [select.where, self.match(source)])
        score = Score(source, select, r.random() < 0.3)
        select.items = [(Raw(f"{source.alias}.{self.key(source)}"), "k"), (score, "s")]
        if r.random() < 0.4:
            m = self.match(source)
            select.items.append((m, "hit"))
            select.formulas.append(m)
        if r.random() < 0.3:
            m = self.match(source)
            select.items.append((Op("CASE", [m, Raw("1"), Raw("0")]), "c"))
        return self._wrap(select, self._paging(select, source, score))

    def _page(self) -> Statement:
        """A page of a search in some order: MATCHes alone under AND / OR / NOT, perhaps
        beside relational conjuncts (the fast path's shape: prefilters, a pushed top k)."""
        r = self.rnd
        source = self.source(r.choice(["docs", "docs", "notes", "people"]))
        select = Select([source])
        tree = self._tree(source, r.randint(0, 2))
        conjuncts = [tree] + [self.relational(source) for _ in range(r.choice([0, 0, 1, 2]))]
        select.where = Op("AND", conjuncts) if len(conjuncts) > 1 else tree
        score = Score(source, select, r.random() < 0.3)
        select.items = [(Raw(f"{source.alias}.{self.key(source)}"), "k"), (score, "s")]
        if r.random() < 0.3:
            select.items.append((Raw(f"{source.alias}.{TEXT_COLUMNS[source.table][0]}"), "t"))
        if r.random() < 0.5:  # (the number of matches beside the page: counted by the search)
            select.items.append((Raw(r.choice(["count(*) OVER ()", "COUNT(*) over() * 2", "count(1) OVER ()"])), "n"))
        self._paging(select, source, score)
        select.limit = r.randint(0, 7)
        select.offset = r.choice([None, r.randint(0, 6)])
        return self._wrap(select, True)

    def _tree(self, source: Source, depth: int) -> object:
        """MATCHes of ``source`` under AND / OR / NOT."""
        r = self.rnd
        if depth <= 0 or r.random() < 0.3:
            return self.match(source)
        kind = r.choice(["AND", "OR", "NOT"])
        if kind == "NOT":
            return Op("AND", [self._tree(source, depth - 1), Op("NOT", [self._tree(source, depth - 1)])])
        return Op(kind, [self._tree(source, depth - 1) for _ in range(r.randint(2, 3))])

    def _join(self) -> Statement:
        r = self.rnd
        left, right = self.source("docs"), self.source(r.choice(["notes", "people"]))
        if r.random() < 0.5:
            left, right = right, left
        kind = r.choice(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN"])
        d, o = (left, right) if left.kind == "docs" else (right, left)
        on = Raw(f"{o.alias}.did = {d.alias}.id") if kind != "CROSS JOIN" else None
        select = Select([left], [Join(kind, right, on)])
        searched = r.choice([left, right])
        select.where = self.predicate([left, right], r.randint(0, 2), [searched])
        if not searched.matches:
            select.where = Op(r.choice(["AND", "OR"]), [select.where, self.match(searched)])
        score = Score(searched, select, r.random() < 0.5)
        select.items = [(Raw(f"{left.alias}.{self.key(left)}"), "a"), (Raw(f"{right.alias}.{self.key(right)}"), "b"),
                        (score, "s")]
        select.order = [(f"{left.alias}.{self.key(left)}", r.random() < 0.5), (f"{right.alias}.{self.key(right)}", False)]
        if r.random() < 0.4:
            select.order.insert(0, ("s", r.random() < 0.7))
        if r.random() < 0.5:
            select.limit = r.randint(1, 8)
        return self._wrap(select, True)

    def _on(self) -> Statement:
        """A MATCH in a join's ON (and perhaps in the select list)."""
        r = self.rnd
        left, right = self.source(r.choice(["people", "notes"])), self.source("docs")
        kind = r.choice(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
        on = Op("AND", [Raw(f"{left.alias}.did = {right.alias}.id"), self.match(right)])
        select = Select([left], [Join(kind, right, on)])
        select.formulas.append(on)
        score = Score(right, select, True)
        select.items = [(Raw(f"{left.alias}.{self.key(left)}"), "a"), (Raw(f"{right.alias}.id"), "b"), (score, "s")]
        select.order = [(f"{left.alias}.{self.key(left)}", False), (f"{right.alias}.id", False)]
        return self._wrap(select, True)

    def _two(self) -> Statement:
        """Two searched tables in one SELECT, each score named."""
        r = self.rnd
        d, n = self.source("docs"), self.source("notes")
        kind = r.choice(["JOIN", "LEFT JOIN", "FULL JOIN"])
        select = Select([d], [Join(kind, n, Raw(f"{n.alias}.did = {d.alias}.id"))])
        select.where = Op(r.choice(["AND", "OR"]), [self.match(d), self.match(n)])
        if r.random() < 0.5:
            select.where = Op("AND", [select.where, self.relational(r.choice([d, n]))])
        sd, sn = Score(d, select, True), Score(n, select, True)
        select.items = [(Raw(f"{d.alias}.id"), "a"), (Raw(f"{n.alias}.nid"), "b"), (sd, "sd"), (sn, "sn")]
        select.order = [("sd", True), (f"{d.alias}.id", False), (f"{n.alias}.nid", False)]
        if r.random() < 0.5:
            select.limit = r.randint(1, 6)
        return self._wrap(select, True)

    def _count(self) -> Statement:
        """The number of matches: ``count(*)`` of a search alone (answered without DataFusion
        where nothing else is asked) or beside other predicates."""
        r = self.rnd
        source = self.source(r.choice(["docs", "docs", "notes", "people"]))
        select = Select([source])
        select.where = self.match(source) if r.random() < 0.6 else self.predicate([source], r.randint(0, 2), [source])
        if not source.matches:
            select.where = Op("AND", [select.where, self.match(source)])
        select.items = [(Raw("count(*)"), "n")]
        return self._wrap(select, True)

    def _group(self) -> Statement:
        r = self.rnd
        source = self.source("docs")
        select = Select([source])
        select.where = self.predicate([source], r.randint(0, 2), [source])
        if not source.matches:
            select.where = Op("OR", [select.where, self.match(source)])
        if r.random() < 0.5:
            score = Score(source, select, False)
            select.items = [(Raw(f"{source.alias}.cat"), "g"), (Raw("count(*)"), "n"),
                            (Op("MAX", [score]), "best"), (Op("MIN", [score]), "worst")]
        else:  # (no score read: the matches may be found unscored)
            select.items = [(Raw(f"{source.alias}.cat"), "g"), (Raw("count(*)"), "n"),
                            (Raw(f"sum({source.alias}.year)"), "years"), (Raw(f"avg({source.alias}.year)"), "mean")]
        select.group = [f"{source.alias}.cat"]
        if r.random() < 0.5:
            select.having = "count(*) > 1"
        select.order = [("g", r.random() < 0.5)]
        return self._wrap(select, True)

    def _facets(self) -> Statement:
        """Counts by a column over a search (a search page's facets; answered without
        DataFusion where exact): MATCH alone or beside a predicate of the table, a text or
        integer key, a few aggregates, ordered by the count then the key, paged or not."""
        r = self.rnd
        source = self.source("docs")
        select = Select([source])
        select.where = self.match(source)
        if r.random() < 0.5:
            select.where = Op("AND", [select.where, self.relational(source)])
        a = source.alias
        key = f"{a}.{r.choice(['cat', 'year'])}"
        select.items = [(Raw(key), "g"), (Raw("count(*)"), "n")]
        extra = r.sample([f"count({a}.title)", f"min({a}.year)", f"max({a}.id)", f"sum({a}.id)", f"avg({a}.year)"],
                         r.randint(0, 2))
        select.items += [(Raw(e), f"a{i}") for i, e in enumerate(extra)]
        select.group = [key]
        select.order = [("n", True), ("g", r.random() < 0.5)]
        if r.random() < 0.6:
            select.limit = r.randint(1, 4)
            if r.random() < 0.5:
                select.offset = r.randint(0, 2)
        return self._wrap(select, True)

    def _window(self) -> Statement:
        r = self.rnd
        source = self.source(r.choice(["docs", "notes"]))
        select = Select([source])
        select.where = self.predicate([source], r.randint(0, 2), [source])
        if not source.matches:
            select.where = Op("AND", [select.where, self.match(source)])
        score = Score(source, select, False)
        key = f"{source.alias}.{self.key(source)}"
        select.items = [(Raw(key), "k"), (score, "s"), (Window(score, key, "rank"), "r"),
                        (Window(score, key, "row_number"), "rn")]
        select.order = [(key, False)]
        return self._wrap(select, True)

    def _subquery(self) -> Statement:
        r = self.rnd
        d, n = self.source("docs"), self.source("notes")
        inner = Select([n])
        inner.where = Op("AND", [self.match(n), Raw(f"{n.alias}.did = {d.alias}.id")])
        inner_score = Score(n, inner, False)
        outer = Select([d])
        kind = r.choice(["exists", "in", "scalar"])
        if kind == "exists":
            inner.items = [(Raw("1"), "one")]
            outer.where = Op(r.choice(["AND", "OR"]), [Sub("EXISTS", inner), self.match(d)])
        elif kind == "in":
            inner.where = self.match(n)
            inner.items = [(Raw(f"{n.alias}.did"), "did")]
            outer.where = Op(r.choice(["AND", "OR"]), [Sub(f"{d.alias}.id IN", inner), self.match(d)])
        else:
            inner.items = [(Op("MAX", [inner_score]), "m")]
            outer.where = self.match(d)
        score = Score(d, outer, False)
        outer.items = [(Raw(f"{d.alias}.id"), "k"), (score, "s")]
        if kind == "scalar":
            outer.items.append((Sub("", inner), "best"))
        outer.order = [(f"{d.alias}.id", False)]
        return self._wrap(outer, True)

    def _relation(self) -> Statement:
        """A search over a CTE or a derived table: statistics of the rows it yields."""
        r = self.rnd
        source = self.source(r.choice(["cte", "derived"]))
        select = Select([source])
        select.where = self.predicate([source], r.randint(0, 2), [source])
        if not source.matches:
            select.where = Op("AND", [select.where, self.match(source)])
        score = Score(source, select, False)
        select.items = [(Raw(f"{source.alias}.id"), "k"), (score, "s")]
        ordered = self._paging(select, source, score)
        return self._wrap(select, ordered, source if source.kind == "cte" else None)

    def _inner_cte(self) -> Statement:
        """A search inside a CTE, its rows and scores joined by the statement around it."""
        r = self.rnd
        source = self.source(r.choice(["docs", "notes"]))
        inner = Select([source])
        inner.where = self.predicate([source], r.randint(0, 2), [source])
        if not source.matches:
            inner.where = Op("AND", [inner.where, self.match(source)])
        key = "id" if source.kind == "docs" else "did"
        inner.items = [(Raw(f"{source.alias}.{key}"), "id"), (Score(source, inner, False), "s")]
        outer = self.source("docs")
        kind = r.choice(["JOIN", "LEFT JOIN"])

        def text(env: Env | None) -> str:
            return (f"WITH hits AS ({inner.write(env)}) SELECT {outer.alias}.id AS k, h.s AS s FROM docs AS "
                    f"{outer.alias} {kind} hits AS h ON h.id = {outer.alias}.id ORDER BY k, s")

        return Statement(True, [inner], text)

    def _setop(self) -> Statement:
        r = self.rnd
        a, b = self.source("docs"), self.source("notes")
        left, right = Select([a]), Select([b])
        left.where, right.where = self.match(a), self.match(b)
        left.items, right.items = [(Raw(f"{a.alias}.id"), "k")], [(Raw(f"{b.alias}.did"), "k")]
        op = r.choice(["UNION", "UNION ALL", "INTERSECT", "EXCEPT"])

        def text(env: Env | None) -> str:
            return f"SELECT k FROM ({left.write(env)} {op} {right.write(env)}) AS u ORDER BY k"

        return Statement(True, [left, right], text)

    def _distinct(self) -> Statement:
        r = self.rnd
        source = self.source("docs")
        select = Select([source], distinct=True)
        select.where = self.predicate([source], r.randint(0, 2), [source])
        if not source.matches:
            select.where = Op("AND", [select.where, self.match(source)])
        select.items = [(Raw(f"{source.alias}.cat"), "g")]
        select.order = [("g", False)]
        return self._wrap(select, True)


@dataclass(eq=False)
class Window:
    score: Score
    key: str
    function: str

    def user(self) -> str:
        return f"{self.function}() OVER (ORDER BY {self.score.user()} DESC, {self.key})"

    def ref(self, env: Env) -> str:
        return f"{self.function}() OVER (ORDER BY {self.score.ref(env)} DESC, {self.key})"


@dataclass(eq=False)
class Sub:
    """A subquery after ``prefix`` (EXISTS, ``x IN``, or none: a scalar one)."""

    prefix: str
    select: Select

    def user(self) -> str:
        return f"{self.prefix} ({self.select.write(None)})".strip()

    def ref(self, env: Env) -> str:
        return f"{self.prefix} ({self.select.write(env)})".strip()


# ------------------------------------------------------------------- the setups

SETUPS = ("memory", "flat_scan", "keyed", "directory", "view", "parquet", "csv")


def _values(table: pa.Table) -> list[tuple]:
    """Rows with floats as their exact bits (repr), NaN equal to NaN."""
    out = []
    for row in table.to_pylist():
        out.append(tuple(repr(v) if isinstance(v, float) and not math.isnan(v) else
                         ("nan" if isinstance(v, float) else v) for v in row.values()))
    return out


def _literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def _insert(db: fts.Database, table: str, rows: pa.Table) -> None:
    values = ", ".join("(" + ", ".join(_literal(v) for v in row.values()) + ")" for row in rows.to_pylist())
    db.sql(f"INSERT INTO {table} VALUES {values}").collect()


def build(setup: str, tmp: Path, seed: int) -> tuple[fts.Database, dict[str, pa.Table]]:
    """A database holding the corpus in ``setup``; and each table's rows as the engine
    reads them, ``_rowid`` first (the reference's input)."""
    data = corpus(seed)
    docs = data["docs"]
    first, rest = docs.slice(0, 28), docs.slice(28)
    ctx = datafusion.SessionContext()
    if setup in ("parquet", "csv"):
        src = tmp / "src"
        src.mkdir()
        for i, part in enumerate((first.slice(0, 14), first.slice(14))):
            if setup == "parquet":
                pq.write_table(part, src / f"{i}.parquet")
            else:
                pcsv.write_csv(part, src / f"{i}.csv")
        if setup == "parquet":
            ctx.register_parquet("docs", str(src))
        else:
            ctx.register_csv("docs", str(src), schema=docs.schema, file_extension=".csv")
    db = fts.connect(tmp / "db" if setup in ("directory", "parquet", "csv") else None, ctx=ctx)
    if setup == "keyed":
        db.sql("CREATE TABLE docs (id BIGINT PRIMARY KEY, title VARCHAR, body VARCHAR, year INT, cat VARCHAR)")
        _insert(db, "docs", first)
        db.sql("CREATE FULLTEXT INDEX ON docs (title, body) WITH (positions = true)")
        db.sql("DELETE FROM docs WHERE id % 7 = 3").collect()
        db.sql("UPDATE docs SET body = concat(body, ' red fox') WHERE id % 5 = 1").collect()
        _insert(db, "docs", rest)
    elif setup in ("parquet", "csv"):
        db.sql("CREATE FULLTEXT INDEX ON docs (title, body) WITH (positions = true)")
        suffix = "parquet" if setup == "parquet" else "csv"
        (pq.write_table if setup == "parquet" else pcsv.write_csv)(rest, tmp / "src" / f"9.{suffix}")
    else:
        name = "docs_t" if setup == "view" else "docs"
        table = db.create_table(name, first)
        for column in ("title", "body"):
            table.create_index(column, positions=True)
        if setup in ("directory", "view"):
            table.delete("id % 7 = 3")
        table.insert(rest)
        if setup == "view":
            db.sql("CREATE VIEW docs AS SELECT * FROM docs_t").collect()
    notes = db.create_table("notes", data["notes"])
    notes.create_index("text", positions=True)
    notes.delete("nid % 6 = 0")
    db.ctx.register_record_batches("people", [data["people"].to_batches()])
    if setup == "flat_scan":
        db.sql("SET fts.force_plan = 'flat_scan'")
    docs_rows = (db.sql("SELECT * FROM docs") if setup == "view" else db.sql("SELECT _rowid, * FROM docs"))
    docs_rows = docs_rows.to_arrow_table()
    if setup == "view":
        docs_rows = docs_rows.add_column(0, "_rowid", pa.array(range(docs_rows.num_rows), pa.int64()))
    people = data["people"]
    rows = {
        "docs": docs_rows.cast(pa.schema([pa.field(f.name, _plain(f.type)) for f in docs_rows.schema])),
        "notes": db.sql("SELECT _rowid, * FROM notes").to_arrow_table(),
        "people": people.add_column(0, "_rowid", pa.array(range(people.num_rows), pa.int64())),
    }
    return db, rows


def _plain(kind: pa.DataType) -> pa.DataType:
    return pa.string() if pa.types.is_string_view(kind) or pa.types.is_large_string(kind) else kind


def differences(db: fts.Database, rows: dict[str, pa.Table], setup: str, seed: int, count: int
                ) -> tuple[list[str], list[str], int]:
    """Run ``count`` generated statements with the fast paths on and off: (the wrong
    answers, the refusals, how many statements took the fast path)."""
    generator = Generator(seed, view=setup == "view")
    wrong: list[str] = []
    refused: list[str] = []
    for _ in range(count):
        statement = generator.statement()
        want = reference_answer(statement, rows, view=setup == "view")
        for fast in (True, False):
            db.sql(f"SET fts.sql_fast_paths = {'true' if fast else 'false'}")
            try:
                got = db.sql(statement.user).to_arrow_table()
            except fts.FtsError as err:
                refused.append(f"[{setup}, fast={fast}] {statement.user}\n  refused: {err}")
                continue
            a, b = _values(got), _values(want)
            if not statement.ordered:
                a, b = sorted(a, key=repr), sorted(b, key=repr)
            if got.column_names != want.column_names or a != b:
                wrong.append(f"[{setup}, fast={fast}] {statement.user}\n  got  {got.column_names} {a}\n"
                             f"  want {want.column_names} {b}")
    return wrong, refused, count



# ------------------------------------------------------------------- the reference


def searched_sources(statement: Statement) -> list[Source]:
    """Every source of the statement that a MATCH reads, each SELECT's (subqueries too)."""
    out: list[Source] = []
    seen: set[int] = set()

    def visit(select: Select) -> None:
        for source in [*select.sources, *(j.source for j in select.joins)]:
            if source.matches and id(source) not in seen:
                seen.add(id(source))
                out.append(source)
        for expression in _expressions(select):
            if isinstance(expression, Sub):
                visit(expression.select)

    for select in statement.selects:
        visit(select)
    return out


def _expressions(select: Select) -> list:
    found = []

    def walk(node) -> None:
        found.append(node)
        if isinstance(node, Op):
            for p in node.parts:
                walk(p)
        if isinstance(node, Window):
            walk(node.score)

    for e, _ in select.items:
        walk(e)
    if select.where is not None:
        walk(select.where)
    for j in select.joins:
        if j.on is not None:
            walk(j.on)
    return found


def reference_answer(statement: Statement, rows: dict[str, pa.Table], view: bool) -> pa.Table:
    """The statement's answer as plain DataFusion gives it over ``rows`` (each table's
    rows with ``_rowid``: the engine's row ids; a table of the session's, scan positions)."""
    ctx = datafusion.SessionContext()
    for name, table in rows.items():
        ctx.from_arrow(table.drop_columns(["_rowid"]), name=name)
    tables: dict[int, str] = {}
    for i, source in enumerate(searched_sources(statement)):
        if source.kind in ("cte", "derived"):
            base = ctx.sql(f"SELECT * FROM docs WHERE year > {source.year}").to_arrow_table()
            base = base.append_column("_rowid", pa.array(range(base.num_rows), pa.int64()))
        else:
            base = rows[source.table]
        tables[id(source)] = name = f"ref_{i}"
        ctx.from_arrow(_marked(base, source.matches), name=name)
    return ctx.sql(statement.text(Env(tables, view))).to_arrow_table()


def _marked(base: pa.Table, matches: list[Match]) -> pa.Table:
    """``base`` with each MATCH's truth (m<n>) and score (s<n>) per row, by the reference."""
    ids = base.column("_rowid").to_pylist()
    columns = {c: base.column(c).to_pylist() for c in base.column_names}
    out = base
    for m in matches:
        ref = RefTable({rid: {c: columns[c][i] for c in m.columns} for i, rid in enumerate(ids)})
        scores = Evaluator(ref).eval(parse(m.query, list(m.columns)))
        out = out.append_column(f"m{m.n}", pa.array([rid in scores for rid in ids], pa.bool_()))
        out = out.append_column(f"s{m.n}", pa.array([scores.get(rid) for rid in ids], pa.float64()))
    return out


def main(argv: list[str] | None = None) -> None:
    """Run many generated statements in every setup and print the counts (issue 41)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--statements", type=int, default=1000, help="per setup")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--whole-columns", action="store_true",
                        help="stores keep narrow columns whole (coded) from the first read, as they do for many rows "
                             "(tests/whole_columns.py): facets counted from postings")
    args = parser.parse_args(argv)
    print("| setup | statements | runs (fast paths on, off) | identical | wrong | refused |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for setup in SETUPS:
        with tempfile.TemporaryDirectory() as tmp, whole_columns(args.whole_columns):
            db, rows = build(setup, Path(tmp), args.seed)
            wrong, refused, count = differences(db, rows, setup, args.seed + SETUPS.index(setup), args.statements)
            del db
        runs = 2 * count
        print(f"| {setup} | {count:,} | {runs:,} | {runs - len(wrong) - len(refused):,} | {len(wrong)} | "
              f"{len(refused)} |", flush=True)
        for failure in (wrong + refused)[:3]:
            print("   ", failure.replace("\n", "\n    "), file=sys.stderr)


if __name__ == "__main__":
    main()
