"""The stdlib-docstring demo corpus: shape, determinism and a few known entries."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from datafusion_fts.demo_corpus import (
    DOCSTRING_SCHEMA,
    iter_stdlib_docstring_batches,
    stdlib_docstrings,
)
from datafusion_fts.errors import InvalidArgument


@pytest.fixture(scope="module")
def corpus() -> pa.Table:
    """The full corpus, built once: it takes a few seconds, so share it across tests."""
    return stdlib_docstrings()


def test_full_corpus_shape(corpus: pa.Table) -> None:
    assert corpus.schema == DOCSTRING_SCHEMA
    assert corpus.num_rows > 5_000
    ids = corpus.column("id").to_numpy()
    np.testing.assert_array_equal(ids, np.arange(corpus.num_rows))
    assert set(corpus.column("kind").to_pylist()) == {"module", "class", "function"}
    assert pc.min(pc.utf8_length(corpus.column("title"))).as_py() > 0
    assert pc.max(pc.utf8_length(corpus.column("title"))).as_py() <= 200
    assert pc.all(pc.greater(corpus.column("lineno"), 0)).as_py()
    assert corpus.column("body").null_count == 0


def test_known_entries_present(corpus: pa.Table) -> None:
    rows = {(r["module"], r["name"], r["kind"]) for r in
            corpus.select(["module", "name", "kind"]).to_pylist()}
    assert ("json", "", "module") in rows
    assert ("json.decoder", "JSONDecoder", "class") in rows
    assert ("json.decoder", "JSONDecoder.decode", "function") in rows


def test_module_row_is_its_docstring(corpus: pa.Table) -> None:
    is_json = pc.equal(corpus.column("module"), "json")
    is_module = pc.equal(corpus.column("kind"), "module")
    json_row = corpus.filter(pc.and_(is_json, is_module)).to_pylist()
    assert len(json_row) == 1
    assert json_row[0]["name"] == ""
    assert json_row[0]["body"].startswith(json_row[0]["title"])
    assert "JSON" in json_row[0]["title"]


def test_tests_and_site_packages_skipped(corpus: pa.Table) -> None:
    modules = set(corpus.column("module").to_pylist())
    for bad in ("test", "tests", "idle_test", "site-packages", "site_packages", "__pycache__"):
        assert not any(bad in m.split(".") for m in modules), bad


def test_limit_is_deterministic_and_a_prefix(corpus: pa.Table) -> None:
    first = stdlib_docstrings(limit=300)
    second = stdlib_docstrings(limit=300)
    assert first.num_rows == 300
    assert first.equals(second)
    assert first.equals(corpus.slice(0, 300))


def test_batches_concatenate_to_the_table() -> None:
    batches = list(iter_stdlib_docstring_batches(batch_rows=64, limit=200))
    assert [b.num_rows for b in batches] == [64, 64, 64, 8]
    assert pa.Table.from_batches(batches).equals(stdlib_docstrings(limit=200))


def test_limit_zero_and_bad_arguments() -> None:
    assert stdlib_docstrings(limit=0).num_rows == 0
    assert stdlib_docstrings(limit=0).schema == DOCSTRING_SCHEMA
    with pytest.raises(InvalidArgument):
        list(iter_stdlib_docstring_batches(batch_rows=0))
    with pytest.raises(InvalidArgument):
        stdlib_docstrings(limit=-1)
