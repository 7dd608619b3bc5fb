"""Tokenizer benchmark: what recording token spans (for highlight/snippet, issue 8) costs.

Analysis runs on every build and query path, so the kernel that records spans must leave
the plain tokenizer as fast as it was. Timed side by side, interleaved pass by pass in one
process, over the body column of the seeded corpus (``benchmarks/corpus.py``) and over the
same text with every ``e`` written ``é`` (multi-byte UTF-8 on the slow path):

* ``tokenize``: the kernel every build and search runs (``kernels/tokenizer.pyx``);
* ``tokenize_spans``: the same pass also recording each token's byte span;
* ``baseline``: with ``--baseline REV``, the numba ``tokenize`` kernel of git revision
  ``REV`` (one before the kernels were compiled at install, issue 33: e.g. the commit before
  spans existed), loaded from ``git show`` into a temporary module;
* ``analyze`` / ``analyze(spans=True)``: the whole ``Analyzer.analyze`` call (pieces on the
  tokenizer thread pool, vocabulary merge).

Kernels run single-threaded over the analyzer's pieces (``PIECE_ROWS`` rows each) and are
timed in thread CPU time, so the kernel cost is measured (not the thread pool, and little of
the other load on a shared machine); ``analyze`` is timed in wall-clock time. The report gives
the fastest and the median pass.

Usage::

    python benchmarks/bench_tokenizer.py --rows 1000000 --baseline 67f350b
    python benchmarks/bench_tokenizer.py --rows 20000 --repeats 2 --no-docs   # quick check

The report is printed and written to ``docs/benchmarks.md`` under
``## Tokenizer spans (issue 8)`` (only that section is replaced).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_core
import corpus

from datafusion_fts.analysis import analyzer_for, make_analyzer_config
from datafusion_fts.analysis.analyzer import _pieces, _string_buffers
from datafusion_fts.kernels.tokenizer import tokenize, tokenize_spans
from datafusion_fts.analysis.unicode_tables import script_tables

SECTION = "## Tokenizer spans (issue 8)"
KERNEL_PATH = "src/datafusion_fts/analysis/tokenizer_kernel.py"  # (numba, before issue 33)
_NO_SEED = (np.zeros(0, dtype=np.uint8), np.zeros(1, dtype=np.int64))


def _baseline_kernel(rev: str) -> Callable:
    """``tokenize`` as it was at git revision ``rev`` (compiled in a temporary module)."""
    source = subprocess.run(
        ["git", "show", f"{rev}:{KERNEL_PATH}"], cwd=HERE.parent, check=True, capture_output=True, text=True
    ).stdout
    directory = Path(tempfile.mkdtemp(prefix="fts-baseline-kernel-"))
    path = directory / "baseline_tokenizer_kernel.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("baseline_tokenizer_kernel", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.tokenize


def _texts(n_rows: int) -> dict[str, pa.Array]:
    body = pa.concat_arrays([b.column(2) for b in corpus.generate(n_rows)])
    return {"ascii": body, "utf-8 (é)": pc.replace_substring(body, "e", "é")}


def _kernel_pass(kernel: Callable, values: pa.Array) -> int:
    """Run ``kernel`` over the analyzer's pieces of ``values``; returns the token count."""
    tables = script_tables()
    tokens = 0
    for start, length in _pieces(values):
        data, offsets, valid = _string_buffers(values.slice(start, length))
        out = kernel(data, offsets, valid.view(np.uint8), *tables, 40, *_NO_SEED)
        tokens += len(out[0])
    return tokens


def _time(fn: Callable[[], object], clock: Callable[[], float]) -> float:
    start = clock()
    fn()
    return (clock() - start) * 1e3


def run(n_rows: int, repeats: int, baseline: str | None) -> str:
    kernels: dict[str, Callable] = {"tokenize": tokenize, "tokenize_spans": tokenize_spans}
    if baseline:
        kernels = {f"baseline ({baseline})": _baseline_kernel(baseline), **kernels}
    simple = analyzer_for(make_analyzer_config("simple"))
    lines = [
        SECTION,
        "",
        f"`python benchmarks/bench_tokenizer.py --rows {n_rows}"
        + (f" --baseline {baseline}" if baseline else "") + f"`: {repeats} interleaved passes; kernels "
        "single-threaded over the analyzer's pieces, in thread CPU time; `analyze` in wall time.",
        "",
        "| text | variant | tokens | fastest ms | median ms | Mtokens/s (fastest) | vs tokenize (fastest) | (median) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, values in _texts(n_rows).items():
        cases: dict[str, Callable[[], object]] = {
            name: (lambda k=kernel, v=values: _kernel_pass(k, v)) for name, kernel in kernels.items()
        }
        cases["analyze"] = lambda v=values: simple.analyze(v)
        cases["analyze(spans=True)"] = lambda v=values: simple.analyze(v, spans=True)
        n_tokens = _kernel_pass(tokenize, values)
        for fn in cases.values():  # compile and warm up
            fn()
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(repeats):
            for name, fn in cases.items():
                clock = time.perf_counter if name.startswith("analyze") else time.thread_time
                times[name].append(_time(fn, clock))
        for name, samples in times.items():
            reference = times["analyze" if name.startswith("analyze") else "tokenize"]
            fast, mid = min(samples), statistics.median(samples)
            lines.append(
                f"| {label} | {name} | {n_tokens:,} | {fast:.1f} | {mid:.1f} | {n_tokens / fast / 1e3:.1f} "
                f"| {fast / min(reference):.3f}x | {mid / statistics.median(reference):.3f}x |"
            )
    lines += ["", "(`analyze(spans=True)` is compared with `analyze`.)"]
    lines += _steady(kernels)
    return "\n".join(lines) + "\n"


STEADY_ROWS = 4_000
STEADY_CALLS = 300


def _steady(kernels: dict[str, Callable]) -> list[str]:
    """Each kernel called STEADY_CALLS times, interleaved, on one STEADY_ROWS-row piece; the
    5th percentile of its times against ``tokenize``'s (short calls, so a busy machine
    interrupts few of them)."""
    tables = script_tables()
    lines = [
        "",
        (f"Steady A/B: {STEADY_CALLS} interleaved calls of each kernel on {STEADY_ROWS:,} rows, "
         "5th percentile of the wall times, against `tokenize`:"),
        "",
        "| text | " + " | ".join(kernels) + " |",
        "| --- | " + " | ".join("---" for _ in kernels) + " |",
    ]
    for label, values in _texts(STEADY_ROWS).items():
        data, offsets, valid = _string_buffers(values)
        args = (data, offsets, valid.view(np.uint8), *tables, 40, *_NO_SEED)
        samples: dict[str, list[int]] = {name: [] for name in kernels}
        order = list(kernels.items())
        for kernel in kernels.values():
            kernel(*args)
        for call in range(STEADY_CALLS):
            for name, kernel in order if call % 2 else order[::-1]:
                start = time.perf_counter_ns()
                kernel(*args)
                samples[name].append(time.perf_counter_ns() - start)
        low = {name: float(np.percentile(t, 5)) for name, t in samples.items()}
        lines.append(f"| {label} | " + " | ".join(f"{low[n] / low['tokenize']:.3f}x" for n in kernels) + " |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="corpus rows (default 1,000,000)")
    parser.add_argument("--repeats", type=int, default=5, help="timed passes per variant")
    parser.add_argument("--baseline", help="git revision whose tokenize kernel to time alongside")
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/benchmarks.md")
    args = parser.parse_args(argv)
    report = run(args.rows, args.repeats, args.baseline)
    print(report)
    if not args.no_docs:
        bench_core.write_docs_section(SECTION, report)


if __name__ == "__main__":
    main()
