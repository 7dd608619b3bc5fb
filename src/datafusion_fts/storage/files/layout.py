"""What marks a directory as a database: the name of its manifest; and which locations are
local directories.

A leaf (it imports nothing of the engine), so the command line can tell a database
directory from any other before it loads the engine (cli/options.py), with the name the
store writes.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlparse

MANIFEST = "manifest.json"
# A location with a scheme ("s3://", "gs://", "file://"; not a drive letter "C:").
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")


def is_remote(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` names an object store: a URI of a scheme other than ``file``."""
    text = os.fspath(location)
    return bool(_URL.match(text)) and urlparse(text).scheme != "file"


def local_path(location: str | os.PathLike[str], what: str) -> str:
    """The local path ``location`` names: a path as is, a ``file://`` URI as its path. An
    object store's URI (``s3://bucket/db``) is refused, never read as a relative local
    path (it made a folder ``./s3:/bucket/db``, issue 32); ``what`` says what it is for.
    Raises ValueError, which callers turn into their own errors."""
    text = os.fspath(location)
    if not _URL.match(text):
        return text
    url = urlparse(text)
    if url.scheme == "file" and url.netloc in ("", "localhost"):
        return unquote(url.path)
    raise ValueError(f"{what} {text!r} is on an object store ({url.scheme}://): this version reads and writes "
                     "local paths only (a path, or a file:// URI)")
