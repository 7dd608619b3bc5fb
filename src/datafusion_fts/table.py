"""``db.table(name)``: one managed table's writes and index builds, checked here and done by
the database's writer (catalog/writer.py), and its searches (docs/design.md: "The Python
API")."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Protocol, TypeVar

import datafusion
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .analysis import ANALYZER_OPTIONS, make_analyzer_config
from .analysis.analyzer import NGRAM_ANALYZER, language_name, stemmer_languages
from .defaults import K1, B
from .errors import CatalogError, EngineError, InvalidArgument
from .index.build_progress import Progress
from .operators.base import SEARCH_SCHEMA
from .operators.grouped_counts import GroupedCounts, groupable
from .planner.count_matches import count_matches, counted_by, counted_from_statistics, matching_rows
from .planner.plan_search import Catalog, plan_search
from .planner.plan_substring import SubstringPlan, plan_substring
from .planner.run_search import run_search
from .planner.search_request import SearchRequest
from .query.substring import Need
from .query.tree import QUERY_TYPES, Query
from .settings import INT64_MAX, Settings
from .storage.files.manifest import (
    FULLTEXT,
    NGRAM,
    ROWID,
    IndexMeta,
    Manifest,
    SegmentMeta,
    ngram_key,
)
from .storage.snapshot import TableSnapshot

if TYPE_CHECKING:
    from .catalog.writer import Writer

ROW_ID_MAX = INT64_MAX
# What create_index and CREATE FULLTEXT INDEX ... WITH (...) accept.
INDEX_OPTIONS = ("kind", "positions", "k1", "b", *ANALYZER_OPTIONS)
INDEX_KINDS = (FULLTEXT, NGRAM)
T = TypeVar("T")


def _named_languages(snap: TableSnapshot, column: str) -> tuple[str, ...]:
    """The Snowball languages the rows of ``snap`` name in ``column``, in PyStemmer's order."""
    values: set[str] = set()
    for batch in snap.scan([column]):
        values.update(v for v in pc.unique(batch.column(1)).to_pylist() if v is not None)
    named = {language_name(v) for v in values} - {None}
    return tuple(name for name in stemmer_languages() if name in named)


class TableHost(Catalog, Protocol):
    """What a table needs of its database (:class:`..database.Database`): its state, the
    writer every write goes through, and the planner's catalog."""

    ctx: datafusion.SessionContext
    settings: Settings
    progress: Progress | None  # the build progress callback of builds given none
    writer: Writer  # every write goes through it (catalog/writer.py)

    def sql(self, text: str) -> datafusion.DataFrame: ...

    def snapshot(self, name: str) -> TableSnapshot: ...

    def retrying(self, read: Callable[[], T]) -> T: ...

    def distributed_executor(self) -> Any: ...


class Table:
    """A handle on a managed table; every call reads the database's current state."""

    def __init__(self, db: TableHost, name: str) -> None:
        self.db = db
        self.name = name

    def __repr__(self) -> str:
        return f"Table({self.name!r}, rows={self.count_rows()})"

    def snapshot(self) -> TableSnapshot:
        return self.db.snapshot(self.name)

    @property
    def schema(self) -> pa.Schema:
        return self.snapshot().schema

    def count_rows(self) -> int:
        """Live rows, fresh ones included."""
        snap = self.snapshot()
        return snap.meta.live_rows + sum(b.num_rows for b in snap.fresh)

    def to_arrow(self) -> pa.Table:
        """Every row, ``_rowid`` first."""
        snap = self.snapshot()
        batches = list(snap.scan(snap.schema.names))
        schema = pa.schema([pa.field(ROWID, pa.int64(), False), *snap.schema])
        return pa.Table.from_batches(batches, schema=schema)

    # -- writes -------------------------------------------------------------------------
    def insert(self, data: Any) -> int:
        """Append rows (new row ids after every existing one) to the fresh tier: durable in
        the write-ahead log when this returns, searchable at once; returns the count."""
        return self.db.writer.append_fresh(self.name, data)

    def flush(self) -> None:
        """Commit the fresh rows to a data fragment (their row ids do not change)."""
        self.db.writer.flush(self.name)

    def bulk_insert(self, data: Any) -> int:
        """Append ``data`` (any source :meth:`Database.create_table` takes, a
        RecordBatchReader streamed in bounded memory) as committed fragments in one atomic
        commit; returns the row count.

        Why beside :meth:`insert`: the fresh tier holds a write in memory and logs it
        before it is visible, which suits small writes; a bulk load would hold the whole
        source in memory and write it twice. All or nothing: a source that fails half way
        (a bad CSV row) leaves the table as it was. Fresh rows are flushed first, so row
        ids stay in insertion order.
        """
        return self.db.writer.bulk_insert(self.name, data)

    def delete(self, predicate: str) -> int:
        """Delete the live rows matching the SQL ``predicate`` (``MATCH`` included);
        returns how many.

        Rows are marked in per-fragment deletion vectors (fragments and index segments are
        immutable); deleted rows are never returned and leave every statistic at once.
        """
        if not isinstance(predicate, str) or not predicate.strip():
            raise InvalidArgument("delete needs a SQL predicate, e.g. \"id = 7\"")
        self.db.writer.refuse_writes(self.name)
        with self.db.writer.writing():
            try:
                found = self.db.sql(f'SELECT "{ROWID}" FROM "{self.name}" WHERE {predicate}').to_arrow_table()
            except EngineError as exc:
                raise InvalidArgument(f"bad DELETE predicate {predicate!r}: {exc}") from None
            return self.delete_rows(np.unique(found.column(0).to_numpy()))

    def delete_rows(self, ids: np.ndarray) -> int:
        """Delete the live rows ``ids`` (ascending, distinct) in one commit; returns how many."""
        return self.db.writer.delete_rows(self.name, ids)

    def replace_rows(self, ids: np.ndarray, data: Any) -> None:
        """Replace the live rows ``ids`` by ``data`` (their new versions, given new row ids
        after every other row) in one commit: an UPDATE."""
        self.db.writer.replace_rows(self.name, ids, data)

    # -- indexes ------------------------------------------------------------------------
    def index_meta(self, column: str, options: dict[str, Any], existing: IndexMeta | None) -> IndexMeta:
        """The index ``create_index(column, **options)`` would build (its segments not
        yet), checked: an unknown column or option, or a bad value, is an FtsError. SQL
        and the CLI check every column with it before building any."""
        snap = self.snapshot()
        if column not in snap.schema.names:
            raise CatalogError(f"table {self.name!r} has no column {column!r}; columns: {snap.schema.names}")
        ftype = snap.schema.field(column).type
        if not (pa.types.is_string(ftype) or pa.types.is_large_string(ftype)):
            raise InvalidArgument(f"column {column!r} is {ftype}; only text columns can be indexed")
        unknown = sorted(set(options) - set(INDEX_OPTIONS))
        if unknown:
            raise InvalidArgument(f"unknown index option(s) {unknown}; valid: {list(INDEX_OPTIONS)}")
        options = dict(options)
        kind = options.pop("kind", existing.kind if existing else FULLTEXT)
        if kind not in INDEX_KINDS:
            raise InvalidArgument(f"kind must be one of {list(INDEX_KINDS)}, got {kind!r}")
        if kind == NGRAM:  # (one analysis: what LIKE and regular expressions are read through)
            if options:
                raise InvalidArgument(f"an n-gram index takes no options, got {sorted(options)}")
            return IndexMeta(column, NGRAM_ANALYZER, kind=NGRAM)
        positions = options.pop("positions", existing.positions if existing else False)
        k1 = options.pop("k1", existing.k1 if existing else K1)
        b = options.pop("b", existing.b if existing else B)
        if not isinstance(positions, bool):
            raise InvalidArgument(f"positions must be true or false, got {positions!r}")
        for name, value, low, high in (("k1", k1, 0.0, 1e6), ("b", b, 0.0, 1.0)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise InvalidArgument(f"{name} must be a number in [{low:g}, {high:g}], got {value!r}")
        if existing is not None and not options:
            analyzer = existing.analyzer
        else:
            analyzer = make_analyzer_config(**options)
        language = analyzer.language_column
        if language is not None:
            if language == column or language not in snap.schema.names:
                raise CatalogError(
                    f"language_column {language!r} must be another column of table {self.name!r}; "
                    f"columns: {snap.schema.names}"
                )
            ltype = snap.schema.field(language).type
            if not (pa.types.is_string(ltype) or pa.types.is_large_string(ltype)):
                raise InvalidArgument(f"language_column {language!r} is {ltype}; it must hold language names (text)")
            if "languages" not in options:  # (the languages its rows name now: a query is analyzed in each)
                named = _named_languages(snap, language)
                if named:
                    analyzer = replace(analyzer, languages=named)
        return IndexMeta(column, analyzer, float(k1), float(b), positions)

    def _progress(self, progress: Progress | None) -> Progress | None:
        """The callback a build follows: ``progress``, else the database's (how SQL
        statements report their builds)."""
        return progress if progress is not None else self.db.progress

    def _built_on_ray(
        self, manifest: Manifest, snap: TableSnapshot, index: IndexMeta, ranges: list[tuple[int, int]], split: bool
    ) -> tuple[Manifest, list[SegmentMeta]]:
        """The writer's Ray builds (``catalog/index_writes.py`` ``RayBuild``), here because
        the catalog may not import ``distributed/``: ``ranges`` split for the executor's
        workers when ``split``, then built and written by its tasks."""
        from .distributed.build import split_range

        executor = self.db.distributed_executor()
        if split:
            ranges = [r for lo, hi in ranges for r in split_range(snap.meta, lo, hi, executor.workers)]
        return executor.build(manifest, snap, index, ranges)

    def create_index(self, column: str, progress: Progress | None = None, **options: Any) -> None:
        """(Re)build ``column``'s inverted index over every committed row.

        ``kind="ngram"`` builds its n-gram index instead (trigrams of its case-folded
        characters, no other option), which SQL's LIKE, ILIKE and regular expressions over
        the column read (docs/guide/sql.md: "Substring search"); a column may have both.
        Options of a full-text index: ``positions`` (for phrase queries), ``k1``, ``b``, ``analyzer`` and the
        analyzer options of :func:`datafusion_fts.analysis.make_analyzer_config`. Fresh rows
        are flushed first (every index change does that: fresh segments are always built
        with the current options). ``progress`` follows the build's phases
        (:mod:`datafusion_fts.index.build_progress`).
        """
        with self.db.writer.writing():
            self.flush()
            index = self.index_meta(column, options, None)  # (checked before anything is committed)
            self.db.writer.create_index(self.name, index, self._progress(progress), self._built_on_ray)

    def build_segment(
        self, column: str, row_range: tuple[int, int], progress: Progress | None = None, **options: Any
    ) -> SegmentMeta:
        """Add one index segment over the inclusive row-id range ``row_range`` (docs/design.md:
        "Segment sets and ranked parts")."""
        if not isinstance(row_range, (tuple, list)) or len(row_range) != 2:
            raise InvalidArgument(f"row_range must be a (from, to) pair, got {row_range!r}")
        lo, hi = row_range
        for name, value in (("from", lo), ("to", hi)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= ROW_ID_MAX:
                raise InvalidArgument(f"row_range {name} must be an integer in [0, 2^63-1], got {value!r}")
        if lo > hi:
            raise InvalidArgument(f"row_range must have from <= to, got {row_range!r}")
        with self.db.writer.writing():
            self.flush()
            key = ngram_key(column) if options.get("kind") == NGRAM else column
            existing = self.snapshot().meta.indexes.get(key)
            if existing is not None and options:
                wanted = self.index_meta(column, options, None)
                if replace(wanted, segments=existing.segments) != existing:
                    raise InvalidArgument(
                        f"index on {column!r} exists with other options; rebuild it with create_index"
                    )
            index = existing or self.index_meta(column, options, None)
            return self.db.writer.build_segment(self.name, index, lo, hi, self._progress(progress))

    def optimize(self, progress: Progress | None = None) -> None:
        """Bring every index up to date without a full rebuild (results never change):
        segments holding deleted rows are rewritten over the same range without them, the
        unindexed tail gets a new segment, and disjoint segments are merged while the
        merged one stays under the merge budget. Data files of an earlier layout (a
        database made by an earlier version) are rewritten in the current one.
        ``progress`` follows each index's build phases."""
        self.db.writer.optimize(self.name, self._progress(progress), self._built_on_ray)

    def substring_plan(self, needs: Iterable[tuple[str, Need, str]]) -> tuple[list[SubstringPlan], TableSnapshot]:
        """For each (column, requirement, predicates) of ``needs``, how to find the rows whose
        column may meet the requirement of those substring predicates (query/substring.py)
        by its n-gram index, or why a scan instead; and the one snapshot they read (fetch
        the candidates' columns from it)."""
        snap = self.snapshot()
        share = self.db.settings.get("fts.substring_candidate_share")
        return [plan_substring(snap, self.db, column, need, shown, share) for column, need, shown in needs], snap

    # -- search -------------------------------------------------------------------------
    def search(
        self,
        query: Query | str,
        limit: int | None = 10,
        offset: int = 0,
        include_row_ids: Iterable[int] | np.ndarray | None = None,
        columns: list[str] | None = None,
        default_columns: list[str] | None = None,
    ) -> pa.Table:
        """The top ``limit`` rows (after ``offset``) for ``query``, in the total order of
        docs/design.md: "Order, top-k and paging", as ``_rowid``, ``_score`` and ``columns`` (all
        columns by default).

        ``query`` is a query tree or a query string (docs/design.md: "The query tree and the query
        string") over ``default_columns`` (by default the table's indexed columns). A search whose
        snapshot lost a file to another process's garbage collection runs once more on the current
        version.
        """

        def read() -> pa.Table:
            found, snap, wanted = self._find(query, limit, offset, include_row_ids, columns, default_columns)
            return _with_columns(found, snap, wanted)

        return self.db.retrying(read)

    def search_stream(
        self,
        query: Query | str,
        limit: int | None = None,
        offset: int = 0,
        include_row_ids: Iterable[int] | np.ndarray | None = None,
        columns: list[str] | None = None,
        default_columns: list[str] | None = None,
        batch_rows: int = 8192,
    ) -> pa.RecordBatchReader:
        """:meth:`search` as a stream of batches of at most ``batch_rows`` rows, for
        results too large to hold at once (by default every matching row): the rows'
        columns are fetched one batch at a time, as the reader is read, so memory is
        bounded by the batch size (and 16 bytes a row for the ranked ids and scores)."""
        if isinstance(batch_rows, bool) or not isinstance(batch_rows, int) or batch_rows <= 0:
            raise InvalidArgument(f"batch_rows must be a positive integer, got {batch_rows!r}")
        found, snap, wanted = self.db.retrying(
            lambda: self._find(query, limit, offset, include_row_ids, columns, default_columns)
        )
        schema = pa.schema([*SEARCH_SCHEMA, *(snap.schema.field(name) for name in wanted)])

        def batches() -> Iterator[pa.RecordBatch]:
            for start in range(0, found.num_rows, batch_rows):
                yield from _with_columns(found.slice(start, batch_rows), snap, wanted).combine_chunks().to_batches()

        return pa.RecordBatchReader.from_batches(schema, batches())

    def _find(
        self,
        query: Query | str,
        limit: int | None,
        offset: int,
        include_row_ids: Iterable[int] | np.ndarray | None,
        columns: list[str] | None,
        default_columns: list[str] | None,
    ) -> tuple[pa.Table, TableSnapshot, list[str]]:
        """:meth:`find`, and the columns wanted (checked against the snapshot's)."""
        request = self._request(query, limit, offset, include_row_ids, default_columns)
        snap = request.snapshot
        wanted = snap.schema.names if columns is None else list(columns)
        for name in wanted:
            if name not in snap.schema.names:
                raise CatalogError(f"table {self.name!r} has no column {name!r}")
        return run_search(request, self.db), snap, wanted

    def find(
        self,
        query: Query | str,
        limit: int | None = 10,
        offset: int = 0,
        include_row_ids: Iterable[int] | np.ndarray | None = None,
        default_columns: list[str] | None = None,
        by_score: bool = True,
    ) -> tuple[pa.Table, TableSnapshot]:
        """The ranked ``_rowid`` and ``_score`` of a search (``search`` without columns)
        and the snapshot it read: columns fetched for those rows must come from that
        snapshot, the search's visibility cut (docs/design.md: "Fresh tier and visibility"). SQL's
        searches run this; without ``by_score`` every match (``limit`` None) comes in
        row-id order."""
        request = self._request(query, limit, offset, include_row_ids, default_columns, by_score)
        return run_search(request, self.db), request.snapshot

    def count(
        self,
        query: Query | str,
        include_row_ids: Iterable[int] | np.ndarray | None = None,
        default_columns: list[str] | None = None,
    ) -> int:
        """How many live rows match ``query`` (a search's total, without ranking them).
        A query of one term on a fully indexed table is counted from the index's document
        frequencies, without reading postings (planner/count_matches.py); any other by
        finding its matches."""
        return self.db.retrying(
            lambda: count_matches(self._request(query, None, 0, include_row_ids, default_columns, False), self.db)
        )

    def matching_rows(
        self, query: Query | str, include_row_ids: Iterable[int] | np.ndarray | None = None,
        default_columns: list[str] | None = None,
    ) -> tuple[np.ndarray, TableSnapshot]:
        """The ids of the live rows matching ``query``, ascending, unranked, and the snapshot
        they are of: a statement that groups or filters the matches without reading their
        scores needs no more. On a fully indexed table a tree of terms is read from its
        postings without frequencies or norms (planner/count_matches.py); any other by
        finding its matches."""
        request = self._request(query, None, 0, include_row_ids, default_columns, False)
        return matching_rows(request, self.db), request.snapshot

    def grouped(
        self, query: Query | str, grouped: GroupedCounts, include_row_ids: Iterable[int] | np.ndarray | None = None,
        default_columns: list[str] | None = None,
    ) -> pa.Table | None:
        """``grouped``'s answer over the live rows matching ``query`` (SQL's GROUP BY
        over a search, :meth:`facets`): counts alone of an OR of terms are counted
        as their postings are read, by the codes of the column where the store keeps them,
        the other rows found and coded (``fts.counts_from_postings``;
        planner/count_matches.counted_by); any other over the matching rows
        (:meth:`matching_rows`). None where DataFusion must add values up."""
        request = self._request(query, None, 0, include_row_ids, default_columns, False)
        if grouped.counts_only and self.db.settings.get("fts.counts_from_postings"):
            counted = counted_by(request, self.db, grouped.key)
            if counted is not None:
                return grouped.from_counts(counted, request.snapshot.meta.sql_schema)
        return grouped.over(matching_rows(request, self.db), request.snapshot)

    def facets(
        self,
        query: Query | str,
        column: str,
        limit: int | None = 10,
        include_row_ids: Iterable[int] | np.ndarray | None = None,
        default_columns: list[str] | None = None,
    ) -> pa.Table:
        """The ``limit`` most frequent values of ``column`` (text or integers) among the
        live rows matching ``query`` (None: every value), each with how many of them hold
        it (``_count``, int64): most frequent first, ties by value, NULL last. The counts a
        search page shows beside its results; with :meth:`count` and :meth:`search`, each
        of its parts. Counted as SQL counts ``GROUP BY column`` over a search
        (:meth:`grouped`): from an OR of words' postings by the column's codes, or over
        the matches found unscored, no value made per match."""
        schema = self.snapshot().meta.sql_schema
        field = schema.field(column) if isinstance(column, str) and column in schema.names else None
        if field is None:
            raise InvalidArgument(f"table {self.name!r} has no column {column!r}")
        if not groupable(field.type):
            raise InvalidArgument(f"facets count the values of a text or integer column; {column!r} is {field.type}")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise InvalidArgument(f"limit must be a non-negative integer or None, got {limit!r}")
        found = self.db.retrying(
            lambda: self.grouped(query, GroupedCounts.facets(column, limit), include_row_ids, default_columns))
        assert found is not None  # (counts alone: never a sum to decline)
        return found

    def find_counted(
        self, query: Query | str, limit: int, include_row_ids: Iterable[int] | np.ndarray | None = None,
    ) -> tuple[pa.Table, int, TableSnapshot] | None:
        """:meth:`find`'s top ``limit`` and the number of all matches, from one snapshot,
        where the index's statistics give that number (see :meth:`count`); None else (then
        counting means finding every match)."""
        request = self._request(query, limit, 0, include_row_ids, None)
        total = counted_from_statistics(request, self.db)
        return None if total is None else (run_search(request, self.db), total, request.snapshot)

    def plan(
        self,
        query: Query | str,
        limit: int | None = 10,
        offset: int = 0,
        include_row_ids: Iterable[int] | np.ndarray | None = None,
        default_columns: list[str] | None = None,
        by_score: bool = True,
    ):
        """The physical plan ``search`` (``find``) would run, and the planner's decisions."""
        return plan_search(self._request(query, limit, offset, include_row_ids, default_columns, by_score), self.db)

    def _request(
        self,
        query: Query | str,
        limit: int | None,
        offset: int,
        include_row_ids: Iterable[int] | np.ndarray | None,
        default_columns: list[str] | None,
        by_score: bool = True,
    ) -> SearchRequest:
        """A search's arguments, checked, on the table's current snapshot."""
        if query is None:
            raise InvalidArgument("query must not be None")
        snap = self.snapshot()
        if isinstance(query, str):
            from .query.parser import parse

            columns = default_columns or list(snap.meta.fulltext) or [
                f.name for f in snap.schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
            ]
            query = parse(query, columns, max_terms=self.db.settings.get("fts.max_query_terms"))
        if not isinstance(query, QUERY_TYPES):
            raise InvalidArgument(f"query must be a query tree or a string, got {type(query).__name__}")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit <= INT64_MAX):
            raise InvalidArgument(f"limit must be a positive integer up to 2^63-1 or None, got {limit!r}")
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= INT64_MAX - (limit or 0):
            raise InvalidArgument(f"offset must be a non-negative integer, limit plus offset at most 2^63-1, got {offset!r}")
        include = None
        if include_row_ids is not None:
            values = include_row_ids if isinstance(include_row_ids, np.ndarray) else list(include_row_ids)
            array = np.asarray(values)
            if array.size and not np.issubdtype(array.dtype, np.integer):
                raise InvalidArgument(f"include_row_ids must be integers, got {array.dtype} values")
            include = np.unique(array.astype(np.int64))
        options = self.db.settings.search_options()
        return SearchRequest(snap, query, limit, offset, include, *options, by_score)


def _with_columns(found: pa.Table, snap: TableSnapshot, wanted: list[str]) -> pa.Table:
    """``found`` (ranked ``_rowid``, ``_score``) with the ``wanted`` columns of its rows."""
    if not wanted:
        return found
    values = snap.take(found.column(0).to_numpy(), wanted)
    for name in wanted:
        found = found.append_column(snap.schema.field(name), values.column(name))
    return found

