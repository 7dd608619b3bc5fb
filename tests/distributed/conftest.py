"""One small local Ray cluster for every test of this package, shut down at its end."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="package")
def ray_session():
    ray = pytest.importorskip("ray")
    ray.init(
        num_cpus=2, object_store_memory=100 << 20, include_dashboard=False, log_to_driver=False,
    )
    yield ray
    ray.shutdown()
