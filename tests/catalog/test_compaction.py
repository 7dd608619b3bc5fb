"""Compaction of data fragments (catalog/compaction.py; docs/design.md: "Data fragments"):
whatever the history of inserts, deletes, updates, flushes and OPTIMIZE, a table keeps at
most the policy's number of fragments, its row ids and every answer (rows, float64 scores,
order) stay what they were, and a reader's open files do not grow with its history."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest
from reference import RefTable, ref_search

import datafusion_fts as fts
from datafusion_fts.catalog.compaction import plan
from datafusion_fts.index.tiers import TIER
from datafusion_fts.query import Boolean, Match, Phrase
from datafusion_fts.storage.files.manifest import FragmentMeta
from datafusion_fts.storage.stores.append_rows import FRAGMENT_ROWS

WORDS = ["fox", "dog", "cat", "owl", "elk", "yak"]
QUERIES = [Match("body", "fox"), Match("body", "dog cat owl"), Phrase("body", "fox dog"),
           Boolean(must=[Match("body", "cat")], must_not=[Match("body", "yak")])]


def bound(live: int, most: int) -> int:
    """The most fragments the policy leaves a table of ``live`` rows (fts.max_fragments ``most``)."""
    return max(most, 2 * live // FRAGMENT_ROWS + 1)


class History:
    """A table and the reference it must equal, changed by random writes."""

    def __init__(self, db: fts.Database, seed: int) -> None:
        self.rng = random.Random(seed)
        self.db = db
        self.ref = RefTable(rows={})
        self.next_id = 0
        self.table = db.create_table("docs", self._rows(20))
        self.table.create_index("body", positions=True)

    def _body(self) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(1, 5)))

    def _rows(self, n: int) -> pa.Table:
        bodies = [self._body() for _ in range(n)]
        for i, body in enumerate(bodies):
            self.ref.rows[self.next_id + i] = {"body": body}
        ids = list(range(self.next_id, self.next_id + n))
        self.next_id += n
        return pa.table({"id": pa.array(ids, pa.int64()), "body": bodies})

    def live(self) -> list[int]:
        return self.ref.live_row_ids()

    def step(self) -> str:
        op = self.rng.choice(["insert", "insert", "bulk", "delete", "delete", "update", "flush", "optimize"])
        t, live = self.table, self.live()
        if op == "insert":
            t.insert(self._rows(self.rng.randint(1, 4)))
        elif op == "bulk":
            t.bulk_insert(self._rows(self.rng.randint(1, 30)))
        elif op == "delete" and live:
            gone = self.rng.sample(live, min(len(live), self.rng.randint(1, 12)))
            t.delete(f"id IN ({', '.join(map(str, gone))})")
            self.ref.deleted.update(gone)
        elif op == "update" and live:
            row = self.rng.choice(live)
            body = self._body()
            self.db.sql(f"UPDATE docs SET body = '{body}', id = {self.next_id} WHERE id = {row}")
            self.ref.deleted.add(row)
            self.ref.rows[self.next_id] = {"body": body}
            self.next_id += 1
        elif op == "flush":
            t.flush()
        elif op == "optimize":
            self.db.sql("OPTIMIZE docs")
        return op

    def check(self) -> None:
        """The table holds the reference's live rows under their row ids, and every query
        answers as the brute-force reference: the same rows, scores and order."""
        rows = self.table.to_arrow()
        assert rows.column("_rowid").to_pylist() == self.live()
        assert rows.column("id").to_pylist() == self.live()  # (a row's id is its first row id)
        assert rows.column("body").to_pylist() == [self.ref.rows[r]["body"] for r in self.live()]
        for query in QUERIES:
            found = self.table.search(query, limit=None, columns=["body"])
            expected = ref_search(self.ref, query)
            assert list(zip(found.column("_rowid").to_pylist(), found.column("_score").to_pylist())) == expected
            assert found.column("body").to_pylist() == [self.ref.rows[r]["body"] for r, _ in expected]
        count = self.db.sql("SELECT count(*) AS n FROM docs WHERE id >= 0").to_arrow_table().column(0)[0].as_py()
        assert count == len(self.live())


@pytest.mark.parametrize("where", ["memory", "directory"])
def test_every_answer_and_row_id_holds_while_fragments_stay_bounded(tmp_path: Path, where: str) -> None:
    most = 3
    config = {"fts.max_fragments": most, "fts.memtable_rows": 6, "fts.gc_grace_seconds": 0}
    db = fts.connect(None if where == "memory" else tmp_path / "db", config=config)
    history = History(db, seed=45)
    merged = 0
    for _ in range(160):
        history.step()
        history.check()
        meta = db.manifest.tables["docs"]
        merged += any(f.gaps for f in meta.fragments)
        assert len(meta.fragments) <= bound(meta.live_rows, most)
    assert merged  # (compaction ran, and dropped rows)
    if where == "directory":  # nothing left behind: the files are those the manifest names
        meta = db.manifest.tables["docs"]
        on_disk = {p.name.split(".")[0] for p in (tmp_path / "db" / "data").iterdir()}
        assert on_disk == {f.id for f in meta.fragments} | {v for f in meta.fragments for v in (f.deletes, f.gaps) if v}
        del db
        reopened = fts.connect(tmp_path / "db")
        history.db, history.table = reopened, reopened.table("docs")
        history.check()


def _fragments(live: list[int], dead: list[int]) -> list[FragmentMeta]:
    out, lo = [], 0
    for n, d in zip(live, dead):
        out.append(FragmentMeta(f"frag-{len(out):08d}", lo, n + d, deleted=d, layout=2))
        lo += n + d
    return out


def test_the_policy_bounds_fragments_whatever_the_history() -> None:
    """A model of 100,000 writes (flushes of 1 to 2,000 rows, bulk loads up to 2^21 rows,
    deletes anywhere), each planned as a write plans: the fragments never pass the bound,
    and each row is copied a few times (amortized), not once per write."""
    rng = random.Random(7)
    most = 24
    live: list[int] = []
    dead: list[int] = []
    copied = written = 0
    for i in range(100_000):
        kind = rng.random()
        if kind < 0.6 or not live:
            n = rng.randint(1, 2000) if rng.random() < 0.999 else rng.randint(1, 2 * FRAGMENT_ROWS)
            while n:  # (a load writes fragments of at most FRAGMENT_ROWS rows)
                take = min(n, FRAGMENT_ROWS)
                live.append(take)
                dead.append(0)
                written += take
                n -= take
        else:
            at = rng.randrange(len(live))
            gone = rng.randint(0, live[at])
            live[at] -= gone
            dead[at] += gone
        groups = plan(_fragments(live, dead), most)
        for a, b in reversed(groups):
            copied += sum(live[a:b])
            merged = sum(live[a:b])
            live[a:b], dead[a:b] = ([merged], [0]) if merged else ([], [])
        assert len(live) <= bound(sum(live), most)
    assert copied < 8 * written
    full = plan(_fragments(live, dead), most, full=True)
    for a, b in reversed(full):
        merged = sum(live[a:b])
        live[a:b], dead[a:b] = ([merged], [0]) if merged else ([], [])
    assert len(live) <= 2 * sum(live) // FRAGMENT_ROWS + 1
    assert TIER == 8


# Opens the database read only, with at most 256 descriptors, and counts its rows, runs a
# search and fetches every row: prints the descriptors it then holds.
LIMITED_READER = textwrap.dedent(
    """
    import os, resource, sys
    import datafusion_fts as fts
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    db = fts.connect(sys.argv[1], read_only=True)
    assert db.sql("SELECT count(*) FROM docs").to_arrow_table().column(0)[0].as_py() == int(sys.argv[2])
    found = db.sql("SELECT id, body, score() AS s FROM docs WHERE MATCH(body, 'fox') AND id >= 0").to_arrow_table()
    assert db.table("docs").to_arrow().num_rows == int(sys.argv[2])
    print(len(os.listdir("/proc/self/fd")))
    """
)


def test_a_long_history_leaves_few_fragments_and_a_reader_few_open_files(tmp_path: Path) -> None:
    """V2 of issue 45: a row inserted and deleted 150 times left 151 fragments (each costing
    a reader two open files: under a limit of 256 it could not count the rows) and 151
    index segments."""
    path = tmp_path / "db"
    db = fts.connect(path)
    t = db.create_table("docs", pa.table({"id": [0], "body": ["fox zero"]}))
    t.create_index("body")
    for i in range(1, 151):
        t.insert(pa.table({"id": [i], "body": [f"fox {i}"]}))
        t.delete(f"id = {i}")
    meta = db.manifest.tables["docs"]
    most = db.settings.get("fts.max_fragments")
    assert len(meta.fragments) <= most and len(meta.indexes["body"].segments) <= most  # (each flush added one of each)
    reader = subprocess.run([sys.executable, "-c", LIMITED_READER, str(path), "1"], capture_output=True, text=True)
    assert reader.returncode == 0, reader.stderr
    assert int(reader.stdout) <= 64
    db.sql("OPTIMIZE docs")
    assert len(db.manifest.tables["docs"].fragments) == 1
    reader = subprocess.run([sys.executable, "-c", LIMITED_READER, str(path), "1"], capture_output=True, text=True)
    assert reader.returncode == 0, reader.stderr
    assert int(reader.stdout) <= 64


def _size(path: Path) -> int:
    return sum(p.stat().st_size for d in ("data", "index") for p in (path / d).rglob("*") if p.is_file())


def test_after_optimize_the_directory_takes_little_more_than_a_fresh_build(tmp_path: Path) -> None:
    """A table of 3,000 rows of ~40 words, a quarter of them deleted, some updated, along the
    way, many flushes: after OPTIMIZE its files take at most 1.2x those of the same live
    rows loaded and indexed afresh (1.02x measured; deleted ids stay listed)."""
    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(3000)]

    def rows(lo: int, n: int) -> pa.Table:
        return pa.table({"id": list(range(lo, lo + n)),
                         "body": [" ".join(rng.choices(vocabulary, k=rng.randint(20, 60))) for _ in range(n)]})

    db = fts.connect(tmp_path / "db", config={"fts.gc_grace_seconds": 0})
    t = db.create_table("docs", rows(0, 500))
    t.create_index("body")
    next_id = 500
    for _ in range(50):
        t.insert(rows(next_id, 50))
        next_id += 50
        live = t.to_arrow().column("id").to_pylist()
        gone = rng.sample(live, 15)
        t.delete(f"id IN ({', '.join(map(str, gone))})")
        db.sql(f"UPDATE docs SET body = 'w1 w2 w3' WHERE id = {rng.choice(sorted(set(live) - set(gone)))}")
    db.sql("OPTIMIZE docs")
    live = t.to_arrow().select(["id", "body"])
    fresh = fts.connect(tmp_path / "fresh")
    fresh.create_table("docs", live).create_index("body")
    ratio = _size(tmp_path / "db") / _size(tmp_path / "fresh")
    assert len(db.manifest.tables["docs"].fragments) == 1 and live.num_rows == 2250
    assert ratio <= 1.2, ratio


def test_after_optimize_a_long_history_takes_little_more_than_a_fresh_build(tmp_path: Path) -> None:
    """Issue 45: a table whose 600 live rows are what is left of 12,000 inserted (loads of
    200, each followed by deletes back to 600), as a table lives for months. Its row ids
    stay (stable), so OPTIMIZE's segment spans 20 ids per live row: its row lengths,
    mostly zeros, are written compressed (``Segment.compressed``; uncompressed they were
    20x a fresh build's, the whole directory 1.36x), and its postings' rows as ordinals
    among the live rows (codec ``bp128-ordinals``: as row ids the directory took 1.11x).
    At most 1.05x a fresh build of the same rows (1.004x measured), and every search
    answers as the fresh build does, scores to the bit."""
    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(3000)]
    db = fts.connect(tmp_path / "db", config={"fts.gc_grace_seconds": 0})
    t = None
    live: list[int] = []
    for lo in range(0, 12_000, 200):
        load = pa.table({"id": list(range(lo, lo + 200)),
                         "body": [" ".join(rng.choices(vocabulary, k=rng.randint(20, 60))) for _ in range(200)]})
        if t is None:
            t = db.create_table("docs", load)
            t.create_index("body")
        else:
            t.bulk_insert(load)
        live += load.column("id").to_pylist()
        gone = set(rng.sample(live, max(0, len(live) - 600)))
        if gone:
            t.delete(f"id IN ({', '.join(map(str, sorted(gone)))})")
            live = [i for i in live if i not in gone]
    db.sql("OPTIMIZE docs")
    rows = t.to_arrow().select(["id", "body"]).sort_by("id")
    fresh = fts.connect(tmp_path / "fresh")
    fresh.create_table("docs", rows).create_index("body")
    (seg,) = db.manifest.tables["docs"].indexes["body"].segments
    assert seg.count >= 11_000 and seg.n_docs == 600  # (a segment over the long history)
    assert seg.codec == "bp128-ordinals"
    ratio = _size(tmp_path / "db") / _size(tmp_path / "fresh")
    assert ratio <= 1.05, ratio
    for query in ("w1", "w7 w9 w11", "w20 w300 w2999 w5", '"w1 w2"'):
        sql = f"SELECT id, score() AS s FROM docs WHERE MATCH(body, '{query}') ORDER BY s DESC, id"
        assert db.sql(sql).to_arrow_table() == fresh.sql(sql).to_arrow_table(), query
