"""``db.sql``'s entry (sql/statements.py): one table dispatches every kind of statement."""

from __future__ import annotations

from datafusion_fts.sql.statements import RUNS
from datafusion_fts.sql.text.classify import Kind


def test_every_kind_of_statement_runs_one_way():
    assert set(RUNS) == set(Kind)
