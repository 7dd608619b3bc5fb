"""Shared fixtures: engine tables built from the reference's RefTable."""

from __future__ import annotations

import os
import sys

from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

settings.register_profile(
    "default", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", deadline=None, max_examples=600, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_collection_modifyitems(config, items) -> None:
    """Ray tests run last (otherwise in their usual order): their worker processes then
    load the compiled kernels the rest of the suite left in numba's on-disk cache. Run
    first on an empty cache, each of three workers compiled every kernel itself: one
    test took 278 s on 2 cores against 0.2 s warm."""
    items.sort(key=lambda item: item.get_closest_marker("ray") is not None)
