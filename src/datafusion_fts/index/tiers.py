"""Tiered merging, as an LSM tree merges: which consecutive parts to merge so that their
number stays logarithmic however small the parts that arrive, each part's items copied
about log_T(n) times in all. The fresh tier's runs (:mod:`.fresh_runs`) and a table's data
fragments (``catalog/compaction.py``) are merged by this plan (docs/design.md: "Fresh tier
and visibility", "Data fragments")."""

from __future__ import annotations

from collections.abc import Sequence

# Parts merge TIER at a time (more: fewer copies per item, but more parts to read).
TIER = 8


def level(size: int) -> int:
    """log_TIER of ``size``, rounded down (0 for sizes below TIER, 0 included)."""
    out = 0
    while size >= TIER:
        size //= TIER
        out += 1
    return out


def tiered(sizes: Sequence[int], most: int, cap: int | None = None) -> list[tuple[int, int]]:
    """The parts of ``sizes`` (oldest first) grouped into ranges ``[i, j)`` to merge, each
    into one part: whenever the newest TIER parts share a level they merge; then, past
    ``most`` parts, the adjacent pair holding fewest merges. No merge makes a part larger
    than ``cap`` (None: no limit), so past ``most`` parts each pair of neighbours holds
    more than ``cap``: at most max(most, 2 * sum(sizes) / cap + 1) parts remain."""
    groups = [(i, i + 1, size) for i, size in enumerate(sizes)]

    def merged(at: int, n: int) -> bool:
        total = sum(g[2] for g in groups[at : at + n])
        if cap is not None and total > cap:
            return False
        groups[at : at + n] = [(groups[at][0], groups[at + n - 1][1], total)]
        return True

    while len(groups) >= TIER and len({level(g[2]) for g in groups[-TIER:]}) == 1 and merged(len(groups) - TIER, TIER):
        pass
    while len(groups) > most:
        pairs = [i for i in range(len(groups) - 1) if cap is None or groups[i][2] + groups[i + 1][2] <= cap]
        if not pairs:
            break
        merged(min(pairs, key=lambda i: groups[i][2] + groups[i + 1][2]), 2)
    return [(i, j) for i, j, _ in groups]
