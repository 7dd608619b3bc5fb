"""datafusion-fts: exact, deterministic BM25 full-text search for SQL on Apache DataFusion.

>>> import datafusion_fts as fts
>>> import pyarrow as pa
>>> db = fts.connect()
>>> t = db.create_table("docs", pa.table({"body": ["alpha beta", "beta gamma", "alpha alpha"]}))
>>> t.create_index("body")
>>> t.search(fts.query.Match("body", "alpha"), limit=2).column("_rowid").to_pylist()
[2, 0]
"""

from . import query
from .database import Database, connect
from .errors import (
    CatalogError,
    DistributedError,
    FtsError,
    InvalidArgument,
    PlanError,
    QuerySyntaxError,
    SqlError,
    StaleSnapshotError,
    StorageError,
)
from .table import Table
from .udfs import install

__all__ = [
    "CatalogError",
    "Database",
    "DistributedError",
    "FtsError",
    "InvalidArgument",
    "PlanError",
    "QuerySyntaxError",
    "SqlError",
    "StaleSnapshotError",
    "StorageError",
    "Table",
    "connect",
    "install",
    "query",
]
