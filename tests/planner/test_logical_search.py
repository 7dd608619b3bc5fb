"""``LogicalSearch`` (planner/logical.py): an immutable plan node that checks itself when
built (STYLE: "a wrongly built node fails at construction, naming the fix") and prints
one EXPLAIN line."""

from __future__ import annotations

import dataclasses

import pytest

from datafusion_fts.errors import PlanError
from datafusion_fts.planner.logical import JOIN_MODES, LogicalSearch
from datafusion_fts.query import Boolean, Match

TREE = Match("body", "alpha")


def test_defaults_and_display():
    node = LogicalSearch("docs", "d", TREE)
    assert (node.prefilter, node.k, node.join) == (None, None, "inner")
    assert node.display() == f"LogicalSearch: table=docs, alias=d, tree={TREE!r}, k=all"


def test_display_shows_every_decision_in_a_fixed_order():
    node = LogicalSearch("docs", "docs", TREE, prefilter="year > 2000", k=7)
    assert node.display() == f"LogicalSearch: table=docs, alias=docs, tree={TREE!r}, prefilter=[year > 2000], k=7"
    marks = LogicalSearch("docs", "docs", TREE, join="mark", managed=False)
    assert marks.display() == f"LogicalSearch: table=docs, alias=docs, tree={TREE!r}, k=all, join=mark, foreign"


def test_k_zero_is_allowed():
    assert LogicalSearch("docs", "docs", TREE, k=0).display().endswith("k=0")


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"tree": "alpha"}, "query tree"),
        ({"tree": None}, "query tree"),
        ({"join": "right"}, "join"),
        ({"join": ""}, "join"),
        ({"k": -1}, "k"),
        ({"join": "mark", "k": 3}, "every match"),
        ({"join": "mark", "prefilter": "id > 1"}, "every match"),
    ],
)
def test_bad_nodes_fail_at_construction(kwargs, words):
    args = {"table": "docs", "alias": "docs", "tree": TREE, **kwargs}
    with pytest.raises(PlanError) as info:
        LogicalSearch(**args)
    assert words in str(info.value)


def test_join_modes():
    assert JOIN_MODES == ("inner", "mark")
    for mode in JOIN_MODES:
        assert LogicalSearch("docs", "docs", TREE, join=mode).join == mode


def test_is_immutable_and_comparable():
    node = LogicalSearch("docs", "docs", Boolean(must=(TREE,)), k=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.k = 4  # type: ignore[misc]
    assert node == LogicalSearch("docs", "docs", Boolean(must=(TREE,)), k=3)
    assert hash(node) == hash(LogicalSearch("docs", "docs", Boolean(must=(TREE,)), k=3))


def test_a_foreign_search_takes_no_prefilter():
    node = LogicalSearch("plain", "plain", TREE, k=2, managed=False)
    assert node.display().endswith("k=2, foreign")
    with pytest.raises(PlanError):
        LogicalSearch("plain", "plain", TREE, prefilter="id > 1", managed=False)
