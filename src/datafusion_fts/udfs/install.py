"""The functions ``fts.install(ctx)`` registers, from one table (docs/design.md: "fts_search and the
text functions", issue 8).

DataFusion's Python UDFs have one exact signature per name, so each text function is
registered twice: its short form with the required arguments (``highlight(text, query)``)
and ``<name>_with`` taking every argument (``highlight_with(text, query, pre, post,
analyzer, column)``). ``db.sql`` also accepts the optional arguments of the short forms
(``highlight(body, 'q', '<em>', '</em>')``) and rewrites each call into the ``_with``
form, passing the column's index analyzer and name (:mod:`..sql.search.text_functions`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import datafusion
import numpy as np
import pyarrow as pa

from .error_bridge import ErrorBridge
from .fts_match import fts_match
from .fts_search import ManagedTables, register_fts_search
from .fts_tokenize import RETURN_TYPE as TOKENS
from .fts_tokenize import fts_tokenize
from .highlight import (
    DEFAULT_ELLIPSIS,
    DEFAULT_MAX_TOKENS,
    DEFAULT_POST,
    DEFAULT_PRE,
    highlight,
    snippet,
)


@dataclass(frozen=True)
class Arg:
    name: str
    type: pa.DataType
    default: Any = None  # what the short form passes (None: NULL, the analyzer's or column's default)


@dataclass(frozen=True)
class TextFunction:
    """A text function: its full argument list, how many the short form takes, and the
    argument counts ``db.sql`` accepts for the short name (each a prefix of ``args``)."""

    name: str
    function: Callable[..., pa.Array]
    args: tuple[Arg, ...]
    required: int
    sql_arities: tuple[int, ...]
    return_type: pa.DataType

    @property
    def full_name(self) -> str:
        return f"{self.name}_with"


_TEXT, _QUERY = Arg("text", pa.string()), Arg("query", pa.string())
_ANALYZER, _COLUMN = Arg("analyzer", pa.string()), Arg("column", pa.string())
_PRE, _POST = Arg("pre", pa.string(), DEFAULT_PRE), Arg("post", pa.string(), DEFAULT_POST)
# Each text's language, for an analyzer that stems the rows of a column by their language
# column (NULL: the analyzer's default stemmer); db.sql passes that column.
_LANGUAGE = Arg("language", pa.string())

FUNCTIONS: dict[str, TextFunction] = {
    f.name: f
    for f in (
        TextFunction("highlight", highlight, (_TEXT, _QUERY, _PRE, _POST, _ANALYZER, _COLUMN, _LANGUAGE), 2, (2, 4),
                     pa.string()),
        TextFunction(
            "snippet",
            snippet,
            (_TEXT, _QUERY, Arg("max_tokens", pa.int64(), DEFAULT_MAX_TOKENS), _PRE, _POST,
             Arg("ellipsis", pa.string(), DEFAULT_ELLIPSIS), _ANALYZER, _COLUMN, _LANGUAGE),
            2,
            (2, 3, 5, 6),
            pa.string(),
        ),
        TextFunction("fts_match", fts_match, (_TEXT, _QUERY, _ANALYZER, _COLUMN, _LANGUAGE), 2, (2, 3), pa.bool_()),
        TextFunction("fts_tokenize", fts_tokenize, (_TEXT, _ANALYZER, _LANGUAGE), 1, (1, 2), TOKENS),
    )
}


def _constant(value: Any, type_: pa.DataType, n: int) -> pa.Array:
    if value is None:
        return pa.nulls(n, type_)
    return pa.array([value], type_).take(pa.array(np.zeros(n, dtype=np.int32)))


def _short_form(spec: TextFunction) -> Callable[..., pa.Array]:
    defaults = spec.args[spec.required :]

    def short(*arrays: pa.Array) -> pa.Array:
        n = len(arrays[0])
        return spec.function(*arrays, *(_constant(a.default, a.type, n) for a in defaults))

    return short


def _udf(
    name: str, function: Callable[..., pa.Array], args: tuple[Arg, ...], return_type: pa.DataType, errors: ErrorBridge
) -> datafusion.ScalarUDF:
    return datafusion.udf(errors.raising(function), [a.type for a in args], return_type, "immutable", name)


def install(ctx: datafusion.SessionContext, db: ManagedTables | None = None, errors: ErrorBridge | None = None) -> None:
    """Register ``fts_search`` (searching ``db``'s managed tables first) and the text
    functions on ``ctx``, raising through ``errors`` (``db``'s, which its ``db.sql``
    translates back; a bridge of their own otherwise)."""
    errors = errors if errors is not None else ErrorBridge()
    register_fts_search(ctx, db, errors)
    for spec in FUNCTIONS.values():
        ctx.register_udf(_udf(spec.name, _short_form(spec), spec.args[: spec.required], spec.return_type, errors))
        ctx.register_udf(_udf(spec.full_name, spec.function, spec.args, spec.return_type, errors))
