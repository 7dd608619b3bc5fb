"""``repair``: keep every intact record of a damaged write-ahead log.

Opening a database whose log has a damaged record (not a torn tail) is refused, and
nothing is changed (storage/files/wal.py). This command, with the writer lock, writes each
damaged log anew from its intact records, moves the damaged one aside, and deletes the
rows the damaged records held (their ids were handed out: rows of nulls stand in for
them until the delete)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from ..errors import StorageError
from ..storage.files.manifest import log_file_name
from ..storage.files.wal import Salvaged, WriteAheadLog
from ..storage.stores.store import DirectoryStore
from .common import open_database


def run_repair(db_path: Path) -> None:
    """``repair``: keep every intact record of the database's damaged logs, move the
    damaged logs aside, and delete the row ids lost with them."""
    salvaged = salvage_logs(db_path)
    console = Console()
    db = open_database(db_path)
    for name, found in salvaged.items():
        if found is None:
            console.print(f"{name}: the log is intact")
            continue
        for lo, hi in found.lost:
            db.table(name).delete(f"_rowid BETWEEN {lo} AND {hi}")
        lost = ", ".join(f"{lo}..{hi}" for lo, hi in found.lost) or "none"
        console.print(f"{name}: kept {found.kept_rows:,} logged rows; the damaged log is now "
                      f"{found.aside.relative_to(db_path)}; row ids lost with it (deleted): {lost}")


def salvage_logs(db_path: Path) -> dict[str, Salvaged | None]:
    """Per table, what :meth:`WriteAheadLog.salvage` did to its log (None: nothing to do),
    with the directory's writer lock."""
    store = DirectoryStore(db_path)
    with store.exclusive() as mine:
        if not mine:
            raise StorageError(f"database {db_path} is being written by another Database: close it first")
        manifest = store.load_manifest()
        return {
            name: WriteAheadLog(db_path / "wal" / log_file_name(name)).salvage(meta.next_rowid)
            for name, meta in manifest.tables.items()
        }
