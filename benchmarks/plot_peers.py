"""Plots of the peers benchmark (issue 7), drawn from the JSON results ``bench_peers.py`` writes.

    python benchmarks/plot_peers.py [docs/img/peers.json] [--out docs/img]

Writes ``peers-build.png`` (build docs/s), ``peers-latency.png`` (p50 by query class and k,
log scale, p95 as whiskers), ``peers-rows.png`` (the same for searches returning the rows'
columns), ``peers-memory.png`` (peak RSS building and querying) and ``peers-size.png``
(on-disk size) into the output directory (default: the JSON's). A run on another corpus than
the synthetic one writes ``peers-<corpus>-*.png`` instead (``common.peers_prefix``), beside the
synthetic ones.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from common import corpus_of, peers_prefix as prefix  # noqa: E402

ORDER = ("ours", "ours_sql", "tantivy", "sqlite", "bm25s", "lance", "duckdb", "ours_rows", "ours_sql_rows",
         "lance_rows")
COLORS = dict(zip(ORDER, plt.get_cmap("tab10").colors))
ROWS = ("ours_rows", "ours_sql_rows", "lance_rows")  # searches that return the rows' columns
DPI = 110


def _footer(fig, meta: dict, phase: str, key: str) -> None:
    """Rows, machine, date and the other processes' CPU measured during ``phase``, under the plot."""
    what = "rows" if corpus_of(meta) == "synthetic" else f"rows ({corpus_of(meta)} corpus)"
    fig.text(0.5, -0.01, f"{meta['rows']:,} {what} · {meta['machine']['cpu']}, {meta['machine']['cores']} cores · "
             f"{meta['date']} · other processes' CPU during {phase}: {meta[key]}",
             ha="center", va="top", fontsize=7)


def _names(meta: dict, names: list[str]) -> list[str]:
    return [textwrap.fill(meta["labels"][x], 14) for x in names]


def _bar_labels(ax, bars, fmt: str) -> None:
    for bar in bars:
        h = bar.get_height()
        ax.annotate(fmt.format(h), (bar.get_x() + bar.get_width() / 2, h), ha="center", va="bottom",
                    fontsize=8, xytext=(0, 2), textcoords="offset points")


def _save(fig, out: Path, name: str) -> Path:
    path = out / name
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def _finish(fig, ax, meta: dict, title: str, ylabel: str, phase: tuple[str, str], legend: bool) -> None:
    """Title, axis label, grid, legend and the footer of a one-axis bar chart."""
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=12)
    if legend:
        ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    _footer(fig, meta, *phase)


def _build(res: dict, out: Path) -> Path:
    meta, build = res["meta"], res["build"]
    names = [x for x in ORDER if x in build]
    rates = [meta["rows"] / build[x]["total_s"] for x in names]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    bars = ax.bar(_names(meta, names), rates, color=[COLORS[x] for x in names])
    _bar_labels(ax, bars, "{:,.0f}")
    _finish(fig, ax, meta, "Index build throughput", "documents / s (load + index, higher is better)",
            ("the builds", "other_build"), legend=False)
    return _save(fig, out, f"{prefix(meta)}-build.png")


def _latency(res: dict, out: Path, rows: bool = False) -> Path | None:
    """p50 (p95 whiskers) per class and k: of the ids-only searches, or with ``rows`` of
    the searches that return the rows' columns."""
    meta, lat = res["meta"], res["search"]["latency"]
    classes = list(meta["classes"])
    names = [x for x in ORDER if x in res["search"]["first_ms"] and (x in ROWS) == rows]
    if not names:
        return None
    ks = meta["ks"]
    fig, axes = plt.subplots(len(ks), 1, figsize=(12, 4.2 * len(ks)), sharey=True)
    width = 0.8 / len(names)
    x = np.arange(len(classes))
    for ax, k in zip(np.atleast_1d(axes), ks):
        for i, name in enumerate(names):
            cells = [lat[f"{c}@{k}"][name] for c in classes]
            p50 = np.array([r.get("p50", np.nan) for r in cells])
            p95 = np.array([r.get("p95", np.nan) for r in cells])
            pos = x - 0.4 + width * (i + 0.5)
            ax.bar(pos, p50, width, color=COLORS[name], label=meta["labels"][name])
            ax.errorbar(pos, p50, yerr=[np.zeros_like(p50), np.nan_to_num(p95 - p50)], fmt="none",
                        ecolor="black", elinewidth=0.6, capsize=1.5)
            for j in np.flatnonzero(np.isnan(p50)):
                ax.text(pos[j], 0.0, "n/a", rotation=90, ha="center", va="bottom", fontsize=7,
                        transform=ax.get_xaxis_transform())
        ax.set_yscale("log")
        ax.set_xticks(x, [textwrap.fill(meta["classes"][c], 18) for c in classes], fontsize=8)
        ax.set_ylabel(f"k={k}: ms per query (p50, whisker p95)")
        ax.grid(axis="y", which="both", alpha=0.25)
    np.atleast_1d(axes)[0].legend(ncol=len(names), fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    what = "returning id, title and body" if rows else "ids and scores"
    fig.suptitle(f"Query latency by class, {what} (log scale, lower is better)", fontsize=12)
    fig.tight_layout()
    _footer(fig, meta, "the latency run", "other_search")
    return _save(fig, out, f"{prefix(meta)}-{'rows' if rows else 'latency'}.png")


def _memory(res: dict, out: Path) -> Path:
    meta, build, qmem = res["meta"], res["build"], res["query_memory"]
    names = [x for x in ORDER if x in build or x in qmem]
    series = [("build peak", lambda x: build.get(x, {}).get("peak_rss_mb")),
              ("query peak", lambda x: qmem.get(x, {}).get("peak_rss_mb")),
              ("after imports (query process)", lambda x: qmem.get(x, {}).get("rss_base_mb"))]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    x = np.arange(len(names))
    width = 0.8 / len(series)
    for i, (label, get) in enumerate(series):
        vals = np.array([get(n) if get(n) is not None else np.nan for n in names], dtype=float)
        bars = ax.bar(x - 0.4 + width * (i + 0.5), vals, width, label=label, alpha=1.0 - 0.3 * i,
                      color=["#4c72b0", "#dd8452", "#999999"][i])
        _bar_labels(ax, [b for b, v in zip(bars, vals) if not np.isnan(v)], "{:,.0f}")
    ax.set_xticks(x, _names(meta, names), fontsize=9)
    _finish(fig, ax, meta, "Memory: building and querying", "peak RSS, MB (VmHWM of a fresh process)",
            ("the query-memory runs", "other_qmem"), legend=True)
    return _save(fig, out, f"{prefix(meta)}-memory.png")


def _size(res: dict, out: Path) -> Path:
    meta, build = res["meta"], res["build"]
    names = [x for x in ORDER if x in build]
    total = np.array([build[x]["disk_mb"] for x in names])
    index = np.array([build[x].get("disk_index_mb") or 0.0 for x in names])
    fig, ax = plt.subplots(figsize=(8, 4.2))
    colors = [COLORS[x] for x in names]
    ax.bar(names, index, color=colors, label="index (where separable)")
    bars = ax.bar(names, total - index, bottom=index, color=colors, alpha=0.45, label="rest (table copy, or all)")
    for bar, t in zip(bars, total):
        ax.annotate(f"{t:,.0f}", (bar.get_x() + bar.get_width() / 2, t), ha="center", va="bottom", fontsize=8,
                    xytext=(0, 2), textcoords="offset points")
    ax.set_xticks(range(len(names)), _names(meta, names), fontsize=9)
    _finish(fig, ax, meta, "On-disk size after the build", "on disk, MB", ("the builds", "other_build"),
            legend=True)
    return _save(fig, out, f"{prefix(meta)}-size.png")


def plot(results: dict, out: Path) -> list[Path]:
    """Draw every plot of ``results`` into ``out``; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = [_build(results, out), _latency(results, out), _latency(results, out, rows=True),
               _memory(results, out), _size(results, out)]
    return [p for p in written if p is not None]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", default=str(Path(__file__).resolve().parents[1] / "docs/img/peers.json"))
    parser.add_argument("--out", help="output directory (default: the results file's)")
    args = parser.parse_args(argv)
    path = Path(args.results)
    for written in plot(json.loads(path.read_text()), Path(args.out) if args.out else path.parent):
        print(written)


if __name__ == "__main__":
    main()
