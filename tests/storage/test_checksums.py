"""Checksums on index segments and deletion vectors (storage/checksums.py): a single flipped
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

import datafusion_fts as fts
from datafusion_fts.storage import checksums
from datafusion_fts.storage.manifest import checksum

from bit_flips import build, files, results, trial

# Flips per file type here (tests/bit_flips.py runs more as a script).
FLIPS = 60


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    path = tmp_path_factory.mktemp("flips") / "db"
    build(path)
    return path, results(path)


@pytest.mark.parametrize("kind", ["segment array", "checksum file", "deletion vector", "manifest", "data"])
def test_a_flipped_bit_is_detected_or_harmless(kind: str, pristine: tuple[Path, list[Any]], tmp_path: Path) -> None:
    path, expected = pristine
    rng = random.Random(kind)
    paths = files(path)[kind]
    sql = kind != "data"  # (DataFusion's own Parquet reader checks no page CRC: see guarantees.md)
    outcomes: Counter = Counter()
    for _ in range(FLIPS):
        file = rng.choice(paths)
        bit = rng.randrange(file.stat().st_size * 8)
        outcome = trial(path, tmp_path / "work", file.relative_to(path), bit, expected, sql)
        outcomes[outcome] += 1
        assert outcome in ("detected", "harmless"), (file.name, bit, outcome)
    if kind != "data":  # (most of a fragment's bytes are in its pages' CRCs' reach only when fetched)
        assert outcomes["detected"] >= FLIPS // 2


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
        del frag["deletes_crc"]
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
