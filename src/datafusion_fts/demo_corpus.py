"""A real English-text demo corpus that needs no network and no bundled data.

The docstrings of the running Python's standard library are read straight from its source
files with :mod:`ast`: nothing is imported, because importing arbitrary stdlib modules can
have side effects (``antigravity`` opens a browser, ``this`` prints). The result is
deterministic for a given Python installation.
"""

from __future__ import annotations

import ast
import os
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from .errors import InvalidArgument

__all__ = ["DOCSTRING_SCHEMA", "iter_stdlib_docstring_batches", "stdlib_docstrings"]

DOCSTRING_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("module", pa.string(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("body", pa.string(), nullable=False),
        pa.field("lineno", pa.int32(), nullable=False),
    ]
)

_TITLE_MAX_CHARS = 200

# Test suites are huge, repetitive and full of deliberately broken sources: not demo text.
_SKIP_DIRS = frozenset(
    {"__pycache__", "site-packages", "dist-packages", "test", "tests", "idle_test"}
)

_Row = tuple[str, str, str, str, str, int]  # module, name, kind, title, body, lineno


def _source_files(root: Path) -> list[tuple[str, Path]]:
    """``(dotted module name, path)`` for every stdlib module file, sorted by module path.

    Directories that are not identifiers (``site-packages``, ``lib-dynload``,
    ``config-3.x-…``) cannot be packages, so they are skipped with the test directories.
    """
    found: list[tuple[tuple[str, ...], Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d.isidentifier() and d not in _SKIP_DIRS]
        rel = Path(dirpath).relative_to(root).parts
        for filename in filenames:
            stem, ext = os.path.splitext(filename)
            if ext == ".py" and stem.isidentifier():
                found.append(((*rel, stem), Path(dirpath, filename)))
    found.sort(key=lambda item: item[0])
    files = []
    for parts, path in found:
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            files.append((".".join(parts), path))
    return files


def _title(doc: str) -> str:
    """First non-empty line of a cleaned docstring, stripped and capped in length."""
    for line in doc.splitlines():
        line = line.strip()
        if line:
            return line[:_TITLE_MAX_CHARS]
    return ""


_Def = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
_DEFS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _walk_defs(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, _Def]]:
    """Class and function definitions in source order with their qualified names.

    Descends through compound statements (``if``/``try``/``with``/…), since stdlib modules
    often define platform-specific functions inside them, but never into expressions.
    """
    stack: list[tuple[ast.AST, str]] = [(node, prefix) for node in reversed(body)]
    while stack:
        node, scope = stack.pop()
        children = ast.iter_child_nodes(node)
        if isinstance(node, _DEFS):
            qualname = f"{scope}.{node.name}" if scope else node.name
            yield qualname, node
            scope = qualname
        nested = [
            (child, scope)
            for child in children
            if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case))
        ]
        stack.extend(reversed(nested))


def _module_rows(module: str, path: Path) -> list[_Row]:
    """Docstring rows of one source file; a file that does not parse yields none."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, ValueError, RecursionError, OSError):
        return []
    rows: list[_Row] = []
    doc = ast.get_docstring(tree, clean=True)
    if doc and doc.strip():
        rows.append((module, "", "module", _title(doc), doc, tree.body[0].lineno))
    for qualname, node in _walk_defs(tree.body, ""):
        doc = ast.get_docstring(node, clean=True)
        if doc and doc.strip():
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            rows.append((module, qualname, kind, _title(doc), doc, node.lineno))
    return rows


def _batch(rows: list[_Row], first_id: int) -> pa.RecordBatch:
    """One record batch of rows whose ids start at ``first_id``."""
    module, name, kind, title, body, lineno = zip(*rows)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(range(first_id, first_id + len(rows)), type=pa.int64()),
            pa.array(module, type=pa.string()),
            pa.array(name, type=pa.string()),
            pa.array(kind, type=pa.string()),
            pa.array(title, type=pa.string()),
            pa.array(body, type=pa.string()),
            pa.array(lineno, type=pa.int32()),
        ],
        schema=DOCSTRING_SCHEMA,
    )


def iter_stdlib_docstring_batches(
    batch_rows: int = 4096, *, limit: int | None = None
) -> Iterator[pa.RecordBatch]:
    """Stream the stdlib docstrings in batches of ``batch_rows`` rows (ids dense from 0).

    Files are parsed lazily, so a small ``limit`` only reads the first few modules.
    """
    if batch_rows <= 0:
        raise InvalidArgument(f"batch_rows must be positive, got {batch_rows}")
    if limit is not None and limit < 0:
        raise InvalidArgument(f"limit must be >= 0, got {limit}")
    if limit == 0:
        return
    next_id = 0
    pending: list[_Row] = []
    root = Path(sysconfig.get_paths()["stdlib"])
    for module, path in _source_files(root) if root.is_dir() else []:
        pending.extend(_module_rows(module, path))
        done = False
        if limit is not None and len(pending) >= limit - next_id:
            del pending[limit - next_id :]
            done = True
        while len(pending) >= batch_rows:
            yield _batch(pending[:batch_rows], next_id)
            del pending[:batch_rows]
            next_id += batch_rows
        if done:
            break
    if pending:
        yield _batch(pending, next_id)


def stdlib_docstrings(limit: int | None = None) -> pa.Table:
    """The stdlib docstring corpus as one table, optionally only its first ``limit`` rows.

    Columns: ``id`` (int64, dense from 0), ``module`` (e.g. ``json.decoder``), ``name``
    (qualified, e.g. ``JSONDecoder.decode``; "" for the module itself), ``kind`` ("module",
    "class" or "function"), ``title`` (first docstring line), ``body`` (whole cleaned
    docstring) and ``lineno`` (int32; the ``def``/``class`` line, or the module docstring's).
    """
    batches = list(iter_stdlib_docstring_batches(limit=limit))
    return pa.Table.from_batches(batches, schema=DOCSTRING_SCHEMA)
