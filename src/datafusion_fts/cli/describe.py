"""Tables, tiers, indexes and segments as rich renderables: ``stats`` and the shell's ``\\d``.

A table's rows live in three tiers (docs/design.md: "Three tiers") and each index covers its own
part of them, so the views count, per index, the live committed rows some segment holds (*indexed*),
the live committed rows none does (the *unindexed tail*, searched by ``HybridResidualSearch`` or a
flat scan), and the *fresh* rows still in the memtable. Those counts tell a user whether
``OPTIMIZE`` is due.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich import box
from rich.console import RenderableType
from rich.filesize import decimal
from rich.table import Table as RichTable
from rich.text import Text

from ..database import Database
from ..errors import CatalogError
from ..session.catalog import RESERVED_PREFIX
from ..storage.files.manifest import FULLTEXT, IndexMeta, TableMeta
from ..storage.snapshot import TableSnapshot
from ..storage.stores.store import DirectoryStore
from .common import plural


@dataclass(frozen=True)
class IndexTiers:
    """How much of a table one index covers, and its size."""

    index: IndexMeta
    indexed: int  # live committed rows held by some segment
    tail: int  # live committed rows held by none
    bytes: int  # segment files on disk


@dataclass(frozen=True)
class TableTiers:
    """A table's rows per tier and its files' size."""

    meta: TableMeta
    committed: int  # live committed rows
    deleted: int
    fresh: int
    data_bytes: int  # fragments and deletion vectors on disk
    indexes: tuple[IndexTiers, ...]

    @property
    def rows(self) -> int:
        return self.committed + self.fresh


def _file_bytes(db: Database, file_id: str) -> int:
    return db.store.file_bytes(file_id) if isinstance(db.store, DirectoryStore) else 0


def _indexed_rows(snap: TableSnapshot, index: IndexMeta) -> int:
    """Live committed rows inside the union of the index's segment row ranges (segments
    may overlap, and a row deleted after the build no longer counts)."""
    spans = sorted((s.base, s.base + s.count - 1) for s in index.segments if s.count)
    merged: list[list[int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    if not merged:
        return 0
    bounds = np.array(merged, dtype=np.int64)
    deleted = snap.deleted
    gone = np.searchsorted(deleted, bounds[:, 1], side="right") - np.searchsorted(deleted, bounds[:, 0])
    return int((bounds[:, 1] - bounds[:, 0] + 1).sum() - gone.sum())


def index_label(index: IndexMeta) -> str:
    """How listings name an index: its column, and "(ngram)" after an n-gram index's."""
    return index.column if index.kind == FULLTEXT else f"{index.column} (ngram)"


def table_tiers(db: Database, name: str) -> TableTiers:
    """Rows per tier and sizes on disk of table ``name``, from one snapshot."""
    snap = db.snapshot(name)
    meta = snap.meta
    committed = meta.live_rows
    indexes = tuple(
        IndexTiers(
            index,
            indexed := _indexed_rows(snap, index),
            committed - indexed,
            sum(_file_bytes(db, s.id) for s in index.segments),
        )
        for index in sorted(meta.indexes.values(), key=lambda ix: (ix.column, ix.kind))
    )
    # (a table indexed in place holds its stored columns' copies, not its files)
    data_bytes = sum(_file_bytes(db, f.id if f.file is None else f.copy) for f in meta.fragments
                     if f.file is None or f.copy)
    data_bytes += sum(_file_bytes(db, f.deletes) for f in meta.fragments if f.deletes)
    return TableTiers(
        meta,
        committed,
        meta.committed_rows - committed,
        sum(b.num_rows for b in snap.fresh),
        data_bytes,
        indexes,
    )


def _other_tables(db: Database) -> list[str]:
    """DataFusion tables and views of the session that the database does not manage (made
    in the shell with CREATE VIEW, say); the views behind managed tables are hidden."""
    managed = set(db.table_names())
    names = db.ctx.catalog().schema().names()
    return sorted(n for n in names if n not in managed and not n.startswith(RESERVED_PREFIX))


def tables_overview(db: Database) -> RichTable:
    """One line per table: rows per tier, files, size, indexed columns."""
    table = RichTable(title="tables", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("table", no_wrap=True)
    for name in ("rows", "fresh", "deleted", "fragments", "size"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("indexes")
    for name in db.table_names():
        tiers = table_tiers(db, name)
        meta = tiers.meta
        table.add_row(
            name,
            f"{tiers.rows:,}",
            f"{tiers.fresh:,}",
            f"{tiers.deleted:,}",
            str(len(meta.fragments)),
            decimal(tiers.data_bytes),
            ", ".join(index_label(ix.index) for ix in tiers.indexes) or "-",
        )
    for name in _other_tables(db):
        table.add_row(Text(name, style="dim"), "-", "-", "-", "-", "-",
                      Text("(DataFusion)", style="dim"))
    return table


def _analyzer_text(index: IndexMeta) -> str:
    analyzer = index.analyzer
    details = [analyzer.name]
    if analyzer.stemmer:
        details.append(f"stemmer={analyzer.stemmer}")
    if analyzer.stop_words:
        details.append(f"{len(analyzer.stop_words)} stop words")
    if analyzer.ascii_folding:
        details.append("ascii folding")
    return ", ".join(details)


def index_title(table: str, index: IndexMeta) -> str:
    """``table.column · analyzer ... · positions ... · k1 b``: how the index analyzes and scores
    (an n-gram index: ``table.column · n-gram index (trigrams of case-folded characters)``)."""
    if index.kind != FULLTEXT:
        return f"{table}.{index.column}  ·  n-gram index (trigrams of case-folded characters)"
    return (
        f"{table}.{index.column}  ·  analyzer {_analyzer_text(index)}  ·  "
        f"positions {'yes' if index.positions else 'no'}  ·  k1={index.k1:g} b={index.b:g}"
    )


def tiers_line(tiers: TableTiers, index: IndexTiers, lead: str = "  ") -> Text:
    """Rows per tier for one index, with a hint when OPTIMIZE would fold rows in."""
    text = Text(lead)
    for label, value in (("indexed", index.indexed), ("unindexed tail", index.tail),
                         ("fresh", tiers.fresh)):
        text.append(f"{value:,}", style="bold")
        text.append(f" {label} · ")
    text.append(f"{plural(len(index.index.segments), 'segment')} · {decimal(index.bytes)}")
    if index.tail or tiers.fresh:
        text.append(" · OPTIMIZE indexes the rest", style="dim")
    return text


def segments_table(db: Database, table: str, index: IndexMeta) -> RichTable:
    """One index's settings in its title, then its segments (row-id range, rows, terms,
    postings, size)."""
    out = RichTable(title=index_title(table, index), title_justify="left", box=box.SIMPLE_HEAD)
    for name in ("segment", "row ids", "rows", "docs", "terms", "postings", "size"):
        out.add_column(name, justify="left" if name in ("segment", "row ids") else "right",
                       no_wrap=True)
    for seg in index.segments:
        out.add_row(
            seg.id,
            f"{seg.lo}..{seg.hi}",
            f"{seg.count:,}",
            f"{seg.n_docs:,}",
            f"{seg.n_terms:,}",
            f"{seg.n_postings:,}",
            decimal(_file_bytes(db, seg.id)),
        )
    return out


def stats_view(db: Database) -> list[RenderableType]:
    """``datafusion-fts stats``: the overview, then each index's tiers and segments."""
    out: list[RenderableType] = [
        Text.assemble((str(db.path), "bold"), f"  ·  manifest version {db.manifest.version}"),
        tables_overview(db),
    ]
    for name in db.table_names():
        tiers = table_tiers(db, name)
        for index in tiers.indexes:
            out.append(segments_table(db, name, index.index))
            out.append(tiers_line(tiers, index))
            out.append(Text())
    return out


def describe_view(db: Database, name: str) -> list[RenderableType]:
    """The shell's ``\\d NAME``: columns (with their index), then rows per tier."""
    if name not in db.table_names():
        if name not in _other_tables(db):
            raise CatalogError(f"no table named {name!r}; tables: {db.table_names()}")
        columns = RichTable(box=box.SIMPLE_HEAD)
        columns.add_column("column")
        columns.add_column("type")
        for field in db.ctx.table(name).schema():
            columns.add_row(field.name, str(field.type))
        # A heading, not the table's title: a title wraps at the table's width.
        return [Text.assemble((name, "bold"), (" (DataFusion)", "dim")), columns]
    tiers = table_tiers(db, name)
    meta = tiers.meta
    columns = RichTable(box=box.SIMPLE_HEAD)
    for label in ("column", "type", "nullable", "full-text index", "n-gram index"):
        columns.add_column(label)
    columns.add_row(Text("_rowid", style="dim"), Text("int64", style="dim"),
                    Text("no", style="dim"), Text("(hidden row id)", style="dim"), Text("-", style="dim"))
    for field in meta.schema:
        index = meta.indexes.get(field.name)
        described = "-"
        if index is not None:
            described = (f"{_analyzer_text(index)}{', positions' if index.positions else ''}, "
                         f"k1={index.k1:g} b={index.b:g}")
        ngram = "trigrams" if meta.ngram(field.name) is not None else "-"
        columns.add_row(field.name, str(field.type), "yes" if field.nullable else "no", described, ngram)
    out: list[RenderableType] = [Text(name, style="bold"), columns]
    summary = Text("  ")
    for label, value in (("rows", tiers.rows), ("committed", tiers.committed),
                         ("fresh", tiers.fresh), ("deleted", tiers.deleted)):
        summary.append(f"{value:,}", style="bold")
        summary.append(f" {label} · ")
    summary.append(f"{plural(len(meta.fragments), 'fragment')} · {decimal(tiers.data_bytes)}")
    if meta.source is not None:
        stored = f", a copy of {', '.join(meta.stored)}" if meta.stored else ""
        kind = "Parquet" if meta.csv is None else f"CSV ({meta.csv.delimiter!r}, {'a' if meta.csv.header else 'no'} header)"
        summary.append(f" · indexed in place: the {kind} files under {meta.source}{stored}")
    out.append(summary)
    for index in tiers.indexes:
        out.append(Text(f"  {index_label(index.index)} index:", style="bold"))
        out.append(tiers_line(tiers, index))
    return out
