"""The ``datafusion-fts`` command line, driven through click's test runner."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner, Result

import datafusion_fts as fts
from datafusion_fts.cli import main
from datafusion_fts.cli.demo import SHOWCASE
from datafusion_fts.demo_corpus import DOCSTRING_SCHEMA

SCORE = re.compile(r"\s\d+\.\d{4}\s")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def kept_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database made by ``demo --path DIR --keep`` over a directory that already had a
    stale ``docs`` table (which the demo must replace) and another table (which it must
    leave alone)."""
    path = tmp_path_factory.mktemp("cli") / "db"
    db = fts.connect(path)
    db.create_table("docs", pa.table({"body": ["stale"]}))
    db.create_table("other", pa.table({"body": ["kept as is"]}))
    del db
    result = invoke("demo", "--path", str(path), "--keep")
    assert result.exit_code == 0, result.output
    return path


def test_demo_prints_every_result_table_and_cleans_up() -> None:
    result = invoke("demo")
    assert result.exit_code == 0, result.output
    out = result.output
    for case in SHOWCASE:
        assert re.search(re.escape(case.query) + r"  ·  \d+\.\d ms", out), case.query
    assert out.count("plan: indexed") == len(SHOWCASE)
    assert "page 1 (limit 5, offset 0)" in out and "page 2 (limit 5, offset 5)" in out
    assert "✓ pages share no _rowid" in out
    # 5 rows per showcase table and per page, each with a 4-decimal score.
    assert len(SCORE.findall(out)) == 5 * (len(SHOWCASE) + 2)
    count = re.search(r"SELECT count\(\*\) AS n FROM docs\"\) → ([\d,]+)", out)
    assert count is not None and int(count.group(1).replace(",", "")) > 1000
    directory = Path(re.search(r"database: (\S+)", out).group(1))
    assert not directory.exists(), "the temporary database was not removed"


def test_demo_path_replaces_docs_and_keeps_other_tables(kept_db: Path) -> None:
    db = fts.connect(kept_db)
    assert db.table_names() == ["docs", "other"]
    docs = db.table("docs")
    assert docs.schema.names == DOCSTRING_SCHEMA.names
    assert docs.count_rows() > 1000
    assert db.table("other").count_rows() == 1


def test_search_prints_the_engines_page(kept_db: Path) -> None:
    result = invoke(
        "search",
        str(kept_db),
        "docs",
        "json decode",
        "--limit",
        "4",
        "--offset",
        "2",
        "--columns",
        "module,name",
    )
    assert result.exit_code == 0, result.output
    expected = (
        fts.connect(kept_db).table("docs").search("json decode", limit=4, offset=2, columns=[])
    )
    lines = [line.split() for line in result.output.splitlines()]
    printed = [(int(cells[0]), int(cells[1])) for cells in lines if cells and cells[0].isdigit()]
    assert printed == list(enumerate(expected.column("_rowid").to_pylist(), start=3))
    assert "module" in result.output and "name" in result.output and "title" not in result.output
    total = fts.connect(kept_db).table("docs").search("json decode", limit=None, columns=[]).num_rows
    assert f"{total:,} matches" in result.output  # (the number of all matches, beside the page)


def test_stats_lists_tables_indexes_and_segments(kept_db: Path) -> None:
    result = invoke("stats", str(kept_db))
    assert result.exit_code == 0, result.output
    out = result.output
    manifest = fts.connect(kept_db).manifest
    rows = manifest.tables["docs"].committed_rows
    assert f"{rows:,}" in out
    for column, positions in (("body", "yes"), ("title", "no")):
        index = manifest.tables["docs"].indexes[column]
        assert f"docs.{column}" in out and f"positions {positions}" in out
        for seg in index.segments:
            assert seg.id in out and f"{seg.lo}..{seg.hi}" in out
            assert f"{seg.n_terms:,}" in out and f"{seg.n_postings:,}" in out
    assert "other" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("docs", '"unclosed phrase'), "unterminated phrase"),
        (("docs", "a AND (b"), "unbalanced '('"),
        (("missing", "json"), "no table named 'missing'"),
        (("docs", "json", "--columns", "nope"), "no column 'nope'"),
    ],
)
def test_errors_print_in_red_and_exit_1(kept_db: Path, args: tuple[str, ...], message: str) -> None:
    result = invoke("search", str(kept_db), *args)
    assert result.exit_code == 1
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv"])
def test_search_writes_machine_formats_with_exact_scores(kept_db: Path, fmt: str) -> None:
    import csv
    import io
    import json

    result = invoke("search", str(kept_db), "docs", "json decode", "--limit", "3", "--columns", "name",
                    "--format", fmt)
    assert result.exit_code == 0, result.output
    expected = fts.connect(kept_db).table("docs").search("json decode", limit=3, columns=["name"]).to_pylist()
    if fmt == "jsonl":
        rows = [json.loads(line) for line in result.output.splitlines()]
    elif fmt == "json":
        rows = json.loads(result.output)
    else:
        rows = [{"_rowid": int(r["_rowid"]), "_score": float(r["_score"]), "name": r["name"]}
                for r in csv.DictReader(io.StringIO(result.output))]
    assert rows == expected  # (the float64 scores round-trip exactly)


def test_search_refuses_a_directory_that_is_not_a_database(tmp_path: Path) -> None:
    result = invoke("search", str(tmp_path), "docs", "json")
    assert result.exit_code == 2
    assert "not a datafusion-fts database" in result.output
    assert list(tmp_path.iterdir()) == [], "the directory was turned into a database"


def test_demo_refuses_a_directory_with_other_files(tmp_path: Path) -> None:
    # Opening it as a database would garbage-collect files under data/ and index/.
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "notes.txt").write_text("not a fragment")
    result = invoke("demo", "--path", str(tmp_path))
    assert result.exit_code == 2
    assert "neither empty nor a datafusion-fts database" in result.output
    assert (tmp_path / "data" / "notes.txt").read_text() == "not a fragment"


def test_version_is_the_installed_distributions() -> None:
    from importlib.metadata import version

    result = invoke("--version")
    assert result.exit_code == 0
    assert result.output.strip() == f"datafusion-fts, version {version('datafusion-fts')}"
    assert fts.__version__ == version("datafusion-fts")


HELP_SCRIPT = """
import sys
from datafusion_fts.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exit:
    print(exit.code)
print(sorted(m for m in ("pyarrow", "datafusion", "numpy", "rich") if m in sys.modules))
"""


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_no_engine(flag: str) -> None:
    """What makes them answer at once: no command module, no engine library imported."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", HELP_SCRIPT, flag], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-2:] == ["0", "[]"]
    if flag == "--help":
        for name in ("demo", "import", "index", "optimize", "search", "sql", "stats"):
            assert f"\n  {name} " in out.stdout


@pytest.mark.parametrize("args", [
    ["search"], ["search", "--help"], ["index", "DIR", "docs"], ["sql", "--format", "xml", "DIR"],
    ["import", "DIR", "docs", "missing.csv"], ["import", "DIR", "docs", "FILE"],
    ["import", "DIR", "docs", "FILE", "--format", "csv", "--delimiter", "ab"], ["demo", "--bogus"],
    ["search", "DIR", "docs", "q", "--limit", "0"], ["index", "DIR", "docs", "body", "--analyzer", "nope"],
    ["stats", "missing"], ["stats", "DIR"], ["sql", "DIR", "-c", "SELECT 1"], ["nope"],
])
def test_argument_errors_import_no_engine(tmp_path: Path, args: list[str]) -> None:
    """A command's arguments are checked before its module, and the engine, load
    (cli/commands.py): a typo answers at once, with click's usage error (DIR holds a
    file and no manifest: not a database, and not empty)."""
    import subprocess
    import sys

    (tmp_path / "notes.txt").write_text("no known suffix")
    args = [str(tmp_path) if a == "DIR" else str(tmp_path / "notes.txt") if a == "FILE" else a for a in args]
    out = subprocess.run([sys.executable, "-c", HELP_SCRIPT, *args], capture_output=True, text=True, check=True)
    code, modules = out.stdout.strip().splitlines()[-2:]
    assert (code, modules) == ("0" if "--help" in args else "2", "[]"), out.stderr
