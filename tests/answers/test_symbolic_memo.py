"""math-verify's readings kept in the cache file (:func:`remembered_values`).

A value computed inside the block is written to the store; a later block (a later run)
answers it from the store without parsing it again; values of another namespace (other
code, other library versions) are never reused; and scoring gives the same answers with
the remembered values as without them.
"""

from __future__ import annotations

import pytest

from crystalbench.config.scoring import ScoreConfig
from crystalbench.data import SAMPLE_DIR, load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.encoders.cache import EmbeddingStore
from crystalbench.normalize import symbolic
from crystalbench.scoring.evaluation import evaluate

GOLDS = [r"2\sqrt{3}", r"\frac{\pi}{2}", "x + 1"]


@pytest.fixture
def clean_memory(monkeypatch):
    """No values remembered by this process before the test (module state is per process)."""
    monkeypatch.setattr(symbolic, "_REMEMBERED", {})
    monkeypatch.setattr(symbolic, "_FRESH", {})
    monkeypatch.setattr(symbolic, "_LOADED", set())
    symbolic._cached_value.cache_clear()


def test_values_are_written_then_answered_from_the_store(tmp_path, clean_memory, monkeypatch):
    store = EmbeddingStore(tmp_path / "e.sqlite")
    with symbolic.remembered_values(store):
        first = [symbolic.symbolic_value(g, prose=False) for g in GOLDS]
    assert first[0] == pytest.approx(3.4641016, rel=1e-6)
    assert first[2] is None  # a free variable: no value, remembered as such
    kept = store.get_values(symbolic.symbolic_namespace())
    assert kept == {f"0:{g}": v for g, v in zip(GOLDS, first, strict=True)}

    # A later run: a fresh process knows nothing, math-verify must not be asked again.
    monkeypatch.setattr(symbolic, "_REMEMBERED", {})
    monkeypatch.setattr(symbolic, "_LOADED", set())

    def no_parsing(text, prose):
        raise AssertionError(f"parsed {text!r} again")

    monkeypatch.setattr(symbolic, "_cached_value", no_parsing)
    with symbolic.remembered_values(EmbeddingStore(tmp_path / "e.sqlite")):
        again = [symbolic.symbolic_value(g, prose=False) for g in GOLDS]
    assert again == first


def test_another_namespace_is_never_reused(tmp_path, clean_memory, monkeypatch):
    store = EmbeddingStore(tmp_path / "e.sqlite")
    store.put_values("symbolic:other-code;math-verify=0", {r"0:2\sqrt{3}": 99.0})
    with symbolic.remembered_values(store):
        value = symbolic.symbolic_value(r"2\sqrt{3}", prose=False)
    assert value == pytest.approx(3.4641016, rel=1e-6)
    namespace = symbolic.symbolic_namespace()
    assert namespace.startswith("symbolic:")
    assert "math-verify=" in namespace
    assert "sympy=" in namespace


def _interrupted_scoring(store):
    with symbolic.remembered_values(store):
        symbolic.symbolic_value(r"\frac{\pi}{2}", prose=False)
        raise RuntimeError("interrupted")


def test_values_are_kept_when_the_block_fails(tmp_path, clean_memory):
    store = EmbeddingStore(tmp_path / "e.sqlite")
    with pytest.raises(RuntimeError, match="interrupted"):
        _interrupted_scoring(store)
    assert list(store.get_values(symbolic.symbolic_namespace())) == [r"0:\frac{\pi}{2}"]


def test_scoring_gives_the_same_answers_with_remembered_values(tmp_path, clean_memory):
    bench = load_benchmark("sample")
    preds = load_predictions(sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0])
    config = ScoreConfig(encoder="hash", cache_dir=str(tmp_path))
    plain = evaluate(bench, preds, config.model_copy(update={"use_cache": False}))
    first = evaluate(bench, preds, config)  # fills the memo table
    symbolic._cached_value.cache_clear()
    second = evaluate(bench, preds, config)  # answers from it
    for runs in zip(plain.items, first.items, second.items, strict=True):
        assert len({(r.answer_correct, r.answer_rule, r.answer_type) for r in runs}) == 1
