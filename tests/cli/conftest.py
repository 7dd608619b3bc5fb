"""The CLI tests' database fixture."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import COMMITTED, FRESH, on_db

import datafusion_fts as fts


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """``library.db``: docs with 5 committed, indexed rows (body with positions, title)
    and one fresh row."""
    path = tmp_path / "library.db"

    def build(db: fts.Database) -> None:
        docs = db.create_table("docs", COMMITTED)
        docs.create_index("body", positions=True)
        docs.create_index("title")
        docs.insert(FRESH)

    on_db(path, build)
    return path
