"""Search and index builds on a Ray cluster (docs/design.md: "6. Distributed execution"; the ``ray``
extra).

Long-lived actors each memory-map a share of a table's segments from storage every node
can read and answer the two phases of a distributed search; index builds run as Ray
tasks over row ranges. Ray itself is imported only here, lazily (:mod:`._compat`).
"""

from .executor import RayExecutor, executor_for

__all__ = ["RayExecutor", "executor_for"]
