"""The marks of a table's rows that one search found (the general plan of SQL,
sql/search/lower_marks.py): ``<name>_hit(_rowid)``, whether the row is among them (NULL for a
row that does not exist: a NULL row id, the NULL side of an outer join), and
``<name>_score(_rowid)``, its score (NULL where it was not found). Looked up by binary
search in the found row ids, a batch at a time. And ``<name>_explain(_rowid)``: the
score_explain() of each row DataFusion reads it for."""

from __future__ import annotations

from collections.abc import Callable

import datafusion
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .error_bridge import ErrorBridge


class _Found:
    """A search's found rows, looked up by row id: in a table indexed by row id where the
    found ids are dense enough (a frequent term's: one gather a row), else by binary search
    in them, sorted."""

    DENSE = 8  # (a table indexed by row id, at most this many slots a found row)

    def __init__(self, found: pa.Table, dense: bool | None = None) -> None:
        ids = found.column(0).to_numpy()
        scores = found.column(1).to_numpy()
        top = int(ids.max()) + 1 if len(ids) else 0
        self.dense = top <= self.DENSE * len(ids) + 1024 if dense is None else dense
        if self.dense:
            self.present = np.zeros(top, np.bool_)
            self.present[ids] = True
            self.by_id = np.zeros(top)
            self.by_id[ids] = scores
        else:
            order = np.argsort(ids, kind="stable")
            self.ids, self.scores = ids[order], scores[order]

    def look_up(self, rowids: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per row id: whether it was found, its score there (0.0 where not), whether it is NULL."""
        missing = rowids.is_null().to_numpy(zero_copy_only=False)
        wanted = pc.fill_null(rowids, -1).to_numpy(zero_copy_only=False)
        if self.dense:
            inside = (wanted >= 0) & (wanted < len(self.present))
            at = np.where(inside, wanted, 0)
            found = self.present[at] & inside if len(self.present) else np.zeros(len(wanted), np.bool_)
            return found, np.where(found, self.by_id[at] if len(self.present) else 0.0, 0.0), missing
        if not len(self.ids):
            return np.zeros(len(wanted), np.bool_), np.zeros(len(wanted)), missing
        at = np.minimum(np.searchsorted(self.ids, wanted), len(self.ids) - 1)
        found = (self.ids[at] == wanted) & ~missing
        return found, np.where(found, self.scores[at], 0.0), missing

    def hit(self, rowids: pa.Array) -> pa.Array:
        found, _, missing = self.look_up(rowids)
        return pa.array(found, pa.bool_(), mask=missing)

    def score(self, rowids: pa.Array) -> pa.Array:
        found, scores, _ = self.look_up(rowids)
        return pa.array(scores, pa.float64(), mask=~found)


def row_marks(name: str, found: pa.Table, errors: ErrorBridge) -> list[datafusion.ScalarUDF]:
    """``<name>_hit`` and ``<name>_score`` over ``found`` (``_rowid``, ``_score``)."""
    rows = _Found(found)
    return [
        datafusion.udf(errors.raising(rows.hit), [pa.int64()], pa.bool_(), "stable", name=f"{name}_hit"),
        datafusion.udf(errors.raising(rows.score), [pa.int64()], pa.float64(), "stable", name=f"{name}_score"),
    ]


def row_explanations(name: str, explain: Callable[[np.ndarray], pa.Array], errors: ErrorBridge) -> datafusion.ScalarUDF:
    """``<name>_explain(_rowid)``: ``explain`` of each row id (a JSON text), NULL for a NULL one."""

    def explained(rowids: pa.Array) -> pa.Array:
        missing = rowids.is_null().to_numpy(zero_copy_only=False)
        out = pa.nulls(len(rowids), pa.string())
        if not missing.all():
            at = np.flatnonzero(~missing)
            found = explain(rowids.to_numpy(zero_copy_only=False)[at].astype(np.int64))
            out = pc.replace_with_mask(out, pa.array(~missing), found)
        return out

    return datafusion.udf(errors.raising(explained), [pa.int64()], pa.string(), "stable", name=f"{name}_explain")
