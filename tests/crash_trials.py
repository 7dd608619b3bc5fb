"""kill -9 during a flush and during OPTIMIZE (docs/design.md: "Commits, garbage collection
and recovery"): a child process opens a copy of a small database and runs the operation,
and is killed (SIGKILL) at one of its durable steps or after a random delay. Every state a
crash can leave lies between two durable steps, an ``os.fsync`` or an ``os.replace`` (a
rename into place), so a child stopped on entering its Nth step and killed there leaves
the Nth of them; random delays add kills in the middle of a file being written.

After each kill the database must open, hold every acknowledged row once with its row id,
answer every search as the untouched copy does (ids and bit-identical scores), and name no
missing file, with nothing left of the interrupted write once it is open; then the
operation must run to its end on it and change no answer.

Run as a script for the long run (docs/guide/guarantees.md quotes its counts):
``python tests/crash_trials.py [RANDOM_KILLS_PER_OPERATION] [SEED]`` kills each operation at
every one of its steps, then at as many random moments.
"""

from __future__ import annotations

import gc
import json
import random
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

import datafusion_fts as fts
from datafusion_fts.query import Match, Phrase, Prefix

OPERATIONS = ("flush", "optimize")
WORDS = [f"w{i}" for i in range(60)]
QUERIES = ["w1 w2", "+w3 +w5", "w7 -w8", Phrase("body", "w1 w2"), Prefix("body", "w1"), Match("title", "w4 w9")]
OURS = re.compile(r"^(frag|dv|seg)-\d{8}")

CHILD = textwrap.dedent(
    """
    import os, sys, time
    import datafusion_fts as fts

    path, operation, stop = sys.argv[1], sys.argv[2], sys.argv[3]
    table = fts.connect(path).table("docs")
    steps, commits = [0], [0]
    kind, _, number = stop.rpartition(":")  # "N", "commit:K", "committed:K"; "0": never

    def stepping(real, name):
        def step(*args):
            target = os.path.relpath(os.readlink(f"/proc/self/fd/{args[0]}") if name == "fsync" else args[1], path)
            if target.startswith(".."):  # (not the database's files)
                return real(*args)
            steps[0] += 1
            commit = name == "replace" and target == "manifest.json"
            print("step", steps[0], name, target, flush=True)
            if (kind == "" and steps[0] == int(number)) or (kind == "commit" and commit and commits[0] + 1 == int(number)) or (
                    kind == "committed" and commits[0] == int(number)):
                print("stopped", flush=True)
                time.sleep(3600)  # (killed here)
            commits[0] += commit
            return real(*args)
        return step

    os.fsync, os.replace = stepping(os.fsync, "fsync"), stepping(os.replace, "replace")
    print("ready", flush=True)
    sys.stdin.readline()
    start = time.perf_counter()
    table.flush() if operation == "flush" else table.optimize()
    print("done", steps[0], time.perf_counter() - start, flush=True)
    """
)


def _rows(lo: int, n: int, seed: int) -> pa.Table:
    rng = random.Random(seed)
    return pa.table({
        "id": pa.array(range(lo, lo + n), pa.int64()),
        "title": [" ".join(rng.sample(WORDS[:12], 2)) for _ in range(n)],
        "body": [" ".join(rng.choice(WORDS[: rng.choice((12, 60))]) for _ in range(rng.randint(2, 10))) for _ in range(n)],
    })


def build(path: Path, operation: str) -> None:
    """For a flush: 1,500 committed rows and 3 acknowledged inserts (900 fresh rows in the
    log). For OPTIMIZE: three fragments and segments, deleted rows in each, a tail of rows
    no index covers (a bulk insert) and 300 fresh rows (flushed first)."""
    db = fts.connect(path)
    t = db.create_table("docs", _rows(0, 1500, 1))
    t.create_index("body", positions=True)
    t.create_index("title")
    if operation == "flush":
        for i in range(3):
            t.insert(_rows(1500 + 300 * i, 300, 2 + i))
    else:
        for i in range(2):
            t.insert(_rows(1500 + 500 * i, 500, 2 + i))
            t.flush()
        t.delete("id % 11 = 3")
        t.bulk_insert(_rows(2500, 400, 5))
        t.insert(_rows(2900, 300, 6))
    del db, t
    gc.collect()


def answers(db: fts.Database) -> list[Any]:
    """Every row (row id, id, body) and the answers to searches of every kind."""
    t = db.table("docs")
    rows = t.to_arrow().sort_by("_rowid")
    out: list[Any] = [list(zip(*(rows.column(c).to_pylist() for c in ("_rowid", "id", "body"))))]
    for q in QUERIES:
        found = t.search(q, limit=None, columns=[])
        out.append(list(zip(found.column("_rowid").to_pylist(), map(repr, found.column("_score").to_pylist()))))
    out.append(db.sql("SELECT count(*) AS n, sum(id) AS s FROM docs").to_pylist())
    return out


def check_files(db: fts.Database, path: Path) -> None:
    """Every file the manifest names is there, and nothing else of ours is (recovery has
    deleted what the killed write left)."""
    manifest = db.manifest
    for file_id in manifest.file_ids():
        where = (path / "index" / file_id) if file_id.startswith("seg-") else (
            path / "data" / f"{file_id}{'.parquet' if file_id.startswith('frag-') else '.arrow'}")
        assert where.exists(), f"{file_id} is named by the manifest but missing"
    kept = manifest.kept_files(time.time(), db.settings.get("fts.gc_grace_seconds"))
    for entry in [*(path / "data").iterdir(), *(path / "index").iterdir()]:
        match = OURS.match(entry.name)
        assert match and match.group(0) in kept and not entry.name.endswith(".tmp"), f"{entry.name} was left"


def run_child(script: Path, path: Path, operation: str, stop: str, delay: float | None) -> tuple[list[str], bool]:
    """Run the operation in a child, kill it on entering a step or ``delay`` seconds after it
    starts; its output lines and whether it finished first. ``stop``: ``"N"`` the Nth step,
    ``"commit:K"`` the Kth rename of the manifest (the Kth commit), ``"committed:K"`` the
    step after it; ``"0"`` none."""
    with subprocess.Popen([sys.executable, str(script), str(path), operation, stop],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as child:
        assert child.stdin is not None and child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        child.stdin.write("go\n")
        child.stdin.flush()
        lines = []
        if delay is None:
            for line in child.stdout:
                lines.append(line.strip())
                if line.startswith(("done", "stopped")):
                    break
        else:
            time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        lines += [x.strip() for x in child.stdout]
        child.wait()
    return lines, any(x.startswith("done") for x in lines)


def trial(pristine: Path, work: Path, script: Path, operation: str, expected: list[Any],
          stop: str = "0", delay: float | None = None) -> dict[str, Any]:
    """Kill one run of ``operation`` on a copy of ``pristine``, then check the database
    (AssertionError on any failure); what the kill interrupted."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(pristine, work)
    before = json.loads((work / "manifest.json").read_text())["version"]
    lines, finished = run_child(script, work, operation, stop, delay)
    db = fts.connect(work)
    committed = db.manifest.version - before
    assert answers(db) == expected, f"{operation} killed at {lines[-1:]}: different answers after reopening"
    check_files(db, work)
    t = db.table("docs")
    t.flush() if operation == "flush" else t.optimize()
    assert answers(db) == expected, f"{operation} killed at {lines[-1:]}: different answers once finished"
    check_files(db, work)
    del db, t
    gc.collect()
    return {"finished": finished, "commits": committed, "steps": sum(x.startswith("step") for x in lines)}


def calibrate(pristine: Path, work: Path, script: Path, operation: str) -> tuple[list[str], float]:
    """The steps of an uninterrupted run, and how long it took."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(pristine, work)
    lines, finished = run_child(script, work, operation, "0", None)
    assert finished, lines
    return [x for x in lines if x.startswith("step")], float(lines[-1].split()[2])


def setup(root: Path, operation: str) -> tuple[Path, Path, list[Any]]:
    """(the pristine database, the child script, the expected answers) for ``operation``."""
    pristine = root / f"pristine-{operation}"
    build(pristine, operation)
    db = fts.connect(pristine)
    expected = answers(db)
    del db
    gc.collect()
    script = root / "child.py"
    script.write_text(CHILD)
    return pristine, script, expected


if __name__ == "__main__":
    import tempfile
    from collections import Counter

    random_kills = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 19)
    with tempfile.TemporaryDirectory() as tmp:
        for operation in OPERATIONS:
            begin = time.perf_counter()
            pristine, script, expected = setup(Path(tmp), operation)
            work = Path(tmp) / "work"
            steps, seconds = calibrate(pristine, work, script, operation)
            outcomes: Counter = Counter()
            for stop in range(1, len(steps) + 1):
                result = trial(pristine, work, script, operation, expected, stop=str(stop))
                outcomes[f"on entering a step, after {result['commits']} commits"] += 1
            for _ in range(random_kills):
                result = trial(pristine, work, script, operation, expected, delay=rng.uniform(0, seconds * 1.5))
                outcomes["at random, " + ("after it finished" if result["finished"] else "before its first step"
                                          if not result["steps"] else f"after {result['commits']} commits")] += 1
            print(f"{operation}: {len(steps)} steps ({seconds * 1000:.0f} ms uninterrupted), "
                  f"{sum(outcomes.values())} kills, all checks passed ({time.perf_counter() - begin:.0f} s)")
            for step in steps:
                print("   ", step)
            for what, count in sorted(outcomes.items()):
                print(f"    killed {what}: {count}")
