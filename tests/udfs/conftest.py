"""A plain DataFusion session with the text functions installed, and a helper to call
one function over a few rows."""

from __future__ import annotations

import itertools
from typing import Any

import datafusion
import pyarrow as pa
import pytest

import datafusion_fts as fts

_names = itertools.count()


class Session:
    def __init__(self) -> None:
        self.ctx = datafusion.SessionContext()
        fts.install(self.ctx)

    def rows(self, expression: str, **columns: list[Any]) -> list[Any]:
        """``expression`` evaluated on rows with the given (string unless typed) columns."""
        name = f"rows_{next(_names)}"
        data = {c: v if isinstance(v, pa.Array) else pa.array(v, pa.string()) for c, v in columns.items()}
        self.ctx.from_arrow(pa.table(data), name=name)
        try:
            return self.ctx.sql(f"SELECT {expression} AS out FROM {name}").to_pydict()["out"]
        finally:
            self.ctx.deregister_table(name)

    def one(self, expression: str, **columns: Any) -> Any:
        return self.rows(expression, **{c: [v] for c, v in columns.items()})[0]


@pytest.fixture(scope="module")
def session() -> Session:
    return Session()
