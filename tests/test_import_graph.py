"""Imports among crystalbench's modules run one way: no cycle, imports inside functions included.

The graph is read from the source (``ast``), not from ``sys.modules``, so an import inside a
function body or an ``if TYPE_CHECKING:`` block counts as much as one at the top of a module:
a lazy import hides a cycle from Python until the function runs, not from a reader. Only the
edges a module writes are counted (``from crystalbench.a.b import c`` is an edge to
``crystalbench.a.b.c`` when that is a module, else to ``crystalbench.a.b``), not the parent
packages Python imports along the way.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "crystalbench"

KNOWN_CYCLES_OUTSIDE_TRAINING: frozenset[frozenset[str]] = frozenset()
"""Cycles tolerated for now; any other cycle fails the test. Empty: the last one (encoders and
encoders.parallel calling each other's loader) was broken by ``encoders.loading``."""


def module_files(src: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package ``__init__``) for every module of ``package``."""
    modules: dict[str, tuple[Path, bool]] = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        modules[".".join(parts)] = (path, is_package)
    return modules


def import_graph(src: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere in its source (self-edges dropped)."""
    modules = module_files(src, package)

    def owner(name: str) -> str | None:
        """The module ``name`` is, or the nearest enclosing one (``pkg.mod.x`` -> ``pkg.mod``)."""
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    def ours(name: str) -> bool:
        return name == package or name.startswith(package + ".")

    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        here = name if is_package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets.update(t for a in node.names if ours(a.name) and (t := owner(a.name)))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here
                    for _ in range(node.level - 1):
                        base = base.rpartition(".")[0]
                    source = f"{base}.{node.module}" if node.module else base
                else:
                    source = node.module or ""
                if not ours(source):
                    continue
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    target = submodule if submodule in modules else owner(source)
                    if target:
                        targets.add(target)
        targets.discard(name)
        graph[name] = targets
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def write_package(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_graph_sees_lazy_relative_and_type_checking_imports(tmp_path: Path) -> None:
    src = write_package(
        tmp_path,
        {
            "crystalbench/__init__.py": "",
            "crystalbench/low.py": "import json\n\ndef f():\n    from crystalbench import high\n",
            "crystalbench/high.py": "from crystalbench.low import f\n",
            "crystalbench/sub/__init__.py": "from . import a\n",
            "crystalbench/sub/a.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import X\n"
            ),
            "crystalbench/sub/b.py": "import crystalbench.sub.a as a\nX = 1\n",
            "crystalbench/sub/c.py": "from ..low import f\nfrom crystalbench.sub.b import X\n",
        },
    )
    graph = import_graph(src, "crystalbench")
    assert graph["crystalbench.low"] == {"crystalbench.high"}  # inside a function
    assert graph["crystalbench.high"] == {"crystalbench.low"}  # a name, not a module
    assert graph["crystalbench.sub"] == {"crystalbench.sub.a"}  # ``from . import a``
    assert graph["crystalbench.sub.c"] == {"crystalbench.low", "crystalbench.sub.b"}
    assert import_cycles(graph) == [
        ["crystalbench.high", "crystalbench.low"],
        ["crystalbench.sub.a", "crystalbench.sub.b"],  # through TYPE_CHECKING
    ]


def test_the_real_graph_is_read() -> None:
    graph = import_graph(SRC, PACKAGE)
    assert "crystalbench.training.runner" in graph
    assert "crystalbench.training.strategies" in graph["crystalbench.training.runner"]
    assert "crystalbench.training.trainer" in graph["crystalbench.training.building"]  # lazy


def test_training_modules_import_one_way() -> None:
    cycles = import_cycles(import_graph(SRC, PACKAGE))
    assert [c for c in cycles if any(m.startswith("crystalbench.training") for m in c)] == []


def test_no_import_cycle_in_the_package_but_the_known_ones() -> None:
    cycles = {frozenset(c) for c in import_cycles(import_graph(SRC, PACKAGE))}
    assert cycles <= KNOWN_CYCLES_OUTSIDE_TRAINING, sorted(
        sorted(c) for c in cycles - KNOWN_CYCLES_OUTSIDE_TRAINING
    )
