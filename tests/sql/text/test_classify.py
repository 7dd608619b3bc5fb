"""The classifier's refusal of statements DataFusion would overflow its stack on
(sql/text/classify.py): the depth is counted exactly at the boundary, whatever the statement's
length, and the cheap pre-check never lets a too-deep statement through."""

from __future__ import annotations

import pytest

from datafusion_fts.sql.text.classify import MAX_DEPTH, refusal, split


def depth_refused(sql: str) -> bool:
    (statement,) = split(sql)
    return refusal(statement) is not None


@pytest.mark.parametrize("build", [
    lambda n: " UNION ALL ".join(["SELECT 1"] * (n + 1)),  # n UNIONs: n + 1 levels
    lambda n: "SELECT " + "+".join(["1"] * (n + 1)),
    lambda n: "SELECT 1 WHERE " + " OR ".join(["a"] * (n + 1)),
    lambda n: "SELECT " + "(" * n + "1" + ")" * n,
    lambda n: "(" * n,  # short: fewer characters than levels' worth of operands
])
def test_the_depth_boundary_is_exact(build) -> None:
    # One level is the statement's own; MAX_DEPTH - 1 chaining marks reach MAX_DEPTH.
    assert not depth_refused(build(MAX_DEPTH - 1))
    assert depth_refused(build(MAX_DEPTH))


def test_a_long_statement_of_other_characters_is_not_refused() -> None:
    assert not depth_refused("SELECT '" + "x" * 1_000_000 + "'")
