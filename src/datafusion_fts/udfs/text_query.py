"""Query strings evaluated over the texts of one batch, for the text functions (issue 8).

Every text is its own one-row collection: ``fts_match(text, q)`` is true exactly when a
search for ``q`` in a table holding only that text returns it (docs/design.md: "The query tree and
the query string"; "Compound queries" matching; no index, no statistics, no scores). Fuzzy and
prefix leaves therefore expand over the text's own terms, at most ``max_expansions`` of them by
(distance, term).

The whole batch is analyzed once and evaluated at once: the query is bound against the
batch's vocabulary (expansions uncapped, which decides the same matches, since a text
holding any candidate holds its own best one) and run by the search :class:`Evaluator`
over a transient index of the batch; the per-text expansion cap only matters for which
tokens :meth:`BatchMatch.marked` highlights.

A query's leaves on columns other than the text's (``title:x`` against a ``body`` text)
cannot be evaluated on it. Highlighting assumes the row agrees with them (they are taken
to match where they require and not to match where they exclude), as it does when the
row is a search hit; ``fts_match`` refuses them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import chain

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..analysis import Analyzer, AnalyzerConfig, TokenStream, analyzer_for, make_analyzer_config
from ..analysis.analyzer import split_last_word
from ..defaults import ANALYZER
from ..errors import FtsError, InvalidArgument, QuerySyntaxError
from ..index.bm25 import ColumnStats
from ..index.expansion import fuzzy_candidates, gram_candidates, prefix_candidates
from ..index.transient import TransientIndex, lookup_terms
from ..kernels.merge import later_occurrences, phrase_tf, sloppy_phrase_tf
from ..operators.evaluate import Evaluator, QueryStats
from ..operators.flat_scan_search import _BatchSource, _present_vocab
from ..query.bind import bind
from ..query.bound import (
    BoundBoolean,
    BoundBoost,
    BoundPhrase,
    BoundQuery,
    BoundTerms,
    bound_leaves,
    query_terms,
)
from ..query.parser import parse
from ..query.tree import Boolean, Boost, Match, MultiMatch, Phrase, Prefix, Query, leaves

# The column an unnamed text stands for: no query string can name it (field names are
# identifiers), so every ``field:`` scope in a plain session is another column.
UNNAMED = "\x00text"


def analyzer_spec(config: AnalyzerConfig) -> str:
    """The ``analyzer`` argument that stands for ``config`` (how ``db.sql`` passes a
    column's index analyzer to the functions): every option, so a function analyzes
    text as the index did (its segmenter: an index built before issue 42 keeps runs of
    Han whole; its language column: a row is stemmed in its own language)."""
    options = {
        "analyzer": config.name,
        "max_token_length": config.max_token_length,
        "ascii_folding": config.ascii_folding,
        "stop_words": list(config.stop_words),
        "stemmer": config.stemmer,
        "segmenter": config.segmenter,
    }
    if config.language_column is not None:
        options.update(language_column=config.language_column, languages=list(config.languages))
    return json.dumps(options, sort_keys=True)


def resolve_analyzer(spec: str | None, function: str) -> Analyzer:
    """An ``analyzer`` argument: a named analyzer, a JSON object of analyzer options
    (``{"analyzer": "english", "stop_words": "none"}``), or NULL for the default."""
    if spec is None:
        spec = ANALYZER
    try:
        if spec.lstrip().startswith("{"):
            try:
                options = json.loads(spec)
            except ValueError as exc:
                raise InvalidArgument(f"not a JSON object ({exc})") from None
            if not isinstance(options, dict):
                raise InvalidArgument("not a JSON object")
            config = make_analyzer_config(**options)
        else:
            config = make_analyzer_config(spec)
    except InvalidArgument as err:
        raise InvalidArgument(f"{function}: argument 'analyzer': {err}") from None
    return analyzer_for(config)


@dataclass(frozen=True)
class TextQuery:
    """A parsed query string for texts of ``column`` (UNNAMED when the text has no name)."""

    tree: Query
    column: str
    analyzer: Analyzer
    # Leaves of other columns, replaced as the row being a hit implies.
    foreign: tuple[str, ...] = field(default_factory=tuple)


def compile_query(
    text: str, analyzer: Analyzer, column: str | None, function: str, foreign_leaves: bool = True
) -> TextQuery:
    """Parse ``text`` for a text function; errors name the function and the argument."""
    own = column or UNNAMED
    try:
        tree = parse(text, [own])
    except QuerySyntaxError as err:
        raise QuerySyntaxError(f"{function}: argument 'query': {err.message}", err.text, err.offset, err.length) from None
    except FtsError as err:
        raise InvalidArgument(f"{function}: argument 'query': {err}") from None
    foreign = tuple(dict.fromkeys(leaf.column for leaf in leaves(tree) if leaf.column != own and leaf.column))
    if foreign and not foreign_leaves:
        where = f"the text of column {column!r}" if column else "a text without a column name"
        raise InvalidArgument(
            f"{function}: argument 'query' searches column(s) {list(foreign)}, but {function} "
            f"reads only {where}; drop the field prefix"
        )
    return TextQuery(_localize(tree, own, True), own, analyzer, foreign)


def _localize(node: Query, column: str, positive: bool) -> Query:
    """``node`` with leaves on other columns replaced by what a hit implies: matching every
    row where the leaf must hold (``positive``), none where it excludes."""
    if isinstance(node, MultiMatch):
        node = node.expand()
    if isinstance(node, (Match, Prefix, Phrase)):
        if node.column == column:
            return node
        return Boolean() if positive else Match(column, "")
    if isinstance(node, Boolean):
        return Boolean(
            must=tuple(_localize(c, column, positive) for c in node.must),
            should=tuple(_localize(c, column, positive) for c in node.should),
            must_not=tuple(_localize(c, column, not positive) for c in node.must_not),
        )
    assert isinstance(node, Boost)
    return Boost(_localize(node.positive, column, positive), _localize(node.negative, column, positive), node.negative_boost)


class _BatchBindContext:
    """Binds against one batch's vocabulary, every expansion kept (capped per text later)."""

    def __init__(self, analyzer: Analyzer, vocab: pa.Array) -> None:
        self._analyzer = analyzer
        self.vocab = vocab
        self._all = max(1, len(vocab))

    def analyzer(self, column: str) -> Analyzer:
        return self._analyzer

    def fuzzy_candidates(self, column: str, term: str, fuzziness: int, prefix_length: int, max_expansions: int):
        return fuzzy_candidates(self.vocab, term, fuzziness, prefix_length, self._all)

    def prefix_candidates(self, column: str, prefix: str, max_expansions: int):
        return prefix_candidates(self.vocab, prefix, self._all)

    def gram_candidates(self, column: str, char: str):
        return gram_candidates(self.vocab, char)


def _expansion_cap(leaf: Query) -> int | None:
    if isinstance(leaf, Prefix) or (isinstance(leaf, Match) and leaf.fuzziness):
        return leaf.max_expansions
    if isinstance(leaf, Phrase) and leaf.prefix:
        return leaf.max_expansions
    return None


def lone_chars(query: TextQuery) -> tuple[frozenset[str], frozenset[str]]:
    """The characters of scripts cut into bigrams that leaves' texts are alone (each
    expands to the grams holding it), and the leaves' other terms."""
    analyzer = query.analyzer
    per_leaf = [list(chain.from_iterable(analyzer.variants(leaf.text, leaf.language)))
                for leaf in leaves(query.tree) if isinstance(leaf, (Match, Phrase))]
    lone = frozenset(c for terms in per_leaf if (c := analyzer.lone(terms)) is not None)
    return lone, frozenset(chain.from_iterable(per_leaf)) - lone


class BatchMatch:
    """One query evaluated over every text of a batch (row ids are positions in it), each
    text in the language ``languages`` names for it (with an analyzer that stems each row
    by its language column: that column's values for the same rows)."""

    def __init__(self, query: TextQuery, values: pa.Array, spans: bool = False,
                 languages: pa.Array | None = None) -> None:
        self.query = query
        self.n_rows = len(values)
        analyzer = query.analyzer
        caps = [_expansion_cap(leaf) for leaf in leaves(query.tree)]
        if any(cap is not None for cap in caps) or lone_chars(query)[0]:
            # Expansions are chosen from the batch's vocabulary: tokenize first.
            self.stream: TokenStream = analyzer.analyze(values, spans=spans, languages=languages)
            self.bound: BoundQuery = bind(query.tree, _BatchBindContext(analyzer, _present_vocab(self.stream)))
            terms = query_terms(self.bound).get(query.column, [])
        else:
            # The terms are known up front: the tokenizer interns them first (seeds).
            self.bound = bind(query.tree, _BatchBindContext(analyzer, pa.array([], pa.large_string())))
            terms = query_terms(self.bound).get(query.column, [])
            self.stream = analyzer.analyze(values, seed=terms, spans=spans, languages=languages)
        # Pair each bound leaf with its leaf's expansion cap (both walks go depth first).
        self._caps = {id(b): cap for cap, b in zip(caps, bound_leaves(self.bound))}
        self._ids = dict(zip(terms, lookup_terms(self.stream, terms).tolist()))
        with_positions = any(isinstance(leaf, BoundPhrase) for leaf in bound_leaves(self.bound))
        rows = np.arange(self.n_rows, dtype=np.int64)
        index = TransientIndex(self.stream, rows, terms, with_positions)
        # Matching reads no statistics: these only let the evaluator read every term.
        stats = QueryStats({query.column: ColumnStats(1, 1)}, {(query.column, t): 1 for t in terms})
        self.evaluator = Evaluator(_BatchSource({query.column: index}, rows), stats)
        for leaf in bound_leaves(self.bound):
            if isinstance(leaf, BoundPhrase) and leaf.expansions:
                self._own_expansions(leaf, self._caps[id(leaf)])

    def _own_expansions(self, leaf: BoundPhrase, cap: int) -> None:
        """Whether a phrase prefix matches a text depends on which expansions are the
        text's own best ``cap`` (unlike a term group, where any expansion present implies
        the best one is): each expansion counts only at the rows where it is one."""
        assert leaf.expansions is not None
        stream = self.stream
        ids = self._term_ids(leaf.expansions)
        rank = np.full(len(stream.vocab) + 1, -1, dtype=np.int64)
        found = ids >= 0
        rank[ids[found]] = np.flatnonzero(found)  # (expansions are distinct and sorted)
        token_rank = rank[stream.term]
        hit = token_rank >= 0
        kept = _within_cap(stream.row, token_rank, hit, cap, len(leaf.expansions))
        pairs = np.unique(stream.row[kept].astype(np.int64) * len(leaf.expansions) + token_rank[kept])
        pair_rows, pair_ranks = pairs // len(leaf.expansions), pairs % len(leaf.expansions)
        for r, expansion in enumerate(leaf.expansions):
            self.evaluator.expansion_rows[(id(leaf), expansion)] = pair_rows[pair_ranks == r]

    def _term_ids(self, terms: tuple[str, ...]) -> np.ndarray:
        """Stream term ids of bound terms (-1 where the batch lacks one)."""
        return np.array([self._ids.get(t, -1) for t in terms], dtype=np.int64)

    def matched_rows(self) -> np.ndarray:
        """Positions of the texts the query matches, ascending."""
        return self.evaluator.evaluate(self.bound).rows

    # -- which tokens made a text match -------------------------------------------------
    def marked(self) -> np.ndarray:
        """A bool per token: whether it is part of what makes its text match (terms of the
        matching leaves, whole phrase occurrences; never MUST_NOT or Boost negatives)."""
        marks = np.zeros(len(self.stream.term), dtype=np.bool_)
        active: list[tuple[BoundTerms | BoundPhrase, np.ndarray]] = []
        self._contributing(self.bound, self.matched_rows(), active)
        for leaf, rows in active:
            if not len(rows):
                continue
            in_rows = np.zeros(self.n_rows, dtype=np.bool_)
            in_rows[rows] = True
            if isinstance(leaf, BoundTerms):
                self._mark_terms(leaf, in_rows, marks)
            else:
                self._mark_phrase(leaf, rows, marks)
        return marks

    def _contributing(self, node: BoundQuery, rows: np.ndarray, out: list) -> None:
        """The leaves under ``node`` that contribute to matching ``rows``, with the rows
        each contributes to: MUST clauses at every row, SHOULD clauses where they match."""
        if isinstance(node, (BoundTerms, BoundPhrase)):
            out.append((node, rows))
        elif isinstance(node, BoundBoolean):
            for clause in node.must:
                self._contributing(clause, rows, out)
            for clause in node.should:
                self._contributing(clause, self.evaluator.evaluate(clause, within=rows).rows, out)
        elif isinstance(node, BoundBoost):
            self._contributing(node.positive, rows, out)

    def _mark_terms(self, leaf: BoundTerms, in_rows: np.ndarray, marks: np.ndarray) -> None:
        stream = self.stream
        cap = self._caps.get(id(leaf))
        for group in leaf.groups:
            ids = self._term_ids(group)
            rank = np.full(len(stream.vocab) + 1, -1, dtype=np.int64)
            found = ids >= 0
            # A term in the group twice keeps its best (first) rank.
            rank[ids[found][::-1]] = np.flatnonzero(found)[::-1]
            token_rank = rank[stream.term]
            hit = (token_rank >= 0) & in_rows[stream.row]
            if cap is not None and hit.any():
                hit &= _within_cap(stream.row, token_rank, hit, cap, len(group))
            marks |= hit

    def _mark_phrase(self, leaf: BoundPhrase, rows: np.ndarray, marks: np.ndarray) -> None:
        """Mark the tokens of each match the search counts, phrase by phrase (a phrase
        prefix's expansions only where they are the text's own)."""
        for terms in leaf.phrases():
            at = rows
            if leaf.expansions is not None:
                allowed = self.evaluator.expansion_rows.get((id(leaf), terms[-1]))
                if allowed is not None:
                    at = at[np.isin(at, allowed, assume_unique=True)]
            ids = self._term_ids(terms)
            if not len(ids) or (ids < 0).any() or not len(at):
                continue
            in_rows = np.zeros(self.n_rows, dtype=np.bool_)
            in_rows[at] = True
            if leaf.in_order:
                self._mark_in_order(ids, leaf.slop, leaf.places(len(terms)), in_rows, marks)
            else:
                self._mark_sloppy(terms, ids, leaf.slop, leaf.places(len(terms)), at, in_rows, marks)

    def _mark_sloppy(
        self, terms: tuple[str, ...], ids: np.ndarray, slop: int, places: np.ndarray, rows: np.ndarray,
        in_rows: np.ndarray, marks: np.ndarray,
    ) -> None:
        """Every position of every match ``sloppy_phrase_tf`` counts (it records them)."""
        stream = self.stream
        token_index = np.arange(len(stream.term), dtype=np.int64)
        distinct = list(dict.fromkeys(ids.tolist()))
        tokens = [token_index[(stream.term == t) & in_rows[stream.row]] for t in distinct]
        bases = np.cumsum([0] + [len(t) for t in tokens])
        starts = np.empty((len(ids), len(rows)), dtype=np.int64)
        ends = np.empty((len(ids), len(rows)), dtype=np.int64)
        for k, term_id in enumerate(ids.tolist()):  # (a repeated term shares its slice)
            d = distinct.index(term_id)
            token_rows = stream.row[tokens[d]]
            starts[k] = np.searchsorted(token_rows, rows, side="left") + bases[d]
            ends[k] = np.searchsorted(token_rows, rows, side="right") + bases[d]
        every = np.concatenate(tokens)
        counted = np.zeros(len(every), dtype=np.bool_)
        sloppy_phrase_tf(
            starts, ends, stream.pos[every].astype(np.int64), slop, later_occurrences(terms), counted.view(np.uint8),
            places,
        )
        marks[every[counted]] = True

    def _mark_in_order(self, ids: np.ndarray, slop: int, places: np.ndarray, in_rows: np.ndarray,
                       marks: np.ndarray) -> None:
        """For every start that ``phrase_tf`` (the search's ordered rule) counts, the
        earliest positions completing it."""
        stream = self.stream
        token_index = np.arange(len(stream.term), dtype=np.int64)
        per_term = [token_index[(stream.term == t) & in_rows[stream.row]] for t in ids]
        first = per_term[0]
        if not len(first):
            return
        # Each (row, start) is a candidate of its own: tf is 1 where the phrase starts there.
        n, n_cand = len(ids), len(first)
        rows_of = [stream.row[p].astype(np.int64) for p in per_term]
        positions = np.concatenate([stream.pos[p] for p in per_term]).astype(np.int64)
        bases = np.cumsum([0] + [len(p) for p in per_term])
        starts = np.empty((n, n_cand), dtype=np.int64)
        ends = np.empty((n, n_cand), dtype=np.int64)
        starts[0] = np.arange(n_cand) + bases[0]
        ends[0] = starts[0] + 1
        cand_rows = rows_of[0]
        for k in range(1, n):
            starts[k] = np.searchsorted(rows_of[k], cand_rows, side="left") + bases[k]
            ends[k] = np.searchsorted(rows_of[k], cand_rows, side="right") + bases[k]
        hit = phrase_tf(starts, ends, positions, slop, places) > 0
        if not hit.any():
            return
        marks[first[hit]] = True
        rows_hit = cand_rows[hit]
        current = stream.pos[first[hit]].astype(np.int64)
        scale = np.int64(int(stream.pos.max()) + 2) if len(stream.pos) else np.int64(1)
        for k in range(1, n):
            keys = rows_of[k] * scale + stream.pos[per_term[k]]
            nxt = np.searchsorted(keys, rows_hit * scale + current + places[k] - places[k - 1] - 1, side="right")
            marks[per_term[k][nxt]] = True
            current = stream.pos[per_term[k][nxt]].astype(np.int64)


def _within_cap(row: np.ndarray, rank: np.ndarray, hit: np.ndarray, cap: int, n_ranks: int) -> np.ndarray:
    """Tokens whose rank is among the ``cap`` best ranks present in their row: a text's
    own expansions are its best ``max_expansions`` candidates."""
    keys = row[hit].astype(np.int64) * (n_ranks + 1) + rank[hit]
    pairs = np.unique(keys)
    pair_rows = pairs // (n_ranks + 1)
    first_of_row = np.searchsorted(pair_rows, pair_rows, side="left")
    kept = pairs[np.arange(len(pairs)) - first_of_row < cap]
    out = np.zeros(len(row), dtype=np.bool_)
    out[np.flatnonzero(hit)[np.isin(keys, kept)]] = True
    return out



def _needles(query: TextQuery) -> list[str] | None:
    """Substrings one of which every text holding a query term contains (None: there is
    no such list: stemmed terms need not be substrings of their words, and fuzzy terms
    are not known before tokenizing)."""
    if query.analyzer.config.stems:
        return None
    needles: list[str] = []
    for leaf in leaves(query.tree):
        if isinstance(leaf, Match) and leaf.fuzziness:
            return None
        if isinstance(leaf, Prefix):
            needles.append(query.analyzer.normalize(leaf.prefix))
        elif isinstance(leaf, Phrase) and leaf.prefix:
            head, last = split_last_word(leaf.text)
            needles.extend(query.analyzer.terms(head))
            if last is not None:
                needles.append(query.analyzer.normalize(last))
        else:
            needles.extend(query.analyzer.terms(leaf.text))
    if "" in needles:
        return None  # the empty prefix: every term
    return list(dict.fromkeys(needles))


def candidates(query: TextQuery, values: pa.Array) -> np.ndarray | None:
    """Positions (ascending) of the texts that may hold one of the query's terms; None
    when that cannot be told without tokenizing.

    Every term of a text is a lowercased run of its characters, so an ASCII text holding a
    term holds it as a case-insensitive substring (a prefix leaf: its prefix); other texts
    are always candidates. A text that is not one holds none of the query's terms, so it
    matches exactly when the empty text does, and no token of it is ever highlighted.
    """
    needles = _needles(query)
    if needles is None:
        return None
    maybe = pc.invert(pc.string_is_ascii(values))
    for needle in needles:
        maybe = pc.or_(maybe, pc.match_substring(values, needle, ignore_case=True))
    return np.flatnonzero(maybe.fill_null(False).to_numpy(zero_copy_only=False))
