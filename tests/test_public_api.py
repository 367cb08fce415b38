"""The public surface: names resolve, and importing the package or its CLI never imports torch."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import crystalbench

INIT = Path(crystalbench.__file__)


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
