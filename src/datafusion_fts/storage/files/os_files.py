"""The database's files as the operating system keeps them: a file's or a directory's
fsync, new directories whose names survive a power loss, and what an OSError means in
words a user acts on (the disk is full, the file system is read-only, ...): every
OSError a write of the database meets becomes a StorageError saying it, and where, with
the OSError as its cause (issue 34: "Every OS error is an FtsError")."""

from __future__ import annotations

import errno
import os
from pathlib import Path

_MEANINGS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EIO: "an I/O error",
    errno.EMFILE: "too many open files",
}


def describe_os_error(exc: OSError) -> str:
    """What ``exc`` means, then the OS's own words (``[Errno 28] No space left ...``)."""
    meaning = _MEANINGS.get(exc.errno or 0)
    return f"{meaning} ({exc})" if meaning else str(exc)

def make_dirs(*paths: Path) -> None:
    """Make the directories ``paths`` and their missing parents, each new name fsynced in
    its parent: a database made and written, then a power loss, must not vanish whole."""
    for path in paths:
        missing = []
        while not path.is_dir():
            missing.append(path)
            path = path.parent
        for directory in reversed(missing):
            directory.mkdir(exist_ok=True)
            fsync_path(directory.parent)



def fsync_path(path: Path) -> None:
    """fsync a file or a directory (so a new name in it survives a power loss)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
