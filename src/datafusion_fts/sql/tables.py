"""What SQL reads of the database's tables, declared here so that nothing in ``sql/``
imports the storage under them (docs/design.md: "Import direction"): the catalog's
``Manifest``, ``TableMeta`` and ``TableSnapshot`` meet these protocols."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from ..operators.base import SEARCH_SCHEMA
from ..session.declared_types import as_declared


class TableMetadata(Protocol):
    """One version of a table's metadata: its columns as SQL declares them, the
    definition it was created by, its indexes by column (and the columns with an n-gram
    index), the files it was made of."""

    @property
    def sql_schema(self) -> pa.Schema: ...

    @property
    def definition(self) -> Any: ...

    @property
    def indexes(self) -> Mapping[str, Any]: ...

    @property
    def ngram_columns(self) -> frozenset[str]: ...

    @property
    def source(self) -> Any: ...


class Tables(Protocol):
    """The tables of one version of the database (a manifest), by name."""

    @property
    def tables(self) -> Mapping[str, TableMetadata]: ...


class FetchedRows(Protocol):
    """A table whose found rows a search fetches: what fetching them reads (EXPLAIN
    ANALYZE), a managed table's version or a table of the session alike."""

    def fetch_units(self, row_ids: np.ndarray, columns: list[str]) -> Mapping[str, Mapping[str, int]]: ...


class TableVersion(FetchedRows, Protocol):
    """One version of a table, as a search read it: its metadata and its rows by row id."""

    @property
    def meta(self) -> TableMetadata: ...

    def take(self, row_ids: np.ndarray, columns: list[str]) -> pa.Table: ...


def carried_rows(version: TableVersion, ids: pa.Array | pa.ChunkedArray, columns: Sequence[str]) -> pa.Table:
    """``_rowid`` (``ids``, int64, not null) and the ``columns`` of those rows of ``version``,
    each as SQL declares it: rows that stand in for their table in a statement (a search's
    result, a table's candidate rows). The ids come as Arrow: ``pa.array`` of an ndarray
    imports ``numpy.ma``, which a search never needs (tests/test_start_imports.py)."""
    fields = [version.meta.sql_schema.field(c) for c in columns]
    values = version.take(ids.to_numpy(), list(columns))
    arrays = [ids, *(as_declared(values.column(f.name), f.type) for f in fields)]
    return pa.Table.from_arrays(arrays, schema=pa.schema([SEARCH_SCHEMA.field(0), *fields]))
