"""Layout of the answer code: public names, one dispatch point into compat, no cycles."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import crystalbench

SRC = Path(crystalbench.__file__).parent
AREAS = ("answers", "normalize")
PUBLIC = {
    "crystalbench.answers": [
        "ChoiceResolution",
        "compat_question",
        "infer_answer_type",
        "item_options",
        "parse_embedded_options",
        "resolve_choice",
        "score_answer",
        "score_answers",
    ],
    "crystalbench": ["score_answer", "infer_answer_type"],
    "crystalbench.normalize": [
        "answer_tail",
        "committed_segment",
        "extract_boxed",
        "clean_answer",
        "normalize_text",
        "parse_number",
        "extract_number",
        "parse_yes_no",
        "find_choice_letters",
        "symbolic_value",
        "math_equivalent",
    ],
}


def _module_name(path: Path) -> str:
    parts = ["crystalbench", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in SRC.rglob("*.py")}


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """crystalbench modules ``path`` imports, at module level or inside functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module in modules:
                found.add(node.module)
            for alias in node.names:
                if f"{node.module}.{alias.name}" in modules:
                    found.add(f"{node.module}.{alias.name}")
    return found


def _in_areas(name: str) -> bool:
    return any(name.startswith(f"crystalbench.{area}") for area in AREAS)


@pytest.mark.parametrize("module", list(PUBLIC))
def test_public_names_import(module):
    loaded = importlib.import_module(module)
    for name in PUBLIC[module]:
        assert getattr(loaded, name) is not None, name


def test_paper_mode_reaches_compat_only_at_the_dispatch_point():
    modules = _modules()
    importers = {
        name
        for name, path in modules.items()
        if _in_areas(name)
        and name != "crystalbench.answers.compat"
        and any(imported == "crystalbench.answers.compat" for imported in _imports(path, modules))
    }
    # scoring dispatches; the package re-exports compat_question under its old name
    assert importers == {"crystalbench.answers.scoring", "crystalbench.answers"}


def test_compat_answers_imports_no_paper_rules():
    modules = _modules()
    imported = _imports(modules["crystalbench.answers.compat"], modules)
    assert not {name for name in imported if _in_areas(name) and "compat" not in name}


def test_no_import_cycle_through_the_answer_modules():
    modules = _modules()
    graph = {name: _imports(path, modules) for name, path in modules.items()}
    for start in (name for name in graph if _in_areas(name)):
        stack, seen = [(start, (start,))], set()
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, ()):
                assert nxt != start, " -> ".join((*path, nxt))
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, (*path, nxt)))


def test_no_answer_module_over_1000_lines():
    for name, path in _modules().items():
        if _in_areas(name):
            assert len(path.read_text(encoding="utf-8").splitlines()) <= 1000, name
