"""Text functions benchmark (issue 8): highlight, snippet, fts_match and fts_tokenize over
the body column of the seeded corpus (``benchmarks/corpus.py``) in a plain DataFusion
session, next to DataFusion built-ins doing a comparable job in the same run:

* ``fts_match(body, 'w1 w2')`` against ``regexp_like(body, '(?i)\\b(w1|w2)\\b')``;
* ``highlight(body, 'w1 w2')`` against ``regexp_replace(body, '(?i)\\b(w1|w2)\\b', '<b>$1</b>', 'g')``;
* ``snippet`` and ``fts_tokenize`` against ``lower(body)`` (a pass over every byte).

The words are a frequent and a medium term of the corpus. Each statement runs once to
warm up, then ``--repeats`` times, interleaved; the median wall time and process CPU time
(every thread; less sensitive to other load on a shared machine) are reported with rows/s
and the ratio to its built-in.

Usage::

    python benchmarks/bench_text_functions.py --rows 1000000
    python benchmarks/bench_text_functions.py --rows 20000 --repeats 2 --no-docs   # quick check

The report is printed and written to ``docs/benchmarks.md`` under
``## Text functions (issue 8)`` (only that section is replaced).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import datafusion

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_core
import corpus

import datafusion_fts as fts

SECTION = "## Text functions (issue 8)"


def _cases(words: tuple[str, str]) -> list[tuple[str, str, str, str]]:
    """(function, our statement, built-in, the built-in's statement)."""
    query = " ".join(words)
    alternation = "|".join(words)
    regex = f"(?i)\\b({alternation})\\b"
    lower = "SELECT max(length(lower(body))) FROM docs"
    return [
        ("fts_match", f"SELECT count(*) FROM docs WHERE fts_match(body, '{query}')",
         "regexp_like", f"SELECT count(*) FROM docs WHERE regexp_like(body, '{regex}')"),
        ("highlight", f"SELECT max(length(highlight(body, '{query}'))) FROM docs",
         "regexp_replace", f"SELECT max(length(regexp_replace(body, '{regex}', '<b>$1</b>', 'g'))) FROM docs"),
        ("snippet", f"SELECT max(length(snippet(body, '{query}'))) FROM docs", "lower", lower),
        ("fts_tokenize", "SELECT sum(array_length(fts_tokenize(body))) FROM docs", "lower", lower),
    ]


def _time(ctx: datafusion.SessionContext, sql: str) -> tuple[float, float]:
    """(wall ms, process CPU ms) of running ``sql``."""
    wall, cpu = time.perf_counter(), time.process_time()
    ctx.sql(sql).collect()
    return (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3


def run(n_rows: int, repeats: int) -> str:
    ctx = datafusion.SessionContext()
    fts.install(ctx)
    batches = [b.select(["body"]) for b in corpus.generate(n_rows, batch_rows=8192)]
    ctx.register_record_batches("docs", [batches])
    vocab = corpus.vocabulary()
    words = (vocab[corpus.BANDS["frequent"][0] + 10], vocab[corpus.BANDS["medium"][0] + 10])
    cases = _cases(words)
    counts = {
        label: (ctx.sql(ours).to_pylist(), ctx.sql(theirs).to_pylist()) for label, ours, _, theirs in cases
    }
    times: dict[str, list[tuple[float, float]]] = {}
    for _ in range(repeats):
        for label, ours, _, theirs in cases:
            times.setdefault(label, []).append(_time(ctx, ours))
            times.setdefault(label + " (built-in)", []).append(_time(ctx, theirs))
    lines = [
        SECTION,
        "",
        (f"`python benchmarks/bench_text_functions.py --rows {n_rows}`: the corpus body column in "
         f"8,192-row batches, query `{' '.join(words)}`, median of {repeats} interleaved runs (wall time)."),
        "",
        "| function | ms | CPU ms | rows/s | built-in | built-in ms | built-in CPU ms | ratio (wall) | ratio (CPU) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, _, builtin, _ in cases:
        mine, mine_cpu = (statistics.median(t) for t in zip(*times[label]))
        base, base_cpu = (statistics.median(t) for t in zip(*times[label + " (built-in)"]))
        lines.append(
            f"| {label} | {mine:.0f} | {mine_cpu:.0f} | {n_rows / mine * 1e3:,.0f} | `{builtin}` | {base:.0f} "
            f"| {base_cpu:.0f} | {mine / base:.2f}x | {mine_cpu / base_cpu:.2f}x |"
        )
    same = counts["fts_match"][0] == counts["fts_match"][1]
    lines += ["", f"fts_match and regexp_like count the same rows: {same} ({counts['fts_match'][0]})."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="corpus rows (default 1,000,000)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per statement")
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/benchmarks.md")
    args = parser.parse_args(argv)
    report = run(args.rows, args.repeats)
    print(report)
    if not args.no_docs:
        bench_core.write_docs_section(SECTION, report)


if __name__ == "__main__":
    main()
