"""Connection settings (``SET fts.x = ...`` or ``connect(config=...)``), from one registry
that validation, error messages and docs all read."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .errors import InvalidArgument

# The largest count (a setting, a limit, an offset, a slop) accepted: counts are int64 in
# the compiled kernels and in DataFusion.
INT64_MAX = (1 << 63) - 1
# The longest name of a table (the manifest's rule), and of a function SQL may call.
MAX_NAME_CHARS = 128


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    parse: Callable[[Any], Any]
    doc: str


def _choice(*options: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        text = str(value).lower()
        if text not in options:
            raise ValueError(f"one of {list(options)}")
        return text

    return parse


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("true", "on", "1"):
        return True
    if text in ("false", "off", "0"):
        return False
    raise ValueError("true or false")


def _non_negative_int(value: Any) -> int:
    try:
        whole = int(value)
    except (ValueError, TypeError, OverflowError):  # (OverflowError: infinity)
        whole = None
    if isinstance(value, bool) or whole is None or whole != value or not 0 <= whole <= INT64_MAX:
        raise ValueError("an integer from 0 to 2^63-1")
    return whole


def _number(low: float, high: float, what: str) -> Callable[[Any], float]:
    """A finite number in [low, high] (a string of one too, as SET gives it)."""

    def parse(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(what)
        try:
            number = float(value)
        except ValueError:
            raise ValueError(what) from None
        if not low <= number <= high or number == float("inf"):
            raise ValueError(what)
        return number

    return parse


_non_negative_seconds = _number(0.0, float("inf"), "a non-negative number of seconds")
_share = _number(0.0, 1.0, "a number from 0 to 1")


def _positive_int(value: Any) -> int:
    if _non_negative_int(value) == 0:
        raise ValueError("a positive integer")
    return int(value)


REGISTRY: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting("fts.force_plan", "auto", _choice("auto", "indexed", "hybrid", "flat_scan"),
                "Force the search operator (for tests and benchmarks)."),
        Setting("fts.residual_row_limit", 100_000, _non_negative_int,
                "Largest unindexed tail HybridResidualSearch will tokenize per query."),
        Setting("fts.tail_cache_entries", 16, _non_negative_int,
                "In-memory indexes of unindexed tails kept for reuse (least recently used go)."),
        Setting("fts.memtable_rows", 50_000, _non_negative_int,
                "Fresh rows kept in memory (and the log) before they are flushed to a fragment."),
        Setting("fts.max_fragments", 24, _positive_int,
                "Data fragments a managed table keeps (docs/design.md: \"Data fragments\"): past it, each write "
                "merges the neighbours holding the fewest live rows, while a merged fragment holds at most 2^20, so a "
                "table keeps at most this many fragments or 2 per 2^20 live rows, whatever its history. Each write "
                "also merges the newest 8 when their live rows have as many digits in base 8, and rewrites a "
                "fragment half of whose rows are deleted without them; OPTIMIZE merges neighbours up to 2^20 rows. "
                "Each index's segments are merged alike."),
        Setting("fts.memory_table_bytes", 16 << 20, _non_negative_int,
                "A table of a database's files whose rows take at most this many bytes decoded is also held in "
                "memory, as DataFusion's own in-memory table (a base table with its declared constraints), for plain "
                "SQL; larger ones are views of their files."),
        Setting("fts.gc_grace_seconds", 600.0, _non_negative_seconds,
                "Seconds a file a commit stopped naming is kept for readers of older versions (other processes) before it is deleted."),
        Setting("fts.source_refresh_seconds", 0.0, _non_negative_seconds,
                "Seconds a listing of the files of a table indexed in place is reused: 0 lists them at every query "
                "(a file added is found by the next one); a listing takes ~4 us a file (3 ms for 1,000)."),
        Setting("fts.remote_source_refresh_seconds", 1.0, _non_negative_seconds,
                "Seconds a listing of the files of a table indexed in place on an object store is reused (a LIST "
                "request costs milliseconds): a file added is found within that time; a file changed or deleted since "
                "is never read as listed (each read asks for the listed version); 0 lists them at every query."),
        Setting("fts.object_cache_bytes", 256 << 20, _non_negative_int,
                "Bytes of object-store files (pages, footers of tables indexed in place on S3, GCS or Azure) kept "
                "in memory once read, so warm queries make no request for them; 0 keeps none."),
        Setting("fts.segment_cache_bytes", 4 << 30, _non_negative_int,
                "Bytes of index segments of databases at object stores' URLs kept on local disk as they are "
                "fetched (postings 64 KiB at a time, as searches reach them; memory-mapped: file cache the system "
                "can reclaim, not the process's memory; the next process fetches only what none read before); past "
                "it the least recently used go; 0 keeps none (segments are held in memory, each fetched whole)."),
        Setting("fts.segment_cache_dir", "", str,
                "Where those segments are kept; empty: $XDG_CACHE_HOME/datafusion-fts/segments (~/.cache/...)."),
        Setting("fts.store_refresh_seconds", 1.0, _non_negative_seconds,
                "Seconds between two checks for other processes' commits to a database at an object store's URL "
                "(a HEAD request of its manifest); 0: at every query."),
        Setting("fts.pruning", True, _bool,
                "Block skipping and block-max pruning in top-k term searches (changes speed only, never results)."),
        Setting("fts.sql_fast_paths", True, _bool,
                "SQL's fast paths: a search's result standing in for its table, with prefilters, a pushed-down "
                "top k and direct answers, where they give the general plan's answer, and statements remembered by "
                "the shape of their text (searches, substring predicates) (changes speed only, never results); off, "
                "every SELECT that searches takes the general plan and every statement is parsed, for tests comparing "
                "both."),
        Setting("fts.counts_from_postings", True, _bool,
                "Counts by a column over the matches of an OR of words (GROUP BY, facets) counted as their "
                "postings are read, by the codes a store keeps of the column, no row id made (changes speed "
                "only, never results); off, the matching rows are found, then counted, for tests comparing both."),
        Setting("fts.text_codec", "lz4", _choice("lz4", "zstd"),
                "The codec of text and other variable-width columns in the data files written from now on: lz4 "
                "(fetching rows and DataFusion's scans decompress ~3x faster) or zstd (files ~25-35 % smaller). Files "
                "already written keep theirs; OPTIMIZE rewrites the fragments it merges."),
        Setting("fts.substring_index", True, _bool,
                "Whether LIKE, ILIKE, regular expressions, strpos, starts_with and ends_with over a column with an "
                "n-gram index read a table's candidate rows from the index (changes speed only, never results); "
                "off, DataFusion scans every row, for tests comparing both."),
        Setting("fts.substring_candidate_share", 0.02, _share,
                "The n-gram index is read while the rows it estimates may match (and its unindexed tail) are at most "
                "this share of a table's live rows; past it DataFusion scans (fetching more rows by id costs more: at 1M "
                "rows of 500-character texts with LZ4 text pages, 0.8 % of the rows fetched cost 0.2x the scan, 2.3 % "
                "0.4-0.5x, 4.5 % 0.6-0.8x alone but 1.1x interleaved with other work, whose reads evict the pages a "
                "fetch reads at random; of 50-character texts, 1.1 % 0.9x a warm scan, 1.8 % 1.1x, 3.1 % 1.2x; with "
                "ZSTD text pages 1.3-1.8x those). 1 reads it whenever a predicate asks for some trigram."),
        Setting("fts.substring_recheck_rows", 256, _non_negative_int,
                "From this many candidate rows up, a table read by an n-gram index fetches the predicates' columns "
                "first, DataFusion evaluates the substring predicates on them, and the table's other columns are fetched "
                "for the rows they keep only (changes what is fetched, never results; 0: always). Not where every predicate "
                "asks for one run of text (LIKE '%run%', strpos > 0): its candidates nearly all match."),
        Setting("fts.executor", "local", _choice("local", "ray"),
                "Where searches and index builds run: this process, or a Ray cluster (the ray extra)."),
        Setting("fts.ray_actors", 2, _positive_int, "Search actors (each holds a share of the segments)."),
        Setting("fts.ray_storage", "", str,
                "Where Ray workers read the database (a directory every node mounts, or an object store's URL read "
                "with storage_options); empty: where the database is."),
        Setting("fts.ray_retries", 2, _non_negative_int, "Times a failed actor call is sent again per query."),
        Setting("fts.ray_max_restarts", 2, _non_negative_int, "Times Ray restarts a dead search actor."),
        Setting("fts.max_query_terms", 10_000, _positive_int,
                "Most terms a query string may hold (Python API and SQL MATCH): a word or phrase counts one, a fuzzy "
                "or prefix term the 50 it may expand to; past it the query is refused."),
    )
}


class Settings:
    """Current values of the registry's settings."""

    def __init__(self) -> None:
        self._values = {name: s.default for name, s in REGISTRY.items()}
        # Per setting: what to call when it changes (weakly held: a database watching
        # its own settings would otherwise be a cycle outliving ``del db``).
        self._watchers: dict[str, list[weakref.WeakMethod]] = {}

    def watch(self, name: str, changed: Callable[[], None]) -> None:
        """Call the bound method ``changed`` after each change of setting ``name``."""
        self._watchers.setdefault(name, []).append(weakref.WeakMethod(changed))  # type: ignore[arg-type]

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> "Settings":
        settings = cls()
        for name, value in values.items():
            settings.set(name, value)
        return settings

    def set(self, name: str, value: Any) -> None:
        key = name.lower()
        if key not in REGISTRY:
            raise InvalidArgument(f"unknown setting {name!r}; settings: {sorted(REGISTRY)}")
        try:
            new = REGISTRY[key].parse(value)
        except (ValueError, TypeError, OverflowError) as exc:
            raise InvalidArgument(f"setting {name} must be {exc}, got {value!r}") from None
        old, self._values[key] = self._values[key], new
        if new != old:
            for ref in self._watchers.get(key, ()):
                changed = ref()
                if changed is not None:
                    changed()

    def get(self, name: str) -> Any:
        return self._values[name.lower()]

    def search_options(self) -> tuple[str, bool, int, str]:
        """(fts.force_plan, fts.pruning, fts.residual_row_limit, fts.executor): what every
        search reads, in one call."""
        values = self._values
        return (
            values["fts.force_plan"], values["fts.pruning"],
            values["fts.residual_row_limit"], values["fts.executor"],
        )
