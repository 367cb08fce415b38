"""Our conftest for crystal-metrics 0.2.0's own test suite (copied in as ``conftest.py``).

:mod:`test_crystal_metrics_suite` extracts the tests from crystal-metrics' sdist and runs
them twice with this file as their conftest; ``CRYSTALBENCH_CM_TARGET`` says against what:

- ``real``: crystal-metrics 0.2.0 itself (the sdist's ``src`` is first on ``PYTHONPATH``);
- ``dropin``: ``import crystal_metrics`` (and each submodule) resolves to
  :mod:`crystalbench.compat.crystal_metrics`, whose default encoder is redirected to the
  offline MiniLM (model hubs are unreachable in CI).

Their tests also import two helpers from ``conftest`` that the sdist does not ship
(``deterministic_embeddings``, ``make_model_free_evaluator``); they are written here to the
behaviour their docstrings describe. Their parity tests compare against the original VLM-R1
evaluator found at ``$CRYSTAL_VLMR1_PATH``; VLM-R1 is not on PyPI, so the runner points that
at modules exposing crystal-metrics 0.2.0 itself (loaded from the same sdist as
``crystal_metrics_reference``): against the drop-in they check it field by field against
crystal-metrics. ``all-distilroberta-v1`` loads as the offline MiniLM in both runs.

Nothing runs on import (our own suite imports this file to collect doctests): everything
happens in the pytest hooks.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

SUBMODULES = ("reasoning", "accuracy", "rewards", "similarity", "judge")


def _load_reference(src: Path) -> None:
    """crystal-metrics from the sdist's ``src`` as ``crystal_metrics_reference``."""
    folder = src / "crystal_metrics"
    spec = importlib.util.spec_from_file_location(
        "crystal_metrics_reference",
        folder / "__init__.py",
        submodule_search_locations=[str(folder)],
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["crystal_metrics_reference"] = module
    spec.loader.exec_module(module)


def _alias_dropin() -> None:
    dropin = importlib.import_module("crystalbench.compat.crystal_metrics")
    for name in SUBMODULES:
        sys.modules[f"crystal_metrics.{name}"] = importlib.import_module(
            f"crystalbench.compat.crystal_metrics.{name}"
        )
    sys.modules["crystal_metrics"] = dropin
    from crystalbench.defaults import ENCODER, OFFLINE_ENCODER

    dropin.redirect_model(ENCODER, OFFLINE_ENCODER)


def pytest_configure(config: Any) -> None:
    target = os.environ["CRYSTALBENCH_CM_TARGET"]
    _load_reference(Path(os.environ["CRYSTALBENCH_CM_REFERENCE_SRC"]))
    if target == "dropin":
        _alias_dropin()
    import crystal_metrics

    where = Path(crystal_metrics.__file__).resolve()
    expected = "crystalbench" if target == "dropin" else "crystal_metrics-0.2.0"
    assert expected in where.parts, f"crystal_metrics resolves to {where} in the {target} run"


def pytest_report_header(config: Any) -> str:
    import crystal_metrics

    return f"crystal_metrics ({os.environ['CRYSTALBENCH_CM_TARGET']}): {crystal_metrics.__file__}"


def pytest_runtest_setup(item: Any) -> None:
    """The hub is unreachable: ``SentenceTransformer("all-distilroberta-v1")`` in a test
    loads the bundled MiniLM instead (loaded only for tests that ask for a model)."""
    if "real_model" not in item.name:
        return
    import sentence_transformers

    from crystalbench.defaults import ENCODER
    from crystalbench.encoders.sentence import offline_model_path

    original = sentence_transformers.SentenceTransformer

    def offline(name: str, *args: Any, **kwargs: Any) -> Any:
        return original(str(offline_model_path()) if name == ENCODER else name, *args, **kwargs)

    sentence_transformers.SentenceTransformer = offline  # type: ignore[misc]


def deterministic_embeddings(texts: list[str], dim: int = 32) -> np.ndarray:
    """A unit vector per text from a generator seeded with the first 8 bytes of its SHA-256
    (big-endian): equal texts get equal vectors, stable across processes; ``np.array([])``
    for no texts."""
    if not texts:
        return np.array([])
    rows = []
    for text in texts:
        seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
        vector = np.random.default_rng(seed).standard_normal(dim)
        rows.append(vector / (np.linalg.norm(vector) + 1e-12))
    return np.vstack(rows)


def make_model_free_evaluator(threshold: float = 0.35, embed_fn: Any = None) -> Any:
    """``crystal_metrics.reasoning.MLLMReasoningEvaluator`` without its constructor (no
    model), embedding with ``embed_fn`` (default :func:`deterministic_embeddings`)."""
    from crystal_metrics.reasoning import MLLMReasoningEvaluator

    evaluator = MLLMReasoningEvaluator.__new__(MLLMReasoningEvaluator)
    evaluator.similarity_threshold = threshold
    evaluator.debug_mode = False
    evaluator.model_name = "test-deterministic"
    evaluator._compute_embeddings = embed_fn or deterministic_embeddings
    return evaluator
