"""Manifest formats: a database of format 1 (tests/storage/files/fixtures/format1, written by the
last version of that format) opens and answers exactly as it did; OPTIMIZE rewrites its
data files in the current layout; a newer format is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import datafusion_fts as fts
from datafusion_fts.storage.files.manifest import FORMAT_VERSION, PAGED_LAYOUT

FIXTURE = Path(__file__).parent / "fixtures"

import sys  # noqa: E402

sys.path.insert(0, str(FIXTURE))
from make_format1 import QUERIES, results  # noqa: E402


def copy_fixture(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURE / name, target)
    return target


@pytest.fixture
def old_db(tmp_path: Path) -> Path:
    return copy_fixture(tmp_path, "format1")


def test_a_format_1_database_answers_as_it_did(old_db: Path) -> None:
    expected = json.loads((old_db / "expected.json").read_text())
    docs = fts.connect(old_db).table("docs")
    assert {f.layout for f in docs.snapshot().meta.fragments} == {1}
    assert results(docs) == expected
    assert len(expected) == len(QUERIES) and all(e["rowid"] for e in expected.values())


def test_optimize_rewrites_format_1_data_files(old_db: Path) -> None:
    expected = json.loads((old_db / "expected.json").read_text())
    db = fts.connect(old_db)
    docs = db.table("docs")
    before = docs.to_arrow()
    docs.optimize()
    meta = docs.snapshot().meta
    assert {f.layout for f in meta.fragments} == {PAGED_LAYOUT}
    assert json.loads((old_db / "manifest.json").read_text())["format"] == FORMAT_VERSION
    assert docs.to_arrow().equals(before)  # the same rows with the same ids (fresh rows now flushed)
    assert results(docs) == expected
    del docs, db
    assert results(fts.connect(old_db).table("docs")) == expected


def test_a_newer_format_is_refused(old_db: Path) -> None:
    manifest = json.loads((old_db / "manifest.json").read_text())
    manifest["format"] = FORMAT_VERSION + 1
    (old_db / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(fts.StorageError, match="newer datafusion-fts"):
        fts.connect(old_db)


@pytest.fixture
def format2_db(tmp_path: Path) -> Path:
    return copy_fixture(tmp_path, "format2")


def test_a_format_2_database_answers_as_it_did_and_after_optimize(format2_db: Path) -> None:
    """Format 2 segments keep one impact point per block (tests/storage/files/fixtures/make_format2.py);
    they are read as they are, and segments written now keep several: the same answers."""
    expected = json.loads((format2_db / "expected.json").read_text())
    db = fts.connect(format2_db)
    docs = db.table("docs")
    old = [db.segment(s) for s in docs.snapshot().meta.indexes["body"].segments]
    assert old and {s.impacts for s in old} == {1}
    assert results(docs) == expected
    docs.create_index("title")  # rebuilt: segments of this format
    docs.optimize()
    new = [db.segment(s) for s in docs.snapshot().meta.indexes["title"].segments]
    assert {s.impacts for s in new} == {4}
    assert json.loads((format2_db / "manifest.json").read_text())["format"] == FORMAT_VERSION == 12
    assert results(docs) == expected
