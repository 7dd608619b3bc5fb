"""The DataFusion views of a database's tables: what a managed table's name resolves to in
the session (docs/design.md: "Managed tables in DataFusion", "Tables indexed in place").

A view is built beforehand, at a write or a listing that changed the table, and swapped
in with one assignment in the session's schema provider (:class:`.catalog.SessionSchema`),
so a statement planned at any moment finds the previous or the new version, never none.
Its parts live in private sessions: a managed table's fragments (each read by DataFusion's
own Parquet reader), fresh rows and deleted ids; a table indexed in place's files.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

import datafusion
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import StaleSnapshotError, StorageError
from ..storage.files.manifest import IDENTIFIER, ROWID, STORED_AS_BYTES, FragmentMeta, TableMeta
from ..storage.snapshot import TableSnapshot
from ..storage.sources.source_files import files_schema, partition_values, source_paths
from ..storage.stores.store import Store
from .catalog import RESERVED_PREFIX, SessionSchema, quote, rows_name, string_literal
from .declared_types import as_declared, empty_batch, same_type
from .defined_tables import defined, definition_session


class TableViews:
    """Builds and swaps in the views of one database's tables."""

    def __init__(self, schema: SessionSchema, store: Store, config: Callable[[], datafusion.SessionConfig],
                 held_bytes: Callable[[], int]) -> None:
        self._schema = schema
        self.pins = schema.pins  # (what each thread's statement pinned: SessionSchema.pins)
        self._store = store
        self._config = config  # (the user's session's settings now: its SQL dialect among them)
        self._held_bytes = held_bytes  # (the setting fts.memory_table_bytes now)
        self._parts = datafusion.SessionContext()
        # Tables indexed in place: their files' views number rows in file order, which
        # takes one partition per file (see _register_source).
        self._source_parts = datafusion.SessionContext(datafusion.SessionConfig().with_target_partitions(1))
        # Per table: the TableMeta whose parts are registered, their names, and whether it
        # has deleted ids.
        self._registered: dict[str, tuple[TableMeta, list[str], bool]] = {}
        # Per table held in memory (all of an in-memory store's, a small one of a directory's):
        # the TableMeta whose fragments' live rows these are, those rows by fragment id, and
        # its deleted ids (None: none).
        self._stored: dict[str, tuple[TableMeta, dict[str, _HeldFragment], pa.Array | None]] = {}
        # Per table of files: the version whose rows, read, took more than may be held.
        self._too_big: dict[str, TableMeta] = {}
        # Per table: its fresh batches as last shown, with their conversions (_conformed).
        self._fresh_memo: dict[str, tuple[pa.Schema, list[tuple[pa.RecordBatch, pa.RecordBatch]]]] = {}
        self._lock = threading.RLock()  # (registrations swap parts of the sessions)

    def registered(self, name: str) -> TableMeta | None:
        """The table version ``name``'s view shows (None: none)."""
        known = self._registered.get(name)
        return known[0] if known is not None else None

    def register(self, meta: TableMeta, fresh: list[pa.RecordBatch]) -> Mapping[str, Any]:
        """Show ``meta`` to DataFusion as a table of its live rows, ``_rowid`` included:
        built here, then swapped in as what the name resolves to (no moment without it);
        what its names resolve to now (for a statement to pin: ``pins``).

        With ``fresh`` rows or deletions the table is a view: the fragments UNION ALL the
        fresh rows, anti-joined with the deleted row ids (pyarrow datasets with a filter
        cannot be scanned by DataFusion). An insert changes only the fresh rows: the
        fragments and the deleted ids stay registered while ``meta`` is the same object.
        A statement naming the table has its fragments' files checked first, once each
        (storage/stores/store.py: ``check_fragments``): DataFusion's Parquet reader checks no
        page CRC, so a damaged page could otherwise change a scan's result.
        """
        with self._lock:
            if meta.source is not None:
                self._register_source(meta)
            else:
                self._register_managed(meta, fresh)
            return self._schema.entries(meta.name)

    def _register_managed(self, meta: TableMeta, fresh: list[pa.RecordBatch]) -> None:
        file_schema = pa.schema([pa.field(ROWID, pa.int64(), False), *meta.sql_schema])
        # (the store's method, not a closure over self: that would be a reference cycle
        # through the session's schema, keeping the store and its write lock past a `del db`)
        check = functools.partial(self._store.check_fragments, meta.fragments)
        fresh = self._conformed(meta, fresh, file_schema)
        if self._store.fragment_paths([]) is None:  # (an in-memory store: every table is held)
            self._register_in_memory(meta, fresh, file_schema, check, None)
            return
        limit = self._held_limit(meta, fresh)
        if limit is not None:
            try:
                if self._register_in_memory(meta, fresh, file_schema, check, limit):
                    return
            except StaleSnapshotError:
                raise  # (a file of this version is gone: the caller loads the next)
            except StorageError:
                pass  # (a damaged file: shown as a view, whose check names it to each statement)
        if self._stored.pop(meta.name, None) is not None:
            self._registered.pop(meta.name, None)  # (it was held in memory: no parts yet)
        data_name, deleted_name, fresh_name = _part_names(meta.name)
        known = self._registered.get(meta.name)
        same = known is not None and known[0] is meta
        self._drop_parts(meta.name, (fresh_name,) if same else None)
        if same:
            _, data_parts, has_deleted = known
        else:
            data_parts = self._register_data(meta, data_name, file_schema)
            deleted = TableSnapshot(meta, self._store).deleted
            has_deleted = bool(len(deleted))
            if has_deleted:
                self._parts.register_record_batches(deleted_name, [[pa.record_batch({ROWID: pa.array(deleted)})]])
            self._registered[meta.name] = (meta, data_parts, has_deleted)
        parts = [f"SELECT * FROM {quote(name)}" for name in data_parts]
        if fresh:
            self._parts.register_record_batches(fresh_name, [fresh])
            parts.append(f"SELECT * FROM {quote(fresh_name)}")
        if not parts:  # (no rows at all)
            empty = empty_batch(file_schema)
            self._parts.register_record_batches(fresh_name, [[empty]])
            parts.append(f"SELECT * FROM {quote(fresh_name)}")
        source = " UNION ALL ".join(parts)
        if has_deleted:
            source = (
                f'SELECT d.* FROM ({source}) AS d LEFT ANTI JOIN {quote(deleted_name)} AS x ON d."{ROWID}" = x."{ROWID}"'
            )
        self._show(meta, source, self._parts, check)

    def _conformed(self, meta: TableMeta, fresh: list[pa.RecordBatch], file_schema: pa.Schema
                   ) -> list[pa.RecordBatch]:
        """The fresh rows as ``file_schema`` (:func:`as_schema`), the batches converted at
        the table's last registration reused: fresh rows only grow until a commit, and each
        insert shows all of them again (converting them all took half an insert's time)."""
        schema_then, pairs = self._fresh_memo.get(meta.name, (None, ()))
        known = {id(src): out for src, out in pairs} if schema_then is meta.sql_schema else {}
        out = [found if (found := known.get(id(b))) is not None else as_schema(b, file_schema) for b in fresh]
        # (the source batches are kept with their conversions: their ids stay theirs)
        self._fresh_memo[meta.name] = (meta.sql_schema, list(zip(fresh, out)))
        return out

    def _held_limit(self, meta: TableMeta, fresh: list[pa.RecordBatch]) -> int | None:
        """The bytes a table of files may take held in memory (``fts.memory_table_bytes``),
        or None where it surely takes more: more rows than that many ``_rowid`` bytes, more
        bytes in its fragments' pages than that (their footers say: pages take less than
        the rows they decode to), or more rows decoded when this version was last read; and
        where the store cannot tell without a request per fragment (an object store's). A
        table with a column stored as its values' bytes (``manifest.STORED_AS_BYTES``:
        intervals) is always held (no limit): DataFusion's Parquet reader cannot read its
        files as the table."""
        if any(f.type in STORED_AS_BYTES for f in meta.sql_schema):
            return sys.maxsize
        limit = self._held_bytes()
        if self._too_big.get(meta.name) is meta or (
                sum(f.rows for f in meta.fragments) + sum(b.num_rows for b in fresh)) * 8 > limit:
            return None
        held = sum(b.nbytes for b in fresh)
        try:
            stored = self._store.fragment_bytes([f.id for f in meta.fragments]) if held <= limit else None
            if stored is None or held + stored > limit:
                return None
        except StaleSnapshotError:
            raise
        except StorageError:
            return None
        return limit

    def _register_in_memory(self, meta: TableMeta, fresh: list[pa.RecordBatch], file_schema: pa.Schema,
                            check: Callable[[], None], limit: int | None) -> bool:
        """A table held in memory (an in-memory store's, or a small one of files, which
        stay what is durable) as two of DataFusion's own in-memory tables over the same
        Arrow buffers: the live rows with ``_rowid`` and without it. DataFusion then plans,
        describes and lists the table as the in-memory table ``CREATE TABLE`` makes (a
        base table scanned by name, holding the constraints its definition declared),
        not as a view of parts. A committed version reads only the fragments the version
        held before lacks (:meth:`_held_fragment`): a write changes a few, and reading
        them all made each write of a table of 20,000 rows take 50 ms. False, with nothing
        registered, where the rows take more than ``limit`` bytes (None: no limit)."""
        known = self._stored.get(meta.name)
        if known is not None and known[0] is meta:
            _, held, deleted = known
        else:
            before = known[1] if known is not None else {}
            held = {frag.id: self._held_fragment(frag, before.get(frag.id), file_schema) for frag in meta.fragments}
            ids = TableSnapshot(meta, self._store).deleted_from(meta.next_rowid)  # (what fresh ids may be)
            deleted = pa.array(ids, pa.int64()) if len(ids) else None
            if limit is not None and sum(b.nbytes for h in held.values() for b in h.batches) > limit:
                self._too_big[meta.name] = meta  # (not read again for this version)
                return False
            if meta.name not in self._stored:
                self._drop_parts(meta.name)  # (it was a view of parts)
            self._stored[meta.name] = (meta, held, deleted)
            self._registered[meta.name] = (meta, [], False)  # (no parts in the shared sessions)
        stored = [b for frag in meta.fragments for b in held[frag.id].batches]
        rows = stored + (fresh if deleted is None else _without(fresh, deleted))
        if limit is not None and sum(b.nbytes for b in rows) > limit:
            self._too_big[meta.name] = meta  # (its fresh rows only grow until the next version)
            return False
        columns = pa.schema(list(meta.sql_schema))
        plain = [pa.RecordBatch.from_arrays(b.columns[1:], schema=columns) for b in rows]
        rows_part, plain_part = "rows", "plain"
        # Made in a session of the user's settings (a definition reads in its SQL dialect),
        # filled without splitting or merging batches; the tables outlive it.
        session = definition_session(self._config().set("datafusion.execution.coalesce_batches", "false"))
        # (one partition, as CREATE TABLE's; none of its batches when it has no rows)
        session.create_dataframe([rows], rows_part, file_schema)
        if not defined(session, plain_part, meta.definition, plain, columns):
            session.create_dataframe([plain], plain_part, columns)
        public = session.catalog().schema()
        self._schema.set_managed(rows_name(meta.name), public.table(rows_part), check)
        self._schema.set_managed(meta.name, public.table(plain_part), check)
        return True

    def _held_fragment(self, frag: FragmentMeta, before: _HeldFragment | None, file_schema: pa.Schema
                       ) -> _HeldFragment:
        """The live rows of ``frag`` as ``file_schema``: ``before`` (its rows as an earlier
        version held them) where its deletion vector is the same, or they less the rows of
        its new vector where that leaves exactly the ``rows - deleted`` the fragment has
        live (true just when every row removed before is still deleted: a fragment is
        never rewritten), else its file read again."""
        if before is not None and before.deletes == frag.deletes:
            return before
        deleted = pa.array(self._store.read_deletes(frag.deletes, frag.deletes_crc)) if frag.deletes else None
        if before is not None and deleted is not None:
            batches = _without(before.batches, deleted)
            if sum(b.num_rows for b in batches) == frag.rows - frag.deleted:
                return _HeldFragment(frag.deletes, batches)
        batches = [as_schema(b, file_schema) for b in self._store.iter_fragment(frag.id, file_schema.names, 1 << 30)]
        return _HeldFragment(frag.deletes, batches if deleted is None else _without(batches, deleted))

    def _show(self, meta: TableMeta, source: str, session: datafusion.SessionContext,
              check: Callable[[], None] | None = None) -> None:
        """Make ``meta.name`` resolve to the rows of ``source`` (``_rowid`` first, then the
        table's columns as SQL declared them) without ``_rowid``, and its rows name
        (:func:`rows_name`) to them with it: the row id is selectable by name only."""
        columns = ", ".join(quote(f.name) for f in meta.sql_schema)
        self._schema.set_managed(rows_name(meta.name), session.sql(source).into_view(), check)
        self._schema.set_managed(meta.name, session.sql(f"SELECT {columns} FROM ({source})").into_view(), check)

    def _register_source(self, meta: TableMeta) -> None:
        """A table indexed in place as its files, each numbered from its first row id in
        file order (a scan of one partition per file), UNION ALL: the rows as the last
        listing found them, ``_rowid`` first."""
        data_name = _part_names(meta.name)[0]
        known = self._registered.get(meta.name)
        for name in known[1] if known else ():
            if self._source_parts.table_exist(name):
                self._source_parts.deregister_table(name)
        paths = source_paths(meta)
        names = [f"{data_name}_{i}" for i in range(len(paths))]
        for name, path in zip(names, paths):
            if meta.csv is None:
                self._source_parts.register_parquet(name, path, schema=files_schema(meta))
            else:  # (read as storage/sources/csv_files.py reads them)
                options = datafusion.CsvReadOptions(
                    has_header=meta.csv.header, delimiter=meta.csv.delimiter, newlines_in_values=True,
                    schema=files_schema(meta), file_extension=os.path.splitext(path)[1],
                )
                self._source_parts.register_csv(name, path, options=options)
        self._registered[meta.name] = (meta, names, False)
        if not names:
            file_schema = pa.schema([pa.field(ROWID, pa.int64(), False), *meta.schema])
            names = [f"{data_name}_empty"]
            self._source_parts.register_record_batches(names[0], [[empty_batch(file_schema)]])
            self._registered[meta.name] = (meta, names, False)
            self._show(meta, f"SELECT * FROM {quote(names[0])}", self._source_parts)
            return
        source = " UNION ALL ".join(
            f'SELECT CAST(row_number() OVER () AS BIGINT) + {frag.row_lo - 1} AS "{ROWID}", '
            f'{_columns(meta, frag.file or "")} FROM {quote(name)}'
            for frag, name in zip(meta.fragments, names)
        )
        self._show(meta, source, self._source_parts)

    def _register_data(self, meta: TableMeta, data_name: str, file_schema: pa.Schema) -> list[str]:
        """Register the table's fragments as parts, with the types SQL declared; their
        names. Files are read by DataFusion's own Parquet reader, one part each; an
        in-memory store's fragments become DataFusion's own in-memory tables."""
        paths = self._store.fragment_paths([f.id for f in meta.fragments])
        names = [f"{data_name}_{i}" for i in range(len(meta.fragments))]
        if paths is None:
            for name, frag in zip(names, meta.fragments):
                batches = [as_schema(b, file_schema) for b in self._store.iter_fragment(frag.id, file_schema.names, 1 << 30)]
                self._parts.register_record_batches(name, [batches or [empty_batch(file_schema)]])
            return names
        for name, path in zip(names, paths):
            self._parts.register_parquet(name, path, schema=file_schema)
        return names

    def forget_sizes(self) -> None:
        """Forget which versions were found too large to hold (the limit changed)."""
        with self._lock:
            self._too_big.clear()

    def _drop_parts(self, name: str, parts: tuple[str, ...] | None = None) -> None:
        """Deregister ``parts`` of table ``name`` from the parts' sessions (None: all its
        parts: those registered, and its deleted ids' and fresh rows')."""
        if parts is None:
            known = self._registered.get(name)
            parts = (*(known[1] if known else ()), *_part_names(name))
        for table in parts:
            for session in (self._parts, self._source_parts):
                if session.table_exist(table):
                    session.deregister_table(table)

    def deregister(self, name: str) -> None:
        with self._lock:
            self._drop_parts(name)
            self._registered.pop(name, None)
            self._stored.pop(name, None)
            self._too_big.pop(name, None)
            self._fresh_memo.pop(name, None)
            self._schema.drop_managed(name)
            self._schema.drop_managed(rows_name(name))


def as_schema(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with the types and nullability of ``schema`` (its columns, in order)."""
    if batch.schema.equals(schema) and all(same_type(a.type, b.type) for a, b in zip(batch.schema, schema)):
        return batch
    return pa.RecordBatch.from_arrays([as_declared(c, f.type) for c, f in zip(batch.columns, schema)], schema=schema)


@dataclass(frozen=True)
class _HeldFragment:
    """A fragment's live rows held in memory: its rows less those of its deletion vector
    ``deletes`` (None: it had none)."""

    deletes: str | None
    batches: list[pa.RecordBatch]


def _without(batches: list[pa.RecordBatch], deleted: pa.Array) -> list[pa.RecordBatch]:
    """``batches`` without the rows whose ``_rowid`` (the first column) is in ``deleted``;
    a batch that loses none is kept as it is (not copied)."""
    kept = [pc.invert(pc.is_in(b.column(0), value_set=deleted)) for b in batches]
    return [b if pc.all(k).as_py() is not False else _filter(b, k) for b, k in zip(batches, kept)]


# pyarrow's filter has no kernel for the view types: their columns are filtered as the
# large types they view, and cast back.
_VIEWED = {pa.string_view(): pa.large_string(), pa.binary_view(): pa.large_binary()}


def _filter(batch: pa.RecordBatch, mask: pa.Array) -> pa.RecordBatch:
    columns = [c.cast(_VIEWED[c.type]).filter(mask).cast(c.type) if c.type in _VIEWED else c.filter(mask)
               for c in batch.columns]
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def _part_names(table: str) -> tuple[str, str, str]:
    """The names of a managed table's data, deleted ids and fresh rows in the parts' sessions
    (the table's own name when it is a lowercase identifier, else its hash: DataFusion's
    Python API reads a name with a dot as schema.table, and folds one in upper case)."""
    key = table if IDENTIFIER.match(table) and table == table.lower() else hashlib.sha256(table.encode("utf-8")).hexdigest()[:32]
    return tuple(f"{RESERVED_PREFIX}{key}_{part}" for part in ("data", "deleted", "fresh"))


# The Arrow type names DataFusion's arrow_cast takes, for the partition columns' values.
_CAST_NAMES = {pa.string(): "Utf8", pa.large_string(): "LargeUtf8", pa.int8(): "Int8", pa.int16(): "Int16",
               pa.int32(): "Int32", pa.int64(): "Int64", pa.uint8(): "UInt8", pa.uint16(): "UInt16",
               pa.uint32(): "UInt32", pa.uint64(): "UInt64", pa.date32(): "Date32"}


def _columns(meta: TableMeta, file: str) -> str:
    """The select list of one file of a table indexed in place: its columns, its partition
    columns as literals of its path's values."""
    values = partition_values(meta, file)
    out = []
    for field in meta.schema:
        if field.name not in values:
            out.append(quote(field.name))
            continue
        value = values[field.name].cast(pa.string()).as_py()
        literal = "NULL" if value is None else string_literal(value)
        out.append(f"arrow_cast({literal}, '{_CAST_NAMES[field.type]}') AS {quote(field.name)}")
    return ", ".join(out)
