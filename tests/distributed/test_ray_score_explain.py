"""score_explain() of a search run on the Ray executor reproduces its scores (issue 8)."""

from __future__ import annotations

import json
import os
import sys
import tempfile

import pyarrow as pa
import pytest

import datafusion_fts as fts

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "udfs"))
from explain_checks import check_explanation

pytest.importorskip("ray")
pytestmark = pytest.mark.ray


def test_explanations_of_a_distributed_search(ray_session):
    with tempfile.TemporaryDirectory() as path:
        db = fts.connect(path, executor="ray", config={"fts.ray_actors": 2})
        t = db.create_table("docs", pa.table({"body": [f"w{i % 7} w{i % 3} common" for i in range(60)]}))
        t.build_segment("body", (0, 29), positions=True)
        t.build_segment("body", (25, (1 << 63) - 1), positions=True)
        sql = ("SELECT _rowid, score() AS s, score_explain() AS e FROM docs "
               "WHERE MATCH(body, 'w1 OR \"w2 common\"') ORDER BY s DESC LIMIT 7")
        plans = db.sql("EXPLAIN " + sql).to_pydict()
        assert "DistributedSearch" in plans["plan"][plans["plan_type"].index("search_plan")]
        rows = db.sql(sql).to_pylist()
        assert len(rows) == 7
        for row in rows:
            check_explanation(json.loads(row["e"]), row["s"])
