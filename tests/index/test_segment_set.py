"""Ranked parts (index/segment_set.py): a part masks only the deleted rows its segment
holds text of, so a segment built after most rows were deleted is read whole."""

from __future__ import annotations

import pyarrow as pa

import datafusion_fts as fts
from datafusion_fts.index.segment_set import SegmentSet, ranked_parts


def test_a_part_masks_only_deleted_rows_its_segment_holds_text_of() -> None:
    db = fts.connect()
    body = [f"w{i % 7} w{i % 3}" if i % 9 else "" for i in range(1000)]
    t = db.create_table("docs", pa.table({"id": range(1000), "body": body}))
    t.delete("id % 10 <> 0")  # (before the build: the segment holds no text of these)
    t.create_index("body")
    t.delete("id IN (10, 20, 30, 900)")  # (after: 10, 20, 30 hold text; 900 is empty)
    snap = t.snapshot()
    (meta,) = snap.meta.indexes["body"].segments
    seg = db.segment(meta)
    assert meta.codec == "bp128-ordinals" and len(snap.deleted) == 904
    (part,) = ranked_parts([seg], snap.deleted)
    assert (part.deleted + meta.base).tolist() == [10, 20, 30]
    stats = SegmentSet([seg], 1.2, 0.75, snap.deleted).column_stats
    assert (stats.n_docs, stats.total_tokens) == (85, 170)  # (88 ids of 10s hold text, less 3: 2 tokens each)
    fresh = fts.connect()
    rows = t.to_arrow().select(["id", "body"])
    fresh.create_table("docs", rows).create_index("body")
    for query in ("w1", "w1 w2", "+w3 +w0", "w6 -w2"):
        sql = f"SELECT id, score() AS s FROM docs WHERE MATCH(body, '{query}') ORDER BY s DESC, id"
        assert db.sql(sql).to_arrow_table() == fresh.sql(sql).to_arrow_table(), query
