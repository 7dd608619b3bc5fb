"""``connect(executor="ray")`` starts Ray and the search actors on a thread of their own
(``distributed/executor.py`` ``_BackgroundStart``): a failed start is raised at the first
use as an FtsError, and a process that ends while the start is under way leaves no Ray
process behind. Each case runs in a fresh interpreter, with no Ray running."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pytest

import datafusion_fts as fts

pytest.importorskip("ray")

SEARCH = "SELECT id FROM docs WHERE MATCH(body, 'beta') ORDER BY score() DESC LIMIT 1"


def _database(tmp_path: Path) -> str:
    path = str(tmp_path / "db")
    db = fts.connect(path)
    db.create_table("docs", pa.table({"id": [1, 2], "body": ["alpha beta", "beta beta"]}))
    db.table("docs").create_index("body")
    return path


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=240, check=False)


FAILED_START = f"""
import sys
import datafusion_fts as fts
db = fts.connect(sys.argv[1], executor="ray", ray_init={{"no_such_argument": 1}})
for attempt in range(2):
    try:
        db.sql("{SEARCH}").to_arrow_table()
        print("answered")
    except fts.FtsError as exc:
        print(type(exc).__name__, "no_such_argument" in str(exc))
"""


def test_a_failed_background_start_is_raised_at_the_first_use_as_an_fts_error(tmp_path):
    out = _run(FAILED_START, _database(tmp_path))
    assert out.returncode == 0, out.stderr
    # The first use raises the start's error; the next one starts Ray again, and fails
    # again the same way (ray.init refuses the argument), now in the foreground.
    lines = out.stdout.splitlines()
    assert lines[0] == "DistributedError True"
    assert len(lines) == 2 and lines[1] != "answered"


EXIT_WHILE_STARTING = """
import os, sys, time
import datafusion_fts as fts
temp = sys.argv[2]
db = fts.connect(sys.argv[1], executor="ray",
                 ray_init={"num_cpus": 1, "include_dashboard": False, "_temp_dir": temp})
deadline = time.monotonic() + 60
while time.monotonic() < deadline:  # (until Ray's first process runs: the start is under way)
    if any(temp in open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace")
           for p in os.listdir("/proc") if p.isdigit() and os.path.exists(f"/proc/{p}/cmdline")):
        print("started")
        break
    time.sleep(0.02)
"""


def _ray_processes(temp: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if temp in cmdline:
            found.append(f"{pid}: {cmdline[:120]}")
    return found


def test_a_process_ending_while_ray_starts_leaves_no_ray_process(tmp_path):
    temp = tempfile.mkdtemp(prefix="ftsray", dir="/tmp")  # (short: Ray's socket paths are limited)
    try:
        out = _run(EXIT_WHILE_STARTING, _database(tmp_path), temp)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == ["started"]
        deadline = time.monotonic() + 30
        while _ray_processes(temp) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _ray_processes(temp) == []
    finally:
        shutil.rmtree(temp, ignore_errors=True)
