"""Shared fixtures: engine tables built from the reference's RefTable."""

from __future__ import annotations

import os
import sys
import tempfile

from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))
# Segments of databases at object stores' URLs are kept under $XDG_CACHE_HOME: the tests'
# in a directory of their own, not the user's.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="fts-tests-cache-")

settings.register_profile(
    "default", deadline=None, max_examples=50, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", deadline=None, max_examples=600, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
