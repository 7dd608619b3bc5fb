"""Random SQL statements and query strings raise nothing but FtsErrors (issue 19): a few
hundred of tests/fuzz_inputs.py's cases, which runs 10,000 of each as a script."""

from __future__ import annotations

import pytest
from fuzz_inputs import build, run_case, warm_up

import datafusion_fts as fts

SEED = 19
CASES = {"sql": 300, "query": 200}
# No bound on the seconds a call takes: a suite that fails when the machine is slow lets
# nothing land. The script reports calls over 2 s; quadratic work is found by the growth
# tests (tests/query/test_parser.py), which compare two sizes.


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> fts.Database:
    db = build(tmp_path_factory.mktemp("fuzz") / "db")
    warm_up(db)
    return db


@pytest.mark.parametrize("kind", sorted(CASES))
def test_random_inputs_raise_only_fts_errors(db: fts.Database, kind: str) -> None:
    failures = []
    outcomes = set()
    for i in range(CASES[kind]):
        for result in run_case(db, kind, SEED, i):
            outcomes.add(result["outcome"])
            if result["outcome"].startswith("!"):
                failures.append(result)
    assert not failures
    assert {"ok", "QuerySyntaxError"} <= outcomes  # (the cases reach both sides)
