"""Start-up benchmark (issue 33): what a fresh process pays before its first answer.

    python benchmarks/bench_start.py [--rows 1000] [--repeats 5] [--ray] [--install] [--no-docs]

A table of ``--rows`` docstrings of this Python's standard library (the demo's corpus) is
written once, indexed, to a database directory, and the same documents to a Tantivy index
on disk. Then, per repetition, each system answers one query in a **fresh interpreter**
(the two alternate): import, open the index, run ``top-10`` returning the rows' ``id`` and
``title``. Reported: the child's own phases (import, open, first search), the whole process
from spawn to exit as the parent sees it, and the child's peak RSS (``VmHWM``).

``--ray`` adds the first search on a fresh local Ray cluster (``executor="ray"``: the
cluster and its actors start inside the timed call). ``--install`` adds the README's first
step in a clean copy of this commit: ``git clone`` → new venv → ``pip install -e .`` →
first search in a fresh process (install time counted apart).

Children run as a user's Python does, writing and reading the bytecode cache
(``__pycache__``): ``PYTHONDONTWRITEBYTECODE`` is dropped from their environment, and the
warm-up run writes the cache. With it set, every process compiles the package's ~150
modules from source again (about 0.1 s here), which no installed copy does after its first
run. The just-installed row is that copy's first run.

The report is printed and written to ``docs/benchmarks.md`` under ``## Start-up (issue 33)``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import ROOT, emit_result, git_state, proc_status_kb, run_child  # noqa: E402

SECTION = "## Start-up (issue 33)"
QUERY = "file system path"
SQL = f"SELECT id, title, score() AS s FROM docs WHERE MATCH(body, '{QUERY}') ORDER BY s DESC LIMIT 10"


# -- children (each in a fresh interpreter) ------------------------------------------------
def child_ours(path: str, executor: str) -> None:
    start = time.perf_counter()
    import datafusion_fts as fts

    imported = time.perf_counter()
    options = {"executor": "ray", "ray_init": {"num_cpus": 2, "include_dashboard": False}} if executor == "ray" else {}
    db = fts.connect(path, **options)
    opened = time.perf_counter()
    rows = db.sql(SQL).to_arrow_table()
    answered = time.perf_counter()
    assert rows.num_rows == 10, rows.num_rows
    emit_result({
        "import_s": imported - start, "open_s": opened - imported, "search_s": answered - opened,
        "first_id": rows.column("id")[0].as_py(), "vmhwm_mb": proc_status_kb()["VmHWM"] / 1024,
    })


def child_tantivy(path: str) -> None:
    start = time.perf_counter()
    import tantivy

    imported = time.perf_counter()
    index = tantivy.Index.open(path)
    searcher = index.searcher()
    opened = time.perf_counter()
    query = index.parse_query(QUERY, ["body"])
    hits = searcher.search(query, 10).hits
    rows = [(searcher.doc(address)["id"][0], searcher.doc(address)["title"][0]) for _, address in hits]
    answered = time.perf_counter()
    assert len(rows) == 10, len(rows)
    emit_result({
        "import_s": imported - start, "open_s": opened - imported, "search_s": answered - opened,
        "first_id": rows[0][0], "vmhwm_mb": proc_status_kb()["VmHWM"] / 1024,
    })


# -- the parent --------------------------------------------------------------------------
def prepare(root: Path, n_rows: int) -> tuple[Path, Path]:
    """A database with an indexed table of ``n_rows`` docstrings, and a Tantivy index of
    the same documents (default tokenizer; both on disk under ``root``)."""
    import tantivy

    import datafusion_fts as fts
    from datafusion_fts.demo_corpus import stdlib_docstrings

    docs = stdlib_docstrings(limit=n_rows).select(["id", "title", "body"])
    ours = root / "ours.db"
    db = fts.connect(str(ours))
    db.create_table("docs", docs).create_index("body")
    del db
    theirs = root / "tantivy"
    theirs.mkdir()
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("id", stored=True, indexed=True)
    builder.add_text_field("title", stored=True)
    builder.add_text_field("body", stored=False)
    index = tantivy.Index(builder.build(), path=str(theirs))
    writer = index.writer()
    for row in docs.to_pylist():
        writer.add_document(tantivy.Document(**row))
    writer.commit()
    writer.wait_merging_threads()
    return ours, theirs


# A user's environment: bytecode cached (see the module's docstring).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed_child(argv: list[str], python: str = sys.executable) -> dict:
    """Run this script's child ``argv`` in a fresh interpreter; its result plus the
    parent's spawn-to-exit time."""
    start = time.perf_counter()
    result = run_child(__file__, argv, lambda _: None, python, CHILD_ENV)
    result["process_s"] = time.perf_counter() - start
    return result


def install_clean(root: Path) -> tuple[float, str]:
    """The README's first step in a clean clone of HEAD: seconds, and the venv's python."""
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(clone / ".venv")], check=True)
    subprocess.run([str(clone / ".venv/bin/pip"), "install", "-q", "-e", str(clone)], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start, str(clone / ".venv/bin/python")


def _median(results: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in results)


def run(n_rows: int, repeats: int, with_ray: bool, with_install: bool) -> str:
    root = Path(tempfile.mkdtemp(prefix="fts-bench-start-"))
    try:
        ours_path, tantivy_path = prepare(root, n_rows)
        timed_child(["--child", "ours", str(ours_path)])  # (the OS page cache and bytecode warm for both)
        timed_child(["--child", "tantivy", str(tantivy_path)])
        runs: dict[str, list[dict]] = {"datafusion-fts (SQL)": [], "Tantivy": []}
        for _ in range(repeats):
            runs["datafusion-fts (SQL)"].append(timed_child(["--child", "ours", str(ours_path)]))
            runs["Tantivy"].append(timed_child(["--child", "tantivy", str(tantivy_path)]))
        if with_ray:
            runs["datafusion-fts on Ray (fresh cluster)"] = [
                timed_child(["--child", "ray", str(ours_path)]) for _ in range(max(1, repeats // 2))
            ]
        install_s = None
        if with_install:
            install_s, python = install_clean(root)
            runs["datafusion-fts, just installed (clean clone)"] = [
                timed_child(["--child", "ours", str(ours_path)], python=python)
            ]
        return report(runs, n_rows, repeats, install_s)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def report(runs: dict[str, list[dict]], n_rows: int, repeats: int, install_s: float | None) -> str:
    ours, peer = runs["datafusion-fts (SQL)"], runs["Tantivy"]
    lines = [
        SECTION,
        "",
        f"`python benchmarks/bench_start.py --rows {n_rows} --repeats {repeats}`; {git_state()}. "
        f"A fresh interpreter per run answers one top-10 query returning `id` and `title` "
        f"(`{SQL}`; Tantivy: the same terms in its query parser over the same {n_rows:,} docstrings, "
        "stored fields read for the 10 hits). Medians; seconds; peak RSS is the child's VmHWM; "
        "bytecode cached, as after an installed copy's first run.",
        "",
        f"**Fresh process, import + open + first search: ours {_median(ours, 'process_s'):.2f} s, "
        f"Tantivy {_median(peer, 'process_s'):.2f} s (ours / Tantivy {_median(ours, 'process_s') / _median(peer, 'process_s'):.2f}x, "
        f"lower is better); peak RSS ours {_median(ours, 'vmhwm_mb'):.0f} MB, Tantivy {_median(peer, 'vmhwm_mb'):.0f} MB "
        f"({_median(ours, 'vmhwm_mb') / _median(peer, 'vmhwm_mb'):.2f}x).**",
        "",
        "| system | runs | import | open | first search | in-process total | process (spawn → exit) | peak RSS MB |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, results in runs.items():
        total = statistics.median(r["import_s"] + r["open_s"] + r["search_s"] for r in results)
        lines.append(
            f"| {name} | {len(results)} | {_median(results, 'import_s'):.3f} | {_median(results, 'open_s'):.3f} "
            f"| {_median(results, 'search_s'):.3f} | {total:.3f} | {_median(results, 'process_s'):.3f} "
            f"| {_median(results, 'vmhwm_mb'):.0f} |"
        )
    if install_s is not None:
        lines += ["", f"Clean clone → new venv → `pip install -e .`: {install_s:.1f} s (builds the kernels); "
                  "its first search is the last row above."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ray", action="store_true", help="also the first search on a fresh local Ray cluster")
    parser.add_argument("--install", action="store_true", help="also a clean clone's install and first search")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("SYSTEM", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        system, path = args.child
        if system == "tantivy":
            child_tantivy(path)
        else:
            child_ours(path, system)
        return
    text = run(args.rows, args.repeats, args.ray, args.install)
    print(text)
    if not args.no_docs:
        import bench_core

        bench_core.write_docs_section(SECTION, text)


if __name__ == "__main__":
    main()
