"""What a command's arguments may be: the choices, defaults and shared option groups
that both the declarations (:mod:`.commands`) and the implementations read.

A leaf of the command line (click and :mod:`datafusion_fts.defaults` only), so declaring
and checking arguments loads nothing of the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .. import defaults
from ..storage.files.layout import MANIFEST

# How results print (``search --format``, ``sql --format``).
OUTPUT_FORMATS = ("table", "csv", "json", "jsonl")
# What ``import`` reads, and the block it reads CSV and JSON in (pyarrow's default).
FILE_FORMATS = ("parquet", "csv", "jsonl")
SUFFIX_FORMATS = {
    ".parquet": "parquet", ".pq": "parquet",
    ".csv": "csv", ".tsv": "csv",
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
}
COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".lz4": "lz4"}
BLOCK_BYTES = 1 << 20
# The SQL shell: rows a result table shows, and where its history is kept.
MAX_ROWS = 100
HISTORY_FILE = "~/.datafusion_fts_history"
# click option name -> create_index keyword
INDEX_OPTION_NAMES = ("positions", "analyzer", "stemmer", "stop_words", "ascii_folding",
                      "max_token_length", "k1", "b")


def index_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The ``create_index`` options as click options (None when not given, so the
    engine's defaults apply; the engine validates them, so the CLI holds no second copy
    of the rules)."""
    decorators = [
        click.option("--positions/--no-positions", default=None,
                     help=f"Store positions (phrase queries need them). Default: "
                          f"{'yes' if defaults.POSITIONS else 'no'}."),
        click.option("--analyzer", type=click.Choice(sorted(defaults.NAMED_ANALYZERS)), default=None,
                     help=f"Named analyzer (default {defaults.ANALYZER}); the options below override it."),
        click.option("--stemmer", default=None, help="Snowball stemmer language, e.g. english."),
        click.option("--stop-words", default=None,
                     help="Built-in stop word list (e.g. english) or 'none'."),
        click.option("--ascii-folding/--no-ascii-folding", default=None,
                     help="Fold accented letters to ASCII."),
        click.option("--max-token-length", type=int, default=None,
                     help=f"Drop tokens longer than this many UTF-8 bytes (default {defaults.MAX_TOKEN_LENGTH})."),
        click.option("--k1", type=float, default=None, help=f"BM25 k1 (default {defaults.K1:g})."),
        click.option("--b", type=float, default=None, help=f"BM25 b (default {defaults.B:g})."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def chosen_index_options(values: dict[str, Any]) -> dict[str, Any]:
    """The index options a command was given, as ``create_index`` keywords."""
    return {name: values[name] for name in INDEX_OPTION_NAMES if values.get(name) is not None}


def progress_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--progress/--no-progress``; by default bars show only when stderr is a terminal."""
    return click.option(
        "--progress/--no-progress", "show_progress", default=None,
        help="Show progress bars (default: when stderr is a terminal).",
    )(command)


def file_format(path: Path, given: str | None) -> str:
    """``--format``, or the format named by the file's suffix (after a compression one)."""
    if given is not None:
        return given
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in COMPRESSIONS:
        suffixes.pop()
    if path.is_dir():
        return "parquet"  # a directory of Parquet files is one dataset
    if suffixes and suffixes[-1] in SUFFIX_FORMATS:
        return SUFFIX_FORMATS[suffixes[-1]]
    raise click.UsageError(
        f"cannot tell the format of {path.name} from its suffix; pass --format "
        f"({'|'.join(FILE_FORMATS)})"
    )


def check_database_path(path: Path) -> None:
    """Refuse a directory that holds anything but a database (a new or empty one may
    become one).

    Why: opening a directory as a database garbage-collects every file in its ``data/``
    and ``index/`` subdirectories that its manifest does not name, so a database opened
    on ``~`` would delete ``~/data/*``.
    """
    if path.exists() and not path.is_dir():
        raise click.UsageError(f"{path} is a file, not a database directory")
    if path.exists() and any(path.iterdir()) and not (path / MANIFEST).is_file():
        raise click.UsageError(
            f"{path} is neither empty nor a datafusion-fts database (no {MANIFEST}); "
            "choose a new or empty directory"
        )


def check_database(path: Path) -> None:
    """Refuse a directory that is not a database already (``connect`` would otherwise
    quietly turn a mistyped path into an empty one)."""
    if not (path / MANIFEST).is_file():
        raise click.UsageError(f"{path} is not a datafusion-fts database (no {MANIFEST})")


def existing_database(ctx: click.Context, param: click.Parameter, value: Path) -> Path:
    """A ``DB_PATH`` argument that must be a database, checked while arguments are parsed."""
    check_database(value)
    return value


def new_or_existing_database(ctx: click.Context, param: click.Parameter, value: Path) -> Path:
    """A ``DB_PATH`` argument that is a database, or a new or empty directory."""
    check_database_path(value)
    return value
