"""The public surface: names resolve, and importing the package or its CLI never imports torch."""

from __future__ import annotations

import subprocess
import sys

import crystalbench


def test_every_exported_name_resolves():
    for name in crystalbench.__all__:
        assert getattr(crystalbench, name) is not None


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
