"""What a fresh process's first search imports (issue 33, "Instant start"): a database
opened and searched loads neither the write path (made at the first write,
``Database.writer``) nor ``numpy.ma`` (which ``pa.array`` of an ndarray imports)."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa

import datafusion_fts as fts

SEARCH = """
import sys
import datafusion_fts as fts
db = fts.connect(sys.argv[1])
rows = db.sql("SELECT id, score() AS s FROM docs WHERE MATCH(body, 'beta') ORDER BY s DESC LIMIT 2").to_arrow_table()
print(rows.column("id").to_pylist())
print(sorted(m for m in sys.modules if m in sys.argv[2:]))
{after}
"""
WRITE_PATH = ("datafusion_fts.catalog.writer", "datafusion_fts.catalog.index_writes", "datafusion_fts.ingest")


def _run(path: str, after: str = "") -> list[str]:
    code = SEARCH.format(after=after)
    out = subprocess.run([sys.executable, "-c", code, path, *WRITE_PATH, "numpy.ma"],
                         capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def _database(tmp_path) -> str:
    path = str(tmp_path / "db")
    db = fts.connect(path)
    db.create_table("docs", pa.table({"id": [10, 11, 12], "body": ["alpha beta", "beta beta", "gamma"]}))
    db.table("docs").create_index("body")
    return path


def test_a_search_in_a_fresh_process_imports_no_write_path_and_no_numpy_ma(tmp_path):
    assert _run(_database(tmp_path)) == ["[11, 10]", "[]"]


def test_the_first_write_imports_the_writer_and_is_seen(tmp_path):
    path = _database(tmp_path)
    after = (
        "db.table('docs').insert(pa.table({'id': [13], 'body': ['beta beta beta']}))\n"
        "print(db.sql(\"SELECT id FROM docs WHERE MATCH(body, 'beta') ORDER BY score() DESC LIMIT 1\")"
        ".to_arrow_table().column('id').to_pylist())\n"
        "print('datafusion_fts.catalog.writer' in sys.modules)"
    )
    lines = _run(path, "import pyarrow as pa\n" + after)
    assert lines == ["[11, 10]", "[]", "[13]", "True"]
