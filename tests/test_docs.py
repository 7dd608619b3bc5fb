"""Every example of the user guide (docs/guide/*.md) and of the README runs.

Each guide page is a script: its fenced code blocks run in document order, one pytest
test per block, with one namespace and one temporary working directory per page.

- ```python blocks are executed with ``exec`` (they may ``assert`` expected outputs);
  tracebacks point at the line of the Markdown file.
- ```sql blocks run through ``db.sql(...)`` where ``db`` is the page's database (the
  ``db`` its Python blocks defined, by convention in the page's first block); the result
  is collected into ``sql_result`` (a ``pyarrow.Table``) for the next Python block.
- ```bash blocks run with ``bash -euo pipefail`` in the page's directory, with this
  interpreter's ``bin`` directory first on PATH (so ``datafusion-fts`` is this
  install's); their stdout is kept as ``shell_output``.
- Other languages (```text, ```console) are output listings and are not run.

An HTML comment on the line right before a block changes how it is tested:
``<!-- docs-test: skip REASON -->`` does not run it (e.g. commands that install a
virtualenv), ``<!-- docs-test: xfail BUG: REASON -->`` runs it as a strict xfail: the
example shows the documented behaviour honestly and fails until the bug is fixed.

Running a single block's test first runs the page's earlier blocks, so any test id can
be selected on its own.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide"
PAGES = (
    "index.md",
    "sql.md",
    "query-language.md",
    "python-api.md",
    "guarantees.md",
    "planner.md",
    "storage.md",
    "performance.md",
    "cli.md",
    "../../README.md",
)
RUN = ("python", "sql", "bash")
LISTING = ("text", "console")
FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
MARKER = re.compile(r"^<!--\s*docs-test:\s*(skip|xfail)\b\s*(.*?)\s*-->$", re.S)


@dataclass(frozen=True)
class Block:
    page: str
    index: int
    lang: str
    line: int  # 1-based line of the block's first code line
    code: str
    mode: str = "run"  # "run", "skip" or "xfail"
    reason: str = ""

    @property
    def label(self) -> str:
        return f"{self.page}:{self.line} ({self.lang})"


def parse_blocks(page: str, text: str) -> list[Block]:
    blocks = []
    for match in FENCE.finditer(text):
        lang = match.group(1).lower()
        if lang not in RUN:
            continue
        line = text.count("\n", 0, match.start(2)) + 1
        before = text[: match.start()].rstrip().rsplit("\n", 1)[-1].strip()
        marker = MARKER.match(before)
        mode, reason = (marker.group(1), marker.group(2)) if marker else ("run", "")
        blocks.append(Block(page, len(blocks), lang, line, match.group(2), mode, reason))
    return blocks


def _all_blocks() -> list[Block]:
    out: list[Block] = []
    for page in PAGES:
        path = GUIDE / page
        if path.exists():
            out.extend(parse_blocks(page, path.read_text("utf-8")))
    return out


BLOCKS = _all_blocks()


def _param(block: Block) -> Any:
    marks = []
    if block.mode == "skip":
        marks.append(pytest.mark.skip(reason=block.reason or "marked docs-test: skip"))
    elif block.mode == "xfail":
        marks.append(pytest.mark.xfail(strict=True, reason=block.reason))
    stem = Path(block.page).stem
    return pytest.param(block, id=f"{stem}-{block.index:02d}-{block.lang}-L{block.line}", marks=marks)


@dataclass
class PageState:
    directory: Path
    namespace: dict[str, Any] = field(default_factory=dict)
    next_index: int = 0
    broken: str | None = None


class Pages:
    """The running state of each page: namespace, directory, how far it has run."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.states: dict[str, PageState] = {}

    def state(self, page: str) -> PageState:
        if page not in self.states:
            stem = Path(page).stem
            directory = self.factory.mktemp(stem)
            self.states[page] = PageState(directory, {"__name__": f"docs_{stem.replace('-', '_')}"})
        return self.states[page]


def _execute(block: Block, state: PageState) -> None:
    ns = state.namespace
    cwd = os.getcwd()
    os.chdir(state.directory)
    try:
        if block.lang == "python":
            # Pad so that line numbers in tracebacks are the Markdown file's.
            source = "\n" * (block.line - 1) + block.code
            exec(compile(source, str(GUIDE / block.page), "exec"), ns)
        elif block.lang == "sql":
            db = ns.get("db")
            if db is None:
                raise AssertionError(f"{block.label}: no `db` defined by an earlier python block")
            ns["sql_result"] = db.sql(block.code).to_arrow_table()
        else:
            env = dict(os.environ)
            env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
            env.setdefault("COLUMNS", "100")
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", block.code],
                cwd=state.directory, env=env, capture_output=True, text=True, timeout=120,
            )
            if done.returncode != 0:
                raise AssertionError(
                    f"{block.label} exited with {done.returncode}\n"
                    f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
                )
            ns["shell_output"] = done.stdout
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory):
    state = Pages(tmp_path_factory)
    yield state
    for page in state.states.values():
        page.namespace.clear()


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_guide_block(block: Block, pages: Pages) -> None:
    state = pages.state(block.page)
    page_blocks = [b for b in BLOCKS if b.page == block.page]
    # Catch up: run the page's earlier blocks that have not run yet (when this test is
    # selected alone, or an earlier one was deselected).
    while state.next_index < block.index and state.broken is None:
        earlier = page_blocks[state.next_index]
        state.next_index += 1
        if earlier.mode == "skip":
            continue
        try:
            _execute(earlier, state)
        except Exception as exc:
            if earlier.mode != "xfail":
                state.broken = f"{earlier.label}: {type(exc).__name__}: {exc}"
    if state.broken is not None:
        pytest.fail(f"an earlier block of {block.page} failed, so this one cannot run: {state.broken}", pytrace=False)
    state.next_index = block.index + 1
    try:
        _execute(block, state)
    except Exception:
        if block.mode != "xfail":
            state.broken = block.label
        raise


def test_every_page_exists_and_has_examples() -> None:
    for page in PAGES:
        assert (GUIDE / page).is_file(), f"docs/guide/{page} is missing"
        assert any(b.page == page for b in BLOCKS), f"docs/guide/{page} has no runnable example"


def test_code_fences_are_known_languages() -> None:
    """A typo such as ```pyhton would silently turn an example into text."""
    for path in sorted(GUIDE.glob("*.md")):
        for match in FENCE.finditer(path.read_text("utf-8")):
            lang = match.group(1).lower()
            line = path.read_text("utf-8").count("\n", 0, match.start()) + 1
            assert lang in RUN + LISTING, f"{path.name}:{line}: unknown fence language {lang!r}"


def test_markers_sit_on_runnable_blocks() -> None:
    """Every docs-test marker is directly followed by a runnable block; xfails name a BUG."""
    for path in sorted(GUIDE.glob("*.md")):
        text = path.read_text("utf-8")
        lines = text.split("\n")
        for number, line in enumerate(lines, start=1):
            marker = MARKER.match(line.strip())
            if not marker:
                continue
            following = lines[number] if number < len(lines) else ""
            assert re.match(r"^```(python|sql|bash)\b", following), (
                f"{path.name}:{number}: a docs-test marker must be right before a python/sql/bash block"
            )
            if marker.group(1) == "xfail":
                assert marker.group(2).startswith("BUG: "), f"{path.name}:{number}: xfail reason must start with 'BUG: '"


def test_relative_links_resolve() -> None:
    for path in sorted(GUIDE.glob("*.md")):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text("utf-8")):
            if "://" in target:
                continue
            assert (path.parent / target).exists(), f"{path.name}: broken link {target}"
