"""Simulated power loss (issue 34; as Lucene's MockDirectoryWrapper and SQLite's crash-test
VFS do): what a directory tree would hold after the power went out at some moment, given
the fsyncs made until then.

A file's bytes survive as of its last ``fsync`` (a file never fsynced since it was made
is empty); a directory's entries survive as of its last ``fsync`` (a name renamed or
created in a directory never fsynced since is lost, and one removed comes back). Before
the first ``fsync`` of anything, the tree as it was when recording began survives. Files
and directories are followed by inode, so a rename moves what survives with them.
"""

from __future__ import annotations

import os
import shutil
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator


class PowerLoss:
    """Records the durable state of the tree under ``root`` from now on (while
    :meth:`recording`), and writes what would survive a power loss at any moment
    (:meth:`image`)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: dict[int, bytes] = {}  # inode -> bytes as last fsynced
        self._dirs: dict[int, dict[str, int]] = {}  # inode -> {name: inode} as last fsynced
        self._kinds: dict[int, bool] = {}  # inode -> is a directory
        self._root_inode = os.stat(root).st_ino
        self._snapshot(root)

    def _snapshot(self, directory: Path) -> None:
        """Everything under ``directory`` as durable (the state recording starts from)."""
        entries = {}
        for entry in os.scandir(directory):
            st = entry.stat(follow_symlinks=False)
            entries[entry.name] = st.st_ino
            if stat.S_ISDIR(st.st_mode):
                self._kinds[st.st_ino] = True
                self._snapshot(Path(entry.path))
            else:
                self._kinds[st.st_ino] = False
                self._files[st.st_ino] = Path(entry.path).read_bytes()
        self._dirs[os.stat(directory).st_ino] = entries
        self._kinds[os.stat(directory).st_ino] = True

    def _synced(self, fd: int) -> None:
        st = os.fstat(fd)
        path = os.readlink(f"/proc/self/fd/{fd}")  # (a file opened write-only cannot be read by its fd)
        if stat.S_ISDIR(st.st_mode):
            self._dirs[st.st_ino] = {e.name: e.stat(follow_symlinks=False).st_ino for e in os.scandir(path)}
            for e in os.scandir(path):  # (kinds of entries first seen here)
                self._kinds.setdefault(e.stat(follow_symlinks=False).st_ino, e.is_dir(follow_symlinks=False))
            self._kinds[st.st_ino] = True
        else:
            self._files[st.st_ino] = Path(path).read_bytes()
            self._kinds[st.st_ino] = False

    @contextmanager
    def recording(self, on_step: Callable[[str], None] | None = None) -> Iterator["PowerLoss"]:
        """Record fsyncs until the block ends; ``on_step("fsync" | "replace")`` is called
        before each fsync and rename (where a test may take an :meth:`image`)."""
        real_fsync, real_replace = os.fsync, os.replace

        def fsync(fd: Any) -> None:
            if on_step is not None:
                on_step("fsync")
            real_fsync(fd)
            self._synced(fd if isinstance(fd, int) else fd.fileno())

        def replace(*args: Any, **kwargs: Any) -> None:
            if on_step is not None:
                on_step("replace")
            real_replace(*args, **kwargs)

        os.fsync, os.replace = fsync, replace
        try:
            yield self
        finally:
            os.fsync, os.replace = real_fsync, real_replace

    def image(self, target: Path) -> None:
        """Write the tree that would survive a power loss now to ``target``."""
        shutil.rmtree(target, ignore_errors=True)
        self._write(self._root_inode, target)

    def _write(self, inode: int, path: Path) -> None:
        path.mkdir()
        for name, child in self._dirs.get(inode, {}).items():
            if self._kinds.get(child):
                self._write(child, path / name)
            else:
                (path / name).write_bytes(self._files.get(child, b""))
