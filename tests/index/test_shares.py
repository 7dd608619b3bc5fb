"""The split of ranked parts into worker shares (no Ray needed): every row of every column
is ranked exactly once, by the driver or by one share, and the split follows the rules
of index/shares.py."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import datafusion_fts as fts
from datafusion_fts.index.shares import partition, runs_rows, share_sets
from datafusion_fts.index.term_statistics import StatsRequest, collect, merge


def ranked_ids(segment_set) -> np.ndarray:
    parts = [np.arange(p.segment.meta.base + p.lo, p.segment.meta.base + p.hi) for p in segment_set.parts]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


@st.composite
def tables(draw):
    n = draw(st.integers(1, 60))
    db = fts.connect()
    words = ["a", "b", "c a", "b b c", ""]
    t = db.create_table("docs", pa.table({
        "x": [words[draw(st.integers(0, 4))] for _ in range(n)],
        "y": [words[draw(st.integers(0, 4))] for _ in range(n)],
    }))
    for column in ("x", "y"):
        cuts = sorted({c for c in draw(st.lists(st.integers(1, max(1, n - 1)), max_size=3)) if c < n})
        bounds = [0, *cuts, n]
        for lo, hi in zip(bounds, bounds[1:]):
            if lo < hi:  # (a cut at n, possible when n == 1, makes an empty range)
                t.build_segment(column, (max(0, lo - draw(st.integers(0, 2))), hi - 1))
    deleted = draw(st.lists(st.integers(0, n - 1), max_size=n // 3, unique=True))
    if deleted:
        t.delete(f"_rowid IN ({', '.join(map(str, deleted))})")
    tail = draw(st.integers(0, 5))
    if tail:
        t.insert(pa.table({"x": ["a b"] * tail, "y": ["c"] * tail}))
    return t, draw(st.integers(1, 5))


@given(tables())
def test_every_row_is_ranked_once_and_statistics_add_up(case):
    t, n_shares = case
    snap = t.snapshot()
    db = t.db
    sets = {c: db.hybrid_segment_set(snap, c)[0] for c in ("x", "y")}
    persisted = {c: frozenset(s.id for s in snap.meta.indexes[c].segments) for c in sets}
    split = partition(sets, persisted, n_shares, snap.deleted, "unused", "token")
    assert len(split.shares) <= n_shares
    loaded = [share_sets(s, db.segment) for s in split.shares]
    for c, whole in sets.items():
        pieces = [ranked_ids(split.local[c])] + [ranked_ids(s[c]) for s in loaded]
        together = np.concatenate(pieces)
        assert sorted(together.tolist()) == ranked_ids(whole).tolist()  # once each
        for s in loaded:  # shares hold persisted segments only
            assert all(p.segment.meta.id in persisted[c] for p in s[c].parts)
    # A share's rows are the same for every column: its runs.
    for share, s in zip(split.shares, loaded):
        rows = set(runs_rows(share.runs, share.deleted).tolist())
        for c in sets:
            live = set(ranked_ids(s[c]).tolist()) - set(snap.deleted.tolist())
            assert live <= rows
    request = StatsRequest({"x": ("a", "b", "zz"), "y": ("c",)}, ())
    replies = [collect(s, request) for s in loaded] + [collect(split.local, request)]
    found = merge(replies, request, {c: (s.k1, s.b) for c, s in sets.items()})
    for c, whole in sets.items():
        assert found.columns[c] == whole.column_stats
    for (c, term), df in found.df.items():
        assert df == sets[c].df(term)


def test_file_system_store_reads_what_a_directory_store_writes(tmp_path):
    import pyarrow.fs as pafs

    from datafusion_fts.storage.stores.shared import FileSystemStore, open_shared

    t = fts.connect(str(tmp_path)).create_table("docs", pa.table({"x": ["a b", "b", None, "c a"]}))
    t.create_index("x", positions=True)
    snap = t.snapshot()
    seg = snap.meta.indexes["x"].segments[0]
    remote = FileSystemStore(pafs.LocalFileSystem(), str(tmp_path))
    local = open_shared(str(tmp_path))
    arrays, _ = local.read_segment(seg.id, seg.checksums)
    assert seg.checksums is not None
    assert {k: v.to_pylist() for k, v in remote.read_segment(seg.id, seg.checksums)[0].items()} == {
        k: v.to_pylist() for k, v in arrays.items()
    }
    crc = remote.write_segment("seg-99999999", arrays)
    assert local.read_segment("seg-99999999", crc)[0].keys() == arrays.keys()
    frag = snap.meta.fragments[0].id
    assert [b.to_pylist() for b in remote.iter_fragment(frag, ["x"], 2)] == [
        b.to_pylist() for b in local.iter_fragment(frag, ["x"], 2)
    ]
    assert type(open_shared(tmp_path.as_uri())).__name__ == "DirectoryStore"


def test_file_system_store_checks_a_fragments_footer_and_pages(tmp_path):
    """A remote store's reads of a fragment (Ray build tasks) check its footer against
    the crc32 the table gives (``note_footers``) before pyarrow parses it, and every
    page's CRC as pyarrow reads it: damage is a StorageError, never other rows."""
    import pyarrow.fs as pafs

    from datafusion_fts.storage.stores.shared import FileSystemStore

    t = fts.connect(str(tmp_path)).create_table("docs", pa.table({"x": [f"w{i} common" for i in range(3000)]}))
    frag = t.snapshot().meta.fragments[0]
    path = tmp_path / "data" / f"{frag.id}.parquet"
    pristine = path.read_bytes()
    footer_at = len(pristine) - 8 - int.from_bytes(pristine[-8:-4], "little")
    for at, match in ((footer_at + 20, "its footer's crc32 is"), (footer_at // 2, "cannot read data file")):
        data = bytearray(pristine)
        data[at] ^= 0x10
        path.write_bytes(bytes(data))
        remote = FileSystemStore(pafs.LocalFileSystem(), str(tmp_path))
        remote.note_footers(t.snapshot().meta.footer_crcs())
        with pytest.raises(fts.StorageError, match=match):
            list(remote.iter_fragment(frag.id, ["x"], 500))
    path.write_bytes(pristine)
    assert sum(b.num_rows for b in remote.iter_fragment(frag.id, ["x"], 500)) == 3000
