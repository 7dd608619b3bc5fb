"""Read-only storage for tests: a copy of a directory on a ``tmpfs`` remounted read-only
(root ignores permission bits, so ``chmod -R a-w`` would not stop its writes), and a
listing that shows any change to a directory."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def listing(root: Path) -> dict[str, tuple[bool, int, int]]:
    """Every file and directory under ``root`` (``root`` too): whether a directory, its
    size (0 for directories) and mtime in nanoseconds."""
    found = {}
    for path in [root, *sorted(root.rglob("*"))]:
        st = path.stat()
        found[str(path.relative_to(root))] = (path.is_dir(), 0 if path.is_dir() else st.st_size, st.st_mtime_ns)
    return found


@contextmanager
def read_only_copy(source: Path) -> Iterator[Path]:
    """A copy of directory ``source`` on a read-only mount; skips the test where
    mounting is not permitted (not root, or no CAP_SYS_ADMIN in a container)."""
    mount = Path(tempfile.mkdtemp(prefix="fts-ro-"))
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", str(mount)],
                          check=False, capture_output=True, text=True) if os.geteuid() == 0 else None
    if made is None or made.returncode != 0:
        mount.rmdir()
        pytest.skip("a read-only mount needs root with mount permission: "
                    + ("not root" if made is None else made.stderr.strip()))
    try:
        copy = mount / source.name
        shutil.copytree(source, copy)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True, capture_output=True)
        assert _refuses_writes(copy)
        yield copy
    finally:
        gc.collect()  # (Databases drop their memory maps of the mount's files)
        if subprocess.run(["umount", str(mount)], check=False, capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mount)], check=True)  # (a map still held: detach)
        mount.rmdir()


def _refuses_writes(directory: Path) -> bool:
    try:
        (directory / "probe").touch()
    except OSError:
        return True
    return False
