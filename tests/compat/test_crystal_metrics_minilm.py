"""The drop-in against crystal-metrics 0.2.0 with a real sentence encoder (the offline MiniLM).

crystal-metrics loads its own ``SentenceTransformer`` from the bundled MiniLM folder and
embeds each sample in two calls; the drop-in runs crystalbench's default path for
``minilm-offline`` (ONNX Runtime on a CPU, torch on a GPU) with its batched, cached lookups.
Vectors then differ by float noise (about 1e-7), yet every step number of the sample must be
the same; the mean and maximum cosine of each sample agree to 1e-6.
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest
from cm_sample import references, sample_sets

import crystalbench.compat.crystal_metrics as dropin
from crystalbench.defaults import ENCODER, OFFLINE_ENCODER

cm = pytest.importorskip("crystal_metrics")
sentence = pytest.importorskip("crystalbench.encoders.sentence")

pytestmark = pytest.mark.slow
SETS = [s for s in sample_sets() if s.name in ("messy-raw", "verbose-recall")]


@pytest.fixture(scope="module")
def theirs():
    try:
        path = str(sentence.offline_model_path())
    except Exception as error:
        pytest.skip(f"the offline MiniLM is not installed: {error}")
    return cm.MLLMReasoningEvaluator(path, similarity_threshold=0.35, device="cpu")


@pytest.mark.parametrize("sample", SETS, ids=lambda s: s.name)
def test_evaluate_dataset_with_minilm_equals_crystal_metrics(sample, theirs):
    ours = dropin.MLLMReasoningEvaluator(OFFLINE_ENCODER, device="cpu")
    assert ours.similarity_threshold == theirs.similarity_threshold
    with redirect_stdout(io.StringIO()):
        expected = theirs.evaluate_dataset(sample.predictions, references(), alpha=0.3)
        got = ours.evaluate_dataset(sample.predictions, references(), alpha=0.3)
    expected = expected.set_index("sample_idx").loc[list(got["sample_idx"])].reset_index()
    close = ["avg_similarity", "max_similarity"]
    exact = [c for c in got.columns if c not in close]
    assert got[exact].to_dict("records") == expected[exact].to_dict("records")
    assert (got[close] - expected[close]).abs().to_numpy().max() < 1e-6


def test_semantic_reward_with_the_default_model_equals_crystal_metrics(theirs):
    """The drop-in's default model redirected to the offline MiniLM; crystal-metrics gets
    the same weights as a model object."""
    refs = references()
    dropin.redirect_model(ENCODER, OFFLINE_ENCODER)
    dropin.similarity._semantic_model_cache.clear()
    try:
        for sample in SETS:
            steps = [refs[i]["reference_steps"] for i in sample.ids]
            for threshold in (0.7, 0.5):
                ours = dropin.semantic_reasoning_reward(
                    sample.completions, reference_steps=steps, threshold=threshold
                )
                expected = cm.semantic_reasoning_reward(
                    sample.completions,
                    reference_steps=steps,
                    threshold=threshold,
                    model=theirs.model,
                )
                assert ours == expected
    finally:
        dropin.redirect_model(ENCODER, None)
        dropin.similarity._semantic_model_cache.clear()
