"""Recovery from a crashed writer, and the garbage collection commits share
(docs/design.md: "Commits, garbage collection and recovery"). Apart from the writer
(:mod:`.writer`) because a database opened alone recovers before anything is read, and a
process that only searches should not import the write path for it: index builds,
ingest, appends."""

from __future__ import annotations

import time

from ..index.fresh.fresh_logs import FreshLogs
from ..settings import Settings
from ..storage.files.manifest import Manifest
from ..storage.stores.store import Store


def recover(store: Store, logs: FreshLogs, settings: Settings, manifest: Manifest) -> None:
    """With the writer lock held (or the directory to itself), undo what a crashed
    writer left half done: cut torn log tails (a damaged log is refused), empty logs
    whose rows a commit holds, delete files that never committed. A directory with files
    but no manifest is refused first (they are not leftovers)."""
    store.check_manifest()
    logs.cut_torn_tails(manifest.tables)
    collect_garbage(store, settings, manifest)


def collect_garbage(store: Store, settings: Settings, *manifests: Manifest) -> None:
    """Delete the files no one may read: those no manifest of ``manifests`` names, but
    the ones retired within the grace period (leftovers of writes that never committed
    among them). Only with the writer lock held."""
    grace, now = settings.get("fts.gc_grace_seconds"), time.time()
    store.collect_garbage(frozenset().union(*(m.kept_files(now, grace) for m in manifests)))
