"""Random substring predicates against DataFusion's own evaluation (issue 43): each
statement runs twice on the same database, reading the n-gram index
(``fts.substring_candidate_share = 1``: whenever a predicate asks for a trigram) and not
(``fts.substring_index = false``: DataFusion scans, the statement as written), and the
two answers must be the same rows, or both an error. Half the statements read the
candidates' predicate columns first and the other columns for the rows the predicates
keep (``fts.substring_recheck_rows = 0``), half every column at once.

Tables hold text made of pieces chosen to break readings of patterns: wildcards and
escapes, regex metacharacters, case pairs whose folds differ in length (ß, ẞ, İ, ﬃ), the
three sigmas, title-case digraphs, combining marks, CJK and emoji. Two tables: a managed
one with every tier (indexed segments, an unindexed tail, fresh rows, deleted rows) and
one indexed in place over Parquet files (a file added after the index: its tail), each
with a full-text index beside: a statement that searches evaluates the substring
predicates beside its MATCH as its prefilter, on the candidate rows.

Usage (the full run of the issue's 10,000 predicates)::

    python tests/sql/substring/substring_predicates.py --statements 10000 --seed 1
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import datafusion_fts as fts
from datafusion_fts.errors import FtsError

PIECES = [
    "a", "b", "c", "ab", "abc", "bca", "x", "y", "z", "xyz", "A", "B", "ABC", "Abc",
    "%", "_", "\\", "\\\\", "%_", ".", "*", "+", "?", "(", ")", "[", "]", "{", "}", "|", "^", "$", "#",
    "ß", "ẞ", "SS", "ss", "Ss", "İ", "i̇", "ı", "I", "i", "σ", "ς", "Σ", "ΣΑΣ", "σας",
    "ǅ", "Ǆ", "ǆ", "K", "k", "ﬃ", "ffi", "FFI", "é", "É", "é", "ö", "Ö",
    "中", "文", "中文", "数据库", "データ", "😀", "ab😀", " ", "  ", "-", "'", "\n",
]
N_ROWS = 400


def random_text(rnd: random.Random) -> str | None:
    roll = rnd.random()
    if roll < 0.04:
        return None
    if roll < 0.07:
        return ""
    return "".join(rnd.choice(PIECES) for _ in range(rnd.randint(1, 9)))


def rows(rnd: random.Random, n: int, first: int) -> pa.Table:
    return pa.table({"id": pa.array(range(first, first + n), pa.int64()),
                     "grp": pa.array([rnd.randint(0, 4) for _ in range(n)], pa.int64()),
                     "body": pa.array([random_text(rnd) for _ in range(n)], pa.string())})


def managed_table(db: fts.Database, rnd: random.Random) -> None:
    """``docs``: indexed rows, an unindexed tail, fresh rows and deleted rows."""
    first = rows(rnd, N_ROWS // 2, 0)
    t = db.create_table("docs", first)
    t.create_index("body", kind="ngram")
    t.create_index("body")
    t.bulk_insert(rows(rnd, N_ROWS // 4, N_ROWS // 2))  # (committed, no segment: the tail)
    t.delete("id % 7 = 3")
    t.insert(rows(rnd, N_ROWS // 4, 3 * N_ROWS // 4))  # (fresh, indexed in memory)
    t.delete("id % 11 = 5")
    assert t.snapshot().uncovered(t.snapshot().meta.ngram("body").key), "the table must have a tail"


def in_place_table(db: fts.Database, rnd: random.Random, root: Path) -> None:
    """``placed``: Parquet files indexed in place, then a file added (the tail)."""
    source = root / "placed"
    source.mkdir()
    pq.write_table(rows(rnd, N_ROWS // 2, 0), source / "part-0.parquet")
    placed = db.index_in_place("placed", source)
    placed.create_index("body", kind="ngram")
    placed.create_index("body")
    pq.write_table(rows(rnd, N_ROWS // 2, N_ROWS // 2), source / "part-1.parquet")


def sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Predicates:
    """Random predicates over ``body``, half of them from the texts of the table's rows."""

    def __init__(self, rnd: random.Random, texts: list[str]) -> None:
        self.rnd = rnd
        self.texts = [t for t in texts if t]

    def needle(self) -> str:
        rnd = self.rnd
        if self.texts and rnd.random() < 0.6:
            text = rnd.choice(self.texts)
            a = rnd.randrange(len(text))
            return text[a : a + rnd.randint(1, 6)]
        return "".join(rnd.choice(PIECES) for _ in range(rnd.randint(1, 3)))

    def like_pattern(self) -> str:
        rnd = self.rnd
        parts = []
        for _ in range(rnd.randint(1, 3)):
            needle = self.needle()
            if rnd.random() < 0.7:  # (wildcards in the needle escaped, as a user would)
                needle = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            parts.append(needle)
        pattern = ""
        for part in parts:
            pattern += rnd.choice(["%", "%", "_", "", "%_"]) + part
        pattern += rnd.choice(["%", "%", "", "_", "\\"])
        return pattern

    def regex(self, depth: int = 0) -> str:
        rnd = self.rnd
        branches = []
        for _ in range(rnd.choice([1, 1, 1, 2, 3])):
            items = []
            for _ in range(rnd.randint(1, 3)):
                roll = rnd.random()
                if roll < 0.55:
                    item = re.sub(r"([\\.^$|?*+()\[\]{}#\-])", r"\\\1", self.needle())
                elif roll < 0.65 and depth < 2:
                    item = "(" + rnd.choice(["", "?:", "?i:", "?P<g>"]) + self.regex(depth + 1) + ")"
                elif roll < 0.75:
                    item = rnd.choice(["[abc]", "[^x]", "[a-z]", "[[:alpha:]]", "[]a]", "[ß-ẞ]", "\\d", "\\w", "\\s",
                                       "\\b", ".", "^", "$", "\\p{L}", "\\x41", "[\\]]"])
                else:
                    item = rnd.choice(PIECES).replace("\\", "\\\\")
                if rnd.random() < 0.3:
                    item += rnd.choice(["*", "+", "?", "{2}", "{1,3}", "{0,2}", "*?", "+?", "{,2}"])
                items.append(item)
            branches.append("".join(items))
        return ("(?i)" if depth == 0 and rnd.random() < 0.1 else "") + "|".join(branches)

    def one(self, column: str) -> str:
        rnd = self.rnd
        kind = rnd.randrange(10)
        if kind <= 2:
            op = rnd.choice(["LIKE", "ILIKE", "LIKE", "NOT LIKE"])
            escape = " ESCAPE '\\'" if rnd.random() < 0.1 else ""
            return f"{column} {op} {sql_string(self.like_pattern())}{escape}"
        if kind <= 5:
            pattern = sql_string(self.regex())
            form = rnd.randrange(4)
            if form == 0:
                return f"{column} ~ {pattern}"
            if form == 1:
                return f"{column} ~* {pattern}"
            return f"regexp_like({column}, {pattern}{', ' + sql_string(rnd.choice(['i', 'c', 'is', 'x'])) if form == 3 else ''})"
        needle = sql_string(self.needle())
        if kind == 6:
            return rnd.choice([f"strpos({column}, {needle}) > 0", f"0 < strpos({column}, {needle})",
                               f"strpos({column}, {needle}) >= 1", f"position({needle} IN {column}) > 0"])
        if kind == 7:
            return f"starts_with({column}, {needle})"
        if kind == 8:
            return f"ends_with({column}, {needle})"
        return f"{column} LIKE {sql_string('%' + self.needle().replace(chr(92), chr(92) * 2).replace('%', chr(92) + '%').replace('_', chr(92) + '_') + '%')}"

    def statement(self, table: str) -> str:
        rnd = self.rnd
        where = self.one("body")
        if rnd.random() < 0.3:
            where += f" AND {self.one('body')}"
        if rnd.random() < 0.2:
            where += f" AND id > {rnd.randint(0, N_ROWS)}"
        if rnd.random() < 0.05:
            where = f"{where} OR {self.one('body')}"
        shape = rnd.randrange(10)
        if shape <= 3:
            return f"SELECT id, body FROM {table} WHERE {where} ORDER BY id"
        if shape == 4:
            return f"SELECT grp, count(*) AS n, min(id) AS lo FROM {table} WHERE {where} GROUP BY grp ORDER BY grp"
        if shape == 5:
            join = rnd.choice(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
            return (f"SELECT a.id, b.id AS bid FROM {table} a {join} {table} b ON a.grp = b.grp AND b.id < 30 "
                    f"WHERE {where.replace('body', 'a.body').replace('id >', 'a.id >')} ORDER BY a.id, bid")
        if shape == 6:
            return (f"SELECT id FROM {table} WHERE grp IN (SELECT grp FROM {table} WHERE {where}) "
                    f"ORDER BY id LIMIT 20")
        if shape == 7:
            return (f"SELECT id, row_number() OVER (PARTITION BY grp ORDER BY id DESC) AS r FROM {table} "
                    f"WHERE {where} ORDER BY id")
        words = " ".join(rnd.choice(["a", "abc", "x", "xyz", "ss", "ß", "中文", "b"]) for _ in range(2))
        if shape == 8:  # (beside a search: the substring predicates are its prefilter)
            return f"SELECT id, score() AS s FROM {table} WHERE MATCH(body, '{words}') AND {where} ORDER BY s DESC, id LIMIT 10"
        return f"SELECT id FROM {table} WHERE MATCH(body, '{words}') AND {where} ORDER BY id"


def answer(db: fts.Database, sql: str, indexed: bool, recheck: bool = False) -> object:
    db.sql(f"SET fts.substring_index = {'true' if indexed else 'false'}")
    db.sql(f"SET fts.substring_recheck_rows = {0 if recheck else 1 << 40}")
    try:
        return db.sql(sql).to_arrow_table().to_pylist()
    except (FtsError, Exception) as err:  # (DataFusion's errors have no class of their own)
        return ("error", type(err).__name__)


def run(statements: int, seed: int, root: Path, log=print) -> tuple[int, int, int, int]:
    """(statements run, differing, reads of candidates, of which predicate columns first):
    ``statements`` per table."""
    rnd = random.Random(seed)
    db = fts.connect(root / "db")
    managed_table(db, rnd)
    in_place_table(db, rnd, root)
    db.sql("SET fts.substring_candidate_share = 1")
    from datafusion_fts.sql.substring import (
        run_substring,  # (counts the statements that read candidates)
    )

    used = rechecked = 0
    real, real_rechecked = run_substring._candidate_rows, run_substring._rechecked

    def counted(db_, read, **options):
        nonlocal used
        found = real(db_, read, **options)
        used += found[1] is not None
        return found

    def counted_rechecked(*args):
        nonlocal rechecked
        rechecked += 1
        return real_rechecked(*args)

    run_substring._candidate_rows = counted
    run_substring._rechecked = counted_rechecked
    wrong = total = 0
    try:
        for table in ("docs", "placed"):
            texts = [r["body"] for r in db.sql(f"SELECT body FROM {table}").to_arrow_table().to_pylist()]
            gen = Predicates(rnd, texts)
            for _ in range(statements):
                sql = gen.statement(table)
                total += 1
                expected = answer(db, sql, indexed=False)
                got = answer(db, sql, indexed=True, recheck=rnd.random() < 0.5)
                if got != expected:
                    wrong += 1
                    log(f"DIFFERENT: {sql}\n  index: {str(got)[:300]}\n  scan:  {str(expected)[:300]}")
    finally:
        run_substring._candidate_rows, run_substring._rechecked = real, real_rechecked
    return total, wrong, used, rechecked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--statements", type=int, default=1000, help="per table")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        total, wrong, used, rechecked = run(args.statements, args.seed, Path(tmp))
    print(f"{total} statements, {wrong} different, {used} reads of candidate rows "
          f"({rechecked} by the predicates' columns first)")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
