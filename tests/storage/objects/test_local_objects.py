"""What only the local backend of storage/objects must show itself: a write survives a
power loss whole or not at all (tests/power_loss.py keeps only what was fsynced), and
conditional replaces exclude each other across processes, not only threads."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from datafusion_fts.errors import StorageError
from datafusion_fts.storage.objects import open_objects
from power_loss import PowerLoss

SRC = Path(__file__).resolve().parents[3] / "src"


@pytest.mark.parametrize("write", ["put", "put_if_absent", "put_if_version"])
def test_a_power_loss_keeps_the_old_object_or_the_new_whole(tmp_path: Path, write: str) -> None:
    root = tmp_path / "store"
    root.mkdir()
    objects = open_objects(str(root))
    before = None if write == "put_if_absent" else b"old contents"
    version = objects.put("dir/manifest", before) if before is not None else None
    images: list[Path] = []
    loss = PowerLoss(root)

    def image(_: str = "") -> None:
        images.append(tmp_path / f"image-{len(images)}")
        loss.image(images[-1])

    new = b"new contents, longer than the old"
    with loss.recording(image):
        if write == "put_if_version":
            objects.put_if_version("dir/manifest", new, version)
        else:
            getattr(objects, write)("dir/manifest", new)
    image()
    seen = [(i / "dir/manifest").read_bytes() if (i / "dir/manifest").exists() else None for i in images]
    assert all(s in (before, new) for s in seen), seen
    assert seen[-1] == new  # (once the call returned, the new object is durable)


def test_racing_processes_replace_one_version_once(tmp_path: Path) -> None:
    root = tmp_path / "store"
    objects = open_objects(str(root))
    start = objects.put("manifest", b"base")
    script = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from datafusion_fts.storage.objects import open_objects\n"
        "from datafusion_fts.errors import ConflictError\n"
        "o = open_objects(sys.argv[2])\n"
        "try:\n"
        "    o.put_if_version('manifest', sys.argv[4].encode(), sys.argv[3]); print('won')\n"
        "except ConflictError:\n"
        "    print('lost')\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(SRC), str(root), start, f"writer {i}"],
                              stdout=subprocess.PIPE, text=True) for i in range(4)]
    outcomes = [p.communicate()[0].strip() for p in procs]
    assert sorted(outcomes) == ["lost", "lost", "lost", "won"]
    assert objects.get("manifest") == f"writer {outcomes.index('won')}".encode()


@pytest.mark.parametrize("call", ["fsync", "replace", "link"])
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
def test_a_failed_write_is_a_storage_error_and_leaves_the_old_object_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str, code: int
) -> None:
    root = tmp_path / "store"
    objects = open_objects(str(root))
    version = objects.put("k", b"old")

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, call, fail)
    with pytest.raises(StorageError, match="the disk is full" if code == errno.ENOSPC else "an I/O error"):
        if call == "link":
            objects.put_if_absent("new", b"new")
        else:
            objects.put_if_version("k", b"new", version)
    monkeypatch.undo()
    assert objects.get("k") == b"old" and objects.head("k").version == version
    assert sorted(p.name for p in root.iterdir()) == [".objects.lock", "k"]  # (no temporary file left)
