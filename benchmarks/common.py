"""Small helpers the benchmark scripts share: child processes, process memory, git state, load.

The corpus, machine description, CPU-load sampling and the docs section writer live in
``bench_core.py`` (imported by the others); this module holds what the later scripts had each
written again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULT_PREFIX = "BENCH_RESULT "
# The corpora bench_peers runs on (``corpus.py``): the seeded Zipf one and real text. Here, not
# in corpus.py, so that choosing one imports neither numpy nor pyarrow into a measured child.
CORPORA = ("synthetic", "stdlib")


def corpus_of(meta: dict) -> str:
    """The corpus a peers run measured (results of runs before the option were all synthetic)."""
    return meta.get("corpus", "synthetic")


def peers_prefix(meta: dict) -> str:
    """File-name prefix of a peers run's plots and results copy in docs/img/: ``peers`` for the
    synthetic corpus, ``peers-<corpus>`` for another, so neither overwrites the other."""
    corpus = corpus_of(meta)
    return "peers" if corpus == "synthetic" else f"peers-{corpus}"


def emit_result(result: dict) -> None:
    """Print a child's result on the line ``run_child`` looks for."""
    print(RESULT_PREFIX + json.dumps(result), flush=True)


def run_child(script: str | os.PathLike[str], argv: list[str], log: Callable[[str], None],
              python: str = sys.executable, env: dict[str, str] | None = None) -> dict:
    """Run ``python script *argv`` in a fresh interpreter (this one's, or ``python``; with
    ``env`` as its environment, or this one's) and return the result it emitted.

    A fresh process per measured system keeps its peak RSS its own (``VmHWM`` is read in
    the child)."""
    proc = subprocess.run([python, str(script), *argv], stdout=subprocess.PIPE, text=True, check=True, env=env)
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX):])
            log(f"child {' '.join(argv)}: {json.dumps(result)}")
            return result
    raise RuntimeError(f"child {Path(script).name} {' '.join(argv)} printed no result:\n{proc.stdout}")


def proc_status_kb(keys: tuple[str, ...] = ("VmHWM", "VmRSS", "RssAnon", "RssFile")) -> dict[str, int]:
    """The named fields (kB) of this process's /proc/self/status."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key = line.split(":", 1)[0]
        if key in keys:
            out[key] = int(line.split()[1])
    return out


def git_state() -> str:
    """The commit measured, and whether src/ differed from it (others may edit concurrently)."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""

    head = git("rev-parse", "--short", "HEAD")
    if not head:
        return "unknown (not a git checkout)"
    dirty = git("status", "--porcelain", "--", "src")
    return f"`{head}`" + (" with uncommitted changes in `src/`" if dirty else " (clean `src/`)")


def loadavg() -> str:
    """The 1/5/15-minute load averages, formatted for a report."""
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def our_text(cls: str, terms: tuple[str, ...]) -> str:
    """Our query string for a ``bench_core`` query class (``+`` marks MUST, ``-`` MUST_NOT);
    Tantivy's query parser reads it the same way."""
    if cls in ("frequent", "rare"):
        return terms[0]
    if cls in ("or2", "or3"):
        return " ".join(terms)
    if cls in ("and2", "and2_fm"):
        return " ".join(f"+{t}" for t in terms)
    if cls == "must_not":
        return f"+{terms[0]} -{terms[1]}"
    raise ValueError(cls)


def fts5_text(cls: str, terms: tuple[str, ...]) -> str:
    """SQLite FTS5 MATCH operand for a ``bench_core`` query class (terms quoted, so no word is
    read as an FTS5 keyword)."""
    q = [f'"{t}"' for t in terms]
    if cls in ("frequent", "rare"):
        return q[0]
    if cls in ("or2", "or3"):
        return " OR ".join(q)
    if cls in ("and2", "and2_fm"):
        return " AND ".join(q)
    if cls == "must_not":
        return f"{q[0]} NOT {q[1]}"
    raise ValueError(cls)
