"""The system's C libraries that compiled loops call by address: found at run time, since
the package is built without their headers and runs where one is missing."""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Iterator


def load(name: str, symbols: tuple[str, ...], soname: str | None = None) -> ctypes.CDLL | None:
    """The shared library ``name`` (as ``find_library`` spells it) with ``symbols``
    present; None if this system has none. ``soname`` is tried first: ``find_library``
    runs ldconfig, ~10 ms."""
    for path in _candidates(name, soname):
        try:
            lib = ctypes.CDLL(path)
            for symbol in symbols:
                getattr(lib, symbol)
        except (OSError, AttributeError):
            continue
        return lib
    return None


def _candidates(name: str, soname: str | None) -> Iterator[str]:
    if soname is not None:
        yield soname
    found = ctypes.util.find_library(name)
    if found is not None and found != soname:
        yield found


def address(function: object) -> int:
    """Where a loaded library's ``function`` is, for a compiled loop to call."""
    return ctypes.cast(function, ctypes.c_void_p).value or 0
