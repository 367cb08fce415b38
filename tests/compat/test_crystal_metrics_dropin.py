"""The drop-in's surface and edge cases: crystal-metrics' names and signatures, its behaviour
where it is odd (blank answers, float64 near-ties, NaN, failing samples), what crystalbench
adds (lazy encoders, one batched encoder call, the embedding cache, the LLM grader on
crystalbench's judge), and the structural reason it is faster (texts embedded per call).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import json
import math
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from cm_sample import HashModel, hash_embeddings, references, sample_sets

import crystalbench.compat.crystal_metrics as dropin
from crystalbench.compat.crystal_metrics import _scoring, judge, reasoning
from crystalbench.encoders import HashEncoder
from crystalbench.scoring.compat import match_rules
from crystalbench.scoring.matching import greedy_pairs
from fakes import CountingEncoder


@pytest.fixture(scope="module")
def cm() -> Any:
    """crystal-metrics itself: the tests comparing with it skip without it, no others."""
    return pytest.importorskip("crystal_metrics")


@pytest.fixture(scope="module")
def cm_reasoning() -> Any:
    return pytest.importorskip("crystal_metrics.reasoning")


@pytest.fixture(scope="module")
def cm_rewards() -> Any:
    return pytest.importorskip("crystal_metrics.rewards")


OUR_EXTRAS = {"encoder", "cache_dir", "use_cache"}  # keyword-only, after its parameters


def _shape(function: Any, skip: set[str] = frozenset()) -> list[tuple[str, Any, Any]]:
    return [
        (p.name, p.kind, p.default)
        for p in inspect.signature(function).parameters.values()
        if p.name not in skip
    ]


# ----------------------------------------------------------------------------- surface


def test_public_names_are_crystal_metrics(cm, cm_rewards):
    assert sorted(dropin.__all__) == sorted(cm.__all__)
    assert sorted(dropin.rewards.__all__) == sorted(cm_rewards.__all__)
    assert dropin.__version__ == cm.__version__ == "0.2.0"
    for module in ("reasoning", "accuracy", "rewards", "similarity", "judge"):
        ours = __import__(f"crystalbench.compat.crystal_metrics.{module}", fromlist=["x"])
        theirs = __import__(f"crystal_metrics.{module}", fromlist=["x"])
        public = {n for n in vars(theirs) if not n.startswith("_") and callable(vars(theirs)[n])}
        defined_there = {
            n for n in public if getattr(vars(theirs)[n], "__module__", "") == theirs.__name__
        }
        assert defined_there <= set(vars(ours)), (module, defined_there - set(vars(ours)))


def _callables(theirs: Any) -> dict[str, Any]:
    cm = pytest.importorskip("crystal_metrics")
    cm_rewards = pytest.importorskip("crystal_metrics.rewards")
    found = {}
    for name in cm.__all__:
        if name == "__version__":
            continue
        obj = getattr(theirs, name)
        if inspect.isclass(obj) and not dataclasses.is_dataclass(obj):
            for attr, member in vars(obj).items():
                if callable(member) or isinstance(member, staticmethod):
                    found[f"{name}.{attr}"] = getattr(obj, attr)
        else:
            found[name] = obj
    for name in ("check_answer_match", "_extract_json_object", "_validate_schema", "_content_of"):
        found[f"rewards.{name}"] = getattr(cm_rewards, name)
    grader = pytest.importorskip("crystal_metrics.judge").LLMGrader
    found["judge.LLMGrader.__init__"] = grader.__init__
    found["judge.LLMGrader.verify_answer"] = grader.verify_answer
    return found


def test_signatures_are_crystal_metrics(cm):
    """Same parameter names, kinds and defaults (our additions: keyword-only, at the end)."""
    theirs = _callables(cm)
    assert len(theirs) > 30
    for dotted, function in theirs.items():
        if dotted.startswith("rewards."):
            ours: Any = getattr(dropin.rewards, dotted.split(".", 1)[1])
        elif dotted.startswith("judge."):
            ours = getattr(judge.LLMGrader, dotted.rsplit(".", 1)[1])
        elif "." in dotted:
            cls, attr = dotted.split(".")
            ours = getattr(getattr(dropin, cls), attr, None)
        else:
            ours = getattr(dropin, dotted)
        assert ours is not None, dotted
        extras = OUR_EXTRAS if dotted == "MLLMReasoningEvaluator.__init__" else set()
        assert _shape(ours, extras) == _shape(function), dotted
        if extras:
            added = [p for p in inspect.signature(ours).parameters.values() if p.name in extras]
            assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in added)


def test_records_have_its_fields_and_defaults(cm):
    for name in ("EvaluationMetrics", "AccuracyResult"):
        ours = [(f.name, f.default) for f in dataclasses.fields(getattr(dropin, name))]
        assert ours == [(f.name, f.default) for f in dataclasses.fields(getattr(cm, name))]


def test_importing_and_building_need_no_torch():
    """Nothing heavy loads until an encoder is used: import, build an evaluator with the
    default model, score answers and word-overlap rewards."""
    code = (
        "import sys, crystalbench.compat.crystal_metrics as cm\n"
        "ev = cm.MLLMReasoningEvaluator()\n"
        "assert ev.similarity_threshold == 0.35 and ev.device in ('cpu', 'cuda')\n"
        "assert cm.AccuracyCalculator().evaluate_single('Q', '5', '5.0').is_correct\n"
        'c = [[{\'content\': \'{"reasoning_steps": ["go"], "answer": "B"}\'}]]\n'
        "assert cm.causal_process_reward(c, ground_truths=['B'], reference_steps=[['go']])\n"
        "heavy = {'torch', 'sentence_transformers', 'transformers', 'onnxruntime', 'pandas'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# ----------------------------------------------------------------------------- answers


@pytest.mark.parametrize("blank", ["", "   ", "\n"])
def test_blank_answer_is_credited_as_crystal_metrics_credits_it(blank, cm):
    """crystal-metrics' substring fallback finds "" inside every gold but a yes/no one."""
    for gold in ("Paris", "12", "B", "red umbrella", "yes"):
        question = "Which?\nA) cat\nB) dog" if gold == "B" else "Q"
        ours = dataclasses.asdict(
            dropin.AccuracyCalculator().evaluate_single(question, blank, gold)
        )
        theirs = dataclasses.asdict(cm.AccuracyCalculator().evaluate_single(question, blank, gold))
        assert ours == theirs
        expected = (False, "yes_no") if gold == "yes" else (True, "exact")
        assert (ours["is_correct"], ours["match_type"]) == expected


def test_non_string_answers_read_as_crystal_metrics_reads_them(cm):
    for predicted, gold in ((5, "5.0"), (0.1, "0.12"), (None, "none"), (True, "yes")):
        ours = dropin.AccuracyCalculator().evaluate_single("Q", predicted, gold)
        theirs = cm.AccuracyCalculator().evaluate_single("Q", predicted, gold)
        assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)


def test_custom_tolerances_are_honoured(cm):
    tight = dict(numeric_relative_tolerance=0.01, numeric_absolute_tolerance=0.0)
    for predicted, gold in (("10.5", "10"), ("3.14159", "3.1"), ("7", "7.2")):
        ours = dropin.AccuracyCalculator(**tight).evaluate_single("Q", predicted, gold)
        theirs = cm.AccuracyCalculator(**tight).evaluate_single("Q", predicted, gold)
        assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)


# ----------------------------------------------------------------------------- matching


def test_float64_near_ties_are_decided_as_crystal_metrics_decides_them(cm_reasoning):
    """Two cosines 1e-9 apart are equal in float32, where the tie rule would pick the other
    reference; crystal-metrics sorts the float64 values, and so does the drop-in."""
    similarity = np.array([[0.5 + 1e-9, 0.5]])
    theirs = cm_reasoning.MLLMReasoningEvaluator.__new__(cm_reasoning.MLLMReasoningEvaluator)
    theirs.debug_mode = False
    expected = theirs._find_matches(similarity, 0.35)
    ours = reasoning.MLLMReasoningEvaluator.__new__(reasoning.MLLMReasoningEvaluator)
    assert ours._find_matches(similarity, 0.35) == expected
    assert [(i, j) for i, j, _ in expected[2]] == [(0, 0)]
    float32_rules = match_rules("crystal-metrics-0.2", tau=0.35)
    assert [(i, j) for i, j, _ in greedy_pairs(similarity, float32_rules)] == [(0, 1)]
    # ... and at the threshold: 1e-10 above it passes in float64, not in float32
    assert _scoring.greedy_matches(np.array([[0.35 + 1e-10]]), 0.35) == [(0, 0, 0.35 + 1e-10)]


@pytest.mark.parametrize("seed", range(40))
def test_matching_equals_crystal_metrics_on_random_near_tied_matrices(seed, cm):
    rng = np.random.default_rng(seed)
    m, n = rng.integers(1, 12, size=2)
    levels = rng.choice([0.2, 0.35, 0.5, 0.8], size=(m, n))
    jitter = rng.choice([0.0, 1e-12, 1e-9, -1e-9, 1e-6], size=(m, n))
    for dtype in (np.float64, np.float32):
        similarity = (levels + jitter).astype(dtype)
        theirs = cm.MLLMReasoningEvaluator.__new__(cm.MLLMReasoningEvaluator)
        theirs.debug_mode = False
        ours = reasoning.MLLMReasoningEvaluator.__new__(reasoning.MLLMReasoningEvaluator)
        assert ours._find_matches(similarity, 0.35) == theirs._find_matches(similarity, 0.35)


def test_zero_embedding_gives_nan_similarities_as_there(cm):
    def zero_first(texts):
        vectors = hash_embeddings(texts)
        if len(texts):
            vectors[0] = 0.0
        return vectors

    metrics = []
    for module in (cm, dropin):
        evaluator = module.MLLMReasoningEvaluator.__new__(module.MLLMReasoningEvaluator)
        evaluator.similarity_threshold, evaluator.debug_mode = 0.3, False
        evaluator._compute_embeddings = zero_first
        with np.errstate(invalid="ignore"):
            found = evaluator.evaluate_single(["a b", "c d"], ["a b", "c d"], alpha=0.3)
        metrics.append(dataclasses.asdict(found))
    assert math.isnan(metrics[0]["avg_similarity"])
    assert math.isnan(metrics[1]["avg_similarity"])
    for key in ("avg_similarity", "max_similarity"):
        metrics[0].pop(key), metrics[1].pop(key)
    assert metrics[0] == metrics[1]


def test_edge_cases_of_evaluate_single():
    ours = dropin.MLLMReasoningEvaluator("hash", use_cache=False)
    with pytest.raises(ValueError, match="Reference steps cannot be empty"):
        ours.evaluate_single(["a"], [])
    empty = ours.evaluate_single([], ["a", "b"], alpha=0.3, order_metric="lis")
    assert (empty.match_f1, empty.num_reference_steps, empty.ordered_match_f1) == (0.0, 2, 0.0)
    assert empty.order_metric_used == "lis"
    assert empty.alpha_used == 0.3
    steps = ["a b", "c d", "e f"]
    odd = ours.evaluate_single(steps[::-1], steps, alpha=0.3, order_metric="spearman")
    assert odd.order_score == odd.tau_normalized == 0.0  # anything but "lis" is Kendall
    negative = ours.evaluate_single(steps[::-1], steps, alpha=-0.5)
    assert negative.ordered_match_f1 == negative.match_f1 == 1.0


def test_evaluate_dataset_drops_failing_samples_and_keeps_reference_order(capsys, cm):
    refs = {"b": {"reference_steps": ["x y"]}, "a": {"reference_steps": []}, "c": {}}
    preds = {
        "a": {"reasoning_steps": ["x y"]},
        "b": {"reasoning_steps": ["x y"], "answer": "B"},
        "c": {"reasoning_steps": ["x"]},
        "z": {"reasoning_steps": []},
    }
    ours = dropin.MLLMReasoningEvaluator("hash", 0.35, use_cache=False)
    frame = ours.evaluate_dataset(preds, refs)
    out = capsys.readouterr().out
    assert list(frame["sample_idx"]) == ["b"]
    assert list(frame["answer"]) == ["B"]
    assert "Warning: Missing ground truth for indices: {'z'}" in out
    assert "Error evaluating sample a: Reference steps cannot be empty" in out
    assert "Error evaluating sample c: 'reference_steps'" in out
    assert "Evaluating 3 samples..." in out
    theirs = cm.MLLMReasoningEvaluator.__new__(cm.MLLMReasoningEvaluator)
    theirs.similarity_threshold, theirs.debug_mode, theirs.model_name = 0.35, False, "hash"
    theirs._compute_embeddings = hash_embeddings
    assert theirs.evaluate_dataset(preds, refs).to_dict("records") == frame.to_dict("records")


# ----------------------------------------------------------------------------- rewards


def test_malformed_completions_raise_where_crystal_metrics_raises(cm, cm_rewards):
    """Kept for parity (crystalbench's own rewards never raise on model output)."""
    fenced_list = "```json\n[1, 2]\n```"
    for module in (cm_rewards, dropin.rewards):
        with pytest.raises(AttributeError):
            module.parse_reasoning_steps(fenced_list)
    numbers = '{"reasoning_steps": [1, 2], "answer": "B"}'
    for module in (cm, dropin):
        with pytest.raises(AttributeError):
            module.causal_process_reward([numbers], ground_truths=["B"], reference_steps=[["a"]])
    for module in (cm, dropin):
        assert module.format_reward([5, [{}], [], "{}"]) == [0.0, 0.0, 0.0, 0.0]
        with pytest.raises(TypeError):
            module.format_reward([[{"content": None}]])


def test_semantic_reward_falls_back_to_word_overlap_without_an_encoder():
    class Broken:
        def encode(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("no model")

    completion = ['{"reasoning_steps": ["the light is green"], "answer": "B"}']
    _scoring.redirect_model(_scoring.DEFAULT_MODEL, CountingEncoder(Broken()))
    dropin.similarity._semantic_model_cache.clear()
    try:
        ours = dropin.semantic_reasoning_reward(
            completion, reference_steps=[["the light is green"]], model=Broken()
        )
    finally:
        _scoring.redirect_model(_scoring.DEFAULT_MODEL, None)
        dropin.similarity._semantic_model_cache.clear()
    assert ours == [1.0]  # word overlap at 0.45: identical steps


# ----------------------------------------------------------------------------- encoders


def test_default_model_is_crystal_metrics_and_loads_lazily(monkeypatch):
    evaluator = dropin.MLLMReasoningEvaluator()
    assert (evaluator.model_name, evaluator.similarity_threshold) == ("all-distilroberta-v1", 0.35)
    assert evaluator._encoder_cache is None  # nothing built, nothing loaded
    assert dropin.MLLMReasoningEvaluator("minilm-offline").similarity_threshold == 0.35
    assert dropin.MLLMReasoningEvaluator("my-model").similarity_threshold == 0.45
    assert (
        dropin.MLLMReasoningEvaluator("my-model", 0.5).model_thresholds["all-mpnet-base-v2"] == 0.38
    )
    dropin.redirect_model("all-distilroberta-v1", "hash")
    try:
        assert dropin.MLLMReasoningEvaluator(use_cache=False).model.identity == "hash-bow-v1:256"
    finally:
        dropin.redirect_model("all-distilroberta-v1", None)
    explicit = dropin.MLLMReasoningEvaluator(device="cpu")
    assert explicit.device == "cpu"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert dropin.MLLMReasoningEvaluator().device == "cpu"


def test_a_model_object_or_encoder_can_be_passed_as_there():
    model = HashModel()
    by_object = dropin.MLLMReasoningEvaluator("x", 0.3, encoder=model)
    by_encoder = dropin.MLLMReasoningEvaluator("x", 0.3, encoder=HashEncoder())
    steps, refs = ["a b", "c d"], ["a b", "e f"]
    assert by_object.evaluate_single(steps, refs) == by_encoder.evaluate_single(steps, refs)
    assert model.calls == 2
    swapped = dropin.MLLMReasoningEvaluator("hash", 0.3, use_cache=False)
    swapped.model = HashModel()
    assert swapped.evaluate_single(steps, refs).match_f1 == 0.5
    assert by_object.model is model  # handed back as given, as crystal-metrics' attribute is


def test_evaluate_dataset_embeds_each_text_once_in_few_calls(tmp_path, cm):
    """Why it is faster: crystal-metrics makes two encoder calls per sample and embeds a
    reference again for every model; the drop-in embeds a chunk of samples in one lookup,
    each distinct text once, and keeps the vectors in the embedding cache."""
    sample, refs = sample_sets()[4], references()
    counting = CountingEncoder(HashEncoder())
    ours = dropin.MLLMReasoningEvaluator("x", 0.35, encoder=counting, cache_dir=str(tmp_path))
    first = ours.evaluate_dataset(sample.predictions, refs)
    texts = {
        t
        for i, p in sample.predictions.items()
        for t in p["reasoning_steps"] + refs[i]["reference_steps"]
    }
    assert sorted(counting.seen) == sorted(texts)  # each distinct text once
    per_call = ours._embedder().call_texts()
    assert len(counting.calls) == -(-len(texts) // per_call)  # in full calls of 256 texts
    theirs = cm.MLLMReasoningEvaluator.__new__(cm.MLLMReasoningEvaluator)
    theirs.similarity_threshold, theirs.debug_mode, theirs.model_name = 0.35, False, "x"
    calls: list[int] = []
    theirs._compute_embeddings = lambda t: calls.append(len(t)) or hash_embeddings(t)
    theirs.evaluate_dataset(sample.predictions, refs)
    assert len(calls) == 2 * len(sample.predictions)
    assert sum(calls) > len(texts)
    again = CountingEncoder(HashEncoder())
    warm = dropin.MLLMReasoningEvaluator("x", 0.35, encoder=again, cache_dir=str(tmp_path))
    assert warm.evaluate_dataset(sample.predictions, refs).equals(first)
    assert again.calls == []  # every vector from the on-disk cache


def test_semantic_reward_embeds_a_batch_in_one_call(cm):
    sample, refs = sample_sets()[3], references()
    steps = [refs[i]["reference_steps"] for i in sample.ids]
    ours_model, theirs_model = HashModel(), HashModel()
    ours = dropin.semantic_reasoning_reward(
        sample.completions, reference_steps=steps, model=ours_model
    )
    theirs = cm.semantic_reasoning_reward(
        sample.completions, reference_steps=steps, model=theirs_model
    )
    assert ours == theirs
    scored = [
        step
        for completion, reference in zip(sample.completions, steps, strict=True)
        if cm.format_reward([completion]) == [1.0]
        for step in json.loads(completion[0]["content"])["reasoning_steps"] + reference
    ]
    # one lookup for the batch (handed to the model 256 texts at a time); crystal-metrics
    # calls the model twice per completion
    assert ours_model.calls == -(-len(set(scored)) // 256)
    assert theirs_model.calls == 2 * sum(cm.format_reward(sample.completions))


# ----------------------------------------------------------------------------- grader


@pytest.fixture
def judge_server(tmp_path, monkeypatch):
    pytest.importorskip("openai")
    from servers.openai_server import LoopbackServer

    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(tmp_path))
    with LoopbackServer() as running:
        yield running


def test_llm_grader_asks_where_crystal_metrics_asks(judge_server, capsys):
    judge_server.state.configure(
        {"answers": {"a large red umbrella": json.dumps({"correct": True, "reason": "same"})}}
    )
    calc = dropin.AccuracyCalculator(use_llm_grader=True, base_url=judge_server.base_url)
    verdict = calc.evaluate_single("What is he holding?", "a large red umbrella", "red umbrella")
    assert (verdict.is_correct, verdict.match_type, verdict.confidence) == (
        True,
        "llm_verified",
        1.0,
    )
    single = calc.evaluate_single("Q", "London", "Paris")  # one word each: no grader, as there
    assert (single.is_correct, single.match_type) == (False, "exact")
    assert len(judge_server.state.log) == 1


def test_llm_grader_failure_falls_back_to_string_matching(judge_server, capsys):
    judge_server.state.configure({"faults": {"blue": [{"status": 500}] * 9}})
    calc = dropin.AccuracyCalculator(use_llm_grader=True, base_url=judge_server.base_url)
    calc.llm_grader.judge.max_retries = 0
    verdict = calc.evaluate_single("Which colour?", "dark blue sky", "blue")
    assert (verdict.is_correct, verdict.match_type, verdict.confidence) == (
        True,
        "llm_verified",
        0.8,
    )
    assert "LLM grading error" in capsys.readouterr().out


def test_llm_grader_without_openai_says_which_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "openai" else real(name, *a),
    )
    with pytest.raises(ImportError, match=r"crystalbench\[openai\]"):
        dropin.AccuracyCalculator(use_llm_grader=True)
    assert dropin.AccuracyCalculator().llm_grader is None


def test_evaluate_dataset_without_pandas_says_which_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    evaluator = dropin.MLLMReasoningEvaluator("hash", use_cache=False)
    with pytest.raises(ImportError, match=r"crystalbench\[compat\]"):
        evaluator.evaluate_dataset({}, {})
