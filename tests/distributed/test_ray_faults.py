"""A search actor killed during a query: the query is answered on the restarted actor, or
fails with a DistributedError once the retry budget is spent; never a partial top-k."""

from __future__ import annotations

import os
import signal

import pytest
from shapes import corpus

import datafusion_fts as fts
from datafusion_fts.query import Boolean, Match

pytest.importorskip("ray")
pytestmark = pytest.mark.ray

QUERY = Boolean(must=[Match("body", "alpha")], should=[Match("title", "beta gamma")])


def table(path, **config) -> fts.Table:
    db = fts.connect(str(path), executor="ray", config={"fts.ray_actors": 3, **config})
    t = db.create_table("docs", corpus(1200))
    t.build_segment("body", (0, 599))
    t.build_segment("body", (600, (1 << 63) - 1))
    t.create_index("title")
    return t


def rows(batches) -> list[tuple[int, float]]:
    return [(r, s) for b in batches for r, s in zip(b.column(0).to_pylist(), b.column(1).to_pylist())]


def local(t: fts.Table, query, limit=20) -> list[tuple[int, float]]:
    t.db.settings.set("fts.executor", "local")
    try:
        plan, _ = t.plan(query, limit=limit)
        return rows(plan.execute())
    finally:
        t.db.settings.set("fts.executor", "ray")


def test_actor_killed_between_the_two_phases_is_restarted(ray_session, tmp_path):
    t = table(tmp_path)
    executor = t.db.distributed_executor()
    rows(t.plan(QUERY)[0].execute())  # the actors hold their shares now
    before = executor.actor_pids()
    plan, _ = t.plan(QUERY, limit=20)  # phase one done
    os.kill(before[0], signal.SIGKILL)
    assert rows(plan.execute()) == local(t, QUERY)  # phase two, on the restarted actor
    distributed = plan.children()[0]
    assert distributed.metrics.values["retries"] >= 1
    after = executor.actor_pids()
    assert after[0] != before[0] and after[1] == before[1]


def test_actor_killed_before_phase_one_is_restarted(ray_session, tmp_path):
    t = table(tmp_path)
    pids = t.db.distributed_executor().actor_pids()
    os.kill(pids[1], signal.SIGKILL)
    plan, _ = t.plan(QUERY, limit=20)
    assert rows(plan.execute()) == local(t, QUERY)
    assert plan.children()[0].metrics.values["retries"] >= 1


@pytest.mark.parametrize("config", [
    {"fts.ray_max_restarts": 0, "fts.ray_retries": 2},  # Ray does not bring the actor back
    {"fts.ray_max_restarts": 2, "fts.ray_retries": 0},  # no retry budget
], ids=["no-restarts", "no-retries"])
def test_past_the_budget_the_query_fails_clearly(ray_session, tmp_path, config):
    t = table(tmp_path, **config)
    executor = t.db.distributed_executor()
    rows(t.plan(QUERY)[0].execute())
    plan, _ = t.plan(QUERY, limit=20)
    os.kill(executor.actor_pids()[0], signal.SIGKILL)
    with pytest.raises(fts.DistributedError, match="failed after"):
        list(plan.execute())
    # The next query gets working actors again, and the whole answer.
    plan, _ = t.plan(QUERY, limit=20)
    assert rows(plan.execute()) == local(t, QUERY)
