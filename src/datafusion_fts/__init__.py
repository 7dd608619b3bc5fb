"""datafusion-fts: exact, deterministic BM25 full-text search for SQL on Apache DataFusion.

>>> import datafusion_fts as fts
>>> import pyarrow as pa
>>> db = fts.connect()
>>> t = db.create_table("docs", pa.table({"body": ["alpha beta", "beta gamma", "alpha alpha"]}))
>>> t.create_index("body")
>>> t.search(fts.query.Match("body", "alpha"), limit=2).column("_rowid").to_pylist()
[2, 0]

The engine (DataFusion, pyarrow) is imported when first used, not by ``import
datafusion_fts``: the command line answers ``--help`` and ``--version`` without it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .errors import (
    CatalogError,
    ConflictError,
    DistributedError,
    EngineError,
    FtsError,
    FtsNotice,
    InvalidArgument,
    PlanError,
    QuerySyntaxError,
    ReadOnlyError,
    SqlError,
    StaleSnapshotError,
    StorageError,
)

# Public names imported on first use: name -> module.
_LAZY = {
    "BuildProgress": ".index.building.build_progress", "CsvFormat": ".storage.files.manifest", "Database": ".database", "connect": ".database", "Table": ".table", "install": ".udfs", "query": ".query",
}

if TYPE_CHECKING:
    from . import query
    from .database import Database, connect
    from .index.build_progress import BuildProgress
    from .storage.files.manifest import CsvFormat
    from .table import Table
    from .udfs import install


def __getattr__(name: str) -> Any:
    if name == "__version__":  # (pyproject.toml's, as installed: reading it costs ~45 ms)
        from importlib.metadata import version

        globals()[name] = value = version("datafusion-fts")
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    loaded = import_module(module, __name__)
    value = loaded if name == "query" else getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "BuildProgress",
    "CatalogError",
    "ConflictError",
    "CsvFormat",
    "Database",
    "DistributedError",
    "EngineError",
    "FtsError",
    "FtsNotice",
    "InvalidArgument",
    "PlanError",
    "QuerySyntaxError",
    "ReadOnlyError",
    "SqlError",
    "StaleSnapshotError",
    "StorageError",
    "Table",
    "__version__",
    "connect",
    "install",
    "query",
]
