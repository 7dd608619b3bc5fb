"""SQL in some threads while another inserts: every statement finds the managed table and
sees a whole committed state (docs/design.md: "Managed tables in DataFusion")."""

from __future__ import annotations

import threading

import pyarrow as pa

import datafusion_fts as fts

INSERTS = 40


def test_statements_never_miss_a_table_another_thread_writes(tmp_path):
    db = fts.connect(tmp_path / "db", config={"fts.memtable_rows": 7})  # flushes now and then
    t = db.create_table("docs", pa.table({"body": ["alpha beta"] * 5}))
    t.create_index("body")
    failures: list[BaseException] = []
    counts: dict[int, list[int]] = {}
    done = threading.Event()

    def write() -> None:
        try:
            for i in range(INSERTS):
                t.insert(pa.table({"body": [f"alpha w{i}", "gamma"]}))
                if i % 10 == 9:
                    t.delete(f"_rowid = {i}")
        except BaseException as exc:  # noqa: BLE001 (reported below)
            failures.append(exc)
        finally:
            done.set()

    def read(reader: int) -> None:
        seen = counts.setdefault(reader, [])
        while not done.is_set():
            try:
                seen.append(db.sql("SELECT count(*) AS n FROM docs WHERE body LIKE '%alpha%' OR true")
                            .to_arrow_table().column(0)[0].as_py())
                db.sql("SELECT _rowid, score() FROM docs WHERE MATCH(body, 'alpha') "
                       "ORDER BY score() DESC LIMIT 3").to_arrow_table()
            except BaseException as exc:  # noqa: BLE001
                failures.append(exc)
                return

    threads = [threading.Thread(target=write)] + [threading.Thread(target=read, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    for seen in counts.values():
        assert seen, "a reader ran no statement"
        assert min(seen) >= 5 and max(seen) <= 5 + 2 * INSERTS
