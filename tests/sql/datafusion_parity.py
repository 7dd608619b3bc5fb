"""The differential run against DataFusion's own sqllogictest files (issue 31): every record
of the chosen files on plain DataFusion (``ctx.sql``) and through ``db.sql`` in memory
(``connect(ctx=ctx)``) and in a database directory; counts and every record that is not
identical, as a Markdown report (docs/sqllogictest.md).

DataFusion's files are not part of this repository: fetch apache/datafusion (or
pydantic/datafusion, a fork that tracks it), with the data its records read where
available (apache/arrow-testing's ``data/csv`` under ``testing/``, apache/parquet-testing
under ``parquet-testing/``, both beside ``datafusion/``), then:

    python tests/sql/datafusion_parity.py <checkout>/datafusion/sqllogictest/test_files \\
        --report docs/sqllogictest.md

Each file runs in each setup in a fresh process, from the directory above the files (their
relative paths start there), with its scratch directory emptied first.
"""

from __future__ import annotations

import argparse
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sqllogic import SETUPS, Outcome, Record, Tally, parse_slt, run_records  # noqa: E402

# The files of the measurement: DataFusion's SQL surface a user's statements touch.
FILES = (
    "select", "limit", "order", "cte", "subquery", "union", "case", "functions", "strings", "ddl",
    "insert", "dml_update", "dml_delete", "predicates", "expr", "math", "scalar", "struct",
    "information_schema", "explain", "joins", "group_by", "aggregate", "window", "describe", "copy",
)
TIMEOUT_S = 900
# The differences that are not wrong answers: listed in the report, their outputs not shown.
_LISTED = ("rounding", "layout", "plan", "functions")


def _run_one(path: Path, setup: str, out: Path, searched: bool) -> None:
    """(In a child process.) Run every record of ``path`` in ``setup`` (with a search added
    where one fits, if ``searched``); pickle the outcomes."""
    records = parse_slt(path.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        outcomes = run_records(records, setup, Path(tmp) / "db", searched)
    out.write_bytes(pickle.dumps(outcomes))


def _run_file(path: Path, searched: bool = False) -> tuple[list[Record], dict[str, list[Outcome]], float]:
    records = parse_slt(path.read_text())
    results: dict[str, list[Outcome]] = {}
    start = time.perf_counter()
    for setup in SETUPS:
        shutil.rmtree(path.parent / "scratch" / path.stem, ignore_errors=True)
        with tempfile.NamedTemporaryFile(suffix=".pickle") as out:
            done = subprocess.run(
                [sys.executable, __file__, "--one", str(path), setup, out.name, *(["--searched"] if searched else [])],
                cwd=path.parent.parent, capture_output=True, text=True, timeout=TIMEOUT_S,
            )
            if done.returncode != 0 or not Path(out.name).stat().st_size:
                crash = (done.stderr or "").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
                results[setup] = [Outcome(error=f"the process died: {crash[0]}")] * len(records)
                print(f"{path.stem}: the {setup} process died: {crash[0]}", file=sys.stderr, flush=True)
            else:
                results[setup] = pickle.loads(Path(out.name).read_bytes())
    shutil.rmtree(path.parent / "scratch" / path.stem, ignore_errors=True)
    return records, results, time.perf_counter() - start


def _percent(n: int, total: int) -> str:
    return f"{100 * n / total:.2f} %" if total else "-"


def report(tallies: dict[str, Tally], per_file: dict[str, dict[str, Tally]], source: str) -> str:
    lines = [
        "# DataFusion's sqllogictest files through `db.sql`",
        "",
        "Written by `tests/sql/datafusion_parity.py` (issue 31). Every record of DataFusion's own",
        f"sqllogictest files ({source}) runs in order on a plain `SessionContext` (`ctx.sql`,",
        "the reference) and through `db.sql` on `connect(ctx=ctx)` in memory and on a database",
        "directory; each outcome is compared with DataFusion's: the same column names, Arrow",
        "types and values is *identical* (two errors are too), an error where DataFusion answers",
        "is *error*, an answer DataFusion does not give is *different*: a silent wrong answer.",
        "Four differences are counted apart: *rounding* (floats apart in their last bits, an",
        "aggregate summed in another order over another split of the same rows), *layout* (an",
        "EXPLAIN that differs only in how an in-memory table's rows are split into partitions",
        "and batches: `partition_sizes=[1]` where DataFusion's table holds `[2]`), *plan*",
        "(EXPLAIN of a statement reading a managed table, whose plan reads the table's parts)",
        "and *functions* (`SHOW FUNCTIONS` listing, beside DataFusion's rows, only the project's",
        "own functions, which `connect` registers in the session).",
        "Why the others differ: docs/design.md, \"Known limitations and debts\" (\"Managed tables to",
        "plain SQL\"). The files are DataFusion's (pydantic/datafusion, which tracks",
        "apache/datafusion), with apache/arrow-testing's and apache/parquet-testing's data beside them.",
        "",
        "| setup | records | identical | error | **different** | rounding | layout | plan | functions | of the records DataFusion answers: identical |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for setup, tally in tallies.items():
        total = sum(tally.counts.values())
        answered = sum(tally.answered.values())
        lines.append(
            f"| {setup} | {total:,} | {tally.counts['identical']:,} ({_percent(tally.counts['identical'], total)}) "
            f"| {tally.counts['error']:,} | **{tally.counts['different']:,}** | {tally.counts['rounding']:,} "
            f"| {tally.counts['layout']:,} | {tally.counts['plan']:,} | {tally.counts['functions']:,} "
            f"| {tally.answered['identical']:,} of {answered:,} ({_percent(tally.answered['identical'], answered)}) |"
        )
    lines += ["", "## Per file", "", "| file | records | " + " | ".join(f"{s}: error / different" for s in tallies) + " |",
              "| --- | ---: |" + " ---: |" * len(tallies)]
    for name, by_setup in per_file.items():
        first = next(iter(by_setup.values()))
        cells = " | ".join(f"{t.counts['error']} / {t.counts['different']}" for t in by_setup.values())
        lines.append(f"| {name} | {sum(first.counts.values())} | {cells} |")
    for setup, tally in tallies.items():
        if not tally.cases:
            continue
        lines += ["", f"## Not identical: {setup}", ""]
        for name, record, ref, out, verdict in sorted(tally.cases, key=lambda c: c[4] in _LISTED):
            sql = " ".join(record.sql.split()).replace("`", "'")
            lines.append(f"- **{verdict}** `{name}.slt:{record.line}` `{sql[:160]}`")
            if verdict not in _LISTED:  # (listed, not shown)
                lines.append(f"  - DataFusion: {ref.describe()[:300]}")
                lines.append(f"  - {setup}: {out.describe()[:300]}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("test_files", type=Path, nargs="?")
    parser.add_argument("--files", default=",".join(FILES), help="comma-separated file names, without .slt")
    parser.add_argument("--report", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--one", nargs=3, metavar=("FILE", "SETUP", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--searched", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        _run_one(Path(args.one[0]), args.one[1], Path(args.one[2]), args.searched)
        return
    if args.test_files is None:
        parser.error("the directory of DataFusion's .slt files is needed")
    paths = [args.test_files.resolve() / f"{name}.slt" for name in args.files.split(",") if name]
    tallies = {setup: Tally() for setup in SETUPS[1:]}
    per_file: dict[str, dict[str, Tally]] = {}
    start = time.perf_counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        for path, (records, results, seconds) in zip(paths, pool.map(_run_file, paths)):
            per_file[path.stem] = {}
            for setup in SETUPS[1:]:
                tallies[setup].add(path.stem, records, results["datafusion"], results[setup])
                one = per_file[path.stem][setup] = Tally()
                one.add(path.stem, records, results["datafusion"], results[setup])
            print(f"{path.stem}: {len(records)} records, "
                  + ", ".join(f"{s} {dict(per_file[path.stem][s].counts)}" for s in SETUPS[1:]) + f" ({seconds:.0f} s)",
                  flush=True)
    # The same files again, each query record that fits with a search added (with_search).
    searched = {setup: Tally() for setup in SETUPS[1:]}
    with ThreadPoolExecutor(args.jobs) as pool:
        for path, (records, results, _) in zip(paths, pool.map(lambda p: _run_file(p, True), paths)):
            keep = [i for i, o in enumerate(results["datafusion"]) if o.searched]
            for setup in SETUPS[1:]:
                searched[setup].add(path.stem, [records[i] for i in keep], [results["datafusion"][i] for i in keep],
                                    [results[setup][i] for i in keep])
    for label, group in (("", tallies), ("with a search added: ", searched)):
        for setup, tally in group.items():
            total = sum(tally.counts.values())
            print(f"{label}{setup}: {total} records: {dict(tally.counts)}; answered by DataFusion: {dict(tally.answered)}")
    print(f"{time.perf_counter() - start:.0f} s")
    if args.report:
        files = f"{len(paths)} files: {', '.join(p.stem for p in paths)}"
        args.report.write_text(report(tallies, per_file, files) + searched_report(searched))


def searched_report(tallies: dict[str, Tally]) -> str:
    """The section of the records run again with a search added (``with_search``)."""
    lines = [
        "",
        "## The same records with a search added",
        "",
        "Each query record that reads one named table with a text column (and has no LIMIT) runs",
        "again with `MATCH(column, 'word')` added to its WHERE through `db.sql`, and with",
        "`fts_match(column, 'word')` on DataFusion (`fts.install`: the same rows), `word` the first",
        "word of the column's least value: the search and DataFusion's part of the statement",
        "combine as DataFusion's own filter would.",
        "",
        "| setup | records | identical | error | **different** | rounding | layout | plan | functions |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for setup, tally in tallies.items():
        c = tally.counts
        lines.append(f"| {setup} | {sum(c.values()):,} | {c['identical']:,} | {c['error']:,} | **{c['different']:,}** "
                     f"| {c['rounding']:,} | {c['layout']:,} | {c['plan']:,} | {c['functions']:,} |")
    for setup, tally in tallies.items():
        for name, record, ref, out, verdict in tally.cases:
            if verdict in _LISTED:
                continue
            sql = " ".join(record.sql.split()).replace("`", "'")
            lines.append(f"- **{verdict}** ({setup}) `{name}.slt:{record.line}` `{sql[:160]}`")
            lines.append(f"  - DataFusion: {ref.describe()[:300]}")
            lines.append(f"  - {setup}: {out.describe()[:300]}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
