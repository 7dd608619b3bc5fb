"""What an OSError means, in words a user acts on (the disk is full, the file system is
read-only, ...): every OSError a write of the database meets becomes a StorageError
saying it, and where, with the OSError as its cause (issue 34: "Every OS error is an
FtsError")."""

from __future__ import annotations

import errno

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
