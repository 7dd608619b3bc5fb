"""Appending rows to a managed table: write them as new data fragments after its last row
id (docs/design.md: "Storage"), streamed, so a load never holds a fragment whole."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterator

import numpy as np
import pyarrow as pa

from ...ingest import conform, prefetched
from ..files.manifest import PAGED_LAYOUT, ROWID, FragmentMeta, Manifest, TableMeta
from .store import Store

FRAGMENT_ROWS = 1 << 20


def append_fragments(
    store: Store, manifest: Manifest, meta: TableMeta, source_schema: pa.Schema, batches: Any
) -> tuple[Manifest, TableMeta]:
    """Write ``batches`` (of ``source_schema``, conformed to the table's) as fragments of at
    most ``FRAGMENT_ROWS`` rows numbered from ``meta.next_rowid``; return the manifest and
    table that name them, not committed. On failure the files written stay behind for the
    caller's garbage collection (their ids are in no committed manifest)."""
    stream = prefetched(conform(batches, source_schema, meta.schema))
    fragments = list(meta.fragments)
    next_rowid = meta.next_rowid
    file_schema = pa.schema([pa.field(ROWID, pa.int64(), False), *meta.schema])
    ahead: list[pa.RecordBatch] = []  # the rest of a batch cut at a fragment's end

    def next_batch() -> pa.RecordBatch | None:
        while True:
            batch = ahead.pop() if ahead else next(stream, None)
            if batch is None or batch.num_rows:
                return batch

    def fragment_rows(row_lo: int) -> Iterator[pa.RecordBatch]:
        """The next fragment's rows with their row ids, streamed into its writer."""
        rows = 0
        while rows < FRAGMENT_ROWS and (batch := next_batch()) is not None:
            take = min(batch.num_rows, FRAGMENT_ROWS - rows)
            if take < batch.num_rows:
                ahead.append(batch.slice(take))
            ids = pa.array(np.arange(row_lo + rows, row_lo + rows + take, dtype=np.int64))
            rows += take
            yield pa.RecordBatch.from_arrays([ids, *batch.slice(0, take).columns], schema=file_schema)

    while (first := next_batch()) is not None:
        ahead.append(first)
        frag_id, manifest = manifest.file_id("frag")
        rows, crcs = store.write_fragment(frag_id, file_schema, fragment_rows(next_rowid))
        fragments.append(
            FragmentMeta(frag_id, next_rowid, rows, layout=PAGED_LAYOUT, crc=crcs.whole, footer_crc=crcs.footer)
        )
        next_rowid += rows
    meta = replace(meta, fragments=tuple(fragments), next_rowid=next_rowid)
    return manifest.with_table(meta), meta
