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
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))

from slt_setups import FILE_SETUPS  # noqa: E402
from sqllogic import SETUPS, Outcome, Record, Tally, read_slt, run_records  # noqa: E402

# The files (paths under test_files, without .slt) a Python session cannot run, and why.
LEFT_OUT = {
    "spark": "Spark's functions and dialect (`datafusion-spark`), which DataFusion's Rust runner registers "
             "for this directory and DataFusion's Python package does not have",
    "range_partitioning": "its table is a Rust `TableProvider` declaring range partitions, which no table made "
                          "in Python declares",
    "async_udf": "its function `async_abs` is a Rust async scalar UDF; Python's UDFs are not async",
    "cast_extension_type_metadata": "the runner plans `UUID` with a Rust `TypePlanner`; Python has no type planner",
}
# Files that run without a part of the runner's setup Python cannot make (both setups and
# the reference alike), and what is missing.
PARTIAL = {
    "information_schema_table_types": "the runner's LOCAL TEMPORARY table `temp` (a Rust `TableProvider` of "
                                      "that type; none made in Python reports it): it is listed by neither",
}
TIMEOUT_S = 900
# The differences that are not wrong answers: listed in the report, their outputs not shown.
_LISTED = ("rounding", "layout", "plan", "functions", "varies")
# The reference's further runs: a difference DataFusion's own runs show too is its own
# (each file's reference runs twice, and AGAIN_RUNS + 1 times where a difference remains).
AGAIN = "datafusion again"
AGAIN_RUNS = 5


def test_files(root: Path) -> list[str]:
    """Every ``.slt`` file under ``root`` (subdirectories included) but those left out, by
    its path under ``root`` without ``.slt``, in name order."""
    names = sorted(p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.slt"))
    return [name for name in names if name not in LEFT_OUT and name.split("/")[0] not in LEFT_OUT]


def _run_one(path: Path, setup: str, out: Path, searched: bool) -> None:
    """(In a child process.) Run every record of ``path`` in ``setup`` (with a search added
    where one fits, if ``searched``); pickle the outcomes."""
    records = read_slt(path)
    with tempfile.TemporaryDirectory() as tmp:
        outcomes = run_records(records, setup, Path(tmp) / "db", searched, FILE_SETUPS.get(path.stem))
    out.write_bytes(pickle.dumps(outcomes))


def _run_file(root: Path, name: str, searched: bool = False) -> tuple[list[Record], dict[str, list[Outcome]], float]:
    """Run the file ``name`` under ``root`` in every setup, each in a fresh process started
    where DataFusion's runner starts (the directory above ``root``), with the file's scratch
    directory made anew, as that runner makes it."""
    path = root / f"{name}.slt"
    records = read_slt(path)
    results: dict[str, list[Outcome]] = {}
    scratch = root / "scratch" / path.stem
    start = time.perf_counter()

    def run(key: str, setup: str) -> None:
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        with tempfile.NamedTemporaryFile(suffix=".pickle") as out:
            done = subprocess.run(
                [sys.executable, __file__, "--one", str(path), setup, out.name, *(["--searched"] if searched else [])],
                cwd=root.parent, capture_output=True, text=True, timeout=TIMEOUT_S,
            )
            if done.returncode != 0 or not Path(out.name).stat().st_size:
                crash = (done.stderr or "").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
                results[key] = [Outcome(error=f"the process died: {crash[0]}")] * len(records)
                print(f"{path.stem}: the {key} process died: {crash[0]}", file=sys.stderr, flush=True)
            else:
                results[key] = pickle.loads(Path(out.name).read_bytes())

    for setup in SETUPS:
        run(setup, setup)
    run(f"{AGAIN} 1", "datafusion")
    if _unsettled(records, results):  # (a hash set's order, say: another process may give another)
        for k in range(2, AGAIN_RUNS + 1):
            run(f"{AGAIN} {k}", "datafusion")
    shutil.rmtree(scratch, ignore_errors=True)
    return records, results, time.perf_counter() - start


def agains(results: dict[str, list[Outcome]]) -> list[list[Outcome]]:
    """DataFusion's further runs of a file (:func:`_run_file`)."""
    return [outcomes for key, outcomes in results.items() if key.startswith(AGAIN)]


def _unsettled(records: list[Record], results: dict[str, list[Outcome]]) -> bool:
    """Whether a setup's outcome of a record is neither identical nor an error: DataFusion
    then runs the file again, to tell its own variation from a difference."""
    for setup in SETUPS[1:]:
        tally = Tally()
        tally.add("", records, results["datafusion"], results[setup], agains(results))
        if set(tally.counts) - {"identical", "error", "functions", "varies"}:
            return True
    return False


def _percent(n: int, total: int) -> str:
    return f"{100 * n / total:.2f} %" if total else "-"


def report(tallies: dict[str, Tally], per_file: dict[str, dict[str, Tally]], about: str) -> str:
    lines = [
        "# DataFusion's sqllogictest files through `db.sql`",
        "",
        "Written by `tests/sql/datafusion_parity.py` (issues 31 and 41). Every record of DataFusion's",
        f"own sqllogictest files ({len(per_file)} files: every `.slt` file under `test_files`, subdirectories",
        "and `include`d parts too, but those left out below) runs in order on a plain `SessionContext`",
        "(`ctx.sql`, the reference) and through `db.sql` on `connect(ctx=ctx)` in memory and on a",
        "database directory; each outcome is compared with DataFusion's: the same column names, Arrow",
        "types and values is *identical* (two errors are too), an error where DataFusion answers",
        "is *error*, an answer DataFusion does not give is *different*: a silent wrong answer.",
        "Four differences are counted apart: *rounding* (floats apart in their last bits, an",
        "aggregate summed in another order over another split of the same rows), *layout* (an",
        "EXPLAIN that differs only in how an in-memory table's rows are split into partitions",
        "and batches: `partition_sizes=[1]` where DataFusion's table holds `[2]`), *plan*",
        "(EXPLAIN of a statement reading a managed table, whose plan reads the table's parts or",
        "chooses otherwise from its statistics, and EXPLAIN ANALYZE, whose timings differ from run",
        "to run on DataFusion alone) and *functions* (`SHOW FUNCTIONS` listing, beside DataFusion's",
        "rows, only the project's own functions, which `connect` registers in the session).",
        "Each file's reference runs twice, and six times where a setup answers otherwise: where",
        "DataFusion's own runs answer otherwise too, a difference of these kinds, or an answer one of",
        "its runs gave, is counted as *varies* (EXPLAIN ANALYZE's timings, a float sum in another",
        "order, a hash set's order, which changes with each process).",
        "Why the others differ: docs/design.md, \"Known limitations and debts\" (\"Managed tables to",
        f"plain SQL\"). The files: {about}",
        "",
        "Tables, a catalog and a function DataFusion's Rust runner registers for some files are made",
        "with DataFusion's Python API (`tests/sql/slt_setups.py`: " + ", ".join(sorted(FILE_SETUPS)) + ").",
        "Left out, as no Python session can run them:",
        "",
        *(f"- `{name}`: {why}" for name, why in LEFT_OUT.items()),
        "",
        "Run without a part of the runner's setup (the same on every side):",
        "",
        *(f"- `{name}`: {what}" for name, what in PARTIAL.items()),
        "",
        "| setup | records | identical | error | **different** | rounding | layout | plan | functions | varies "
        "| of the records DataFusion answers alike in each run: identical | of those it answers: identical |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for setup, tally in tallies.items():
        c, total, answered = tally.counts, sum(tally.counts.values()), sum(tally.answered.values())
        alike = total - c["varies"]
        lines.append(
            f"| {setup} | {total:,} | {c['identical']:,} ({_percent(c['identical'], total)}) | {c['error']:,} "
            f"| **{c['different']:,}** | {c['rounding']:,} | {c['layout']:,} | {c['plan']:,} | {c['functions']:,} "
            f"| {c['varies']:,} | {c['identical']:,} of {alike:,} ({_percent(c['identical'], alike)}) "
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
            lines.append(f"- **{verdict}** `{record.where(name)}` `{sql[:160]}`")
            if verdict not in _LISTED:  # (listed, not shown)
                lines.append(f"  - DataFusion: {ref.describe()[:300]}")
                lines.append(f"  - {setup}: {out.describe()[:300]}")
    return "\n".join(lines) + "\n"


def _results(root: Path, names: list[str], jobs: int, store: Path | None, stored: bool,
             searched: bool) -> Iterator[tuple[str, list[Record], dict[str, list[Outcome]]]]:
    """Each file's records and outcomes, run (kept in ``store`` if given) or, with
    ``stored``, read back from ``store``: a run of a few files updates what a whole report
    is made from."""
    kind = "searched" if searched else "plain"
    if stored:
        assert store is not None, "--stored reads --store"
        for name in names:
            records, results = pickle.loads((store / kind / f"{name}.pickle").read_bytes())
            yield name, records, results
        return
    with ThreadPoolExecutor(jobs) as pool:
        for name, (records, results, seconds) in zip(names, pool.map(lambda n: _run_file(root, n, searched), names)):
            if store is not None:
                (store / kind / name).parent.mkdir(parents=True, exist_ok=True)
                (store / kind / f"{name}.pickle").write_bytes(pickle.dumps((records, results)))
            if not searched:
                print(f"{name}: {len(records)} records ({seconds:.0f} s)", flush=True)
            yield name, records, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("test_files", type=Path, nargs="?")
    parser.add_argument("--files", help="comma-separated file names under test_files, without .slt (default: all)")
    parser.add_argument("--report", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--store", type=Path, help="a directory keeping each file's outcomes")
    parser.add_argument("--stored", action="store_true", help="report from --store's outcomes, running nothing")
    parser.add_argument("--about", default="DataFusion's", help="where the files came from, for the report")
    parser.add_argument("--one", nargs=3, metavar=("FILE", "SETUP", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--searched", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        _run_one(Path(args.one[0]), args.one[1], Path(args.one[2]), args.searched)
        return
    if args.test_files is None:
        parser.error("the directory of DataFusion's .slt files is needed")
    root = args.test_files.resolve()
    names = args.files.split(",") if args.files else test_files(root)
    tallies = {setup: Tally() for setup in SETUPS[1:]}
    per_file: dict[str, dict[str, Tally]] = {}
    start = time.perf_counter()
    for name, records, results in _results(root, names, args.jobs, args.store, args.stored, False):
        per_file[name] = {}
        for setup in SETUPS[1:]:
            tallies[setup].add(name, records, results["datafusion"], results[setup], agains(results))
            one = per_file[name][setup] = Tally()
            one.add(name, records, results["datafusion"], results[setup], agains(results))
        print(f"{name}: " + ", ".join(f"{s} {dict(per_file[name][s].counts)}" for s in SETUPS[1:]), flush=True)
    # The same files again, each query record that fits with a search added (with_search).
    searched = {setup: Tally() for setup in SETUPS[1:]}
    for name, records, results in _results(root, names, args.jobs, args.store, args.stored, True):
        keep = [i for i, o in enumerate(results["datafusion"]) if o.searched]
        for setup in SETUPS[1:]:
            searched[setup].add(name, [records[i] for i in keep], [results["datafusion"][i] for i in keep],
                                [results[setup][i] for i in keep], [[run[i] for i in keep] for run in agains(results)])
    for label, group in (("", tallies), ("with a search added: ", searched)):
        for setup, tally in group.items():
            total = sum(tally.counts.values())
            print(f"{label}{setup}: {total} records: {dict(tally.counts)}; answered by DataFusion: {dict(tally.answered)}")
    print(f"{time.perf_counter() - start:.0f} s")
    if args.report:
        args.report.write_text(report(tallies, per_file, args.about) + searched_report(searched))


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
        "| setup | records | identical | error | **different** | rounding | layout | plan | functions | varies |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for setup, tally in tallies.items():
        c = tally.counts
        lines.append(f"| {setup} | {sum(c.values()):,} | {c['identical']:,} | {c['error']:,} | **{c['different']:,}** "
                     f"| {c['rounding']:,} | {c['layout']:,} | {c['plan']:,} | {c['functions']:,} | {c['varies']:,} |")
    for setup, tally in tallies.items():
        for name, record, ref, out, verdict in tally.cases:
            if verdict in _LISTED:
                continue
            sql = " ".join(record.sql.split()).replace("`", "'")
            lines.append(f"- **{verdict}** ({setup}) `{record.where(name)}` `{sql[:160]}`")
            lines.append(f"  - DataFusion: {ref.describe()[:300]}")
            lines.append(f"  - {setup}: {out.describe()[:300]}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
