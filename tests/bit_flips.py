"""Single-bit flips in every file type of a small database, each judged against the
undamaged database: detected (a StorageError), harmless (identical results), wrong
(different results) or a crash (any other exception).

Run as a script for the long run (docs/guide/guarantees.md quotes its counts):
``python tests/bit_flips.py [FLIPS_PER_TYPE] [SEED]``.
"""

from __future__ import annotations

import gc
import random
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

import datafusion_fts as fts
from datafusion_fts.errors import StorageError
from datafusion_fts.query import Match, Phrase, Prefix
from datafusion_fts.storage.files import checksums

# Small regions, so the small database's postings span several (verified lazily).
REGION_BYTES = 512
FILE_TYPES = ("segment array", "checksum file", "deletion vector", "manifest", "data")
OUTCOMES = ("detected", "harmless", "wrong", "crash")


def build(path: Path) -> None:
    """A database of 3,000 rows in two fragments, an index with positions in two
    segments, and deleted rows in both fragments (so deletion vectors, and segments
    ranked in part)."""
    words = [f"w{i}" for i in range(150)]
    rng = random.Random(7)
    body = [" ".join(rng.choice(words[: rng.choice((10, 150))]) for _ in range(rng.randint(3, 12))) for _ in range(3000)]
    previous, checksums.REGION_BYTES = checksums.REGION_BYTES, REGION_BYTES
    try:
        db = fts.connect(path)
        t = db.create_table("docs", pa.table({"id": list(range(2000)), "body": body[:2000]}))
        t.create_index("body", positions=True)
        t.insert(pa.table({"id": list(range(2000, 3000)), "body": body[2000:]}))
        t.flush()
        t.delete("id % 97 = 3")
    finally:
        checksums.REGION_BYTES = previous
    del db, t
    gc.collect()


def results(path: Path, sql: bool = True) -> list[Any]:
    """What a fresh Database on ``path`` answers to searches of every kind (top-k by the
    compiled kernels, phrases, prefix expansion, fetched rows) and, with ``sql``, to a SQL
    scan (DataFusion's own Parquet reader)."""
    db = fts.connect(path)
    t = db.table("docs")

    def ids(query: Any, **kwargs: Any) -> list[tuple[int, str]]:
        r = t.search(query, columns=[], **kwargs)
        return list(zip(r.column("_rowid").to_pylist(), map(repr, r.column("_score").to_pylist())))

    return [
        ids("w1 w2", limit=10),
        ids("w3 AND w5", limit=10),
        ids("w120 w149 w7", limit=None),
        ids(Phrase("body", "w1 w2"), limit=None),
        ids(Prefix("body", "w14"), limit=20),
        ids(Match("body", "w4"), limit=10, include_row_ids=list(range(0, 3000, 3))),
        t.search("w9 w130", limit=5).to_pylist(),
        t.search("w11 OR w12", limit=40, columns=["id", "body"]).to_pylist(),
    ] + ([db.sql("SELECT count(*) AS n, sum(id) AS s, max(body) AS m FROM docs").to_pylist()] if sql else [])


def files(path: Path) -> dict[str, list[Path]]:
    """The database's files by type."""
    index = sorted(path.glob("index/seg-*/*"))
    return {
        "segment array": [p for p in index if p.suffix == ".arrow"],
        "checksum file": [p for p in index if p.name == checksums.CHECKSUMS],
        "deletion vector": sorted(path.glob("data/dv-*.arrow")),
        "manifest": [path / "manifest.json"],
        "data": sorted(path.glob("data/frag-*.parquet")),
    }


def trial(pristine: Path, work: Path, relative: Path, bit: int, expected: list[Any], sql: bool = True) -> str:
    """The outcome of flipping bit ``bit`` of file ``relative`` in a copy of ``pristine``
    (``expected``: its :func:`results` with the same ``sql``)."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(pristine, work)
    target = work / relative
    data = bytearray(target.read_bytes())
    data[bit // 8] ^= 1 << (bit % 8)
    target.write_bytes(bytes(data))
    try:
        found = results(work, sql)
    except StorageError:
        return "detected"
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # (a Rust panic in a library is a pyo3 PanicException, a BaseException)
        return "crash"
    return "harmless" if found == (expected if sql else expected[:-1]) else "wrong"


def run(root: Path, per_type: int, seed: int) -> dict[str, Counter]:
    """Outcomes of ``per_type`` flips in each file type (seeded random files and bits),
    judged with the SQL scan; and of as many in the data files judged without it."""
    pristine = root / "pristine"
    build(pristine)
    expected = results(pristine)
    rng = random.Random(seed)
    out: dict[str, Counter] = {}
    kinds = [(kind, paths, True) for kind, paths in files(pristine).items()]
    for kind, paths, sql in kinds + [("data, no SQL", files(pristine)["data"], False)]:
        counts: Counter = Counter()
        for _ in range(per_type):
            path = rng.choice(paths)
            bit = rng.randrange(path.stat().st_size * 8)
            counts[trial(pristine, root / "work", path.relative_to(pristine), bit, expected, sql)] += 1
        out[kind] = counts
    return out


if __name__ == "__main__":
    import tempfile
    import time

    per_type = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 19
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        found = run(Path(tmp), per_type, seed)
    total: Counter = Counter()
    for kind, counts in found.items():
        total.update(counts if kind in FILE_TYPES else {})
        print(f"{kind:16} " + "  ".join(f"{o} {counts[o]}" for o in OUTCOMES))
    print(f"{'all (with SQL)':16} " + "  ".join(f"{o} {total[o]}" for o in OUTCOMES)
          + f"  ({sum(total.values())} flips, {time.perf_counter() - start:.0f} s)")
