"""``datafusion-fts import``: Parquet, CSV and JSON lines, streamed, all or nothing."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from cli_support import invoke, on_db, phase_lines

import datafusion_fts as fts
from datafusion_fts.cli.import_file import BLOCK_BYTES, import_file

ROWS = 3000
BLOCK = 16_384  # bytes; the CSV and JSON files below are ~10 blocks
WORDS = ["alpha", "beta", "gamma", "delta", "épée", "naïve", "数据", "zulu"]


def corpus(rows: int = ROWS, start: int = 0) -> pa.Table:
    ids = list(range(start, start + rows))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "title": [f"title {i}" for i in ids],
        "body": [" ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 6)) + f" n{i}" for i in ids],
    })


def write(table: pa.Table, path: Path) -> Path:
    """``table`` in the format ``path``'s suffix names."""
    name = path.name
    if name.endswith(".parquet"):
        pq.write_table(table, path, row_group_size=500)
    elif name.endswith(".csv"):
        pacsv.write_csv(table, path)
    elif name.endswith(".csv.gz"):
        plain = path.with_suffix("")
        pacsv.write_csv(table, plain)
        path.write_bytes(gzip.compress(plain.read_bytes()))
        plain.unlink()
    else:
        path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in table.to_pylist()),
                        encoding="utf-8")
    return path


def rows_of(db_path: Path, table: str) -> list[dict]:
    return on_db(db_path, lambda db: db.table(table).to_arrow().drop_columns(["_rowid"]).to_pylist())


@pytest.mark.parametrize("name", ["docs.parquet", "docs.csv", "docs.jsonl", "docs.csv.gz"])
def test_each_format_streams_in_several_blocks_into_a_new_table(tmp_path: Path, name: str) -> None:
    source = write(corpus(), tmp_path / name)
    db_path = tmp_path / "new.db"
    result = invoke("import", str(db_path), "docs", str(source), "--block-size", str(BLOCK),
                    "--no-progress")
    assert result.exit_code == 0, result.output
    blocks = int(re.search(r"(\d+) blocks", result.stdout).group(1))
    assert blocks >= 5, result.stdout
    assert f"imported {ROWS:,} rows into docs" in result.stdout
    assert rows_of(db_path, "docs") == corpus().to_pylist()


def test_a_file_larger_than_the_default_block(tmp_path: Path) -> None:
    rows = 40_000
    source = write(corpus(rows), tmp_path / "big.csv")
    assert source.stat().st_size > 2 * BLOCK_BYTES
    result = invoke("import", str(tmp_path / "db"), "docs", str(source), "--no-progress")
    assert result.exit_code == 0, result.output
    assert int(re.search(r"(\d+) blocks", result.stdout).group(1)) >= 2
    assert rows_of(tmp_path / "db", "docs") == corpus(rows).to_pylist()


@pytest.mark.parametrize("name", ["docs.parquet", "docs.csv", "docs.jsonl"])
def test_progress_follows_the_reading_block_by_block(tmp_path: Path, name: str) -> None:
    rows = 30_000  # ~100 blocks of text: more than pyarrow reads ahead
    source = write(corpus(rows), tmp_path / name)
    seen: list[tuple[int, int]] = []
    done = on_db(tmp_path / "db", lambda db: import_file(
        db, "docs", source, name.split(".")[1], lambda now, total: seen.append((now, total)),
        block_size=BLOCK,
    ))
    total = seen[0][1]
    assert total == (rows if name.endswith(".parquet") else source.stat().st_size)
    assert done.rows == rows and done.batches == len(seen) >= 10
    # Streamed: the first batch reached the table while most of the file was unread.
    assert seen[0][0] < total / 2, seen[:3]
    assert [now for now, _ in seen] == sorted(now for now, _ in seen)
    assert seen[-1][0] == total


def test_the_progress_bar_shows_only_when_asked(tmp_path: Path) -> None:
    source = write(corpus(), tmp_path / "docs.csv")
    shown = invoke("import", str(tmp_path / "a.db"), "docs", str(source), "--index", "body", "--progress")
    assert shown.exit_code == 0, shown.output
    assert "importing docs.csv" in shown.stderr and "━" in shown.stderr
    assert phase_lines(shown.stderr, "indexing body") == {"tokenizing": ROWS, "writing": ROWS, "committing": ROWS}
    # Appending brings the index up to date: the new rows indexed, merged with the rest.
    more = write(corpus(10, start=ROWS), tmp_path / "more.csv")
    again = invoke("import", str(tmp_path / "a.db"), "docs", str(more), "--progress")
    assert again.exit_code == 0, again.output
    assert phase_lines(again.stderr, "optimizing docs.body") == {
        "tokenizing": 10, "merging": ROWS + 10, "writing": ROWS + 10, "committing": ROWS + 10}
    hidden = invoke("import", str(tmp_path / "b.db"), "docs", str(source), "--no-progress")
    assert hidden.exit_code == 0, hidden.output
    assert hidden.stderr == ""
    # By default: only on a terminal, which the test runner's stderr is not.
    default = invoke("import", str(tmp_path / "c.db"), "docs", str(source))
    assert default.exit_code == 0 and default.stderr == ""


def test_appending_uses_the_tables_types_flushes_fresh_rows_and_updates_indexes(tmp_path: Path) -> None:
    db_path = tmp_path / "db"
    first = corpus(100).cast(pa.schema([("id", pa.int32()), ("title", pa.string()), ("body", pa.string())]))

    def build(db: fts.Database) -> None:
        docs = db.create_table("docs", first)
        docs.create_index("body")
        docs.insert(corpus(5, start=100).cast(first.schema))  # fresh rows, ids 100..104

    on_db(db_path, build)
    source = write(corpus(ROWS, start=105), tmp_path / "more.csv")
    result = invoke("import", str(db_path), "docs", str(source), "--block-size", str(BLOCK),
                    "--no-progress")
    assert result.exit_code == 0, result.output
    assert f"{ROWS + 105:,} rows now" in result.stdout
    assert f"docs.body: {ROWS + 105:,} indexed · 0 unindexed tail · 0 fresh" in result.stdout
    table = on_db(db_path, lambda db: db.table("docs").to_arrow())
    assert table.schema.field("id").type == pa.int32()
    assert table.column("_rowid").to_pylist() == list(range(ROWS + 105))
    assert table.column("id").to_pylist() == list(range(ROWS + 105))

    def indexed_search(db: fts.Database) -> list[dict]:
        db.sql("SET fts.force_plan = 'indexed'")  # possible only if the index covers every row
        return db.sql("SELECT id FROM docs WHERE MATCH(body, 'n2500')").to_pylist()

    assert on_db(db_path, indexed_search) == [{"id": 2500}]


def _bad_late_row(tmp_path: Path) -> Path:
    """A CSV whose ``id`` is an integer until a row far past the first block."""
    source = write(corpus(), tmp_path / "bad.csv")
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[-10] = 'oops,"title","body"\n'
    source.write_text("".join(lines), encoding="utf-8")
    return source


def test_a_bad_row_in_a_late_block_creates_nothing(tmp_path: Path) -> None:
    db_path = tmp_path / "db"
    result = invoke("import", str(db_path), "docs", str(_bad_late_row(tmp_path)), "--block-size",
                    str(BLOCK), "--no-progress")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: cannot import ") and "oops" in result.stderr
    assert "Traceback" not in result.output
    assert on_db(db_path, lambda db: db.table_names()) == []
    assert list((db_path / "data").iterdir()) == []


def test_a_bad_row_appends_nothing(tmp_path: Path) -> None:
    db_path = tmp_path / "db"
    on_db(db_path, lambda db: db.create_table("docs", corpus(10)) and None)
    files = sorted(p.name for p in (db_path / "data").iterdir())
    result = invoke("import", str(db_path), "docs", str(_bad_late_row(tmp_path)), "--block-size",
                    str(BLOCK), "--no-progress")
    assert result.exit_code == 1 and "cannot import" in result.stderr
    assert rows_of(db_path, "docs") == corpus(10).to_pylist()
    assert sorted(p.name for p in (db_path / "data").iterdir()) == files


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--index", "body,nosuch"], "has no column 'nosuch'"),
        (["--index", "id"], "only text columns can be indexed"),
        (["--index", "body", "--stop-words", "klingon"], "unknown stop word list 'klingon'"),
    ],
)
def test_a_bad_index_request_imports_nothing(tmp_path: Path, options: list[str], message: str) -> None:
    source = write(corpus(), tmp_path / "docs.csv")
    db_path = tmp_path / "db"
    result = invoke("import", str(db_path), "docs", str(source), "--no-progress", *options)
    assert result.exit_code == 1, result.output
    assert message in result.stderr
    assert on_db(db_path, lambda db: db.table_names()) == []


def test_index_options_apply_to_the_new_indexes(tmp_path: Path) -> None:
    source = write(corpus(), tmp_path / "docs.jsonl")
    db_path = tmp_path / "db"
    result = invoke("import", str(db_path), "docs", str(source), "--no-progress", "--index",
                    "body, title", "--positions", "--analyzer", "folding")
    assert result.exit_code == 0, result.output
    indexes = on_db(db_path, lambda db: db.table("docs").snapshot().meta.indexes)
    assert sorted(indexes) == ["body", "title"]
    assert all(ix.positions and ix.analyzer.ascii_folding for ix in indexes.values())
    hits = on_db(db_path, lambda db: db.table("docs").search('"epee naive"', limit=None, columns=["id"]).num_rows)
    assert hits == sum("épée naïve" in body for body in corpus().column("body").to_pylist())


def test_columns_that_do_not_match_the_table(tmp_path: Path) -> None:
    db_path = tmp_path / "db"
    on_db(db_path, lambda db: db.create_table("docs", corpus(10)) and None)
    source = write(corpus().drop_columns(["title"]), tmp_path / "two.csv")
    result = invoke("import", str(db_path), "docs", str(source), "--no-progress")
    assert result.exit_code == 1 and "do not match the table's columns" in result.stderr
    extra = tmp_path / "extra.jsonl"
    extra.write_text('{"id": 1, "title": "t", "body": "b", "surprise": 1}\n')
    result = invoke("import", str(db_path), "docs", str(extra), "--no-progress")
    assert result.exit_code == 1 and "unexpected field" in result.stderr
    assert rows_of(db_path, "docs") == corpus(10).to_pylist()


def test_the_format_comes_from_the_suffix_or_the_option(tmp_path: Path) -> None:
    source = write(corpus(), tmp_path / "docs.csv")
    text = source.rename(tmp_path / "docs.txt")
    result = invoke("import", str(tmp_path / "db"), "docs", str(text))
    assert result.exit_code == 2 and "cannot tell the format of docs.txt" in result.output
    result = invoke("import", str(tmp_path / "db"), "docs", str(text), "--format", "csv")
    assert result.exit_code == 0, result.output
    assert len(rows_of(tmp_path / "db", "docs")) == ROWS


def test_a_tab_separated_file(tmp_path: Path) -> None:
    source = tmp_path / "docs.tsv"
    source.write_text("id\tbody\n1\ta, b and c\n2\td\n", encoding="utf-8")
    result = invoke("import", str(tmp_path / "db"), "docs", str(source), "--delimiter", "\t")
    assert result.exit_code == 0, result.output
    assert rows_of(tmp_path / "db", "docs") == [{"id": 1, "body": "a, b and c"}, {"id": 2, "body": "d"}]


def test_import_refuses_a_directory_that_is_not_a_database(tmp_path: Path) -> None:
    source = write(corpus(10), tmp_path / "docs.csv")
    target = tmp_path / "home"
    (target / "data").mkdir(parents=True)
    (target / "data" / "mine.txt").write_text("keep")
    result = invoke("import", str(target), "docs", str(source))
    assert result.exit_code == 2 and "neither empty nor a datafusion-fts database" in result.output
    assert (target / "data" / "mine.txt").read_text() == "keep"
