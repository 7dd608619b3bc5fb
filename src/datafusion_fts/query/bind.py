"""Bind a query tree: check its columns, analyze its text, expand fuzzy and prefix leaves
and lone characters of scripts cut into bigrams.

The result (:mod:`.bound`) is what every operator evaluates, so a query's terms are
decided once, against the table's global vocabulary, whatever plan runs it.
"""

from __future__ import annotations

from itertools import chain
from typing import Protocol

from ..analysis import Analyzer
from ..analysis.analyzer import split_last_word
from ..errors import InvalidArgument, PlanError
from .bound import BoundBoolean, BoundBoost, BoundPhrase, BoundQuery, BoundTerms
from .tree import Boolean, Boost, Match, MultiMatch, Phrase, Prefix, Query


class BindContext(Protocol):
    def analyzer(self, column: str) -> Analyzer:
        """The column's analyzer; raises CatalogError/InvalidArgument for a bad column."""
        ...

    def fuzzy_candidates(
        self, column: str, term: str, fuzziness: int, prefix_length: int, max_expansions: int
    ) -> list[tuple[int, str]]: ...

    def prefix_candidates(self, column: str, prefix: str, max_expansions: int) -> list[tuple[int, str]]: ...

    def gram_candidates(self, column: str, char: str) -> list[tuple[int, str]]:
        """Every live term holding ``char`` (a lone character of a script cut into bigrams)."""
        ...


def _column(leaf: Match | Prefix | Phrase) -> str:
    if leaf.column is None:
        raise PlanError(f"{type(leaf).__name__} leaf {leaf!r} is bound to no column")
    return leaf.column


def _grams(ctx: BindContext, column: str, char: str) -> tuple[str, ...]:
    return tuple(t for _, t in ctx.gram_candidates(column, char))


def _placed_variants(
    analyzer: Analyzer, text: str, language: str | None
) -> tuple[list[tuple[str, ...]], tuple[int, ...] | None]:
    """A phrase's distinct analyses (one but per row language) and its terms' places,
    the same in every language (only stemming differs, one term for one)."""
    terms, offsets = analyzer.placed_terms(text)
    if language is None and analyzer.config.language_column is None:
        return [tuple(terms)], offsets
    return analyzer.variants(text, language), offsets


def _any(phrases: tuple[BoundPhrase, ...]) -> BoundQuery:
    """A phrase analyzed in each language of its column's rows: a SHOULD of its distinct
    analyses (a row matches in its own language), one phrase as itself."""
    return phrases[0] if len(phrases) == 1 else BoundBoolean((), phrases, ())


def bind(query: Query, ctx: BindContext) -> BoundQuery:
    """The bound form of ``query``; every leaf's column is checked first."""
    if isinstance(query, Match):  # (first: most trees are one)
        column = _column(query)
        analyzer = ctx.analyzer(column)
        words = analyzer.match_groups(query.text, query.language)  # distinct terms, per word
        if query.fuzziness:
            groups = tuple(
                tuple(dict.fromkeys(t for term in word for _, t in ctx.fuzzy_candidates(
                    column, term, query.fuzziness, query.prefix_length, query.max_expansions
                )))
                for word in words
            )
        elif (char := analyzer.lone(chain.from_iterable(words))) is not None:
            groups = (_grams(ctx, column, char),)  # (one character alone: every gram holding it)
        else:  # a word's terms (one but per row language)
            groups = tuple(words)
        return BoundTerms(column, groups, query.operator == "and", query.boost)
    if isinstance(query, MultiMatch):
        return bind(query.expand(), ctx)
    if isinstance(query, Prefix):
        column = _column(query)
        prefix = ctx.analyzer(column).normalize(query.prefix)
        expansions = ctx.prefix_candidates(column, prefix, query.max_expansions)
        return BoundTerms(column, (tuple(t for _, t in expansions),), False, query.boost)
    if isinstance(query, Phrase):
        column = _column(query)
        analyzer = ctx.analyzer(column)
        in_order = query.in_order or query.slop == 0  # (exact either way)
        if not query.prefix:
            variants, offsets = _placed_variants(analyzer, query.text, query.language)
            if len(variants) > 1:
                return _any(tuple(
                    BoundPhrase(column, terms, query.slop, query.boost, in_order, offsets=offsets) for terms in variants
                ))
            terms = variants[0]
            if len(terms) == 1 and analyzer.lone_char(terms[0]):  # (a quoted character)
                return BoundTerms(column, (_grams(ctx, column, terms[0]),), False, query.boost)
            return BoundPhrase(column, terms, query.slop, query.boost, in_order, offsets=offsets)
        head, last = split_last_word(query.text)
        expansions: tuple[str, ...] = ()
        if last is not None:
            found = ctx.prefix_candidates(column, analyzer.normalize(last), query.max_expansions)
            expansions = tuple(t for _, t in found)
        variants, offsets = _placed_variants(analyzer, head, query.language)
        return _any(tuple(
            BoundPhrase(column, terms, query.slop, query.boost, in_order, expansions, offsets) for terms in variants
        ))
    if isinstance(query, Boolean):
        return BoundBoolean(
            tuple(bind(q, ctx) for q in query.must),
            tuple(bind(q, ctx) for q in query.should),
            tuple(bind(q, ctx) for q in query.must_not),
        )
    if isinstance(query, Boost):
        return BoundBoost(bind(query.positive, ctx), bind(query.negative, ctx), query.negative_boost)
    raise InvalidArgument(f"not a query: {query!r}")
