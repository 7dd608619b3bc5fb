"""One exception hierarchy for everything the package raises on bad input (docs/design.md:
"Errors")."""

from __future__ import annotations


class FtsError(Exception):
    """Base of every error raised by datafusion-fts."""


class FtsNotice(UserWarning):
    """Advice about how a statement ran, issued as a Python warning (the CLI and the SQL
    shell print it): a MATCH that scanned more than ``fts.residual_row_limit`` rows
    because no index covers its column, with the statement that would index it."""


class InvalidArgument(FtsError, ValueError):
    """A Python API argument is out of its domain (a bad option, limit, or type)."""


class CatalogError(FtsError, KeyError):
    """An unknown (or already existing) table, column or index."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class StorageError(FtsError):
    """The database directory is unreadable, inconsistent, or a write failed."""


class StaleSnapshotError(StorageError):
    """A file the read's snapshot names is gone: a later commit retired it and it was
    deleted ``fts.gc_grace_seconds`` later (or the directory is damaged). Reading again
    reads the current version; searches do that once by themselves."""

    def __init__(self, message: str, file_id: str) -> None:
        super().__init__(message)
        self.file_id = file_id


class ConflictError(StorageError):
    """A conditional write lost: another writer created or changed the object first (two
    processes committing at once). Nothing of the losing write is visible; reading again
    sees the winner's."""


class ReadOnlyError(StorageError):
    """A write to a database opened read-only: ``connect(path, read_only=True)``, or a
    directory whose storage refused to be written when it was opened (a read-only mount,
    no write permission). ``path`` is the database; ``reason`` says which of the two."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"database {path} was opened read-only ({reason}): writes are refused and "
                         "nothing was changed")
        self.path, self.reason = path, reason


class PlanError(FtsError):
    """No plan can answer the query as asked (for example an impossible forced plan)."""


class _PositionedError(FtsError):
    """An error that points into a text: ``offset`` (0-based) and a caret excerpt."""

    def __init__(self, message: str, text: str, offset: int, length: int = 1) -> None:
        self.message = message
        self.text = text
        self.offset = max(0, min(offset, len(text)))
        self.length = max(1, length)
        super().__init__(self._render())

    @property
    def line(self) -> int:
        return self.text.count("\n", 0, self.offset) + 1

    @property
    def column(self) -> int:
        return self.offset - (self.text.rfind("\n", 0, self.offset) + 1) + 1

    def _render(self) -> str:
        start = self.text.rfind("\n", 0, self.offset) + 1
        end = self.text.find("\n", self.offset)
        line_text = self.text[start : end if end >= 0 else len(self.text)]
        caret = " " * (self.offset - start) + "^" * min(self.length, max(1, len(line_text)))
        return f"{self.message} at {self.line}:{self.column}\n  {line_text}\n  {caret}"


class QuerySyntaxError(_PositionedError):
    """A query string (docs/design.md: "The query tree and the query string") that does not parse;
    ``offset`` points into it."""


class SqlError(_PositionedError):
    """A SQL statement that does not parse or names something wrong; line:column point into it."""


class EngineError(FtsError):
    """DataFusion refused or failed a statement ``db.sql`` ran (an unknown column, a type
    mismatch, a division by zero): its message, as DataFusion gives it (without a
    position); the original exception is the ``__cause__``."""


class DistributedError(FtsError):
    """A distributed worker or build task failed past its retry budget; nothing partial
    was returned or committed."""
