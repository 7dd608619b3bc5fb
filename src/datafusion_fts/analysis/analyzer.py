"""Analyzers (docs/design.md: "Analysis"): text -> terms with positions, vectorized over Arrow
arrays.

Pipeline: split on runs of Unicode letters and digits, runs of the scripts written
without spaces (Han, Hiragana, Katakana, Hangul) into overlapping bigrams after width
folding (``segmenter="bigrams"``, the default; ``"none"`` keeps such a run one token, as
indexes built before it do), lowercase (simple per-code-point mapping), drop tokens longer
than ``max_token_length`` UTF-8 bytes — all in one compiled pass
(:mod:`datafusion_fts.kernels.tokenizer`) — then the optional per-term filters in
order: ASCII folding, stop words, Snowball stemming. Every filter maps one token to one
token (or drops it), so filters run once per *distinct* token of a batch, not per
occurrence. With ``language_column`` each row is stemmed in the language that column
names (once per distinct token and language), and query text in every language the
analyzer knows (:meth:`Analyzer.variants`).
Positions count the kept tokens (a dropped token leaves no gap; two runs of grams are
one position apart), so a phrase query that goes through the same analyzer lines up with
the indexed text.
"""

from __future__ import annotations

import functools
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..defaults import ANALYZER, MAX_TOKEN_LENGTH, NAMED_ANALYZERS
from ..errors import InvalidArgument
from ..kernels.tokenizer import char_grams, remap_tokens, tokenize, tokenize_spans
from .segmenters import DICTIONARY_SEGMENTERS, compose_voicing, require, word_spans
from .stopwords import BUILTIN as BUILTIN_STOP_WORDS
from .unicode_tables import (
    BIGRAM,
    fold_tables,
    script_tables,
    segment_tables,
    simple_lower,
    word_tables,
)

MAX_TOKEN_LENGTH_LIMIT = 1024
# How runs of the scripts written without spaces are cut: into bigrams, or not at all (an
# index built before bigrams reads its analysis back as "none"), or into a dictionary's
# words (segmenters.py: those tokenize each word with segment_tables).
SEGMENTERS = {"bigrams": script_tables, "none": word_tables}
# The analysis of an n-gram index (``IndexMeta.kind == "ngram"``), never a full-text one's:
# every character, case-folded (``unicode_tables.fold_tables``), in overlapping trigrams,
# each distinct one of a row once.
NGRAM_SEGMENTER = "trigrams"
GRAM_LENGTH = 3
_ONE_VALID = np.ones(1, dtype=np.uint8)
_NO_SEED_BYTES = np.zeros(0, dtype=np.uint8)
_NO_SEED_OFFSETS = np.zeros(1, dtype=np.int64)


def _ascii_words(max_len: int) -> re.Pattern[str]:
    """Whole ASCII words (lowercased text) of at most ``max_len`` characters: a longer
    word is dropped, not cut, by the lookarounds."""
    return re.compile(rf"(?<![a-z0-9])[a-z0-9]{{1,{max_len}}}(?![a-z0-9])")


# Characters NFKD does not decompose to ASCII, folded as Lucene's ASCIIFoldingFilter does.
_FOLD_EXTRA = {
    "ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ð": "d", "ł": "l",
    "þ": "th", "ħ": "h", "ı": "i", "ŀ": "l", "ŧ": "t", "ŋ": "n", "ĸ": "q",
}


@functools.lru_cache(maxsize=1)
def stemmer_languages() -> tuple[str, ...]:
    import Stemmer

    return tuple(Stemmer.algorithms())


# ISO 639-1 codes of the Snowball languages: a row's language may be given either way.
ISO_639_1 = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech", "da": "danish",
    "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian", "fi": "finnish", "fr": "french",
    "de": "german", "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "fa": "persian", "pl": "polish",
    "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian", "st": "sesotho", "es": "spanish",
    "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}


def language_name(value: str) -> str | None:
    """The Snowball language ``value`` names (a name or an ISO 639-1 code, any case), or None."""
    lowered = value.strip().lower()
    name = ISO_639_1.get(lowered, lowered)
    return name if name in stemmer_languages() else None


@dataclass(frozen=True)
class AnalyzerConfig:
    """What an analyzer does; two equal configs tokenize identically (the index records it)."""

    name: str = ANALYZER
    max_token_length: int = MAX_TOKEN_LENGTH
    ascii_folding: bool = False
    stop_words: tuple[str, ...] = ()
    stemmer: str | None = None
    segmenter: str = "bigrams"
    # The column naming each row's language; ``stemmer`` then stems the rows whose
    # language is null or none of ``languages`` (the languages query text is analyzed in).
    language_column: str | None = None
    languages: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "max_token_length": self.max_token_length,
            "ascii_folding": self.ascii_folding,
            "stop_words": list(self.stop_words),
            "stemmer": self.stemmer,
            "segmenter": self.segmenter,
        }
        if self.language_column is not None:  # (configs without one read and print as before)
            out["language_column"] = self.language_column
            out["languages"] = list(self.languages)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "AnalyzerConfig":
        return cls(
            name=data["name"],
            max_token_length=int(data["max_token_length"]),
            ascii_folding=bool(data["ascii_folding"]),
            stop_words=tuple(data["stop_words"]),
            stemmer=data["stemmer"],
            segmenter=data.get("segmenter", "none"),
            language_column=data.get("language_column"),
            languages=tuple(data.get("languages", ())),
        )

    @property
    def has_filters(self) -> bool:
        return self.ascii_folding or bool(self.stop_words) or self.stems

    @property
    def stems(self) -> bool:
        """Whether terms may be stems (then not substrings of the text)."""
        return self.stemmer is not None or self.language_column is not None

    def reads(self, column: str) -> list[str]:
        """The columns analyzing ``column`` reads: it, and the language column if any."""
        return [column] if self.language_column is None else [column, self.language_column]

    def fingerprint(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)


NGRAM_ANALYZER = AnalyzerConfig(name="ngram", max_token_length=MAX_TOKEN_LENGTH_LIMIT, segmenter=NGRAM_SEGMENTER)

ANALYZER_OPTIONS = (
    "analyzer", "max_token_length", "ascii_folding", "stop_words", "stemmer", "segmenter", "language_column",
    "languages",
)


def make_analyzer_config(analyzer: str | AnalyzerConfig = ANALYZER, **options: Any) -> AnalyzerConfig:
    """Resolve a named analyzer plus option overrides, validating every value."""
    if isinstance(analyzer, AnalyzerConfig):
        if options:
            raise InvalidArgument("pass options or an AnalyzerConfig, not both")
        return analyzer
    if analyzer not in NAMED_ANALYZERS:
        raise InvalidArgument(
            f"unknown analyzer {analyzer!r}; choose one of {sorted(NAMED_ANALYZERS)}"
        )
    unknown = set(options) - set(ANALYZER_OPTIONS)
    if unknown:
        raise InvalidArgument(
            f"unknown analyzer option(s) {sorted(unknown)}; valid: {list(ANALYZER_OPTIONS[1:])}"
        )
    settings = {**NAMED_ANALYZERS[analyzer], **options}
    max_len = settings.get("max_token_length", MAX_TOKEN_LENGTH)
    if isinstance(max_len, bool) or not isinstance(max_len, int) or not 1 <= max_len <= MAX_TOKEN_LENGTH_LIMIT:
        raise InvalidArgument(
            f"max_token_length must be an integer in [1, {MAX_TOKEN_LENGTH_LIMIT}], got {max_len!r}"
        )
    folding = settings.get("ascii_folding", False)
    if not isinstance(folding, bool):
        raise InvalidArgument(f"ascii_folding must be true or false, got {folding!r}")
    stop = settings.get("stop_words") or ()
    if isinstance(stop, str):
        if stop == "none":
            stop = ()
        elif stop in BUILTIN_STOP_WORDS:
            stop = tuple(sorted(BUILTIN_STOP_WORDS[stop]))
        else:
            raise InvalidArgument(
                f"unknown stop word list {stop!r}; use one of {sorted(BUILTIN_STOP_WORDS)}, "
                "'none', or a list of words"
            )
    elif isinstance(stop, Sequence) and all(isinstance(w, str) for w in stop):
        lowered = [simple_lower(w) for w in stop]
        if folding and lowered:
            # Tokens are folded before the stop-word check, so the words must be too.
            lowered = fold_ascii(pa.array(lowered, pa.large_string())).to_pylist()
        stop = tuple(sorted(set(lowered)))
    else:
        raise InvalidArgument(f"stop_words must be a list name or a list of strings, got {stop!r}")
    stemmer = settings.get("stemmer")
    if stemmer is not None and stemmer not in stemmer_languages():
        raise InvalidArgument(
            f"unknown stemmer language {stemmer!r}; choose one of {list(stemmer_languages())}"
        )
    segmenter = settings.get("segmenter", "bigrams")
    if segmenter in DICTIONARY_SEGMENTERS:
        require(segmenter)
    elif segmenter not in SEGMENTERS:
        raise InvalidArgument(
            f"unknown segmenter {segmenter!r}; choose one of {sorted([*SEGMENTERS, *DICTIONARY_SEGMENTERS])}"
        )
    language_column = settings.get("language_column")
    languages = settings.get("languages")
    if language_column is None:
        if languages is not None:
            raise InvalidArgument("languages needs a language_column (the column naming each row's language)")
    elif not isinstance(language_column, str) or not language_column:
        raise InvalidArgument(f"language_column must be a column name, got {language_column!r}")
    return AnalyzerConfig(
        name=analyzer,
        max_token_length=max_len,
        ascii_folding=folding,
        stop_words=tuple(stop),
        stemmer=stemmer,
        segmenter=segmenter,
        language_column=language_column,
        languages=_languages(languages) if language_column is not None else (),
    )


def _languages(value: Any) -> tuple[str, ...]:
    """The Snowball languages ``value`` names (names or ISO 639-1 codes, in a list or a
    string separated by commas, as SQL gives them), distinct; None: every one PyStemmer has
    (recorded, so an index keeps them whatever PyStemmer is installed later)."""
    if value is None:
        return stemmer_languages()
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise InvalidArgument(f"languages must be a list of language names, got {value!r}")
    out = []
    for name in names:
        resolved = language_name(name)
        if resolved is None:
            raise InvalidArgument(
                f"unknown language {name!r}; choose among {list(stemmer_languages())} or their ISO 639-1 codes"
            )
        out.append(resolved)
    if not out:
        raise InvalidArgument("languages must name at least one language")
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class TokenStream:
    """The tokens of ``n_rows`` values: token i is ``vocab[term[i]]`` at ``pos[i]`` of ``row[i]``.

    Tokens are in (row, position) order; ``dl[r]`` is the token count of row r. ``vocab``
    holds each distinct term once, in no particular order. With spans (``analyze(...,
    spans=True)``) token i is UTF-8 bytes ``[start[i], end[i])`` of its row's value.
    """

    n_rows: int
    row: np.ndarray  # int32
    term: np.ndarray  # int32
    pos: np.ndarray  # int32
    dl: np.ndarray  # int32[n_rows]
    vocab: pa.LargeStringArray
    n_seed: int = 0
    start: np.ndarray | None = None  # int32, with spans only
    end: np.ndarray | None = None  # int32, with spans only


def _string_buffers(values: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(utf8 bytes, int64 offsets[n+1], valid bool[n]) views of a string array."""
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        arr = values
    elif pa.types.is_string_view(values.type) or pa.types.is_dictionary(values.type):
        arr = values.cast(pa.large_string())
    else:
        raise InvalidArgument(f"cannot analyze a column of type {values.type}")
    n = len(arr)
    bufs = arr.buffers()
    off_type = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets = np.frombuffer(bufs[1], dtype=off_type, count=arr.offset + n + 1)[arr.offset :]
    offsets = offsets.astype(np.int64, copy=False)
    data = (
        np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    )
    if arr.null_count:
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
    else:
        valid = np.ones(n, dtype=np.bool_)
    return data, offsets, valid


def _vocab_array(data: np.ndarray, offsets: np.ndarray, n_terms: int) -> pa.LargeStringArray:
    return pa.Array.from_buffers(
        pa.large_string(), n_terms, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def _encode_seed(terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [t.encode("utf-8") for t in terms]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(e) for e in encoded]) if encoded else []
    return np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), offsets


class Analyzer:
    """Runs an :class:`AnalyzerConfig` over Arrow string arrays."""

    def __init__(self, config: AnalyzerConfig) -> None:
        self.config = config
        self._segmenter = config.segmenter if config.segmenter in DICTIONARY_SEGMENTERS else None
        # Whether tokens go through _filter (a dictionary's words compose their voicing marks
        # there); read by every query's terms().
        self._filters = config.has_filters or self._segmenter is not None
        self._grams = config.segmenter == NGRAM_SEGMENTER
        self._words = _ascii_words(config.max_token_length)
        self._stemmers: dict[str, Any] = {}
        self._stop = pa.array(config.stop_words, pa.large_string()) if config.stop_words else None
        self._tables = SEGMENTERS.get(config.segmenter, segment_tables)
        # A row's language (a name or ISO code, lowercased) -> its place in config.languages.
        codes = [c for c, name in ISO_639_1.items() if name in config.languages]
        self._language_keys = pa.array([*config.languages, *codes], pa.string())
        self._key_language = np.array(
            [*range(len(config.languages)), *(config.languages.index(ISO_639_1[c]) for c in codes)], dtype=np.int64
        )

    def analyze(
        self, values: pa.Array | pa.ChunkedArray, seed: Sequence[str] = (), spans: bool = False,
        languages: pa.Array | pa.ChunkedArray | None = None,
    ) -> TokenStream:
        """Tokenize every value; null and empty values have no tokens.

        ``seed`` terms (already analyzed, distinct) get term ids 0..len(seed)-1 when the
        analyzer has no filters (where a term is its token), which lets a scan pick out a
        query's terms without a lookup. ``spans`` also records each token's byte span in
        its value (what highlighting needs; searching does not pay for it). ``languages``
        (with a ``language_column``: its values for the same rows) names each row's
        language; without it every row is stemmed as one whose language is null.
        """
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
        seed_terms = tuple(seed) if not self._filters else ()
        pieces = _pieces(values, GRAM_PIECE_BYTES if self._grams else PIECE_BYTES)
        if len(pieces) == 1:
            streams = [self._tokenize(values, seed_terms, spans)]
        else:
            pool = _tokenizer_pool()
            streams = list(
                pool.map(lambda p: self._tokenize(values.slice(*p), seed_terms, spans), pieces)
            )
        stream = _concat_streams(streams, [p[0] for p in pieces], len(values), len(seed_terms))
        return self._filter(stream, languages) if self._filters else stream

    def analyze_rows(
        self, rows: pa.RecordBatch | pa.Table, column: str, seed: Sequence[str] = (), spans: bool = False
    ) -> TokenStream:
        """:meth:`analyze` of ``rows[column]``, each row in the language its language
        column names (``rows`` holds :meth:`AnalyzerConfig.reads`): how every plan reads
        rows, so they all index them alike."""
        language_column = self.config.language_column
        languages = rows.column(language_column) if language_column is not None else None
        return self.analyze(rows.column(column), seed=seed, spans=spans, languages=languages)

    def _tokenize(self, values: pa.Array, seed: tuple[str, ...], spans: bool = False) -> TokenStream:
        if self._segmenter is not None:
            return self._tokenize_words(values, spans)
        data, offsets, valid = _string_buffers(values)
        if self._grams:
            if seed or spans:
                raise InvalidArgument("an n-gram index's analysis takes no seed terms and gives no spans")
            row, term, pos, dl, vbytes, voffsets = char_grams(data, offsets, valid.view(np.uint8), *fold_tables(),
                                                              GRAM_LENGTH)
            return TokenStream(len(values), row, term, pos, dl, _vocab_array(vbytes, voffsets, len(voffsets) - 1))
        kind, lower, compose = self._tables()
        seed_bytes, seed_offsets = _encode_seed(seed)
        args = (
            data, offsets, valid.view(np.uint8), kind, lower, compose, self.config.max_token_length,
            seed_bytes, seed_offsets,
        )
        start = end = None
        if spans:
            row, term, pos, dl, vbytes, voffsets, start, end = tokenize_spans(*args)
        else:
            row, term, pos, dl, vbytes, voffsets = tokenize(*args)
        vocab = _vocab_array(vbytes, voffsets, len(voffsets) - 1)
        return TokenStream(len(values), row, term, pos, dl, vocab, n_seed=len(seed), start=start, end=end)

    def _tokenize_words(self, values: pa.Array, spans: bool) -> TokenStream:
        """The tokens of a dictionary segmenter's words: to the kernel each word is a value of
        its own (and each gap between two words a null one), so its characters are
        lowercased and folded as everywhere else; positions count a row's tokens."""
        data, offsets, _ = _string_buffers(values)
        word_row, word_start, word_end = word_spans(self.config.segmenter, values, data, offsets)
        base = offsets[word_row]
        bounds = np.stack([base + word_start, base + word_end], axis=1).ravel() if len(word_row) else offsets[:1]
        is_word = (np.arange(max(len(bounds) - 1, 0)) % 2 == 0).astype(np.uint8)
        out = tokenize_spans(
            data, bounds, is_word, *self._tables(), self.config.max_token_length, _NO_SEED_BYTES, _NO_SEED_OFFSETS,
        )
        word = out[0] // 2
        row = word_row[word]
        pos = (np.arange(len(row)) - np.searchsorted(row, row)).astype(np.int32)
        dl = np.bincount(row, minlength=len(values)).astype(np.int32)
        vocab = _vocab_array(out[4], out[5], len(out[5]) - 1)
        start = end = None
        if spans:
            start = (word_start[word] + out[6]).astype(np.int32)
            end = (word_start[word] + out[7]).astype(np.int32)
        return TokenStream(len(values), row, out[1], pos, dl, vocab, start=start, end=end)

    def _filter(self, stream: TokenStream, languages: pa.Array | pa.ChunkedArray | None) -> TokenStream:
        """Apply folding, stop words and stemming to the distinct tokens (with a language
        column: stemming to the distinct pairs of token and row language), then remap."""
        mapped: pa.Array = stream.vocab
        keep = None
        if self._segmenter is not None:
            mapped = compose_voicing(mapped)
            keep = pc.greater(pc.binary_length(mapped), 0).to_numpy(zero_copy_only=False)
        if self.config.ascii_folding:
            mapped = self._fold(mapped)
        if self._stop is not None:
            stop = pc.invert(pc.is_in(mapped, value_set=self._stop)).to_numpy(zero_copy_only=False)
            keep = stop if keep is None else keep & stop
        tokens = stream.term
        if self.config.language_column is not None:
            tokens, mapped, keep = self._stem_by_row(stream, mapped, keep, languages)
        elif self.config.stemmer is not None:
            mapped = pa.array(self._stem(self.config.stemmer, mapped.to_pylist()), pa.large_string())
        encoded = pc.dictionary_encode(mapped)
        remap = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32)
        if keep is not None:
            remap = np.where(keep, remap, np.int32(-1)).astype(np.int32)
        vocab = encoded.dictionary
        row, term, pos, dl = remap_tokens(stream.row, tokens, stream.pos, remap, stream.n_rows)
        start, end = stream.start, stream.end
        if start is not None and end is not None and keep is not None:
            kept = remap[tokens] >= 0  # the tokens remap_tokens keeps, in order
            start, end = start[kept], end[kept]
        return TokenStream(stream.n_rows, row, term, pos, dl, vocab.cast(pa.large_string()), start=start, end=end)

    def _stem(self, language: str, words: list[str]) -> list[str]:
        stemmer = self._stemmers.get(language)
        if stemmer is None:
            import Stemmer

            stemmer = self._stemmers[language] = Stemmer.Stemmer(language)
        return stemmer.stemWords(words)

    def _stem_by_row(
        self, stream: TokenStream, mapped: pa.Array, keep: np.ndarray | None,
        languages: pa.Array | pa.ChunkedArray | None,
    ) -> tuple[np.ndarray, pa.Array, np.ndarray | None]:
        """Each distinct (token, row language) pair stemmed once, in groups of one
        language: the tokens' ids become pair ids, ``mapped`` (stemmed) and ``keep`` are
        per pair. A row whose language is null or unknown is stemmed by ``stemmer`` (None:
        not stemmed)."""
        n_lang = len(self.config.languages) + 1  # (the last: the fallback)
        codes = self._language_codes(languages, stream.n_rows)
        pairs, tokens = _distinct(stream.term.astype(np.int64) * n_lang + codes[stream.row], len(stream.vocab) * n_lang)
        term, lang = pairs // n_lang, pairs % n_lang
        order = np.argsort(lang, kind="stable")
        bounds = np.searchsorted(lang[order], np.arange(n_lang + 1)).tolist()
        words = mapped.take(pa.array(term[order])).to_pylist()
        stems: list[str] = []
        for code in range(n_lang):
            group = words[bounds[code] : bounds[code + 1]]
            language = self.config.languages[code] if code < n_lang - 1 else self.config.stemmer
            stems.extend(self._stem(language, group) if group and language is not None else group)
        stemmed = pa.array(stems, pa.large_string()).take(pa.array(np.argsort(order)))
        return tokens.astype(np.int32, copy=False), stemmed, keep[term] if keep is not None else None

    def _language_codes(self, languages: pa.Array | pa.ChunkedArray | None, n_rows: int) -> np.ndarray:
        """Each row's place in ``config.languages`` (its value a name or ISO 639-1 code,
        any case); ``len(config.languages)`` for a null or unknown one (the fallback)."""
        fallback = len(self.config.languages)
        if languages is None:
            return np.full(n_rows, fallback, dtype=np.int64)
        if isinstance(languages, pa.ChunkedArray):
            languages = languages.combine_chunks() if languages.num_chunks != 1 else languages.chunk(0)
        if not pa.types.is_string(languages.type):
            languages = languages.cast(pa.string())
        keys = pc.utf8_lower(pc.utf8_trim_whitespace(languages))
        found = pc.fill_null(pc.index_in(keys, value_set=self._language_keys), -1).to_numpy(zero_copy_only=False)
        return np.where(found >= 0, self._key_language[np.maximum(found, 0)], fallback)

    def variants(self, text: str, language: str | None = None) -> list[tuple[str, ...]]:
        """The terms of ``text`` (as :meth:`terms`) in each language a row may be in,
        distinct, in first-seen order: in ``language`` only when given (one of the
        analyzer's ``languages``, or its ISO 639-1 code), else in each of them and as a row
        whose language is null. One list when the analyzer has no language column."""
        if language is None and self.config.language_column is None:
            return [tuple(self.terms(text))]
        if language is None:
            languages: Sequence[str | None] = (*self.config.languages, None)
        else:
            name = language_name(language) if isinstance(language, str) else None
            if self.config.language_column is None or name not in self.config.languages:
                known = list(self.config.languages) if self.config.language_column else "none (no language_column)"
                raise InvalidArgument(f"the column's analyzer has no language {language!r}; its languages: {known}")
            languages = (name,)
        stream = self.analyze(pa.array([text] * len(languages), pa.large_string()), languages=pa.array(languages, pa.string()))
        vocab = stream.vocab.to_pylist()
        terms = [vocab[t] for t in stream.term.tolist()]
        ends = np.cumsum(stream.dl).tolist()
        return list(dict.fromkeys(tuple(terms[e - n : e]) for e, n in zip(ends, stream.dl.tolist())))

    def match_groups(self, text: str, language: str | None = None) -> list[tuple[str, ...]]:
        """A Match's terms, grouped by word: each word's distinct terms over
        :meth:`variants`, a term only in the first word it comes from (a term counts once),
        words left with none dropped. A Match requiring every word requires a term of each
        group; each term is scored once."""
        seen: set[str] = set()
        groups = []
        for alternatives in zip(*self.variants(text, language)):
            group = tuple(t for t in dict.fromkeys(alternatives) if t not in seen)
            seen.update(group)
            if group:
                groups.append(group)
        return groups

    def terms(self, text: str) -> list[str]:
        """The terms of one text, in order, repeats kept (how query text is analyzed; with
        a language column, as a row whose language is null: :meth:`variants` has the rest).

        Without filters this calls the kernel on the text's bytes directly: query text is
        short, and building Arrow arrays around it would cost more than tokenizing it.
        """
        if self._filters:
            stream = self.analyze(pa.array([text], pa.large_string()))
            vocab = stream.vocab.to_pylist()
            return [vocab[t] for t in stream.term.tolist()]
        if text.isascii():
            # In ASCII the word characters are exactly [A-Za-z0-9] and one byte each.
            return self._words.findall(text.lower())
        data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        _, term, _, _, vbytes, voffsets = tokenize(
            data, np.array([0, len(data)], dtype=np.int64), _ONE_VALID, *self._tables(),
            self.config.max_token_length, _NO_SEED_BYTES, _NO_SEED_OFFSETS,
        )
        raw, bounds = vbytes.tobytes(), voffsets.tolist()
        vocab = [raw[bounds[i] : bounds[i + 1]].decode("utf-8") for i in range(len(bounds) - 1)]
        return [vocab[t] for t in term.tolist()]

    def placed_terms(self, text: str) -> tuple[list[str], tuple[int, ...] | None]:
        """:meth:`terms` and their positions from the first, None when those follow each
        other (a phrase's places: two runs of grams are one position apart)."""
        stream = self.analyze(pa.array([text], pa.large_string()))
        vocab = stream.vocab.to_pylist()
        terms = [vocab[t] for t in stream.term.tolist()]
        if not len(stream.pos) or int(stream.pos[-1]) - int(stream.pos[0]) == len(terms) - 1:
            return terms, None
        return terms, tuple((stream.pos - stream.pos[0]).tolist())

    def lone(self, terms: Iterable[str]) -> str | None:
        """The character of a script cut into bigrams that a text's ``terms`` (already
        analyzed) are, alone (a query of one character, which stands for every gram
        holding it), else None. Inside a longer text a lone character is a term like any
        other: expanding it there cost known-item MRR@10 0.03 on Debian's Chinese pages
        (docs/design.md: "Analysis")."""
        distinct = set(terms)  # (a term repeated counts once)
        char = distinct.pop() if len(distinct) == 1 else None
        return char if char is not None and self.lone_char(char) else None

    def lone_char(self, term: str) -> bool:
        """Whether ``term`` is one character of a script this analyzer cuts into bigrams
        (a query's run of one character): it stands for every gram holding it."""
        return len(term) == 1 and self._tables is script_tables and script_tables()[0][ord(term)] == BIGRAM

    def normalize(self, text: str) -> str:
        """Lowercase and fold width (and fold to ASCII) without splitting or stemming: how a
        prefix is compared."""
        lower = self._tables()[1]
        lowered = "".join(chr(lower[ord(c)]) for c in text)
        if self.config.ascii_folding:
            lowered = self._fold(pa.array([lowered], pa.large_string()))[0].as_py()
        return lowered

    def _fold(self, terms: pa.Array) -> pa.Array:
        """ASCII folding of ``terms``; with a segmenter, not of those holding a character of
        the scripts written without spaces (NFKD would strip the voicing of kana, ガ to カ,
        and take Hangul syllables apart). Indexes built before segmenters fold every term."""
        folded = fold_ascii(terms)
        if self.config.segmenter == "none":
            return folded
        return pc.if_else(pc.match_substring_regex(terms, _SCRIPTS_WITHOUT_SPACES), terms, folded)


def _is_word(c: str) -> bool:
    """A word character as the tokenizer's table has it (letters and digits, no surrogates)."""
    return c.isalnum() and not "\ud800" <= c <= "\udfff"


def split_last_word(text: str) -> tuple[str, str | None]:
    """``(text before its last word, the last word)``; the word is None when ``text`` has
    none. A word is a maximal run of letters and digits, as the tokenizer splits: a phrase
    prefix expands its last word as written (docs/design.md: "Compound queries")."""
    end = len(text)
    while end and not _is_word(text[end - 1]):
        end -= 1
    if not end:
        return text, None
    start = end
    while start and _is_word(text[start - 1]):
        start -= 1
    return text[:start], text[start:end]


def columns_read(analyzers: Mapping[str, "Analyzer"], columns: Iterable[str]) -> list[str]:
    """The columns analyzing ``columns`` reads (each, and the column naming its rows'
    languages if any), distinct, in order."""
    return list(dict.fromkeys(c for column in columns for c in analyzers[column].config.reads(column)))


def _distinct(keys: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for keys in [0, bound): by a table of
    ``bound`` flags while that is not much more than the keys (three times faster than
    sorting them), else by sorting."""
    if bound > 4 * len(keys) + (1 << 16):
        distinct, inverse = np.unique(keys, return_inverse=True)
        return distinct, inverse.ravel()
    seen = np.zeros(bound, dtype=np.bool_)
    seen[keys] = True
    place = np.cumsum(seen, dtype=np.int32) - 1
    return np.flatnonzero(seen), place[keys]


# Tokenizer calls are cut into pieces of at most this many rows / text bytes (see
# kernels/tokenizer.pyx) and run on a small thread pool (the kernel releases the GIL).
PIECE_ROWS = 65_536
PIECE_BYTES = 16 << 20
# (the n-gram kernel's scratch is 40 bytes and more per byte of text: smaller pieces)
GRAM_PIECE_BYTES = 2 << 20


def _pieces(values: pa.Array, piece_bytes: int = PIECE_BYTES) -> list[tuple[int, int]]:
    """(start, length) row slices of about PIECE_ROWS rows / ``piece_bytes`` bytes each."""
    n = len(values)
    if n <= 1:
        return [(0, n)]
    nbytes = values.nbytes
    rows = max(1, min(PIECE_ROWS, int(n * piece_bytes / max(nbytes, 1))))
    return [(start, min(rows, n - start)) for start in range(0, n, rows)]


@functools.lru_cache(maxsize=1)
def _tokenizer_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)), thread_name_prefix="fts-tokenize")


def _concat_streams(
    streams: list[TokenStream], starts: list[int], n_rows: int, n_seed: int
) -> TokenStream:
    """One stream with one vocabulary from per-piece streams (piece row r -> start + r)."""
    if len(streams) == 1:
        return streams[0]
    encoded = pc.dictionary_encode(pa.concat_arrays([s.vocab for s in streams]))
    global_ids = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32)
    rows, terms = [], []
    base = 0
    for stream, start in zip(streams, starts):
        rows.append(stream.row + np.int32(start))
        terms.append(global_ids[base : base + len(stream.vocab)][stream.term])
        base += len(stream.vocab)
    spans = streams[0].start is not None
    return TokenStream(
        n_rows,
        np.concatenate(rows),
        np.concatenate(terms),
        np.concatenate([s.pos for s in streams]),
        np.concatenate([s.dl for s in streams]),
        encoded.dictionary.cast(pa.large_string()),
        n_seed=n_seed,
        start=np.concatenate([s.start for s in streams]) if spans else None,
        end=np.concatenate([s.end for s in streams]) if spans else None,
    )


# (RE2's script classes: what ASCII folding leaves alone under a segmenter)
_SCRIPTS_WITHOUT_SPACES = r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]"


def fold_ascii(values: pa.Array) -> pa.Array:
    """Fold accented Latin letters to ASCII: NFKD, drop combining marks, then a few extras."""
    folded = pc.replace_substring_regex(pc.utf8_normalize(values, "NFKD"), r"\p{Mn}", "")
    for src, dst in _FOLD_EXTRA.items():
        folded = pc.replace_substring(folded, src, dst)
    return folded


@functools.lru_cache(maxsize=64)
def analyzer_for(config: AnalyzerConfig) -> Analyzer:
    """One shared Analyzer per config (it caches a stemmer)."""
    return Analyzer(config)
