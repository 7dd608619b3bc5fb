"""Tables indexed in place (storage/sources/source_files.py): a user's Parquet or CSV files,
searched by every plan with the reference's results, as the files are indexed, added,
rewritten, removed and optimized (docs/design.md: "Tables indexed in place")."""

from __future__ import annotations

import gzip
import os
import tempfile
from pathlib import Path
from unittest import mock

import datafusion
import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from engine_tables import index_options
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import RefTable, ref_search
from strategies import corpus_and_query, table_columns

import datafusion_fts as fts
from datafusion_fts.errors import FtsError, PlanError
from datafusion_fts.storage.stores import append_rows

PLANS = ("auto", "indexed", "hybrid", "flat_scan")


class Source:
    """A directory of Parquet (or CSV) files and the row ids the rule of source_files.py
    gives their rows, kept independently of the engine: a file keeps the ids it was
    committed with while it is unchanged; every other file, in path order, follows the
    highest id given so far."""

    def __init__(self, root: Path, columns: list[str], kind: str = "parquet") -> None:
        self.root = root
        self.columns = columns
        self.kind = kind
        self.files: dict[str, list[dict]] = {}  # name -> rows
        self.committed: dict[str, int] = {}  # name -> first id, as of the last commit
        self.next_rowid = 0  # after the committed files
        self._version = 0

    def write(self, name: str, rows: list[dict]) -> None:
        """Write ``rows`` as file ``name`` (its suffix given by the kind). In a CSV file an
        empty value is null, so "" is held as None; an ``n`` column (the row's number)
        keeps a row of nulls from being an empty line, which CSV readers skip."""
        name = f"{name}.{self.kind}"
        if self.kind == "csv":
            rows = [{c: r.get(c) or None for c in self.columns} for r in rows]
        self.files[name] = rows
        self.committed.pop(name, None)
        table = pa.table({c: pa.array([r.get(c) for r in rows], pa.string()) for c in self.columns})
        path = self.root / name
        if self.kind == "csv":
            pcsv.write_csv(table.append_column("n", pa.array(range(len(rows)), pa.int64())), path)
        else:
            pq.write_table(table, path, row_group_size=7)
        self._version += 1  # (a rewrite within one mtime tick must still look changed)
        os.utime(path, ns=(10**18 + self._version, 10**18 + self._version))

    def remove(self, name: str) -> None:
        del self.files[name]
        self.committed.pop(name, None)
        os.unlink(self.root / name)

    def ids(self) -> dict[str, int]:
        """Each file's first id as a query sees the directory now."""
        first = dict(self.committed)
        next_rowid = self.next_rowid
        for name in sorted(self.files):
            if name not in first:
                first[name] = next_rowid
                next_rowid += len(self.files[name])
        return first

    def commit(self) -> None:
        """What OPTIMIZE (or an index build) commits: the ids as a query sees them."""
        first = self.ids()
        self.next_rowid = max([self.next_rowid, *[first[n] + len(r) for n, r in self.files.items()]])
        self.committed = first

    def reference(self, template: RefTable) -> RefTable:
        rows = {first + i: row for name, first in self.ids().items() for i, row in enumerate(self.files[name])}
        return RefTable(rows=rows, params=template.params, max_token_length=template.max_token_length,
                        columns=self.columns)


def hits(t: fts.Table, query, limit, offset=0) -> list[tuple[int, str]]:
    result = t.search(query, limit=limit, offset=offset, columns=[])
    return list(zip(result.column("_rowid").to_pylist(), map(repr, result.column("_score").to_pylist())))


def check_every_plan(db: fts.Database, t: fts.Table, ref: RefTable, query) -> list[tuple[int, str]]:
    expected = [(r, repr(s)) for r, s in ref_search(ref, query)]
    answered = set()
    for plan in PLANS:
        db.settings.set("fts.force_plan", plan)
        try:
            got = hits(t, query, None)
        except PlanError:
            continue  # (this plan cannot answer here: the tail or an index is missing)
        assert got == expected, plan
        if expected:
            assert hits(t, query, 3, 1) == expected[1:4], plan
        answered.add(plan)
    db.settings.set("fts.force_plan", "auto")
    assert {"auto", "flat_scan"} <= answered
    # The rows' columns (from the files, or from the stored copies): each row's own.
    found = t.search(query, limit=None, columns=ref.columns).to_pylist()
    assert [{c: r[c] for c in ref.columns} for r in found] == [
        {c: ref.rows[r["_rowid"]].get(c) for c in ref.columns} for r in found]
    return expected


def split(rows: list[dict], cuts: list[int]) -> list[list[dict]]:
    bounds = [0, *sorted({c % (len(rows) + 1) for c in cuts}), len(rows)]
    return [rows[a:b] for a, b in zip(bounds, bounds[1:])]


@pytest.mark.parametrize("kind", ["parquet", "csv"])
@settings(max_examples=12, deadline=None)
@given(corpus_and_query(deletes=False, params=True, min_rows=2),
       st.lists(st.integers(0, 40), max_size=3), st.data())
def test_every_plan_matches_the_reference_as_files_come_change_and_go(kind, case, cuts, data):
    template, query = case
    columns = table_columns(template)
    rows = [template.rows[r] for r in sorted(template.rows)]
    copy_rows = data.draw(st.integers(1, 40))  # (the most rows of a copy of several files)
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(append_rows, "FRAGMENT_ROWS", copy_rows):
        source = Source(Path(tmp) / "src", columns, kind)
        source.root.mkdir()
        for i, part in enumerate(split(rows, cuts)):
            source.write(f"part-{i:03d}", part)
        db = fts.connect(Path(tmp) / "db")
        # Stored copies of some columns (``FRAGMENT_ROWS`` small: several copies).
        stored = data.draw(st.lists(st.sampled_from(columns), unique=True, min_size=1))
        t = db.index_in_place("docs", source.root, store=stored)
        for column in columns:
            t.create_index(column, **index_options(template, column))
        source.commit()
        check_every_plan(db, t, source.reference(template), query)

        # A new file: searched at once, as the unindexed tail.
        source.write("part-999", data.draw(st.permutations(rows)))
        check_every_plan(db, t, source.reference(template), query)

        # A file rewritten: its old ids are gone, its rows come after every id so far.
        victim = data.draw(st.sampled_from(sorted(source.files)))
        source.write(victim.rpartition(".")[0], data.draw(st.lists(st.sampled_from(rows), max_size=5)))
        before = check_every_plan(db, t, source.reference(template), query)

        # OPTIMIZE indexes the tail: the same ids, the same answers.
        t.optimize()
        source.commit()
        assert check_every_plan(db, t, source.reference(template), query) == before

        # A file removed: its rows leave the results and the statistics.
        source.remove(data.draw(st.sampled_from(sorted(source.files))))
        check_every_plan(db, t, source.reference(template), query)
        t.optimize()
        source.commit()
        check_every_plan(db, t, source.reference(template), query)

        # Reopened by another Database: the same.
        check_every_plan(db, fts.connect(Path(tmp) / "db").table("docs"), source.reference(template), query)


@pytest.fixture
def parquet_dir(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(pa.table({"id": [1, 2, 3], "title": ["a", "b", "c"],
                             "body": ["alpha beta", "beta gamma", "gamma delta"]}), src / "a.parquet")
    pq.write_table(pa.table({"id": [4, 5], "title": ["d", "e"], "body": ["alpha alpha", "delta"]}),
                   src / "b.parquet")
    return src


def test_sql_indexes_a_parquet_directory_registered_on_the_session(tmp_path, parquet_dir):
    ctx = datafusion.SessionContext()
    ctx.register_parquet("docs", str(parquet_dir))
    db = fts.connect(tmp_path / "db", ctx=ctx)
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    assert db.manifest.tables["docs"].source == str(parquet_dir)
    sql = "SELECT _rowid, id, title, score() AS s FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC"
    assert [(r["_rowid"], r["id"], r["title"]) for r in db.sql(sql).to_pylist()] == [(3, 4, "d"), (0, 1, "a")]
    # The rows' columns come from the user's files; the database holds none of them.
    assert not list((tmp_path / "db" / "data").iterdir())
    # A relational predicate beside MATCH is a prefilter read through the view's _rowid
    # (the ids the search gives): applied before the top-k, so LIMIT 1 still finds id 1.
    prefiltered = "SELECT id, score() FROM docs WHERE MATCH(body, 'alpha') AND id < 3 ORDER BY score() DESC LIMIT 1"
    assert [r["id"] for r in db.sql(prefiltered).to_pylist()] == [1]
    plan = db.sql("EXPLAIN " + prefiltered).to_pydict()["plan"][0]
    assert "prefilter=[" in plan
    # SQL sees the table's row ids by name; plain DataFusion on the session sees its columns.
    assert db.sql("SELECT _rowid, id FROM docs ORDER BY _rowid").to_pylist() == [
        {"_rowid": i, "id": i + 1} for i in range(5)
    ]
    assert ctx.sql("SELECT * FROM docs ORDER BY id").to_pylist()[0] == {"id": 1, "title": "a", "body": "alpha beta"}
    # A file added is found by the next query, and EXPLAIN says it is the unindexed tail.
    pq.write_table(pa.table({"id": [6], "title": ["f"], "body": ["alpha omega"]}), parquet_dir / "c.parquet")
    assert [r["id"] for r in db.sql(sql).to_pylist()] == [4, 1, 6]
    explained = "\n".join(r["plan"] for r in db.sql("EXPLAIN " + sql).to_pylist())
    assert "HybridResidualSearch" in explained and "c.parquet" in explained
    assert ctx.sql("SELECT count(*) AS n FROM docs").to_pylist() == [{"n": 6}]


def test_a_source_file_changed_under_a_query_is_read_again(tmp_path, parquet_dir):
    db = fts.connect(tmp_path / "db")
    t = db.index_in_place("docs", parquet_dir)
    t.create_index("body")
    assert [r["id"] for r in t.search("alpha", columns=["id"]).to_pylist()] == [4, 1]
    pq.write_table(pa.table({"id": [4, 5], "title": ["d", "e"], "body": ["omega", "alpha alpha alpha"]}),
                   parquet_dir / "b.parquet")
    os.utime(parquet_dir / "b.parquet", ns=(1, 1))
    assert [r["id"] for r in t.search("alpha", columns=["id"]).to_pylist()] == [5, 1]


def test_writes_to_a_table_indexed_in_place_are_refused_and_write_nothing(tmp_path, parquet_dir):
    db = fts.connect(tmp_path / "db")
    t = db.index_in_place("docs", parquet_dir)
    version = db.manifest.version
    for write in (lambda: t.insert(pa.table({"id": [9], "title": ["x"], "body": ["y"]})),
                  lambda: t.bulk_insert(pa.table({"id": [9], "title": ["x"], "body": ["y"]})),
                  lambda: t.delete("id = 1"),
                  lambda: db.sql("INSERT INTO docs VALUES (9, 'x', 'y')")):
        with pytest.raises(fts.InvalidArgument, match="indexed in place"):
            write()
    assert db.manifest.version == version
    assert t.count_rows() == 5


def test_bad_sources_get_clear_errors(tmp_path, parquet_dir):
    db = fts.connect(tmp_path / "db")
    with pytest.raises(fts.InvalidArgument, match="no Parquet files"):
        db.index_in_place("docs", tmp_path / "nowhere")
    with pytest.raises(fts.CatalogError, match="no table named"):
        db.index_in_place("docs")
    t = db.index_in_place("docs", parquet_dir)
    assert db.index_in_place("docs", parquet_dir).name == t.name  # (again: the same table)
    pq.write_table(pa.table({"other": [1]}), parquet_dir / "z.parquet")
    with pytest.raises(FtsError, match="not the table's"):
        t.search("alpha")
    with pytest.raises(fts.InvalidArgument, match="reserved"):
        src = tmp_path / "rowid"
        src.mkdir()
        pq.write_table(pa.table({"_rowid": [1]}), src / "a.parquet")
        db.index_in_place("other", src)


def test_stored_columns_are_fetched_from_the_database_copy(tmp_path, parquet_dir):
    ctx = datafusion.SessionContext()
    ctx.register_parquet("docs", str(parquet_dir))
    db = fts.connect(tmp_path / "db", ctx=ctx)
    db.sql("CREATE FULLTEXT INDEX ON docs (body) WITH (store = 'title')")
    assert db.manifest.tables["docs"].stored == ("title",)
    # One copy for both files (a copy holds consecutive files' rows), the second's from row 3.
    frags = db.manifest.tables["docs"].fragments
    assert [(f.copy, f.copy_row) for f in frags] == [(frags[0].copy, 0), (frags[0].copy, 3)]
    assert len(list((tmp_path / "db" / "data").iterdir())) == 1
    expected = [{"id": 4, "title": "d", "body": "alpha alpha"}, {"id": 1, "title": "a", "body": "alpha beta"}]
    assert db.table("docs").search("alpha", columns=["id", "title", "body"]).drop_columns(
        ["_rowid", "_score"]).to_pylist() == expected
    # The copy is what a fetch of the stored column reads: with the user's file of the
    # same size and time holding other titles, the copy's still come back.
    path = parquet_dir / "a.parquet"
    st = path.stat()
    pq.write_table(pa.table({"id": [1, 2, 3], "title": ["X", "Y", "Z"],
                             "body": ["alpha beta", "beta gamma", "gamma delta"]}), path)
    assert path.stat().st_size == st.st_size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    fresh = fts.connect(tmp_path / "db").table("docs")
    assert [r["title"] for r in fresh.search("alpha", columns=["title"]).to_pylist()] == ["d", "a"]
    # A new file has no copy until OPTIMIZE: fetched from the file meanwhile.
    pq.write_table(pa.table({"id": [6], "title": ["f"], "body": ["alpha omega"]}), parquet_dir / "c.parquet")
    assert [r["title"] for r in db.table("docs").search("alpha", columns=["title"]).to_pylist()] == ["d", "a", "f"]
    db.sql("OPTIMIZE docs")
    frags = db.manifest.tables["docs"].fragments
    assert [f.copy_row for f in frags] == [0, 3, 0] and frags[2].copy not in (None, frags[0].copy)
    assert [r["title"] for r in db.table("docs").search("alpha", columns=["title"]).to_pylist()] == ["d", "a", "f"]
    # Rows of three files and two copies in one fetch: each row's title from its copy
    # (a.parquet's file says X, Y, Z), ids from the files.
    found = db.table("docs").search("alpha OR beta OR gamma OR delta", limit=None, columns=["id", "title"])
    assert sorted(zip(found.column("id").to_pylist(), found.column("title").to_pylist())) == [
        (1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e"), (6, "f")]
    with pytest.raises(fts.InvalidArgument, match="do not have"):
        db.index_in_place("docs", parquet_dir, store=["nope"])
    db.create_table("managed", pa.table({"body": ["x"]}))
    with pytest.raises(fts.InvalidArgument, match="store is for tables indexed in place"):
        db.sql("CREATE FULLTEXT INDEX ON managed (body) WITH (store = 'body')")


def test_a_fetch_reads_each_files_rows_from_its_place_in_a_shared_copy(tmp_path, monkeypatch):
    """Copies hold consecutive files' rows (up to FRAGMENT_ROWS): a fetch of rows of
    several files maps each to its place in its copy."""
    monkeypatch.setattr(append_rows, "FRAGMENT_ROWS", 5)
    src = tmp_path / "src"
    src.mkdir()
    for name, ids in (("a", [1, 2]), ("b", [3, 4, 5]), ("c", [6, 7]), ("d", [8])):
        pq.write_table(pa.table({"id": ids, "title": [f"t{i}" for i in ids], "body": [f"word w{i}" for i in ids]}),
                       src / f"{name}.parquet")
    db = fts.connect(tmp_path / "db")
    t = db.index_in_place("docs", src, store=["title"])
    t.create_index("body")
    frags = db.manifest.tables["docs"].fragments
    assert [f.copy_row for f in frags] == [0, 2, 0, 2]  # (a+b, c+d)
    assert frags[0].copy == frags[1].copy != frags[2].copy == frags[3].copy
    found = t.search("word", limit=None, columns=["id", "title"])
    assert found.num_rows == 8
    assert [f"t{i}" for i in found.column("id").to_pylist()] == found.column("title").to_pylist()
    units = t.snapshot().fetch_units(found.column("_rowid").to_numpy(), ["title"])
    assert units == {"title": {"pages of stored copies": 2}}  # (one page a copy: these files are tiny)


def test_explain_analyze_says_what_the_fetch_read(tmp_path, parquet_dir):
    paged = tmp_path / "paged"
    paged.mkdir()
    pq.write_table(pq.read_table(parquet_dir / "a.parquet"), paged / "a.parquet", write_page_index=True)
    db = fts.connect(tmp_path / "db")
    db.index_in_place("plain", parquet_dir, store=["title"]).create_index("body")
    db.index_in_place("paged", paged).create_index("body")

    def fetch_line(table: str) -> str:
        plan = db.sql(f"EXPLAIN ANALYZE SELECT id, title FROM {table} WHERE MATCH(body, 'beta') LIMIT 5").to_pydict()
        return next(line.strip() for text in plan["plan"] for line in text.splitlines()
                    if line.lstrip().startswith("FetchRows"))

    # (pyarrow's defaults: no page index, so a row group; the stored copy is paged)
    assert fetch_line("plain") == (
        "FetchRows: rows=2, columns=['id', 'title']  [id: 1 row group of source files; title: 1 page of stored copies]"
    )
    assert fetch_line("paged") == "FetchRows: rows=2, columns=['id', 'title']  [id: 1 page of source files; title: 1 page of source files]"


def test_explain_names_new_changed_and_removed_files(tmp_path, parquet_dir):
    db = fts.connect(tmp_path / "db")
    db.index_in_place("docs", parquet_dir).create_index("body")
    pq.write_table(pa.table({"id": [6], "title": ["f"], "body": ["alpha omega"]}), parquet_dir / "c.parquet")
    (parquet_dir / "a.parquet").unlink()
    plan = db.sql("EXPLAIN SELECT id FROM docs WHERE MATCH(body, 'alpha')").to_pydict()["plan"][0]
    assert f"source: {parquet_dir} (2 files); new or changed since committed: c.parquet; " \
           "rows of changed or removed files: 0..2" in plan


def test_sql_beside_files_added_and_optimized_in_other_threads(tmp_path, parquet_dir):
    """Readers never fail and always see a whole listing: each added file holds one
    more 'alpha' row, so a count is one of the counts the files ever gave."""
    import threading

    ctx = datafusion.SessionContext()
    ctx.register_parquet("docs", str(parquet_dir))
    db = fts.connect(tmp_path / "db", ctx=ctx)
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    sql = "SELECT count(*) AS n FROM docs WHERE MATCH(body, 'alpha')"
    counts, errors, done = [], [], threading.Event()

    def read() -> None:
        while not done.is_set():
            try:
                counts.append(db.sql(sql).to_pylist()[0]["n"])
            except Exception as exc:  # (any failure fails the test)
                errors.append(exc)

    readers = [threading.Thread(target=read) for _ in range(2)]
    for r in readers:
        r.start()
    try:
        for i in range(6):
            # (written under a name listings skip, then renamed: never read half written)
            pq.write_table(pa.table({"id": [10 + i], "title": ["n"], "body": [f"alpha new{i}"]}),
                           parquet_dir / f"_n{i}.parquet")
            os.rename(parquet_dir / f"_n{i}.parquet", parquet_dir / f"n{i}.parquet")
            if i % 2:
                db.table("docs").optimize()
    finally:
        done.set()
        for r in readers:
            r.join()
    assert not errors, errors[:3]
    assert counts and set(counts) <= set(range(2, 9))
    assert db.sql(sql).to_pylist() == [{"n": 8}]


def test_a_listing_is_reused_for_fts_source_refresh_seconds(tmp_path, parquet_dir):
    """A large directory costs its listing at every query (3 ms for 1,000 files), so a
    listing may be reused for a while; a file that changed under it is still never read
    stale: the search lists again and answers as the files are."""
    db = fts.connect(tmp_path / "db", config={"fts.source_refresh_seconds": 3600})
    t = db.index_in_place("docs", parquet_dir)
    t.create_index("body")
    assert t.count_rows() == 5
    pq.write_table(pa.table({"id": [6], "title": ["f"], "body": ["alpha omega"]}), parquet_dir / "c.parquet")
    assert t.count_rows() == 5  # (the listing of an hour ago)
    # a.parquet rewritten: the search reads it, finds it changed, and runs on a new listing.
    pq.write_table(pa.table({"id": [7], "title": ["g"], "body": ["alpha zeta"]}), parquet_dir / "a.parquet")
    os.utime(parquet_dir / "a.parquet", ns=(10**18, 10**18))
    found = t.search("alpha", limit=None, columns=["id", "title"])
    assert sorted(found.column("id").to_pylist()) == [4, 6, 7]
    db.sql("SET fts.source_refresh_seconds = 0")
    assert t.count_rows() == 4  # (b, c and the new a)


def test_hive_partition_columns_come_from_the_files_paths(tmp_path):
    """A table registered with Hive partition columns (``table_partition_cols``) has
    columns no file holds: each file's values come from its ``name=value`` directories,
    in searches, fetches, plain SQL and indexes, on every plan."""
    def write(year: int, region: str, ids: list[int]) -> None:
        where = tmp_path / "ev" / f"year={year}" / f"region={region}"
        where.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"id": ids, "body": [f"alpha w{i}" if i % 2 else f"beta w{i}" for i in ids]}),
                       where / "p.parquet")

    write(2023, "eu", [1, 2, 3])
    write(2024, "eu", [4, 5])
    write(2024, "us%2Fwest", [6, 7])  # (percent-encoded, as Hive writes "/")
    ctx = datafusion.SessionContext()
    ctx.register_parquet("ev", str(tmp_path / "ev"),
                         table_partition_cols=[("year", pa.int32()), ("region", pa.string())])
    expected = sorted((r["id"], r["year"], r["region"]) for r in ctx.sql("SELECT * FROM ev").to_pylist())
    db = fts.connect(tmp_path / "db", ctx=ctx)
    db.sql("CREATE FULLTEXT INDEX ON ev (body)")
    t = db.table("ev")
    assert t.snapshot().meta.partitions == ("year", "region")
    assert t.schema.field("year").type == pa.int32()
    assert sorted((r["id"], r["year"], r["region"]) for r in db.sql("SELECT * FROM ev").to_pylist()) == expected
    assert {r["region"] for r in db.sql("SELECT region FROM ev").to_pylist()} == {"eu", "us/west"}

    def answers(plan: str) -> list:
        db.settings.set("fts.force_plan", plan)
        rows = db.sql("SELECT id, year, region, score() AS s FROM ev WHERE MATCH(body, 'alpha') AND year = 2024 "
                      "ORDER BY s DESC, id").to_pylist()
        found = t.search("alpha", limit=None, columns=["region", "id", "year"]).to_pylist()
        return [(r["id"], r["year"], r["region"]) for r in rows], sorted((r["id"], r["year"], r["region"]) for r in found)

    assert answers("auto") == ([(5, 2024, "eu"), (7, 2024, "us/west")],
                               [(1, 2023, "eu"), (3, 2023, "eu"), (5, 2024, "eu"), (7, 2024, "us/west")])
    for plan in ("indexed", "flat_scan"):
        assert answers(plan) == answers("auto"), plan
    db.settings.set("fts.force_plan", "auto")
    # A new partition is the unindexed tail, found by the next query; OPTIMIZE indexes it.
    write(2025, "eu", [9])
    assert db.sql("SELECT id, year FROM ev WHERE MATCH(body, 'alpha') AND year = 2025").to_pylist() == [
        {"id": 9, "year": 2025}]
    db.sql("OPTIMIZE ev")
    t.create_index("region")  # (a partition column indexed like any text column)
    assert sorted(r["id"] for r in t.search("region:west", limit=None, columns=["id"]).to_pylist()) == [6, 7]
    units = t.snapshot().fetch_units(np.array([0, 5]), ["region", "id"])
    assert units["region"] == {} and units["id"]
    with pytest.raises(fts.InvalidArgument, match="partition columns"):
        db.index_in_place("ev", store=["year"])


def test_files_outside_the_partition_directories_are_not_the_tables(tmp_path):
    """DataFusion's listing skips files not under ``name=value`` directories for each
    partition column; so does the table indexed in place."""
    (tmp_path / "ev" / "year=2023").mkdir(parents=True)
    pq.write_table(pa.table({"id": [1], "body": ["alpha"]}), tmp_path / "ev" / "year=2023" / "p.parquet")
    pq.write_table(pa.table({"id": [2], "body": ["alpha"]}), tmp_path / "ev" / "loose.parquet")
    ctx = datafusion.SessionContext()
    ctx.register_parquet("ev", str(tmp_path / "ev"), table_partition_cols=[("year", pa.string())])
    assert ctx.sql("SELECT id FROM ev").to_pylist() == [{"id": 1}]
    db = fts.connect(tmp_path / "db", ctx=ctx)
    db.sql("CREATE FULLTEXT INDEX ON ev (body)")
    assert db.table("ev").snapshot().meta.source == str(tmp_path / "ev")
    assert db.sql("SELECT id, year FROM ev WHERE MATCH(body, 'alpha')").to_pylist() == [{"id": 1, "year": "2023"}]
    assert db.sql("SELECT count(*) AS n FROM ev").to_pylist() == [{"n": 1}]

def test_plain_sql_sees_a_file_added_before_any_search(tmp_path, parquet_dir):
    """DataFusion resolves the table's view without a search, so ``db.sql`` lists the
    source first: a file added was missing from ``SELECT count(*)`` until a search."""
    db = fts.connect(tmp_path / "db")
    db.index_in_place("docs", parquet_dir).create_index("body")
    search = "SELECT id FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC LIMIT 10"
    assert [r["id"] for r in db.sql(search).to_pylist()] == [4, 1]  # (its shape is cached: a direct answer)
    assert db.sql("SELECT count(*) AS n FROM docs").to_pylist() == [{"n": 5}]
    pq.write_table(pa.table({"id": [6], "title": ["f"], "body": ["gamma"]}), parquet_dir / "c.parquet")
    assert db.sql("SELECT count(*) AS n FROM docs").to_pylist() == [{"n": 6}]
    pq.write_table(pa.table({"id": [7], "title": ["g"], "body": ["alpha alpha alpha"]}), parquet_dir / "d.parquet")
    assert [r["id"] for r in db.sql(search).to_pylist()] == [7, 4, 1]
    assert db.sql("SELECT max(id) AS m FROM docs").to_pylist() == [{"m": 7}]


def write_csv(path: Path, text: str, tick: int = 0) -> None:
    path.write_text(text)
    if tick:  # (a rewrite within one mtime tick must still look changed)
        os.utime(path, ns=(10**18 + tick, 10**18 + tick))


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_sql_indexes_a_csv_directory_registered_on_the_session(tmp_path, delimiter):
    """A session's ``register_csv`` table, indexed in place: every plan, the view and
    DataFusion's own reading of the files give the same rows, with quoted delimiters,
    doubled quotes, newlines inside values and empty values (null) among them."""
    d = delimiter
    src = tmp_path / "src"
    src.mkdir()
    write_csv(src / "a.csv", f'id{d}title{d}body\n1{d}"a{d} b"{d}alpha beta\n2{d}{d}"beta\nalpha ""q"""\n3{d}c{d}\n')
    write_csv(src / "b.csv", f"id{d}title{d}body\n4{d}d{d}alpha alpha\n5{d}e{d}delta\n")
    ctx = datafusion.SessionContext()
    ctx.register_csv("docs", str(src), has_header=True, delimiter=d, file_extension=".csv")
    own = ctx.sql("SELECT * FROM docs ORDER BY id").to_pylist()
    db = fts.connect(tmp_path / "db", ctx=ctx)
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    meta = db.manifest.tables["docs"]
    assert (meta.source, meta.csv) == (str(src), fts.CsvFormat(d, True))
    assert db.sql("SELECT id, title, body FROM docs ORDER BY id").to_pylist() == own
    assert own[1] == {"id": 2, "title": None, "body": 'beta\nalpha "q"'} and own[2]["body"] is None
    sql = "SELECT _rowid, id, title, body, score() AS s FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC"
    answers = {}
    for plan in PLANS:
        db.sql(f"SET fts.force_plan = '{plan}'")
        try:
            answers[plan] = db.sql(sql).to_pylist()
        except PlanError:
            continue
    db.sql("SET fts.force_plan = 'auto'")
    assert {"auto", "indexed", "flat_scan"} <= set(answers)
    assert all(a == answers["auto"] for a in answers.values())
    assert [(r["id"], r["title"], r["body"]) for r in answers["auto"]] == [
        (4, "d", "alpha alpha"), (1, f"a{d} b", "alpha beta"), (2, None, 'beta\nalpha "q"')]
    assert [r["_rowid"] for r in answers["auto"]] == [3, 0, 1]
    # A file added is found by the next query; OPTIMIZE indexes it with the same answer.
    write_csv(src / "c.csv", f"id{d}title{d}body\n6{d}f{d}alpha omega\n")
    added = db.sql(sql).to_pylist()
    assert [r["id"] for r in added] == [4, 1, 6, 2]
    db.sql("OPTIMIZE docs")
    assert db.sql(sql).to_pylist() == added
    assert ctx.sql("SELECT count(*) AS n FROM docs").to_pylist() == [{"n": 6}]


def test_csv_files_indexed_by_path_take_a_format_and_say_what_a_fetch_parsed(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    write_csv(src / "a.csv", "1|t1|alpha beta\n2|t2|beta\n")
    write_csv(src / "b.csv", "3|t3|alpha\n")
    db = fts.connect(tmp_path / "db")
    t = db.index_in_place("docs", src, csv=fts.CsvFormat(delimiter="|", header=False), store=["column_2"])
    assert t.schema.names == ["column_1", "column_2", "column_3"]
    assert t.schema.field("column_1").type == pa.int64()
    t.create_index("column_3")
    found = t.search("alpha", columns=["column_1", "column_2"]).to_pylist()
    assert [(r["column_1"], r["column_2"]) for r in found] == [(3, "t3"), (1, "t1")]
    plan = db.sql("EXPLAIN ANALYZE SELECT column_1, column_2 FROM docs WHERE MATCH(column_3, 'alpha') LIMIT 5")
    fetch = next(line.strip() for text in plan.to_pydict()["plan"] for line in text.splitlines()
                 if line.lstrip().startswith("FetchRows"))
    assert fetch == ("FetchRows: rows=2, columns=['column_1', 'column_2']  "
                     "[column_1: 2 CSV files parsed whole; column_2: 1 page of stored copies]")
    # Without ``csv``, a directory of ``.csv`` files (and no Parquet file) is CSV with a header.
    (tmp_path / "auto").mkdir()
    write_csv(tmp_path / "auto" / "a.csv", "id,body\n1,alpha\n")
    assert db.index_in_place("auto", tmp_path / "auto").snapshot().meta.csv == fts.CsvFormat(",", True)


def test_bad_csv_sources_get_clear_errors_and_write_nothing(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    write_csv(src / "a.csv", "id,body\n1,alpha\n")
    db = fts.connect(tmp_path / "db")
    for bad in (fts.CsvFormat(delimiter=";;"), fts.CsvFormat(delimiter='"'), "yes"):
        with pytest.raises(fts.InvalidArgument, match="delimiter|CsvFormat"):
            db.index_in_place("docs", src, csv=bad)
    assert db.table_names() == []
    t = db.index_in_place("docs", src)
    t.create_index("body")
    write_csv(src / "b.csv", "id,text\n2,alpha\n")  # other columns
    with pytest.raises(fts.StorageError, match=r"columns \['id', 'text'\], not the table's"):
        t.search("alpha")
    write_csv(src / "b.csv", "id,body\nnot a number,alpha\n", tick=1)  # a value of another type
    with pytest.raises(fts.StorageError, match="b.csv"):
        t.search("alpha")
    os.unlink(src / "b.csv")
    assert [r["id"] for r in t.search("alpha", columns=["id"]).to_pylist()] == [1]


def test_a_csv_file_is_parsed_once_per_version_for_fetches(tmp_path, monkeypatch):
    from datafusion_fts.storage.sources import source_files

    src = tmp_path / "src"
    src.mkdir()
    write_csv(src / "a.csv", "id,body\n1,alpha\n2,alpha beta\n")
    db = fts.connect(tmp_path / "db")
    t = db.index_in_place("docs", src)
    t.create_index("body")
    parsed = []
    read = source_files.read_columns
    monkeypatch.setattr(source_files, "read_columns", lambda *a: parsed.append(a[0]) or read(*a))
    for _ in range(3):
        assert [r["id"] for r in t.search("alpha", columns=["id"]).to_pylist()] == [1, 2]
    assert len(parsed) == 1
    write_csv(src / "a.csv", "id,body\n7,alpha\n", tick=1)  # a new version: parsed again
    assert [r["id"] for r in t.search("alpha", columns=["id"]).to_pylist()] == [7]
    assert len(parsed) == 2


def test_csv_files_under_hive_partition_directories(tmp_path):
    src = tmp_path / "src"
    for year, text in ((2024, "id,body\n1,alpha beta\n2,beta\n"), (2025, "id,body\n3,alpha\n")):
        (src / f"year={year}").mkdir(parents=True)
        write_csv(src / f"year={year}" / "part.csv", text)
    ctx = datafusion.SessionContext()
    ctx.register_csv("ev", str(src), options=datafusion.CsvReadOptions(table_partition_cols=[("year", pa.int32())]))
    own = ctx.sql("SELECT id, body, year FROM ev ORDER BY id").to_pylist()
    db = fts.connect(tmp_path / "db", ctx=ctx)
    db.sql("CREATE FULLTEXT INDEX ON ev (body)")
    meta = db.manifest.tables["ev"]
    assert (meta.partitions, meta.csv) == (("year",), fts.CsvFormat(",", True))
    assert db.sql("SELECT id, body, year FROM ev ORDER BY id").to_pylist() == own
    sql = "SELECT id, year FROM ev WHERE MATCH(body, 'alpha') AND year = 2025"
    assert db.sql(sql).to_pylist() == [{"id": 3, "year": 2025}]


def test_a_session_csv_table_without_a_header(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    write_csv(src / "a.csv", "1\talpha beta\n2\tbeta\n")
    ctx = datafusion.SessionContext()
    ctx.register_csv("docs", str(src), has_header=False, delimiter="\t")
    own = ctx.sql("SELECT * FROM docs ORDER BY column_1").to_pylist()
    db = fts.connect(tmp_path / "db", ctx=ctx)
    db.sql("CREATE FULLTEXT INDEX ON docs (column_2)")
    assert db.manifest.tables["docs"].csv == fts.CsvFormat("\t", False)
    assert db.sql("SELECT column_1, column_2 FROM docs ORDER BY column_1").to_pylist() == own
    assert db.sql("SELECT column_1 FROM docs WHERE MATCH(column_2, 'alpha')").to_pylist() == [{"column_1": 1}]


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_an_empty_file_is_not_the_tables_until_written(tmp_path, kind):
    """DataFusion's listing skips empty files; so does ours (a file being written was 0
    bytes for a moment, and every search failed on it)."""
    src = tmp_path / "src"
    src.mkdir()
    if kind == "csv":  # (with CRLF line ends and a byte-order mark, as some tools write)
        write_csv(src / "a.csv", "\ufeffid,body\r\n1,alpha beta\r\n2,\"x\r\ny alpha\"\r\n")
        ctx = datafusion.SessionContext()
        ctx.register_csv("docs", str(src))
    else:
        pq.write_table(pa.table({"id": [1, 2], "body": ["alpha beta", "x\r\ny alpha"]}), src / "a.parquet")
        ctx = datafusion.SessionContext()
        ctx.register_parquet("docs", str(src))
    (src / f"b.{kind}").touch()
    db = fts.connect(tmp_path / "db", ctx=ctx)
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    own = ctx.sql("SELECT id, body FROM docs ORDER BY id").to_pylist()
    assert own == [{"id": 1, "body": "alpha beta"}, {"id": 2, "body": "x\r\ny alpha"}]
    assert db.sql("SELECT id, body FROM docs ORDER BY id").to_pylist() == own
    sql = "SELECT id FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC"
    assert db.sql(sql).to_pylist() == [{"id": 1}, {"id": 2}]
    if kind == "csv":
        write_csv(src / "b.csv", "id,body\n3,alpha\n", tick=1)
    else:
        pq.write_table(pa.table({"id": [3], "body": ["alpha"]}), src / "b.parquet")
    assert db.sql(sql).to_pylist() == [{"id": 3}, {"id": 1}, {"id": 2}]


def test_tab_separated_files_of_another_name_ending(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    write_csv(src / "a.tsv", "id\tbody\n1\talpha, beta\n2\tbeta\n")
    ctx = datafusion.SessionContext()
    ctx.register_csv("docs", str(src), delimiter="\t", file_extension=".tsv")
    db = fts.connect(tmp_path / "db", ctx=ctx)
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    assert db.manifest.tables["docs"].csv == fts.CsvFormat("\t", True, ".tsv")
    write_csv(src / "b.tsv", "id\tbody\n3\talpha\n")
    assert db.sql("SELECT id, body FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC").to_pylist() == [
        {"id": 3, "body": "alpha"}, {"id": 1, "body": "alpha, beta"}]
    # By path, a directory of .tsv files is taken for tab-separated values with a header.
    assert db.index_in_place("by_path", src).snapshot().meta.csv == fts.CsvFormat("\t", True, ".tsv")
    # Compressed files are refused, with the reason.
    gz = tmp_path / "gz"
    gz.mkdir()
    (gz / "a.csv.gz").write_bytes(gzip.compress(b"id,body\n1,alpha\n"))
    ctx.register_csv("zipped", str(gz), file_extension=".csv.gz", file_compression_type="gzip")
    with pytest.raises(fts.InvalidArgument, match="uncompressed CSV"):
        db.sql("CREATE FULLTEXT INDEX ON zipped (body)")


def test_sql_alone_indexes_files_in_place_through_create_external_table(tmp_path, parquet_dir):
    """``CREATE EXTERNAL TABLE`` is DataFusion's (it was taken for a managed CREATE TABLE
    without columns and refused); ``CREATE FULLTEXT INDEX`` then indexes its files."""
    csv_dir = tmp_path / "csv"
    csv_dir.mkdir()
    write_csv(csv_dir / "a.csv", "id;body\n1;alpha beta\n2;beta\n")
    db = fts.connect(tmp_path / "db")
    db.sql(f"CREATE EXTERNAL TABLE docs STORED AS PARQUET LOCATION '{parquet_dir}/'")
    db.sql(f"CREATE EXTERNAL TABLE notes STORED AS CSV LOCATION '{csv_dir}/' "
           "OPTIONS ('format.has_header' 'true', 'format.delimiter' ';')")
    db.sql("CREATE FULLTEXT INDEX ON docs (body); CREATE FULLTEXT INDEX ON notes (body)")
    tables = db.manifest.tables
    assert (tables["docs"].source, tables["docs"].csv) == (str(parquet_dir), None)
    assert (tables["notes"].source, tables["notes"].csv) == (str(csv_dir), fts.CsvFormat(";", True))
    assert db.sql("SELECT id FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC").to_pylist() == [
        {"id": 4}, {"id": 1}]
    assert db.sql("SELECT id FROM notes WHERE MATCH(body, 'alpha')").to_pylist() == [{"id": 1}]
    assert not list((tmp_path / "db" / "data").iterdir())  # (no copy of the rows)
