"""A search is a predicate (issue 41; DESIGN §3.2): generated statements that put MATCH and
score() inside the rest of SQL answer as the reference does (tests/sql/search/search_sql.py:
plain DataFusion over the same rows, each MATCH a boolean column and each score computed
by the brute-force BM25 of tests/reference.py), rows, names and float64 scores to the bit,
with the fast paths on and off, in every setup a table lives in: in memory, a forced flat
scan, a keyed table made by SQL with deletes, updates and fresh rows, a directory with
deleted and fresh rows, a view, Parquet files indexed in place with a new file, CSV files
indexed in place. ``python tests/sql/search/search_sql.py --statements 2000`` runs more and
prints the counts per setup."""

from __future__ import annotations

from pathlib import Path

import pytest
from search_sql import SETUPS, build, differences

STATEMENTS = 45  # per setup in the suite (the slow test runs more; the script, any number)


def check(setup: str, tmp: Path, corpus_seed: int, seed: int, count: int) -> None:
    db, rows = build(setup, tmp, corpus_seed)
    wrong, refused, _ = differences(db, rows, setup, seed, count)
    failures = wrong + refused
    assert not failures, f"{len(wrong)} wrong, {len(refused)} refused of {count * 2}:\n" + "\n".join(failures[:5])


@pytest.mark.parametrize("setup", SETUPS)
def test_generated_statements_answer_as_the_reference(setup: str, tmp_path: Path) -> None:
    check(setup, tmp_path, corpus_seed=41, seed=SETUPS.index(setup), count=STATEMENTS)


@pytest.mark.slow
@pytest.mark.parametrize("setup", SETUPS)
def test_more_generated_statements_answer_as_the_reference(setup: str, tmp_path: Path) -> None:
    check(setup, tmp_path, corpus_seed=7, seed=1000 + len(setup), count=150)
