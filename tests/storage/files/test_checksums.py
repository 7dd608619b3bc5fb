"""Checksums on index segments and deletion vectors (storage/files/checksums.py): a single flipped
bit in any file of a database is a StorageError naming the file, or changes nothing;
never another exception, never different results (docs/guide/guarantees.md)."""

from __future__ import annotations

import json
import random
import shutil
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bit_flips import build, files, results, trial

import datafusion_fts as fts
from datafusion_fts.storage.files import checksums
from datafusion_fts.storage.files.manifest import checksum

# Flips per file type here (tests/bit_flips.py runs more as a script).
FLIPS = 60


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    path = tmp_path_factory.mktemp("flips") / "db"
    build(path)
    return path, results(path)


@pytest.mark.parametrize("kind", ["segment array", "checksum file", "deletion vector", "manifest", "data",
                                  "data, no SQL"])
def test_a_flipped_bit_is_detected_or_harmless(kind: str, pristine: tuple[Path, list[Any]], tmp_path: Path) -> None:
    path, expected = pristine
    rng = random.Random(kind)
    paths = files(path)[kind.removesuffix(", no SQL")]
    sql = not kind.endswith("no SQL")
    outcomes: Counter = Counter()
    for _ in range(FLIPS):
        file = rng.choice(paths)
        bit = rng.randrange(file.stat().st_size * 8)
        outcome = trial(path, tmp_path / "work", file.relative_to(path), bit, expected, sql)
        outcomes[outcome] += 1
        assert outcome in ("detected", "harmless"), (file.name, bit, outcome)
    if kind == "data":  # (a SQL scan checks the whole file first)
        assert outcomes["detected"] == FLIPS
    elif kind != "data, no SQL":  # (a fragment's pages are checked only when fetched)
        assert outcomes["detected"] >= FLIPS // 2


def test_a_damaged_footer_is_found_before_pyarrow_parses_it(pristine: tuple[Path, list[Any]], tmp_path: Path) -> None:
    """A flip in a fragment's footer made pyarrow abort the process ("Definition level
    histogram size mismatch"): the footer's crc32 is checked before it is parsed."""
    path, _ = pristine
    work = tmp_path / "db"
    shutil.copytree(path, work)
    target = work / "data" / "frag-00000003.parquet"
    data = bytearray(target.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    data[len(data) - 8 - footer + 33] ^= 0x02  # (the flip that aborted was 33 bytes in)
    target.write_bytes(bytes(data))
    with pytest.raises(fts.StorageError, match=r"frag-00000003\.parquet: its footer's crc32 is \d+, the manifest says"):
        results(work, sql=False)


def test_sql_checks_a_fragment_before_datafusion_scans_it(pristine: tuple[Path, list[Any]], tmp_path: Path) -> None:
    """DataFusion's Parquet reader checks no page CRC: a page damaged where it still
    decodes changed a scan's answer. The whole file is checked the first time a statement
    names its table, once per process."""
    path, _ = pristine
    work = tmp_path / "db"
    shutil.copytree(path, work)
    fine = fts.connect(work)
    assert fine.sql("SELECT count(*) AS n FROM docs").to_pylist()[0]["n"] > 0
    target = work / "data" / "frag-00000001.parquet"
    data = bytearray(target.read_bytes())
    data[len(data) // 3] ^= 0x01
    target.write_bytes(bytes(data))
    assert fine.sql("SELECT count(*) AS n FROM docs").to_pylist()[0]["n"] > 0  # (checked already: not again)
    with pytest.raises(fts.StorageError, match=r"damaged data file .*frag-00000001\.parquet: its crc32 is"):
        fts.connect(work).sql("SELECT count(*) AS n, max(body) AS m FROM docs")


def test_postings_are_verified_when_a_query_reaches_them(pristine: tuple[Path, list[Any]], tmp_path: Path) -> None:
    """Opening verifies all but the postings' and positions' values; a flip there is found
    by the first read of its region, named with the file and region."""
    path, _ = pristine
    work = tmp_path / "db"
    shutil.copytree(path, work)
    meta = json.loads((work / "manifest.json").read_text())
    seg = meta["tables"]["docs"]["indexes"]["body"]["segments"][0]
    sums, region = checksums.decode((work / "index" / seg["id"] / checksums.CHECKSUMS).read_bytes(),
                                    seg["checksums"], "test")
    start, end = sums["post_words"].values
    lazy = [r for r in range(len(sums["post_words"].crcs)) if r * region >= start and (r + 1) * region <= end]
    assert len(lazy) >= 2
    target = work / "index" / seg["id"] / "post_words.arrow"
    data = bytearray(target.read_bytes())
    data[lazy[-1] * region + 5] ^= 0x10
    target.write_bytes(bytes(data))
    db = fts.connect(work)
    t = db.table("docs")
    opened = db.segment(t.snapshot().meta.indexes["body"].segments[0])  # (opens: the region is not read yet)
    assert not opened._lazy["post_words"].done[lazy[-1]]
    with pytest.raises(fts.StorageError, match=rf"post_words\.arrow is damaged: region {lazy[-1]} "):
        for i in range(150):
            t.search(f"w{i}", limit=None, columns=[])


def test_a_database_without_checksums_opens_unverified(pristine: tuple[Path, list[Any]], tmp_path: Path) -> None:
    """Segments and deletion vectors written before format 4 have no checksums: read as they are."""
    path, expected = pristine
    work = tmp_path / "db"
    shutil.copytree(path, work)
    for p in work.glob("index/*/" + checksums.CHECKSUMS):
        p.unlink()
    meta = json.loads((work / "manifest.json").read_text())
    table = meta["tables"]["docs"]
    for seg in table["indexes"]["body"]["segments"]:
        del seg["checksums"]
    for frag in table["fragments"]:
        for key in ("deletes_crc", "crc", "footer_crc"):
            frag.pop(key, None)
    body = {k: v for k, v in meta.items() if k != "checksum"} | {"format": 3}
    (work / "manifest.json").write_text(json.dumps({**body, "checksum": checksum(body)}))
    assert results(work) == expected
    db = fts.connect(work)
    segs = [db.segment(s) for s in db.table("docs").snapshot().meta.indexes["body"].segments]
    assert all(s.meta.checksums is None and not s._lazy for s in segs)


def test_region_crcs_cover_every_byte() -> None:
    data = np.frombuffer(bytes(range(256)) * 5, dtype=np.uint8)
    crcs = checksums.region_crcs(data, 512)
    assert len(crcs) == 3 and crcs[2] == zlib.crc32(data[1024:].tobytes())
