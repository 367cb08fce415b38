"""The public surface: names resolve, and importing the package or its CLI never imports torch.

The public API is what ``crystalbench.__all__`` and each subpackage's ``__all__`` list, plus the
``__all__`` of the few adapter modules other programs load by module path
(:data:`ENTRY_POINT_MODULES`); every other name is internal (``docs/architecture.md``, "The
public API"; ``docs/api.md``).
These tests check that every package declares its ``__all__`` as a literal whose names exist,
and that the README and the docs import nothing internal.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import crystalbench

INIT = Path(crystalbench.__file__)
ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "src" / "crystalbench"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

ENTRY_POINT_MODULES: dict[str, str] = {
    "crystalbench.rewards.verl": "verl's custom_reward_function loads compute_score by module path",
    "crystalbench.rewards.easyr1": "EasyR1's reward config names this module and its compute_score",
}
"""Modules public through their own ``__all__``: another program imports them by path."""

DOCUMENTED_INTERNAL_IMPORTS: dict[tuple[str, str], str] = {
    (
        "crystalbench.config.scoring",
        "load_config",
    ): "the config loader is being reworked (issue 23 point "
    "2, one loader for every command's config); that work decides its public home",
    (
        "crystalbench.inference.backends.openai_compat",
        "OpenAIChatBackend",
    ): "docs/inference.md builds a backend by hand; the OpenAI client factory (issue 23 point 4) "
    "decides the backend's public home",
}
"""Internal names the docs import today, with why; the lead clears them after those merges."""


def test_every_exported_name_resolves():
    for name in crystalbench.__all__:
        assert getattr(crystalbench, name) is not None


def _type_checking_imports() -> dict[str, str]:
    """``name -> module`` of the imports under ``if TYPE_CHECKING:`` in ``__init__.py``."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.dump(statement)
                for alias in statement.names:
                    names[alias.asname or alias.name] = statement.module or ""
    return names


def test_all_the_lazy_table_and_the_type_checking_imports_name_the_same_things():
    table = crystalbench._EXPORTS
    typed = _type_checking_imports()
    assert sorted(crystalbench.__all__) == sorted([*table, "__version__"])
    assert set(typed) == set(table)
    for name, module in typed.items():
        # The type checker and the lazy loader must agree on where each name comes from.
        assert getattr(__import__(module, fromlist=[name]), name) is getattr(crystalbench, name)


def test_the_names_users_reach_for_are_exported():
    from crystalbench.encoders.hashing import HashEncoder
    from crystalbench.errors import CrystalbenchError, InputError
    from crystalbench.judges.scripted import ScriptedJudge
    from crystalbench.types import MetricSummary

    assert crystalbench.HashEncoder is HashEncoder
    assert crystalbench.ScriptedJudge is ScriptedJudge
    assert crystalbench.InputError is InputError
    assert issubclass(crystalbench.InputError, crystalbench.CrystalbenchError)
    assert crystalbench.CrystalbenchError is CrystalbenchError
    assert crystalbench.MetricSummary is MetricSummary
    assert "Judge" in crystalbench.__all__
    assert "Encoder" in crystalbench.__all__


def test_unknown_attribute_raises():
    import pytest

    with pytest.raises(AttributeError, match="no_such_thing"):
        crystalbench.no_such_thing  # noqa: B018


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print('\\n'.join(sys.modules))"],
        check=True,
        capture_output=True,
        text=True,
    )
    return set(out.stdout.split())


def test_import_does_not_import_torch():
    modules = _modules_after("import crystalbench")
    assert "torch" not in modules
    assert "sentence_transformers" not in modules


def test_core_api_does_not_import_torch():
    modules = _modules_after(
        "from crystalbench import evaluate, parse_response, score_answer, load_benchmark\n"
        "from crystalbench import ScoreConfig"
    )
    assert "torch" not in modules
    assert "transformers" not in modules


def test_cli_help_does_not_import_torch():
    code = (
        "import sys\n"
        "from crystalbench.cli.main import app\n"
        "try:\n"
        "    app(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
    )
    modules = _modules_after(code)
    assert "torch" not in modules
    assert "sentence_transformers" not in modules


def test_console_script_help_runs():
    from pathlib import Path

    crystal = Path(sys.executable).with_name("crystal")
    out = subprocess.run([str(crystal), "--help"], capture_output=True, text=True, check=True)
    assert "score" in out.stdout
    assert "demo" in out.stdout


# --------------------------------------------------------------------------- __all__ everywhere
def packages() -> list[str]:
    """Every package of crystalbench (a folder with ``__init__.py``), dotted."""
    return sorted(
        ".".join(path.parent.relative_to(PACKAGE_DIR.parent).parts)
        for path in PACKAGE_DIR.rglob("__init__.py")
    )


def literal_all(module: str) -> list[str] | None:
    """The ``__all__`` a module's source assigns at top level, if it is a literal list of str."""
    spec = importlib.util.find_spec(module)
    assert spec is not None, module
    assert spec.origin is not None, module
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == "__all__":
            value = node.value
            if isinstance(value, ast.List | ast.Tuple) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
            ):
                return [e.value for e in value.elts]  # type: ignore[union-attr]
            return None
    return None


def test_the_package_list_is_read() -> None:
    found = packages()
    assert {"crystalbench", "crystalbench.cli", "crystalbench.review.migrations"} <= set(found)
    assert "crystalbench.data.sample_builder" not in found  # a build tool, outside the package


@pytest.mark.parametrize("module", [*packages(), *ENTRY_POINT_MODULES])
def test_every_package_declares_a_literal_all_whose_names_exist(module: str) -> None:
    names = literal_all(module)
    assert names is not None, f"{module} has no literal __all__: list its public names (or [])"
    assert len(names) == len(set(names)), f"{module}.__all__ repeats a name"
    imported = importlib.import_module(module)
    missing = [name for name in names if not hasattr(imported, name)]
    assert not missing, f"{module}.__all__ names what it does not have: {missing}"
    assert all(not n.startswith("_") or n == "__version__" for n in names), names


def public_owner(module: str, name: str) -> str | None:
    """Where ``from module import name`` is public: the ``__all__`` that lists it, or None."""
    value = getattr(importlib.import_module(module), name)
    owners = [module] if module in ENTRY_POINT_MODULES else []
    parts = module.split(".")
    owners += [".".join(parts[:n]) for n in range(len(parts), 0, -1)]
    for owner in owners:
        if owner not in packages() and owner not in ENTRY_POINT_MODULES:
            continue
        listed = importlib.import_module(owner)
        if name in getattr(listed, "__all__", ()) and getattr(listed, name) is value:
            return owner
    return None


DOC_IMPORT = re.compile(r"^\s*from (crystalbench[\w.]*) import \(?([\w, ]+)\)?", re.MULTILINE)


def documented_imports() -> list[tuple[str, str, str]]:
    """``(file, module, name)`` for every ``from crystalbench... import ...`` in the docs."""
    found = []
    for path in DOCS:
        for module, names in DOC_IMPORT.findall(path.read_text(encoding="utf-8")):
            for name in (n.strip() for n in names.split(",")):
                if name:
                    found.append((path.relative_to(ROOT).as_posix(), module, name))
    return found


def test_public_owner_tells_public_from_internal_names() -> None:
    assert public_owner("crystalbench.scoring.evaluation", "evaluate") == "crystalbench"
    assert public_owner("crystalbench.rewards", "RewardScorer") == "crystalbench.rewards"
    assert public_owner("crystalbench.rewards.verl", "compute_score") == "crystalbench.rewards.verl"
    assert public_owner("crystalbench.scoring.matching", "cosine_matrix") is None


def test_the_docs_import_only_public_names() -> None:
    imports = documented_imports()
    assert len(imports) > 20  # the README and docs/*.md are read
    internal = sorted(
        f"{file}: from {module} import {name}"
        for file, module, name in imports
        if (module, name) not in DOCUMENTED_INTERNAL_IMPORTS and public_owner(module, name) is None
    )
    assert not internal, "the docs import internal names (add them to an __all__):\n" + "\n".join(
        internal
    )
    listed = {(module, name) for _, module, name in imports}
    stale = sorted(set(DOCUMENTED_INTERNAL_IMPORTS) - listed)
    assert not stale, f"no longer documented, remove from DOCUMENTED_INTERNAL_IMPORTS: {stale}"


def test_the_api_page_names_every_public_package_and_entry_point() -> None:
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    public = [p for p in packages() if literal_all(p)] + list(ENTRY_POINT_MODULES)
    missing = [name for name in public if f"`{name}`" not in page]
    assert not missing, f"docs/api.md does not list: {missing}"
