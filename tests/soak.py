"""A soak (issue 45): a database directory that lives under load, its writer killed.

One writer process inserts (the API, SQL ``INSERT``, bulk loads), deletes (the API, SQL),
updates, flushes and runs ``OPTIMIZE`` on a table, one write at a time, journaling each
write before it starts and once it returns (``journal.jsonl``). It is killed (SIGKILL)
inside each kind of write in turn, at one of its durable steps (an ``os.fsync`` or an
``os.replace``), and started again; on starting it reads the table and checks it against
the journal: every acknowledged write there, the write it was killed in either whole or
absent. Readers in three places query the table all along, each answer with the moments
it was asked and answered: a process of its own, a read-only connection in another, and a
thread of the writer's process (killed with it). Afterwards an oracle judges every answer
against the brute-force BM25 of ``tests/reference.py`` at each version the table could
have had while the query ran: at least every write acknowledged before it started, at most
every write begun before it ended. A version is the table's rows (the oracle keys them by
their ``id``: queries order ties by ``id``); scores must be equal to the bit.

``python tests/soak.py --minutes 30`` runs the long one and prints its figures
(docs/guide/guarantees.md quotes them); ``tests/test_soak.py`` runs a short one.
``python tests/soak.py churn --writes 100000`` makes that many mixed writes in one process
as fast as they go, and measures what they leave: fragments, a reader's open files, the
directory's size.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# Words of the rows (each holds 1 to 6): a word is in about one row in ten.
WORDS = [f"{a}{b}" for a in ("fox", "owl", "elk", "yak", "emu") for b in "abcdefgh"]
KINDS = ("insert", "sql insert", "bulk insert", "delete", "sql delete", "update", "flush", "optimize")
# Rows the soak's table holds about (the oracle's reference reads them all per version),
# and the churn's.
ROWS = 600
CHURN_ROWS = 20_000
# Seconds a reader waits at most between two queries.
PAUSE = 0.01
CONFIG = {"fts.memtable_rows": 40, "fts.gc_grace_seconds": 5, "fts.max_fragments": 6}
# The queries readers ask ({w}, {v}: words; {x}: an id; {r}: 0..49), each with what it
# answers on a version of the table (the rows by id, and the reference's hits of the
# query string ``{w} {v}`` or ``{w}``, ordered by score then id): SQL searches with a
# prefilter, a LIMIT, rows fetched; counts; plain SQL; the Python API.
QUERIES: tuple[tuple[str, str], ...] = (
    ("sql", "SELECT id, score() AS s FROM docs WHERE MATCH(body, '{w} {v}') AND id >= {x} ORDER BY s DESC, id"),
    ("sql", "SELECT id, score() AS s FROM docs WHERE MATCH(body, '{w}') ORDER BY s DESC, id LIMIT 5"),
    ("sql", "SELECT id, body, score() AS s FROM docs WHERE MATCH(body, '{w}') AND id < {x} ORDER BY s DESC, id"),
    ("sql", "SELECT count(*) AS n FROM docs"),
    ("sql", "SELECT count(*) AS n FROM docs WHERE MATCH(body, '{w}')"),
    ("sql", "SELECT id, body FROM docs WHERE id % 50 = {r} ORDER BY id"),
    ("api", "{w} {v}"),
)


def _body(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))


def _jsonl(path: Path) -> list[dict[str, Any]]:
    """The whole lines of a journal (a line a kill cut short is not one)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines(keepends=True) if line.endswith("\n")]


class Log:
    """A journal of JSON lines, each handed to the operating system when written (a
    SIGKILL loses none of them)."""

    def __init__(self, path: Path) -> None:
        self._file = open(path, "a", buffering=1)
        self._lock = threading.Lock()

    def write(self, **record: Any) -> None:
        with self._lock:
            self._file.write(json.dumps(record) + "\n")
            self._file.flush()

    def __enter__(self) -> "Log":
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()


# -- the table's versions ------------------------------------------------------------------
def apply(rows: dict[int, str], op: dict[str, Any]) -> dict[int, str]:
    """The rows (``id`` -> body) after the write ``op``."""
    rows = dict(rows)
    if op["op"] in ("insert", "sql insert", "bulk insert"):
        rows.update((int(i), b) for i, b in op["rows"])
    elif op["op"] in ("delete", "sql delete"):
        for i in op["ids"]:
            rows.pop(i, None)
    elif op["op"] == "update":
        rows[op["id"]] = op["body"]
    return rows


@dataclass
class History:
    """The writes the journal says took effect, in order: ``ops[k]`` made version k + 1 of
    ``start`` rows; ``seen[k]`` the moment it was surely visible (acknowledged, or for a
    write a kill cut short but that took effect, the next write acknowledged after the
    restart), ``begun[k]`` when it began."""

    start: dict[int, str]
    ops: list[dict[str, Any]] = field(default_factory=list)
    begun: list[float] = field(default_factory=list)
    seen: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, journal: list[dict[str, Any]]) -> "History":
        history = cls({int(i): b for i, b in journal[0]["rows"]})
        unseen: list[int] = []  # (took effect, not acknowledged: seen at the next acknowledgement)
        begun: dict[int, dict[str, Any]] = {}
        for record in journal[1:]:
            if "begin" in record:
                begun[record["seq"]] = record
            elif "ack" in record or record.get("applied"):
                history.ops.append(begun[record["seq"]])
                history.begun.append(begun[record["seq"]]["begin"])
                history.seen.append(record.get("ack", float("inf")))
                if "ack" in record:
                    for k in unseen:
                        history.seen[k] = record["ack"]
                    unseen.clear()
                else:
                    unseen.append(len(history.ops) - 1)
        return history

    def candidates(self, t0: float, t1: float) -> range:
        """The versions a read between ``t0`` and ``t1`` may have read (both lists ascend)."""
        lo, hi = bisect.bisect_left(self.seen, t0), bisect.bisect_left(self.begun, t1)
        return range(lo, max(lo, hi) + 1)


# -- the writer ------------------------------------------------------------------------------
def _read_rows(db: Any) -> dict[int, str]:
    table = db.table("docs").to_arrow()
    return dict(zip(table.column("id").to_pylist(), table.column("body").to_pylist()))


def _resolve(db: Any, journal: list[dict[str, Any]], log: Log) -> dict[int, str]:
    """On starting: the table must hold every acknowledged write, and the write a kill cut
    short whole or not at all (journaled as ``applied``); raises AssertionError otherwise."""
    history = History.of(journal)
    expected = history.start
    for op in history.ops:
        expected = apply(expected, op)
    found = _read_rows(db)
    done = {r["seq"] for r in journal if "ack" in r or "applied" in r}
    pending = [r for r in journal if "begin" in r and r["seq"] not in done]
    assert len(pending) <= 1, pending
    if pending:
        after = apply(expected, pending[0])
        applied = found == after and found != expected
        assert found in (expected, after), f"the table after a kill in {pending[0]['op']} is no version of it"
        log.write(seq=pending[0]["seq"], applied=applied, at=time.monotonic())
        return after if applied else expected
    assert found == expected, "the table lost or changed acknowledged writes"
    return expected


def writer_main(root: Path, seed: int, kill_kind: str) -> None:
    """Write until killed (inside a write of ``kill_kind``, at one of its durable steps) or
    until ``root/stop`` exists; a reader thread queries meanwhile."""
    import datafusion_fts as fts

    log = Log(root / "journal.jsonl")
    db = fts.connect(root / "db", config=CONFIG)
    rows = _resolve(db, _jsonl(root / "journal.jsonl"), log)
    rng = random.Random(seed)
    stop = threading.Event()
    reader = threading.Thread(target=_read, args=(db, root / f"answers-thread-{seed}.jsonl", seed, stop), daemon=True)
    reader.start()
    next_id = max(rows, default=-1) + 1
    current = [""]

    def stepping(real: Any) -> Any:
        def step(*args: Any) -> Any:
            if current[0] == kill_kind and rng.random() < 0.4:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args)

        return step

    os.fsync, os.replace = stepping(os.fsync), stepping(os.replace)
    seq = max((r.get("seq", 0) for r in _jsonl(root / "journal.jsonl")), default=0)
    while not (root / "stop").exists():
        op = _next_op(rng, rng.choice(KINDS), rows, next_id, _body, ROWS)
        next_id += len(op.get("rows", ()))
        seq += 1
        log.write(seq=seq, begin=time.monotonic(), **op)
        current[0] = op["op"]
        _write(db, op)
        current[0] = ""
        log.write(seq=seq, ack=time.monotonic(), fragments=len(db.manifest.tables["docs"].fragments))
        rows = apply(rows, op)
    stop.set()
    reader.join()


def _next_op(rng: random.Random, kind: str, rows: dict[int, str], next_id: int, body: Any,
             size: int) -> dict[str, Any]:
    """A write of ``kind`` on the table of ``rows`` (new rows from ``next_id`` on, their
    text by ``body(rng)``); a flush in place of a delete or update of an empty table.
    Deletes take more rows the more the table holds past ``size``, which it then stays
    about (inserts add more rows than deletes take)."""
    if kind in ("insert", "sql insert", "bulk insert"):
        n = rng.randint(10, 40) if kind == "bulk insert" else rng.randint(1, 4)
        return {"op": kind, "rows": [(next_id + i, body(rng)) for i in range(n)]}
    if kind in ("delete", "sql delete") and rows:
        n = rng.randint(1, 6) + max(0, len(rows) - size) // 10
        return {"op": kind, "ids": rng.sample(sorted(rows), min(len(rows), n))}
    if kind == "update" and rows:
        return {"op": kind, "id": rng.choice(sorted(rows)), "body": body(rng)}
    return {"op": "flush" if kind != "optimize" else kind}


def _write(db: Any, op: dict[str, Any]) -> None:
    import pyarrow as pa

    t, kind = db.table("docs"), op["op"]
    if kind in ("insert", "bulk insert"):
        data = pa.table({"id": [i for i, _ in op["rows"]], "body": [b for _, b in op["rows"]]})
        t.insert(data) if kind == "insert" else t.bulk_insert(data)
    elif kind == "sql insert":
        db.sql("INSERT INTO docs VALUES " + ", ".join(f"({i}, '{b}')" for i, b in op["rows"])).to_arrow_table()
    elif kind == "delete":
        t.delete(f"id IN ({', '.join(map(str, op['ids']))})")
    elif kind == "sql delete":
        db.sql(f"DELETE FROM docs WHERE id IN ({', '.join(map(str, op['ids']))})").to_arrow_table()
    elif kind == "update":
        db.sql(f"UPDATE docs SET body = '{op['body']}' WHERE id = {op['id']}").to_arrow_table()
    elif kind == "flush":
        t.flush()
    else:
        db.sql("OPTIMIZE docs").to_arrow_table()


# -- readers -----------------------------------------------------------------------------------
def _query(rng: random.Random) -> tuple[int, dict[str, Any]]:
    return rng.randrange(len(QUERIES)), {"w": rng.choice(WORDS), "v": rng.choice(WORDS), "x": rng.randrange(0, 1000, 50),
                                          "r": rng.randrange(50)}


def _answer(db: Any, i: int, text: str) -> list[list[Any]]:
    from datafusion_fts.query import parse

    if QUERIES[i][0] == "api":
        found = db.table("docs").search(parse(text, ["body"]), limit=None, columns=["id"])
        pairs = zip(found.column("id").to_pylist(), found.column("_score").to_pylist())
        return [list(p) for p in sorted(pairs, key=lambda p: (-p[1], p[0]))]
    table = db.sql(text).to_arrow_table()
    return [list(r) for r in zip(*(table.column(c).to_pylist() for c in table.column_names))]


def _read(db: Any, path: Path, seed: int, stop: threading.Event | None = None, root: Path | None = None) -> None:
    """Query ``db`` until ``stop`` is set (or ``root/stop`` exists), writing each answer
    and the moments it was asked and answered, or the error, to ``path``; every 20
    queries, the descriptors this process holds."""
    log = Log(path)
    rng = random.Random(seed)
    n = 0
    while not (stop is not None and stop.is_set()) and not (root is not None and (root / "stop").exists()):
        i, params = _query(rng)
        text = QUERIES[i][1].format(**params)
        t0 = time.monotonic()
        try:
            answer = _answer(db, i, text)
        except Exception as exc:  # (every error is a finding: counted, never hidden)
            log.write(error=f"{type(exc).__name__}: {exc}", query=text)
            continue
        log.write(q=i, params=params, t0=t0, t1=time.monotonic(), answer=answer)
        time.sleep(rng.uniform(0, PAUSE))  # (readers leave the writer some of the machine)
        n += 1
        if n % 20 == 0:
            log.write(fds=len(os.listdir("/proc/self/fd")))


def reader_main(root: Path, name: str, seed: int, read_only: bool) -> None:
    import datafusion_fts as fts

    db = fts.connect(root / "db", read_only=read_only)
    _read(db, root / f"answers-{name}.jsonl", seed, root=root)


# -- the oracle ---------------------------------------------------------------------------------
class Oracle:
    """What each query answers on each version of the table, by the brute-force reference
    (ties ordered by ``id``, as the queries order them). Versions are made as answers ask
    for them, oldest first, and forgotten once no answer left may read them."""

    def __init__(self, history: History) -> None:
        self.history = history
        self._versions: dict[int, tuple[dict[int, str], Any]] = {0: (history.start, None)}
        self._answers: dict[tuple[int, int, str], list[list[Any]]] = {}

    def version(self, k: int) -> tuple[dict[int, str], Any]:
        """Version ``k``'s rows and its reference evaluator (made once: its statistics
        are computed once per version and column)."""
        from reference import Evaluator, RefTable

        built = max(v for v in self._versions if v <= k)
        for v in range(built + 1, k + 1):
            self._versions[v] = (apply(self._versions[v - 1][0], self.history.ops[v - 1]), None)
        rows, evaluator = self._versions[k]
        if evaluator is None:
            evaluator = Evaluator(RefTable(rows={i: {"body": b} for i, b in rows.items()}))
            self._versions[k] = (rows, evaluator)
        return rows, evaluator

    def forget_before(self, k: int) -> None:
        kept = max(v for v in self._versions if v <= k)  # (the later ones are made from it)
        for old in [v for v in self._versions if v < kept]:
            del self._versions[old]
        self._answers = {key: a for key, a in self._answers.items() if key[0] >= k}

    def answer(self, k: int, i: int, params: dict[str, Any]) -> list[list[Any]]:
        key = (k, i, json.dumps(params, sort_keys=True))
        if key not in self._answers:
            self._answers[key] = self._expected(k, i, params)
        return self._answers[key]

    def _expected(self, k: int, i: int, params: dict[str, Any]) -> list[list[Any]]:
        from reference import java_order_key

        from datafusion_fts.query import parse

        rows, evaluator = self.version(k)
        sql = QUERIES[i][1]
        if "MATCH" not in sql and QUERIES[i][0] == "sql":
            if "count(*)" in sql:
                return [[len(rows)]]
            return [[r, rows[r]] for r in sorted(rows) if r % 50 == params["r"]]
        words = params["w"] + (" " + params["v"] if "{v}" in sql else "")
        hits = sorted(evaluator.eval(parse(words, ["body"])).items(), key=lambda h: java_order_key(h[1], h[0]))
        if "count(*)" in sql:
            return [[len(hits)]]
        if ">= {x}" in sql:
            hits = [(r, s) for r, s in hits if r >= params["x"]]
        if "< {x}" in sql:
            hits = [(r, s) for r, s in hits if r < params["x"]]
        if "LIMIT 5" in sql:
            hits = hits[:5]
        if "body, score()" in sql:
            return [[r, rows[r], s] for r, s in hits]
        return [[r, s] for r, s in hits]


def judge(root: Path) -> dict[str, Any]:
    """Every answer against the versions it may have read (newest first); the figures."""
    journal = _jsonl(root / "journal.jsonl")
    history = History.of(journal)
    figures: Counter[str] = Counter()
    wrong: list[dict[str, Any]] = []
    errors: list[str] = []
    fds: list[int] = []
    for path in sorted(root.glob("answers-*.jsonl")):  # (each a reader's, in the order it asked)
        place = path.stem.split("-")[1]
        oracle = Oracle(history)
        with open(path) as lines:
            for line in lines:
                if not line.endswith("\n"):
                    break  # (a line a kill cut short: its reader was the writer's thread)
                record = json.loads(line)
                if "fds" in record:
                    fds.append(record["fds"])
                elif "error" in record:
                    errors.append(record["error"])
                else:
                    figures[place] += 1
                    candidates = history.candidates(record["t0"], record["t1"])
                    oracle.forget_before(candidates[0])
                    if not any(oracle.answer(k, record["q"], record["params"]) == record["answer"]
                               for k in reversed(candidates)):
                        wrong.append(record)
    acknowledged = {r["seq"] for r in journal if "ack" in r}
    killed = Counter(r["op"] for r in journal if "begin" in r and r["seq"] not in acknowledged)
    return {
        "answers checked": sum(figures.values()),
        "answers by place": dict(figures),
        "writes acknowledged": len(acknowledged),
        "kills inside a write, by kind": dict(killed),
        "answers matching no version": len(wrong),
        "wrong": wrong[:3],
        "reader errors": len(errors),
        "errors": errors[:3],
        "most fragments": max((r["fragments"] for r in journal if "fragments" in r), default=0),
        "most reader descriptors": max(fds, default=0),
    }


# -- the run -------------------------------------------------------------------------------------
def _directory_bytes(path: Path) -> int:
    return sum(p.stat().st_size for d in ("data", "index") for p in (path / d).rglob("*") if p.is_file())


def _kill_and_restart(root: Path, me: list[str], seconds: float, rng: random.Random) -> int:
    """Run the writer for ``seconds``, killed at a durable step of a write of each kind in
    turn, or at any moment, and started again; the kills."""
    deadline = time.monotonic() + seconds
    kills = 0
    while time.monotonic() < deadline:
        target = (*KINDS, "any moment")[kills % (len(KINDS) + 1)]
        writer = subprocess.Popen([*me, "writer", str(root), str(rng.randrange(1 << 30)), target])
        end = min(deadline, time.monotonic() + rng.uniform(2, 5)) if target == "any moment" else deadline
        while writer.poll() is None and time.monotonic() < end:
            time.sleep(0.02)
        if writer.poll() is None and time.monotonic() < deadline:
            writer.kill()
        elif writer.poll() is None:
            (root / "stop").touch()
        writer.wait()
        if writer.returncode not in (0, -signal.SIGKILL):
            raise AssertionError(f"the writer failed (exit {writer.returncode}): see its output")
        kills += writer.returncode == -signal.SIGKILL
    return kills


def run(root: Path, seconds: float, seed: int = 45) -> dict[str, Any]:
    """Soak a database in ``root`` for ``seconds``; the figures (see :func:`judge`), with
    the rows lost (0: the table holds every acknowledged write) and the directory's size
    after OPTIMIZE against a fresh build of the same rows."""
    import pyarrow as pa

    import datafusion_fts as fts

    rng = random.Random(seed)
    start = {i: _body(rng) for i in range(200)}
    db = fts.connect(root / "db", config=CONFIG)
    db.create_table("docs", pa.table({"id": list(start), "body": list(start.values())})).create_index("body")
    del db
    with Log(root / "journal.jsonl") as log:
        log.write(rows=sorted(start.items()))
    me = [sys.executable, str(Path(__file__).resolve())]
    readers = [subprocess.Popen([*me, "reader", str(root), name, str(seed + n), *(["--read-only"] if ro else [])])
               for n, (name, ro) in enumerate((("process", False), ("readonly", True)), 1)]
    try:
        kills = _kill_and_restart(root, me, seconds, rng)
    finally:
        (root / "stop").touch()  # (the readers stop, whatever happened)
        for reader in readers:
            reader.wait()
    assert all(reader.returncode == 0 for reader in readers), "a reader failed: see its output"
    figures = judge(root)
    figures["writer kills"] = kills
    db = fts.connect(root / "db", config=CONFIG)
    with Log(root / "journal.jsonl") as log:
        rows = _resolve(db, _jsonl(root / "journal.jsonl"), log)
    figures["acknowledged rows lost"] = 0  # (_resolve raises otherwise)
    figures["live rows"] = len(rows)
    db.sql("OPTIMIZE docs")
    figures["fragments after OPTIMIZE"] = len(db.manifest.tables["docs"].fragments)
    del db  # (opened again past the grace period: the files OPTIMIZE retired are deleted)
    fts.connect(root / "db", config={**CONFIG, "fts.gc_grace_seconds": 0})
    fresh = fts.connect(root / "fresh")
    ids = sorted(rows)
    fresh.create_table("docs", pa.table({"id": ids, "body": [rows[i] for i in ids]})).create_index("body")
    figures["size after OPTIMIZE / fresh build"] = round(_directory_bytes(root / "db") / _directory_bytes(root / "fresh"), 3)
    return figures


# A read-only reader allowed 256 descriptors: counts the rows, searches, fetches every row;
# prints the descriptors it then holds.
LIMITED_READER = """
import os, resource, sys
import datafusion_fts as fts
resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
db = fts.connect(sys.argv[1], read_only=True)
db.sql("SELECT count(*) FROM docs").to_arrow_table()
db.sql("SELECT id, body, score() AS s FROM docs WHERE MATCH(body, 'w1 w2') AND id >= 0").to_arrow_table()
db.table("docs").to_arrow()
print(len(os.listdir("/proc/self/fd")))
"""
# Kinds of the churn's writes, by weight: OPTIMIZE one in a hundred.
CHURN = {"insert": 30, "sql insert": 10, "bulk insert": 10, "delete": 20, "sql delete": 5, "update": 20, "flush": 4,
         "optimize": 1}


def churn(root: Path, writes: int, seed: int = 45) -> dict[str, Any]:
    """``writes`` mixed writes (:data:`CHURN`) in one process with the default settings,
    rows of 20 to 60 words of 3,000; the most fragments the table had and the policy's
    bound then (``fts.max_fragments``, or 2 per 2^20 live rows), the most descriptors a
    read-only reader held (one every tenth of the writes), and the directory's size after
    OPTIMIZE against a fresh build of the same rows."""
    import pyarrow as pa

    import datafusion_fts as fts
    from datafusion_fts.storage.stores.append_rows import FRAGMENT_ROWS

    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(3000)]

    def body(rng: random.Random) -> str:
        return " ".join(rng.choices(vocabulary, k=rng.randint(20, 60)))

    rows = {i: body(rng) for i in range(1000)}
    db = fts.connect(root / "db", config={"fts.gc_grace_seconds": 0})
    db.create_table("docs", pa.table({"id": list(rows), "body": list(rows.values())})).create_index("body")
    most = db.settings.get("fts.max_fragments")
    figures: Counter[str] = Counter()
    kinds, weights = list(CHURN), list(CHURN.values())
    next_id = len(rows)
    for n in range(1, writes + 1):
        op = _next_op(rng, rng.choices(kinds, weights)[0], rows, next_id, body, CHURN_ROWS)
        next_id += len(op.get("rows", ()))
        _write(db, op)
        rows = apply(rows, op)
        figures[op["op"]] += 1
        fragments = len(db.manifest.tables["docs"].fragments)
        figures["most fragments"] = max(figures["most fragments"], fragments)
        figures["writes past the bound"] += fragments > max(most, 2 * len(rows) // FRAGMENT_ROWS + 1)
        if n % max(1, writes // 10) == 0:
            reader = subprocess.run([sys.executable, "-c", LIMITED_READER, str(root / "db")], capture_output=True,
                                    text=True, check=True)
            figures["most reader descriptors"] = max(figures["most reader descriptors"], int(reader.stdout))
            figures["writer descriptors"] = max(figures["writer descriptors"], len(os.listdir("/proc/self/fd")))
            print(json.dumps({"writes": n, "live rows": len(rows), **figures}), flush=True)  # (a long run's progress)
    assert _read_rows(db) == rows, "the table is not what its writes made it"
    db.sql("OPTIMIZE docs")
    figures["fragments after OPTIMIZE"] = len(db.manifest.tables["docs"].fragments)
    figures["live rows"] = len(rows)
    fresh = fts.connect(root / "fresh")
    ids = sorted(rows)
    fresh.create_table("docs", pa.table({"id": ids, "body": [rows[i] for i in ids]})).create_index("body")
    result: dict[str, Any] = dict(figures)
    result["size after OPTIMIZE / fresh build"] = round(_directory_bytes(root / "db") / _directory_bytes(root / "fresh"), 3)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("role", nargs="?", default="run", choices=("run", "churn", "writer", "reader"))
    parser.add_argument("args", nargs="*")
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--writes", type=int, default=100_000, help="writes of the churn")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--read-only", action="store_true")
    options = parser.parse_args()
    if options.role == "writer":
        writer_main(Path(options.args[0]), int(options.args[1]), options.args[2])
    elif options.role == "reader":
        reader_main(Path(options.args[0]), options.args[1], int(options.args[2]), options.read_only)
    else:
        root = Path(tempfile.mkdtemp(prefix="soak-"))
        began = time.monotonic()
        figures = (churn(root, options.writes, options.seed) if options.role == "churn"
                   else run(root, options.minutes * 60, options.seed))
        figures["wall seconds"] = round(time.monotonic() - began)
        print(json.dumps(figures, indent=2))
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
