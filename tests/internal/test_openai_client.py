"""One factory for OpenAI-compatible clients: one key rule for every caller, one place that
builds clients, and the key variable's name written once."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytest.importorskip("openai")

from crystalbench._internal.openai_client import (
    api_key_from_env,
    async_openai_client,
    openai_client,
    resolve_api_key,
)
from crystalbench.errors import InputError

SRC = Path(__file__).resolve().parents[2] / "src" / "crystalbench"


def test_the_key_rule():
    assert api_key_from_env("OPENAI_API_KEY", environ={}) is None  # local servers need none
    assert api_key_from_env("", environ={"OPENAI_API_KEY": "sk"}) is None
    assert api_key_from_env("MINE", environ={"MINE": "sk-mine"}) == "sk-mine"
    with pytest.raises(InputError, match="MINE is not set \\(model q\\)") as caught:
        api_key_from_env("MINE", what="model q", environ={})
    assert caught.value.field == "api_key_env"
    assert resolve_api_key(None, environ={}) == "EMPTY"
    assert resolve_api_key("", environ={"OPENAI_API_KEY": "sk-env"}) == "sk-env"
    assert resolve_api_key("sk-given", environ={"OPENAI_API_KEY": "sk-env"}) == "sk-given"


def test_clients_carry_the_key_timeouts_and_retries(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    sync = openai_client("http://127.0.0.1:9/v1", timeout=7.0, max_retries=3)
    assert (sync.api_key, sync.timeout, sync.max_retries) == ("sk-env", 7.0, 3)
    sync.close()
    asynchronous = async_openai_client(
        "http://127.0.0.1:9/v1", api_key="sk-given", timeout=5.0, connect_timeout=10.0
    )
    assert asynchronous.api_key == "sk-given"
    assert (asynchronous.timeout.read, asynchronous.timeout.connect) == (5.0, 5.0)
    assert asynchronous.max_retries == 0
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.2:9/v1")
    from_env = openai_client(None)
    assert str(from_env.base_url) == "http://127.0.0.2:9/v1/"
    from_env.close()


def test_every_caller_reads_a_named_variable_and_refuses_it_unset(monkeypatch, tmp_path):
    """The judge, the judge matcher, crystal infer and reference construction: a variable
    named in their config is read, and an unset one is an error naming it (before issue 23
    the judges sent no key instead)."""
    from types import SimpleNamespace

    from crystalbench.inference.config import InferenceConfig
    from crystalbench.inference.pipeline import backend_from_config
    from crystalbench.judges.openai_judge import OpenAIJudge
    from crystalbench.judges.step_judge import OpenAIStepJudge
    from crystalbench.references.config import ModelEndpoint, ReferencesConfig
    from crystalbench.references.engine import build_endpoint_backend

    url = "http://127.0.0.1:9/v1"
    judge_config = SimpleNamespace(url=url, model="j", api_key_env="CB_TEST_KEY")
    inference = InferenceConfig(model="m", base_urls=[url], api_key_env="CB_TEST_KEY")
    endpoint = ModelEndpoint(name="g", base_urls=[url], api_key_env="CB_TEST_KEY")

    monkeypatch.delenv("CB_TEST_KEY", raising=False)
    builders = [
        lambda: OpenAIJudge.from_config(judge_config, cache_dir=tmp_path),
        lambda: OpenAIStepJudge.from_config(judge_config, cache_dir=tmp_path),
        lambda: backend_from_config(inference),
        lambda: build_endpoint_backend(endpoint, ReferencesConfig()),
    ]
    for build in builders:
        with pytest.raises(InputError, match="CB_TEST_KEY is not set"):
            build()

    monkeypatch.setenv("CB_TEST_KEY", "sk-named")
    judge = OpenAIJudge.from_config(judge_config, cache_dir=tmp_path)
    assert judge.client._get_client().api_key == "sk-named"
    judge.close()
    step_judge = OpenAIStepJudge.from_config(judge_config, cache_dir=tmp_path)
    assert step_judge.client._get_client().api_key == "sk-named"
    step_judge.close()
    for backend in (
        backend_from_config(inference),
        build_endpoint_backend(endpoint, ReferencesConfig()),
    ):
        assert [r.client.api_key for r in backend.pool.replicas] == ["sk-named"]


def _code_strings_and_calls(path: Path) -> tuple[list[str], list[str]]:
    """String constants outside docstrings, and the names of called functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    strings = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            calls.append(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
    return strings, calls


def test_one_home_for_the_key_variable_and_for_building_clients():
    holders, builders = [], []
    for path in sorted(SRC.rglob("*.py")):
        strings, calls = _code_strings_and_calls(path)
        name = str(path.relative_to(SRC))
        if any(s == "OPENAI_API_KEY" for s in strings):
            holders.append(name)
        if any(c in ("OpenAI", "AsyncOpenAI") for c in calls):
            builders.append(name)
    assert holders == ["config/settings.py"]
    assert builders == ["_internal/openai_client.py"]
