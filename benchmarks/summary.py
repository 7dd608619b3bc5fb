"""The one-screen summary at the top of docs/benchmarks.md, from bench_peers' results.

Reads, for each ``--rows`` given, the results ``benchmarks/bench_peers.py`` wrote
(``bench-data/peers-<rows>.json``, else the copies kept in ``docs/img/``: ``peers.json``
is the run the Peers section shows, ``peers-<rows>.json`` others) and replaces the ``## Summary`` section of
docs/benchmarks.md: one table answering what a user asks (how fast are the rows back,
through Python and SQL; how long and how much memory a build takes; how big it is on disk;
how much memory a query process needs), every ratio ours / peer, lower is better.

Usage::

    python benchmarks/summary.py --rows 1000000 10000000
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
HEADING = "## Summary"


def _geo(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _ms(v: float) -> str:
    return f"{v:.3g}" if v < 100 else f"{v:,.0f}"


def _latency_row(res: dict, ours: str, peer: str, k: int) -> tuple[str, str, str] | None:
    """(ours' p50 range, the peer's, ratio range and geometric mean) over the classes both ran."""
    pairs = []
    for key, by_system in res["search"]["latency"].items():
        if not key.endswith(f"@{k}"):
            continue
        a, b = by_system.get(ours), by_system.get(peer)
        if a and b and a.get("p50") and b.get("p50"):
            pairs.append((a["p50"], b["p50"]))
    if not pairs:
        return None
    ratios = [a / b for a, b in pairs]
    ours_ms = f"{_ms(min(a for a, _ in pairs))}–{_ms(max(a for a, _ in pairs))}"
    peer_ms = f"{_ms(min(b for _, b in pairs))}–{_ms(max(b for _, b in pairs))}"
    worse = sum(r > 1 for r in ratios)
    return ours_ms, peer_ms, f"{min(ratios):.2f}–{max(ratios):.2f} (geo-mean {_geo(ratios):.2f}; >1 in {worse}/{len(ratios)})"


def _rows(results: dict[int, dict]) -> list[list[str]]:
    """The table: one row per question, a (ours, peer, ratio) triple per corpus size."""
    questions = [
        ("Top-10 ids + scores, `t.search(q, columns=[])`, p50 ms", "ours", "tantivy", "Tantivy", 10),
        ("Top-10 **rows** (id, title, body), `t.search(q, limit=10)`, p50 ms", "ours_rows", "lance_rows", "Lance rows", 10),
        ("Top-10 **rows** through **SQL** (`SELECT id, title, body, score() ... LIMIT 10`), p50 ms",
         "ours_sql_rows", "lance_rows", "Lance rows", 10),
        ("Top-100 **rows**, `t.search(q, limit=100)`, p50 ms", "ours_rows", "lance_rows", "Lance rows", 100),
        ("Top-100 **rows** through **SQL**, p50 ms", "ours_sql_rows", "lance_rows", "Lance rows", 100),
    ]
    out = []
    for label, ours, peer, peer_label, k in questions:
        row = [label, peer_label]
        for res in results.values():
            cells = _latency_row(res, ours, peer, k)
            row += list(cells) if cells else ["—", "—", "—"]
        out.append(row)

    def scalar(label: str, peer_label: str, get) -> None:
        row = [label, peer_label]
        for res in results.values():
            try:
                a, b = get(res)
            except (KeyError, TypeError):
                row += ["—", "—", "—"]
                continue
            row += [f"{a:,.1f}", f"{b:,.1f}", f"**{a / b:.2f}**"]
        out.append(row)

    build = lambda p: lambda r: (r["build"]["ours"][p], r["build"]["tantivy"][p])  # noqa: E731
    scalar("Build wall s (load into our storage + index; Tantivy indexes while reading)", "Tantivy", build("total_s"))
    scalar("Build peak RSS MB (the build process's own)", "Tantivy", build("peak_rss_mb"))
    scalar("Build peak RSS growth MB (peak minus the process's RSS once its libraries are loaded)", "Tantivy",
           lambda r: tuple(r["build"][s]["peak_rss_mb"] - r["build"][s]["rss_base_mb"] for s in ("ours", "tantivy")))
    scalar("On disk MB: table + index", "Lance", lambda r: (r["build"]["ours"]["disk_mb"], r["build"]["lance"]["disk_mb"]))
    scalar("On disk MB: the index (no positions on either)", "Lance",
           lambda r: (r["build"]["ours"]["disk_index_mb"], r["build"]["lance"]["disk_index_mb"]))
    for peer, label in (("lance_rows", "Lance rows"), ("tantivy", "Tantivy")):
        ours = "ours_rows" if peer == "lance_rows" else "ours"
        scalar(f"Query process peak RSS MB (open, run every query{' returning rows' if ours == 'ours_rows' else ''})",
               label, lambda r, o=ours, p=peer: (r["query_memory"][o]["peak_rss_mb"], r["query_memory"][p]["peak_rss_mb"]))
    scalar("Query process RSS growth MB, returning rows (peak minus RSS after the imports)", "Lance rows",
           lambda r: tuple(r["query_memory"][s]["peak_rss_mb"] - r["query_memory"][s]["rss_base_mb"]
                           for s in ("ours_rows", "lance_rows")))
    scalar("The same, ours after a tiny database is also opened and searched (the issue's measure)", "Lance rows",
           lambda r: (r["query_memory"]["ours_rows"]["peak_rss_mb"] - r["query_memory"]["ours_rows"]["rss_warm_mb"],
                      r["query_memory"]["lance_rows"]["peak_rss_mb"] - r["query_memory"]["lance_rows"]["rss_base_mb"]))
    return out


def _costs(res: dict) -> list[str]:
    """What SQL and returning rows add to a search, in ms (median over classes)."""
    lat = res["search"]["latency"]

    def median_gap(a: str, b: str, k: int) -> float:
        gaps = sorted(v[a]["p50"] - v[b]["p50"] for key, v in lat.items() if key.endswith(f"@{k}") and a in v and b in v)
        return gaps[len(gaps) // 2]

    return [
        f"SQL over `t.search`: {median_gap('ours_sql', 'ours', 10):+.2f} ms a statement (ids only, k=10), "
        f"{median_gap('ours_sql_rows', 'ours_rows', 10):+.2f} ms returning rows",
        f"returning the rows' columns over ids only: {median_gap('ours_rows', 'ours', 10):+.2f} ms for 10 rows, "
        f"{median_gap('ours_rows', 'ours', 100):+.2f} ms for 100 (Lance: "
        f"{median_gap('lance_rows', 'lance', 10):+.2f} / {median_gap('lance_rows', 'lance', 100):+.2f} ms)",
    ]


def section(results: dict[int, dict]) -> str:
    runs = "; ".join(
        f"{n:,} rows: {r['meta']['date']}, commit {r['meta']['git']}, other processes used "
        f"≈{r['meta'].get('other_build_cores', 0):.2f} of a core during the builds and "
        f"≈{r['meta'].get('other_search_cores', 0):.2f} during the queries"
        for n, r in results.items()
    )
    head = ["question", "peer"]
    for n in results:
        head += [f"{n // 1_000_000}M: ours", "peer", "**ours / peer**"]
    lines = [
        HEADING, "",
        f"Generated by `python benchmarks/summary.py --rows {' '.join(str(n) for n in results)}` from "
        f"`benchmarks/bench_peers.py` runs ({runs}). The corpus is the seeded Zipf corpus "
        "(bodies of ~60 words); machine and method in [Peers](#peers-issue-7). **Every ratio is "
        "ours / peer: lower is better**; latency ranges are the p50s of the 7 query classes "
        "(frequent, rare, 2- and 3-term OR, two ANDs, MUST + MUST_NOT).", "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * 2 + "---:|" * (3 * len(results)),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in _rows(results)]
    lines += ["", "What it costs, at " + ", ".join(f"{n:,}" for n in results) + " rows:", ""]
    for n, res in results.items():
        lines += [f"- {n:,} rows: " + "; ".join(_costs(res)) + "."]
    lines += ["", "![Latency returning rows](img/peers-rows.png)", ""]
    lines += _object_storage()
    return "\n".join(lines)


def _object_storage() -> list[str]:
    """The object-storage run's headline (``bench_s3.py``'s latest 1M result), if any."""
    path = ROOT / "docs" / "img" / "s3-1000000.json"
    if not path.exists():
        return []
    res = json.loads(path.read_text())
    local, files, whole, lance = (res[s] for s in ("ours_local", "ours_s3", "ours_db_s3", "lance_s3"))

    def span(r: dict, key: str) -> str:
        values = sorted(r[key].values())
        return f"{values[0]:.2f}–{values[-1]:.2f}"

    return [
        f"Object storage, 1,000,000 rows on moto's S3 server on loopback ({res['meta']['time']}, "
        f"[details](#object-storage-issue-32)): top-10 rows p50 {span(whole, 'warm_ms')} ms with everything on "
        f"S3 (the default: the source's listing reused for a second), {span(whole, 'listing_ms')} ms listing it "
        f"at every query (one LIST), "
        f"against {span(local, 'warm_ms')} ms on local disk and {span(lance, 'warm_ms')} ms for Lance on the same "
        f"server; open + first query {whole['cold_s']:.2f} s (Lance {lance['cold_s']:.2f} s), reading "
        f"{whole.get('cold_mb', 0.0):.1f} MB from the store (Lance {lance.get('cold_mb', 0.0):.1f} MB); build from the "
        f"bucket's Parquet {files['build_s']:.1f} s (local files {local['build_s']:.1f} s, Lance "
        f"{lance['build_s']:.1f} s)"
        + (f"; a one-row insert into a database on S3 {whole['insert_ms']:.1f} ms, a commit of "
           f"{whole['insert_requests']:.0f} requests (Lance's append {lance['insert_ms']:.1f} ms; "
           f"{local['insert_ms']:.1f} ms in a local directory)" if "insert_ms" in whole else "") + ".",
        "",
    ]


def write(text: str) -> None:
    doc = DOC.read_text()
    start = doc.find(HEADING + "\n")
    if start < 0:
        first = doc.index("\n## ")
        doc = doc[: first + 1] + text + "\n" + doc[first + 1 :]
    else:
        end = doc.find("\n## ", start + len(HEADING))
        doc = doc[:start] + text + doc[end:] if end >= 0 else doc[:start] + text
    DOC.write_text(doc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    args = parser.parse_args()
    results = {}
    for n in args.rows:
        found = []  # (the latest run of n rows among the copies kept)
        for path in (ROOT / "bench-data" / f"peers-{n}.json", ROOT / "docs" / "img" / f"peers-{n}.json",
                     ROOT / "docs" / "img" / "peers.json"):
            res = json.loads(path.read_text()) if path.exists() else None
            if res is not None and res["meta"].get("rows", n) == n:
                found.append(res)
        if found:
            results[n] = max(found, key=lambda r: r["meta"].get("date", ""))
        else:
            print(f"no results for {n:,} rows: run benchmarks/bench_peers.py --rows {n} first")
    if results:
        write(section(results))


if __name__ == "__main__":
    main()
