"""The package has no import cycles, counting every import: at module level, inside
functions and under ``TYPE_CHECKING``; and its imports point down the layers of
docs/design.md: "Import direction"."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "datafusion_fts"
# docs/design.md's layers, top first: a module imports its own layer's or lower ones'.
LAYERS = (
    {"cli"},
    {"__init__", "database"},
    {"sql", "udfs"},
    {"table", "distributed", "session"},
    {"catalog"},
    {"planner"},
    {"operators"},
    {"index", "storage", "ingest", "analysis", "query"},
    {"errors", "settings", "defaults", "demo_corpus", "kernels"},
)


def modules() -> dict[str, Path]:
    """Every module's file; a compiled kernel module (kernels/*.pyx) by its ``.pyx`` file,
    whose ``.pxd`` declarations are read with it."""
    found = {}
    for path in [*(SRC / PACKAGE).rglob("*.py"), *(SRC / PACKAGE).rglob("*.pyx")]:
        parts = path.relative_to(SRC).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


# A Cython import or cimport statement (Cython's grammar is not Python's: read by line).
_CYTHON_IMPORT = re.compile(r"^\s*(?:from\s+(\.*[\w.]*)\s+c?import\s+\(?([\w, ]+)|c?import\s+([\w.]+))", re.M)


def _statements(path: Path) -> list[ast.AST]:
    """The import statements of ``path`` (and of its ``.pxd`` for a ``.pyx``) as ast nodes."""
    if path.suffix == ".py":
        return [n for n in ast.walk(ast.parse(path.read_text(), str(path))) if isinstance(n, (ast.Import, ast.ImportFrom))]
    nodes: list[ast.AST] = []
    for source in (path, path.with_suffix(".pxd")):
        for found in _CYTHON_IMPORT.finditer(source.read_text() if source.exists() else ""):
            module, names, plain = found.groups()
            if plain:
                nodes.append(ast.Import(names=[ast.alias(name=plain)]))
            else:
                level = len(module) - len(module.lstrip("."))
                nodes.append(ast.ImportFrom(module=module.lstrip(".") or None, level=level,
                                            names=[ast.alias(name=n.split()[0]) for n in names.split(",") if n.strip()]))
    return nodes


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules ``name`` imports, wherever the import statement is."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _statements(path):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            # (a submodule named in ``from package import submodule`` is what is imported;
            # the package's __init__ runs first for any import of its modules)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        out.update(t for t in targets if t in known and t != name)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_import_cycles():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert cycles(graph) == []


def test_the_check_finds_a_cycle_hidden_in_a_function_or_under_type_checking(tmp_path):
    (tmp_path / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n")
    (tmp_path / "b.py").write_text("def f():\n    from .a import A\n")
    known = {"p.a": tmp_path / "a.py", "p.b": tmp_path / "b.py"}
    assert cycles({n: imports(n, p, known) for n, p in known.items()}) == [["p.a", "p.b"]]


def test_the_check_reads_cython_cimports(tmp_path):
    (tmp_path / "a.pyx").write_text("from libc.stdint cimport int64_t\nfrom .b cimport f, g\n")
    (tmp_path / "a.pxd").write_text("from datafusion_fts.errors import X\n")
    (tmp_path / "b.pyx").write_text("from .a import h\n")
    (tmp_path / "e.py").write_text("")
    known = {"p.a": tmp_path / "a.pyx", "p.b": tmp_path / "b.pyx", "datafusion_fts.errors": tmp_path / "e.py"}
    assert imports("p.a", tmp_path / "a.pyx", known) == {"p.b", "datafusion_fts.errors"}
    assert cycles({n: imports(n, p, known) for n, p in known.items()}) == [["p.a", "p.b"]]


def layer_of(module: str) -> int:
    """The layer of a module: its package's under ``datafusion_fts`` (or its own name)."""
    top = module.split(".")[1] if "." in module else "__init__"
    return next(i for i, layer in enumerate(LAYERS) if top in layer)


def upward(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports of a module in a layer above the importer's."""
    return sorted((a, b) for a, targets in graph.items() for b in targets if layer_of(b) < layer_of(a))


def test_imports_point_down_the_layers():
    known = modules()
    assert {n.split(".")[1] if "." in n else "__init__" for n in known} <= set().union(*LAYERS)
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert upward(graph) == []


def test_the_layer_check_finds_an_import_upward():
    graph = {"datafusion_fts.planner.rule": {"datafusion_fts.sql.search.execute", "datafusion_fts.index.segment"}}
    assert upward(graph) == [("datafusion_fts.planner.rule", "datafusion_fts.sql.search.execute")]


# docs/design.md, `sql/`: inside it, imports point from the entry down through its wings,
# top first; a module imports its own wing's or lower ones'.
SQL_WINGS = (
    {"statements"},
    {"search"},
    {"substring"},
    {"hosts", "managed_dml", "tables", "result_frame"},
    {"text"},
)


def sql_wing_of(module: str) -> int:
    """The wing of a module of ``sql/``: its subpackage's or its own name's."""
    part = module.split(".")[2]
    return next(i for i, wing in enumerate(SQL_WINGS) if part in wing)


def sql_upward(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports of a module of ``sql/`` of a module of ``sql/`` in a wing above the importer's."""
    inside = [(a, b) for a, targets in graph.items() for b in targets
              if a.startswith(f"{PACKAGE}.sql.") and b.startswith(f"{PACKAGE}.sql.")]
    return sorted((a, b) for a, b in inside if sql_wing_of(b) < sql_wing_of(a))


def test_sql_imports_point_down_its_wings():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert sql_upward(graph) == []


def test_the_wing_check_finds_an_import_upward():
    graph = {f"{PACKAGE}.sql.text.splice": {f"{PACKAGE}.sql.search.lower_select", f"{PACKAGE}.sql.text.dialect"},
             f"{PACKAGE}.sql.substring.run_substring": {f"{PACKAGE}.sql.hosts"}}
    assert sql_upward(graph) == [(f"{PACKAGE}.sql.text.splice", f"{PACKAGE}.sql.search.lower_select")]
