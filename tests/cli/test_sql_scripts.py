"""``datafusion-fts sql DB -c ...`` and scripts on stdin: formats, errors, exit status."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from cli_support import COMMITTED, FRESH, invoke, on_db, phase_lines

SEARCH = "SELECT id, title, score() AS s FROM docs WHERE MATCH(body, 'quick OR brown') ORDER BY s DESC"


def expected(library: Path, sql: str) -> list[dict]:
    return on_db(library, lambda db: db.sql(sql).to_pylist())


def data_rows(out: str) -> list[list[str]]:
    """The body rows of rich tables in ``out`` (header, type line and rule skipped)."""
    rows, body = [], False
    for line in out.splitlines():
        if line.lstrip().startswith("─"):
            body = True
            continue
        if not line.strip():
            body = False
            continue
        if body:
            rows.append(line.split())
    return rows


def test_c_prints_a_table_per_statement_with_types_and_row_counts(library: Path) -> None:
    result = invoke("sql", str(library), "-c", f"{SEARCH}; SELECT count(*) AS n FROM docs")
    assert result.exit_code == 0, result.output
    want = expected(library, SEARCH)
    assert len(want) == 4
    rows = data_rows(result.stdout)
    assert [int(r[0]) for r in rows[:4]] == [r["id"] for r in want]
    assert [float(r[-1]) for r in rows[:4]] == [r["s"] for r in want]  # exact: repr round-trips
    assert rows[4] == ["6"]
    assert re.search(r"id\s+title\s+s\s*\n\s+int64\s+string\s+double", result.stdout)
    assert "4 rows" in result.stdout and "1 row" in result.stdout


def test_long_cells_are_cut_to_one_line(library: Path) -> None:
    result = invoke("sql", str(library), "-c", "SELECT title, body FROM docs WHERE id = 5")
    assert result.exit_code == 0, result.output
    row = [line for line in result.stdout.splitlines() if "Tabs" in line]
    assert len(row) == 1, result.stdout  # the tab and newline did not break the row
    assert "Tabs and newlines" in row[0] and row[0].rstrip().endswith("wo…")
    assert len(row[0]) < 100  # cut at 60 characters a cell


@pytest.mark.parametrize("fmt", ["csv", "json", "jsonl"])
def test_machine_formats_hold_exactly_the_rows(library: Path, fmt: str) -> None:
    result = invoke("sql", str(library), "--format", fmt, "-c", SEARCH)
    assert result.exit_code == 0, result.output
    want = expected(library, SEARCH)
    if fmt == "csv":
        got = list(csv.DictReader(io.StringIO(result.stdout)))
        assert [(int(r["id"]), r["title"], float(r["s"])) for r in got] == [
            (r["id"], r["title"], r["s"]) for r in want
        ]
    elif fmt == "json":
        assert json.loads(result.stdout) == want
    else:
        assert [json.loads(line) for line in result.stdout.splitlines()] == want


def test_machine_formats_send_status_messages_to_stderr(library: Path) -> None:
    """A status (of a statement of ours) is a message; an INSERT answers as DataFusion's
    does, with its ``count``."""
    result = invoke(
        "sql", str(library), "--format", "csv", "-c",
        "SET fts.force_plan = 'auto'; INSERT INTO docs VALUES (7, 'Owls', 'an owl at night'); "
        "SELECT count(*) AS n FROM docs",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == '"count"\n1\n\n"n"\n7\n'
    assert "fts.force_plan = 'auto'" in result.stderr


def test_csv_of_several_results_and_of_nested_values(library: Path) -> None:
    result = invoke(
        "sql", str(library), "--format", "csv", "-c",
        "SELECT id FROM docs WHERE id < 0; SELECT [1, 2] AS l, {'a': 'x'} AS st",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == '"id"\n\n"l","st"\n"[1, 2]","{""a"": ""x""}"\n'


def test_json_of_an_empty_result_is_an_empty_array(library: Path) -> None:
    result = invoke("sql", str(library), "--format", "json", "-c", "SELECT id FROM docs WHERE id < 0")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == []


def test_stdin_script_multi_line_statements(library: Path) -> None:
    script = "-- a script\nSELECT id\n  FROM docs\n  WHERE id > 4\n  ORDER BY id;\n\nSELECT 'last' AS x\n"
    result = invoke("sql", str(library), input=script)
    assert result.exit_code == 0, result.output
    assert data_rows(result.stdout) == [["5"], ["6"], ["last"]]


def test_a_script_stops_at_the_first_error_with_the_caret_on_the_scripts_line(library: Path) -> None:
    script = (
        "INSERT INTO docs VALUES (7, 'Owls', 'an owl');\n"
        "SELECT id\n"
        "FROM docs WHERE MATCH(nobody, 'owl');\n"
        "INSERT INTO docs VALUES (8, 'Never', 'not run');\n"
    )
    result = invoke("sql", str(library), input=script)
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == "error at line 3, column 23: no table in FROM has a column 'nobody'"
    assert lines[1] == "  3 │ FROM docs WHERE MATCH(nobody, 'owl');"
    assert lines[2] == "    │                       ^^^^^^"
    assert "Traceback" not in result.output
    assert [r["id"] for r in expected(library, "SELECT id FROM docs ORDER BY id")] == [1, 2, 3, 4, 5, 6, 7]


def test_query_string_errors_point_into_the_sql(library: Path) -> None:
    result = invoke("sql", str(library), "-c", "SELECT id FROM docs WHERE MATCH(body, 'a AND (b')")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error at line 1, column 46: unbalanced '('")
    assert lines[2].index("^") == lines[1].rindex("(b") and lines[2].count("^") == 1


def test_a_syntax_error_in_sql(library: Path) -> None:
    result = invoke("sql", str(library), "-c", "SELECT id FROM docs WHERE")
    assert result.exit_code == 1
    assert result.stderr.startswith("error at line 1")
    assert "^" in result.stderr and "Traceback" not in result.output


def test_datafusion_errors_are_one_clean_message(library: Path) -> None:
    result = invoke("sql", str(library), "-c", "SELECT 1/0")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and "Divide by zero" in result.stderr
    assert "DataFusion error:" not in result.stderr and "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(
    ("sql", "message", "name"),
    [
        ("SELECT id FROM nosuch", "table 'datafusion.public.nosuch' not found", "nosuch"),
        ("SELECT id,\n  nope FROM docs WHERE nope > 1", "No field named nope", "nope"),
        ('SELECT "Id" FROM docs', 'No field named "Id"', '"Id"'),
        ("SELECT frob(id) FROM docs", "Invalid function 'frob'", "frob"),
    ],
)
def test_datafusion_errors_naming_something_point_at_it(
    library: Path, sql: str, message: str, name: str
) -> None:
    result = invoke("sql", str(library), "-c", sql)
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    offset = sql.index(name)
    line = sql.count("\n", 0, offset) + 1
    column = offset - (sql.rfind("\n", 0, offset) + 1) + 1
    assert lines[0].startswith(f"error at line {line}, column {column}: ") and message in lines[0]
    assert lines[2].index("^") == lines[1].index(name) and lines[2].count("^") == len(name)
    assert "Traceback" not in result.output


def test_an_error_in_a_later_statement_names_its_line(library: Path) -> None:
    result = invoke("sql", str(library), input="SELECT 1;\n\nSELECT 1/0;\n")
    assert result.exit_code == 1
    assert "in the statement at line 3: SELECT 1/0;" in result.stderr


def test_ddl_and_search_shapes_the_engine_refuses_are_errors_not_tracebacks(library: Path) -> None:
    result = invoke("sql", str(library), "-c", "SELECT score() FROM docs")
    assert result.exit_code == 1
    assert "score() needs a MATCH predicate" in result.stderr and "Traceback" not in result.output


def _branches(out: list[str]) -> dict[str, list[tuple[int, str]]]:
    """Each plan branch of a printed EXPLAIN tree: its nodes as (column, operator name)."""
    branches: dict[str, list[tuple[int, str]]] = {}
    current: list[tuple[int, str]] = []
    for line in out[1:]:
        match = re.match(r"^([│ ]*[├└]── )(.*)$", line)
        if match is None:
            continue  # a wrapped continuation line
        column, label = len(match.group(1)), match.group(2)
        if column == 4:
            current = branches.setdefault(label, [])
        else:
            current.append((column, label.split(":")[0]))
    return branches


def test_explain_is_a_tree_of_every_plan(library: Path) -> None:
    sql = "EXPLAIN SELECT id, score() AS s FROM docs WHERE MATCH(body, 'quick') ORDER BY s DESC LIMIT 2"
    result = invoke("sql", str(library), "-c", sql)
    assert result.exit_code == 0, result.output
    out = result.stdout.splitlines()
    assert out[0] == "EXPLAIN"
    plans = {r["plan_type"]: r["plan"] for r in expected(library, sql)}
    branches = _branches(out)
    assert list(branches) == [kind.replace("_", " ") for kind in plans]
    for kind, plan in plans.items():
        # Each operator sits under its parent: 4 columns deeper per plan level.
        want = [
            (8 + 4 * ((len(line) - len(line.lstrip())) // 2), line.strip().split(":")[0])
            for line in plan.splitlines() if line.strip()
        ]
        assert branches[kind.replace("_", " ")] == want, kind
    assert "GlobalTopK" in plans["search_plan"] and "IndexedSearch" in plans["search_plan"]


def test_explain_in_csv_keeps_the_rows(library: Path) -> None:
    result = invoke("sql", str(library), "--format", "csv", "-c", "EXPLAIN SELECT 1")
    assert result.exit_code == 0, result.output
    assert [r["plan_type"] for r in csv.DictReader(io.StringIO(result.stdout))] == [
        "logical_plan", "physical_plan"
    ]


def test_timing_prints_each_statements_time(library: Path) -> None:
    result = invoke("sql", str(library), "--timing", "-c", "SELECT 1; SELECT 2")
    assert result.exit_code == 0, result.output
    assert len(re.findall(r"^Time: \d+\.\d{3} ms$", result.stdout, re.MULTILINE)) == 2
    toggled = invoke("sql", str(library), "-c", "SELECT 1", "-c", "\\timing", "-c", "SELECT 2",
                     "-c", "\\timing off", "-c", "SELECT 3")
    assert toggled.exit_code == 0, toggled.output
    assert "Timing is on." in toggled.stdout and "Timing is off." in toggled.stdout
    assert len(re.findall(r"^Time: ", toggled.stdout, re.MULTILINE)) == 1


def test_max_rows_shows_the_first_rows_and_the_exact_count(library: Path) -> None:
    result = invoke("sql", str(library), "--max-rows", "2", "-c", "SELECT id FROM docs ORDER BY id")
    assert result.exit_code == 0, result.output
    assert data_rows(result.stdout) == [["1"], ["2"]]
    assert "6 rows, first 2 shown" in result.stdout
    everything = invoke("sql", str(library), "--max-rows", "0", "-c", "SELECT id FROM docs")
    assert len(data_rows(everything.stdout)) == 6


def test_statements_that_change_things_print_their_status(library: Path) -> None:
    result = invoke(
        "sql", str(library), "-c",
        "CREATE TABLE notes (body VARCHAR); CREATE FULLTEXT INDEX ON notes (body); "
        "SET fts.force_plan = 'flat_scan'; CREATE VIEW v AS SELECT 1 AS x; OPTIMIZE docs",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "OK", "indexed notes (body)", "fts.force_plan = 'flat_scan'", "OK", "optimized docs",
    ]


def test_backslash_d_lists_and_describes_tables(library: Path) -> None:
    result = invoke("sql", str(library), "-c", "CREATE VIEW recent AS SELECT id FROM docs", "-c",
                    "\\d", "-c", "\\d docs", "-c", "\\d recent")
    assert result.exit_code == 0, result.output
    out = result.stdout
    overview = [line.split() for line in out.splitlines() if line.strip().startswith(("docs ", "recent "))]
    assert overview[0][:4] == ["docs", "6", "1", "0"]  # rows, fresh, deleted
    assert overview[1][0] == "recent" and "(DataFusion)" in out
    assert re.search(r"body\s+string\s+yes\s+simple, positions, k1=1.2 b=0.75", out)
    assert re.search(r"title\s+string\s+yes\s+simple, k1=1.2 b=0.75", out)
    assert "6 rows · 5 committed · 1 fresh · 0 deleted" in out
    assert "5 indexed · 0 unindexed tail · 1 fresh" in out
    described = out[out.index("recent (DataFusion)"):]
    assert re.search(r"column\s+type\s*\n.*\n\s+id\s+int64", described)


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("\\d nosuch", "no table named 'nosuch'"),
        ("\\nope", "unknown command \\nope"),
        ("\\timing maybe", "\\timing takes on or off"),
    ],
)
def test_bad_backslash_commands_fail_the_script(library: Path, command: str, message: str) -> None:
    result = invoke("sql", str(library), "-c", command)
    assert result.exit_code == 1
    assert message in result.stderr


def test_help_lists_every_command(tmp_path: Path) -> None:
    from datafusion_fts.cli.sql_shell import COMMANDS

    result = invoke("sql", str(tmp_path / "empty.db"), "-c", "\\help")
    assert result.exit_code == 0, result.output
    for command in COMMANDS:
        assert command.names[0] in result.stdout and command.help in result.stdout


def test_quit_ends_a_script(library: Path) -> None:
    result = invoke("sql", str(library), input="SELECT 1 AS a;\n\\q\nSELECT 1/0;\n")
    assert result.exit_code == 0, result.output
    assert data_rows(result.stdout) == [["1"]]


def test_a_new_directory_becomes_a_database(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    result = invoke("sql", str(path), "-c",
                    "CREATE TABLE t (body VARCHAR); INSERT INTO t VALUES ('hello world')")
    assert result.exit_code == 0, result.output
    assert on_db(path, lambda db: db.table("t").count_rows()) == 1


def test_a_directory_with_other_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "notes.txt").write_text("mine")
    result = invoke("sql", str(tmp_path), "-c", "SELECT 1")
    assert result.exit_code == 2
    assert "neither empty nor a datafusion-fts database" in result.output
    assert (tmp_path / "data" / "notes.txt").read_text() == "mine"


def test_the_fixture_is_what_the_tests_assume(library: Path) -> None:
    rows = expected(library, "SELECT id FROM docs ORDER BY id")
    assert [r["id"] for r in rows] == COMMITTED.column("id").to_pylist() + FRESH.column("id").to_pylist()


def test_a_database_is_made_by_its_first_write_not_by_a_read_or_a_failure(tmp_path: Path) -> None:
    path = tmp_path / "typo.db"
    assert invoke("sql", str(path), "-c", "SELECT 1").exit_code == 0
    assert not path.exists()
    assert invoke("sql", str(path), "-c", "SELECT nope").exit_code == 1
    assert not path.exists()
    assert invoke("sql", str(path), "-c", "CREATE TABLE t (a TEXT)").exit_code == 0
    assert (path / "manifest.json").is_file()
    assert invoke("sql", str(path), "-c", "SELECT * FROM t").exit_code == 0
    assert path.exists()  # (one that was there stays, whatever the command did)


def test_index_builds_show_progress_when_asked(library: Path) -> None:
    script = "CREATE FULLTEXT INDEX ON docs (title); DELETE FROM docs WHERE id = 2; OPTIMIZE docs"
    result = invoke("sql", str(library), "--progress", "-c", script)
    assert result.exit_code == 0, result.output
    # The title index built over the 6 rows (the fresh one flushed first, with a body
    # segment of its own); then OPTIMIZE rebuilds body's 5-row segment without the deleted
    # row and merges it with the flushed one (spanning the deleted row still).
    created, optimized = result.stderr.split("indexing body:", 1)
    assert phase_lines(created, "indexing title") == {"tokenizing": 6, "writing": 6, "committing": 6}
    assert phase_lines("indexing body:" + optimized, "indexing body") == {
        "tokenizing": 4, "merging": 6, "writing": 6, "committing": 6}
    assert "optimized docs" in result.stdout
    quiet = invoke("sql", str(library), "-c", "OPTIMIZE docs")
    assert quiet.exit_code == 0 and quiet.stderr == ""
