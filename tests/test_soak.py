"""A short soak (tests/soak.py; issue 45): a writer killed inside every kind of write and
restarted, readers in another process, a read-only connection and a thread of the
writer's process; no answer matches no version of the table, no acknowledged row is
lost, no reader fails, fragments and a reader's open files stay bounded. (Its rows are a
few words each, so the directory's size after OPTIMIZE, which it reports, weighs the
deleted ids it lists; tests/catalog/test_compaction.py checks that size on rows of
realistic length.)"""

from __future__ import annotations

import json
import math
from pathlib import Path

import soak


def test_a_table_under_load_and_kills_answers_as_one_of_its_versions(tmp_path: Path) -> None:
    figures = soak.run(tmp_path, seconds=30)
    assert figures["answers matching no version"] == 0, figures["wrong"]
    assert figures["reader errors"] == 0, figures["errors"]
    assert figures["acknowledged rows lost"] == 0
    assert set(figures["kills inside a write, by kind"]) == set(soak.KINDS), figures
    assert set(figures["answers by place"]) == {"process", "readonly", "thread"}
    assert min(figures["answers by place"].values()) > 100
    assert figures["most fragments"] <= soak.CONFIG["fts.max_fragments"]
    assert figures["most reader descriptors"] <= 64
    assert figures["fragments after OPTIMIZE"] == 1
    # The oracle tells a wrong answer: a score one ulp off is found.
    path = next(tmp_path.glob("answers-process.jsonl"))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    scored = next(r for r in records if r.get("answer") and isinstance(r["answer"][0][-1], float))
    scored["answer"][0][-1] = math.nextafter(scored["answer"][0][-1], math.inf)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert soak.judge(tmp_path)["answers matching no version"] == 1
