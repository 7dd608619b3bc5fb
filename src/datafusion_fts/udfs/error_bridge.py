"""Our errors, raised inside functions DataFusion calls, reach ``db.sql`` users as themselves.

DataFusion runs UDFs and table functions from Rust: an exception raised there comes back
as DataFusion's own error, whose text holds only the ``repr`` of ours (docs/design.md: "Errors"
wants an ``FtsError``). So every function a database registers raises through its
:class:`ErrorBridge` (:meth:`ErrorBridge.raising`), which remembers a detached copy of the
error, and that database's ``db.sql`` translates DataFusion's error back
(:meth:`ErrorBridge.translated`), matching the ``repr`` that DataFusion's text quotes.
Sessions that are not ``db.sql`` keep DataFusion's error, whose text still names ours and
its message.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import datafusion
import pyarrow as pa

from ..errors import EngineError, FtsError, StorageError

F = TypeVar("F", bound=Callable[..., Any])

_REMEMBERED = 32  # errors of recent statements; a statement raises at most a few
# DataFusion's messages when its Parquet reader cannot decode a file or reads past its
# end (a damaged footer): the file is damaged.
_PARQUET_FAILED = re.compile(r"Parquet (?:argument )?error|Object Store error: .* Out of range of file")


def _detached(err: FtsError) -> FtsError:
    """A copy of ``err`` without its traceback (whose frames would keep a batch alive)."""
    copy = type(err).__new__(type(err), *err.args)
    copy.__dict__.update(err.__dict__)
    copy.args = err.args
    return copy


class ErrorBridge:
    """One database's way back for its errors: those its functions raised inside
    DataFusion (the newest few, by ``repr``), found again in DataFusion's errors."""

    def __init__(self) -> None:
        self._recent: OrderedDict[str, FtsError] = OrderedDict()
        self._lock = threading.Lock()

    def _remember(self, err: FtsError) -> None:
        with self._lock:
            self._recent[repr(err)] = _detached(err)
            self._recent.move_to_end(repr(err))
            while len(self._recent) > _REMEMBERED:
                self._recent.popitem(last=False)

    def raising(self, function: F) -> F:
        """Wrap a function DataFusion calls so the FtsErrors it raises can be translated back."""

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return function(*args, **kwargs)
            except FtsError as err:
                self._remember(err)
                raise

        return wrapper  # type: ignore[return-value]

    def translated(self, exc: BaseException) -> BaseException:
        """The FtsError a DataFusion error reports (the newest that matches), else ``exc``."""
        if isinstance(exc, FtsError):
            return exc
        text = str(exc)
        with self._lock:
            for key in reversed(self._recent):
                if key in text:
                    return _detached(self._recent[key])
        return exc

    def call(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``function(*args)``, with DataFusion's errors translated: ours raised inside it
        as themselves, a data file its Parquet reader cannot decode as a StorageError, its
        others as an :class:`EngineError`."""
        try:
            return function(*args, **kwargs)
        except Exception as exc:
            found = self.translated(exc)
            if found is not exc:
                raise found from None
            del found  # (a local holding the error its traceback holds: a cycle keeping the caller's frames)
            if is_datafusion_error(exc):
                message = engine_message(exc)
                if _PARQUET_FAILED.search(message):
                    raise StorageError(f"a data file is damaged: DataFusion's Parquet reader failed: {message}") from exc
                raise EngineError(message) from exc
            raise

    def reading(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """:meth:`call` for a DataFrame handing its result over: Arrow refusing the result
        (its C data interface allows no NUL byte in a column name, which DataFusion gives a
        column of ``SELECT 'a\\0b'``) is an :class:`EngineError` too."""
        try:
            return self.call(function, *args, **kwargs)
        except pa.ArrowException as exc:
            raise EngineError(f"the result cannot be handed over: {exc}") from exc

    def translating(self, df: datafusion.DataFrame) -> "TranslatingDataFrame":
        """``df`` raising our errors as themselves (itself if it already does)."""
        if isinstance(df, TranslatingDataFrame):
            return df
        out = TranslatingDataFrame(df.df)
        out._bridge = self
        return out


def is_datafusion_error(exc: BaseException) -> bool:
    """Whether ``exc`` is DataFusion's: its Python binding raises plain ``Exception``,
    ``ValueError`` or ``RuntimeError`` with the engine's message."""
    return type(exc) in (Exception, ValueError, RuntimeError)


def engine_message(exc: BaseException) -> str:
    """DataFusion's message without the redundant prefix its binding adds."""
    return str(exc).strip().removeprefix("DataFusion error: ")


class _TranslatedStream:
    """A RecordBatchStream whose iteration translates errors."""

    def __init__(self, stream: Any, bridge: ErrorBridge) -> None:
        self._stream = stream
        self._bridge = bridge

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        return self._bridge.reading(self._stream.__next__)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class TranslatingDataFrame(datafusion.DataFrame):
    """What ``db.sql`` returns: a DataFusion DataFrame whose methods raise our errors as
    themselves (executing, collecting, streaming, and the frames derived from it), through
    its database's :class:`ErrorBridge` (made by :meth:`ErrorBridge.translating`)."""

    _bridge: ErrorBridge


def _translating(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: TranslatingDataFrame, *args: Any, **kwargs: Any) -> Any:
        bridge = self._bridge
        result = bridge.reading(method, self, *args, **kwargs)
        if isinstance(result, datafusion.DataFrame):
            return bridge.translating(result)
        if name.startswith("execute_stream"):
            if isinstance(result, list):
                return [_TranslatedStream(s, bridge) for s in result]
            return _TranslatedStream(result, bridge)
        return result

    return wrapper


for _name, _method in list(vars(datafusion.DataFrame).items()):
    if callable(_method) and (not _name.startswith("_") or _name in ("__iter__", "__arrow_c_stream__", "__repr__", "_repr_html_", "__getitem__")):
        setattr(TranslatingDataFrame, _name, _translating(_name, _method))
