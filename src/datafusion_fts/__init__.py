"""datafusion-fts: exact, deterministic BM25 full-text search for SQL on Apache DataFusion."""

from .errors import (
    CatalogError,
    FtsError,
    InvalidArgument,
    PlanError,
    QuerySyntaxError,
    SqlError,
    StorageError,
)

__all__ = [
    "CatalogError",
    "FtsError",
    "InvalidArgument",
    "PlanError",
    "QuerySyntaxError",
    "SqlError",
    "StorageError",
]
