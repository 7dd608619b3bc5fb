"""``db.table(name)``: one managed table's writes and index builds, checked here and done by
the database's writer (catalog/writer.py), and its searches (docs/design.md: "The Python
API")."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Protocol, TypeVar

import datafusion
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .analysis import ANALYZER_OPTIONS, make_analyzer_config
from .analysis.analyzer import NGRAM_ANALYZER, language_name, stemmer_languages
from .defaults import K1, B
from .errors import CatalogError, EngineError, InvalidArgument
from .index.building.build_progress import Progress
from .operators.base import SEARCH_SCHEMA
from .operators.grouped_counts import GroupedCounts, groupable
from .planner.answer_search import Answer, Search, answer, request_for
from .planner.plan_search import Catalog, plan_search
from .planner.plan_substring import SubstringPlan, plan_substring
from .planner.search_request import SearchedTable
from .query.substring import Need
from .query.tree import Query
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
        (:mod:`datafusion_fts.index.building.build_progress`).
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
    # Every method below asks one ``Search`` (planner/answer_search.py): what it asks beside
    # the ranked rows (a total, counts by a column) is answered there, from one snapshot.
    def run(self, search: Search) -> Answer:
        """``search``'s answer on the table's current snapshot, run once: a caller that
        reads more of the snapshot (the rows' columns) retries the whole read
        (``db.retrying``), as the methods below do."""
        return answer(search, self.snapshot(), self.db, self.db.settings)

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
        asked = Search(query, limit, offset, include_row_ids, default_columns)
        return self.db.retrying(lambda: _with_columns(self.run(asked), columns)[0])

    def search_page(
        self,
        query: Query | str,
        limit: int = 10,
        offset: int = 0,
        columns: list[str] | None = None,
        facets: Iterable[str] = (),
        facet_limit: int | None = 10,
        include_row_ids: Iterable[int] | np.ndarray | None = None,
        default_columns: list[str] | None = None,
    ) -> SearchPage:
        """What a search page shows, from one snapshot: :meth:`search`'s rows, how many rows
        match (``total``), and :meth:`facets` of each column of ``facets`` over the same
        matches. The total comes from the index's statistics where they give it (a query of
        one term), the facets from the postings by the columns' codes where they can
        (docs/design.md: "Direct answers"), else every match is found once, unranked."""
        groups = tuple(self._facet(column, facet_limit) for column in facets)
        asked = Search(query, limit, offset, include_row_ids, default_columns, total=True, groups=groups)

        def read() -> SearchPage:
            rows, found = _with_columns(self.run(asked), columns)
            assert found.total is not None
            return SearchPage(rows, found.total, {g.key: counted for g, counted in zip(groups, found.groups)})

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
        found = self.db.retrying(lambda: self.run(Search(query, limit, offset, include_row_ids, default_columns)))
        snap, wanted = found.snapshot, _wanted(found.snapshot, columns)
        schema = pa.schema([*SEARCH_SCHEMA, *(snap.schema.field(name) for name in wanted)])

        def batches() -> Iterator[pa.RecordBatch]:
            for start in range(0, found.rows.num_rows, batch_rows):
                page = replace(found, rows=found.rows.slice(start, batch_rows))
                yield from _with_columns(page, wanted)[0].combine_chunks().to_batches()

        return pa.RecordBatchReader.from_batches(schema, batches())

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
        snapshot, the search's visibility cut (docs/design.md: "Fresh tier and visibility").
        Without ``by_score`` every match (``limit`` None) comes in row-id order."""
        found = self.run(Search(query, limit, offset, include_row_ids, default_columns, by_score=by_score))
        return found.rows, found.snapshot

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
        asked = Search(query, include_row_ids=include_row_ids, default_columns=default_columns, rows=False, total=True)
        total = self.db.retrying(lambda: self.run(asked).total)
        assert total is not None
        return total

    def matching_rows(
        self, query: Query | str, include_row_ids: Iterable[int] | np.ndarray | None = None,
        default_columns: list[str] | None = None,
    ) -> tuple[np.ndarray, TableSnapshot]:
        """The ids of the live rows matching ``query``, ascending, unranked, and the snapshot
        they are of: a statement that groups or filters the matches without reading their
        scores needs no more. On a fully indexed table a tree of terms is read from its
        postings without frequencies or norms (planner/count_matches.py); any other by
        finding its matches."""
        found = self.run(Search(query, None, 0, include_row_ids, default_columns, by_score=False, scored=False))
        return found.rows.column(0).to_numpy(), found.snapshot

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
        search page shows beside its results (:meth:`search_page`). Counted as SQL counts
        ``GROUP BY column`` over a search: from an OR of words' postings by the column's
        codes (``fts.counts_from_postings``), or over the matches found unscored, no value
        made per match."""
        asked = Search(query, include_row_ids=include_row_ids, default_columns=default_columns, rows=False,
                       groups=(self._facet(column, limit),))
        found = self.db.retrying(lambda: self.run(asked).groups[0])
        assert found is not None  # (counts alone: never a sum to decline)
        return found

    def _facet(self, column: str, limit: int | None) -> GroupedCounts:
        """The counts of :meth:`facets` by ``column``, checked."""
        schema = self.snapshot().meta.sql_schema
        field = schema.field(column) if isinstance(column, str) and column in schema.names else None
        if field is None:
            raise InvalidArgument(f"table {self.name!r} has no column {column!r}")
        if not groupable(field.type):
            raise InvalidArgument(f"facets count the values of a text or integer column; {column!r} is {field.type}")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise InvalidArgument(f"limit must be a non-negative integer or None, got {limit!r}")
        return GroupedCounts.facets(column, limit)

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
        asked = Search(query, limit, offset, include_row_ids, default_columns, by_score=by_score)
        return plan_search(request_for(asked, self.snapshot(), self.db.settings), self.db)


@dataclass(frozen=True)
class SearchPage:
    """A search page (:meth:`Table.search_page`): the page of rows, how many rows match,
    and the most frequent values of each faceted column among them."""

    rows: pa.Table
    total: int
    facets: dict[str, pa.Table]


def _wanted(snap: SearchedTable, columns: list[str] | None) -> list[str]:
    """The columns asked (None: all), checked against ``snap``'s."""
    wanted = snap.schema.names if columns is None else list(columns)
    for name in wanted:
        if name not in snap.schema.names:
            raise CatalogError(f"table {snap.name!r} has no column {name!r}")
    return wanted


def _with_columns(found: Answer, columns: list[str] | None) -> tuple[pa.Table, Answer]:
    """``found``'s rows (ranked ``_rowid``, ``_score``) with their ``columns`` (None: all),
    from the snapshot it read; and ``found``."""
    snap = found.snapshot
    wanted = _wanted(snap, columns)
    rows = found.rows
    if not wanted:
        return rows, found
    values = snap.take(rows.column(0).to_numpy(), wanted)
    for name in wanted:
        rows = rows.append_column(snap.schema.field(name), values.column(name))
    return rows, found
