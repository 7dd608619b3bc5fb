"""The one place that imports Ray (an optional extra), and only when it is first needed:
a local executor never imports it."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from ..errors import InvalidArgument

INSTALL_HINT = "the ray executor needs the ray extra: pip install 'datafusion-fts[ray]'"


def ray_available() -> bool:
    """Whether Ray is installed (without importing it)."""
    return importlib.util.find_spec("ray") is not None


def ray() -> ModuleType:
    """The ``ray`` module, or an InvalidArgument naming the extra to install."""
    if not ray_available():
        raise InvalidArgument(INSTALL_HINT)
    import ray as module

    return module


def ray_exceptions() -> ModuleType:
    import ray.exceptions as module

    return module
