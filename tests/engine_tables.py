"""Build engine tables from the reference's ``RefTable`` in several physical layouts."""

from __future__ import annotations

import pyarrow as pa

import datafusion_fts as fts
from reference import RefTable
from strategies import table_columns


def arrow_table(ref: RefTable) -> pa.Table:
    columns = table_columns(ref) or ["title"]
    n = max(ref.rows) + 1 if ref.rows else 0
    assert sorted(ref.rows) == list(range(n)), "row ids must be dense"
    return pa.table(
        {c: pa.array([ref.rows[r].get(c) for r in range(n)], pa.string()) for c in columns}
    )


def index_options(ref: RefTable, column: str) -> dict:
    k1, b = ref.params.get(column, (1.2, 0.75))
    return {
        "k1": k1,
        "b": b,
        "max_token_length": ref.max_token_length.get(column, 40),
        "positions": True,
    }


def delete_rows(t: fts.Table, rows: set[int]) -> None:
    if rows:
        t.delete(f"_rowid IN ({', '.join(str(r) for r in sorted(rows))})")


def engine_table(
    ref: RefTable, layout: str, splits: list[int] | None = None, db: fts.Database | None = None
) -> fts.Table:
    """``layout``: "flat" (no index), "indexed" (create_index per column, rows deleted
    afterwards: masked out of the segments), "hybrid" (an index over the rows before
    ``splits[0]``, then a committed tail no segment holds, then rows inserted into the
    fresh tier: those after every deleted row and the tail's first half), or "segments"
    (rows deleted first, then build_segment over consecutive ranges cut at ``splits``,
    overlapping by one row). The table goes in ``db`` (a new in-memory database by
    default)."""
    db = db if db is not None else fts.connect()
    data = arrow_table(ref)
    if layout == "hybrid":
        n = data.num_rows
        cut = (splits or [n // 2])[0] % (n + 1)
        fresh_from = max([(cut + n + 1) // 2, *[d + 1 for d in ref.deleted]])
        t = db.create_table("docs", data.slice(0, fresh_from))
        for column in data.column_names:
            # (a range past the last row holds nothing: then every row is the tail)
            t.build_segment(column, (0, cut - 1) if cut else (n + 1, n + 1), **index_options(ref, column))
        delete_rows(t, ref.deleted)
        t.insert(data.slice(fresh_from))
        return t
    t = db.create_table("docs", data)
    if layout != "indexed":
        delete_rows(t, ref.deleted)
    for column in data.column_names:
        if layout == "indexed":
            t.create_index(column, **index_options(ref, column))
        elif layout == "segments":
            cuts = sorted(set(splits or []))
            bounds = [0, *[c for c in cuts if 0 < c < data.num_rows], data.num_rows]
            for lo, hi in zip(bounds, bounds[1:]):
                t.build_segment(column, (max(0, lo - 1), hi - 1 if hi < data.num_rows else (1 << 63) - 1),
                                **index_options(ref, column))
            if data.num_rows == 0:
                t.build_segment(column, (0, 10), **index_options(ref, column))
    if layout == "indexed":
        delete_rows(t, ref.deleted)
    return t
