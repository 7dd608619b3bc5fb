"""Deletion vector files (storage/stores/store.py ``deletes_file``): the steps between
sorted ids (format 11), read back as the ids; the ids themselves where a step does not
fit, and files of format 10 (ids), read as they were."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.errors import StorageError
from datafusion_fts.storage.stores.store import (
    DELETED_IDS,
    deletes_file,
    deletes_of,
    write_array_file,
)


@given(st.lists(st.integers(0, 2**63 - 1) | st.integers(0, 2000), unique=True))
def test_a_vector_reads_back_as_written(ids: list[int]) -> None:
    rows = np.array(sorted(ids), dtype=np.int64)
    got = deletes_of(deletes_file(rows), None, "dv")
    assert got.dtype == np.int64 and got.tolist() == rows.tolist()


def test_a_long_history_takes_a_fraction_of_a_byte_an_id() -> None:
    """335,000 of 355,000 ids deleted (a churned table's): 0.11 bytes an id as steps,
    where its ids took 1.02."""
    rng = np.random.default_rng(1)
    deleted = np.setdiff1d(np.arange(355_000), rng.choice(355_000, 20_000, replace=False))
    sink = pa.BufferOutputStream()
    write_array_file(sink, DELETED_IDS, pa.array(deleted), "zstd")
    as_ids, as_steps = len(sink.getvalue()), len(deletes_file(deleted))
    assert as_steps < as_ids / 5 and as_steps < 0.15 * len(deleted), (as_steps, as_ids)


def test_a_vector_of_format_10_reads_as_its_ids() -> None:
    sink = pa.BufferOutputStream()
    write_array_file(sink, DELETED_IDS, pa.array([3, 5, 2**40], pa.int64()), "zstd")
    assert deletes_of(sink.getvalue().to_pybytes(), None, "dv").tolist() == [3, 5, 2**40]


def test_a_vector_of_an_unknown_column_is_a_storage_error() -> None:
    sink = pa.BufferOutputStream()
    write_array_file(sink, "ids", pa.array([1, 2], pa.int64()), "zstd")
    with pytest.raises(StorageError, match="column 'ids'"):
        deletes_of(sink.getvalue().to_pybytes(), None, "dv-1")
