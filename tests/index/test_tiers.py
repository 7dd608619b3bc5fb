"""The tiered merge plan (index/tiers.py) shared by fresh runs and data fragments: the
groups cover every part once, in order; no merge passes the cap; past ``most`` parts every
pair of neighbours holds more than the cap."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.index.tiers import TIER, level, tiered


@given(st.lists(st.integers(0, 5000), max_size=60), st.integers(1, 30), st.one_of(st.none(), st.integers(1, 20000)))
def test_groups_cover_every_part_once_and_bound_their_number(sizes: list[int], most: int, cap: int | None) -> None:
    groups = tiered(sizes, most, cap)
    assert [i for a, b in groups for i in range(a, b)] == list(range(len(sizes)))
    totals = [sum(sizes[a:b]) for a, b in groups]
    if cap is not None:
        assert all(t <= cap for (a, b), t in zip(groups, totals) if b - a > 1)
    if len(groups) > most:
        assert cap is not None and all(x + y > cap for x, y in zip(totals, totals[1:]))


def test_equal_parts_arriving_one_by_one_count_in_base_tier() -> None:
    """295 parts of one item, each planned as it arrives: 4·8² + 4·8 + 7 parts."""
    parts: list[int] = []
    for _ in range(295):
        parts.append(1)
        parts = [sum(parts[a:b]) for a, b in tiered(parts, most=1000)]
    assert parts == [64] * 4 + [8] * 4 + [1] * 7
    assert TIER == 8 and level(7) == 0 and level(8) == 1 and level(0) == 0
