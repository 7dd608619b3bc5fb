"""The local executor never imports Ray (or the distributed package): the optional
dependency stays optional."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
import pyarrow as pa
import datafusion_fts as fts
db = fts.connect()
t = db.create_table("d", pa.table({"b": ["a b", "c"]}))
t.create_index("b")
t.search("a")
db.sql("SELECT _rowid FROM d WHERE MATCH(b, 'a')").to_arrow_table()
print(sorted(m for m in sys.modules if m == "ray" or m.startswith(("ray.", "datafusion_fts.distributed"))))
"""


def test_a_local_search_imports_no_ray():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
