"""Fast paths give the same matches as the default path.

- the record-free matching core (``greedy_pairs`` / ``chain_fields``) against a plain
  re-statement of the contract, on random matrices full of ties;
- ONNX Runtime fp32 against torch (identical matches), int8 close to fp32;
- encoding spread over worker processes against one process (identical vectors);
- the CLI options that select them.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from crystalbench.config.scoring import ScoreConfig
from crystalbench.data import SAMPLE_DIR, load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.encoders import EmbeddingStore, HashEncoder, load_encoder
from crystalbench.encoders.parallel import EncoderSpec, ParallelEncoder, split_balanced
from crystalbench.errors import EncoderUnavailableError, UnknownNameError
from crystalbench.scoring.evaluation import evaluate
from crystalbench.scoring.matching import MatchRules, chain_fields, greedy_match, score_chain

PAPER = MatchRules(tau=0.35)
COMPAT = MatchRules(tau=0.35, strict=True, ties_high_first=True)


# --------------------------------------------------------------------------- matching core
def contract_matches(sim: np.ndarray, rules: MatchRules) -> list[tuple[int, int]]:
    """The matching contract restated plainly: every candidate sorted, then greedy."""
    tau = np.float32(rules.tau)
    candidates = [
        (float(sim[i, j]), i, j)
        for i in range(sim.shape[0])
        for j in range(sim.shape[1])
        if (sim[i, j] > tau if rules.strict else sim[i, j] >= tau)
    ]
    if rules.ties_high_first:
        candidates.sort(reverse=True)
    else:
        candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
    used_i: set[int] = set()
    used_j: set[int] = set()
    out = []
    for _, i, j in candidates:
        if i not in used_i and j not in used_j:
            used_i.add(i)
            used_j.add(j)
            out.append((i, j))
    return out


def contract_lis_ratio(matches: list[tuple[int, int]]) -> float:
    if len(matches) < 2:
        return 1.0
    tails: list[int] = []
    for _, value in sorted((j, i) for i, j in matches):
        k = bisect_left(tails, value)
        tails[k : k + 1] = [value]
    return len(tails) / len(matches)


# Values on a coarse grid make exact ties and values equal to tau common.
grid_values = st.sampled_from([0.0, 0.2, 0.35, 0.5, 0.5, 0.7, 0.9, 1.0])
matrices = st.integers(0, 7).flatmap(
    lambda m: st.integers(0, 7).flatmap(
        lambda n: st.lists(grid_values, min_size=m * n, max_size=m * n).map(
            lambda values: np.asarray(values, dtype=np.float32).reshape(m, n)
        )
    )
)


@settings(max_examples=300, deadline=None)
@given(matrices, st.sampled_from([PAPER, COMPAT]), st.sampled_from([0.0, 0.3, 1.0]))
def test_fast_matching_core_follows_the_contract(sim, rules, alpha):
    expected = contract_matches(sim, rules)
    fast = chain_fields(sim, rules=rules, alpha=alpha)
    assert [(i, j) for i, j, _ in fast["matches"]] == expected
    assert [(m.pred_index, m.ref_index) for m in greedy_match(sim, rules)] == expected
    assert fast["lis"] == contract_lis_ratio(expected)
    record = score_chain(sim, rules=rules, alpha=alpha)
    assert (record.precision, record.recall, record.f1, record.lis, record.kendall) == (
        fast["precision"],
        fast["recall"],
        fast["f1"],
        fast["lis"],
        fast["kendall"],
    )
    assert record.ordered_f1 == fast["ordered_f1"]
    assert record.out_of_order == fast["out_of_order"]


def test_kendall_by_hand():
    # sequence [1, 0, 2]: concordant 2, discordant 1 -> tau 1/3 -> (1/3 + 1) / 2
    sim = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], dtype=np.float32)
    assert chain_fields(sim, rules=PAPER)["kendall"] == pytest.approx(2 / 3, abs=1e-15)


# --------------------------------------------------------------------------- workers
def test_split_balanced_is_a_partition_with_even_shares():
    lengths = [((k * 37) % 101) + 1 for k in range(1000)]
    shares = split_balanced(lengths, parts=3, block=16)
    assert sorted(k for share in shares for k in share) == list(range(1000))
    totals = [sum(lengths[k] for k in share) for share in shares]
    assert max(totals) / min(totals) < 1.1


def sample_texts() -> list[str]:
    bench = load_benchmark("sample")
    texts = [s for item in bench.items for s in item.reference_steps]
    for path in sorted((SAMPLE_DIR / "predictions").glob("*.jsonl")):
        for pred in load_predictions(path):
            texts.extend(pred.reasoning_steps or [])
    return list(dict.fromkeys(texts))


def test_worker_processes_give_the_vectors_of_one_process():
    texts = sample_texts()
    with ParallelEncoder(EncoderSpec("hash"), workers=2, min_texts=1) as parallel:
        spread = parallel.encode(texts)
        assert parallel.identity == HashEncoder().identity
    assert np.array_equal(spread, HashEncoder().encode(texts))


def test_scoring_with_workers_matches_one_process(tmp_path):
    bench = load_benchmark("sample")
    preds = load_predictions(sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0])
    config = ScoreConfig(encoder="hash", use_cache=False)
    single = evaluate(bench, preds, config)
    encoder = load_encoder("hash", workers=2)
    assert isinstance(encoder, ParallelEncoder)
    encoder.min_texts = 1
    try:
        spread = evaluate(bench, preds, config, encoder=encoder)
    finally:
        encoder.close()
    assert [r.matches for r in spread.items] == [r.matches for r in single.items]
    assert spread.summary.model_dump(exclude={"config"}) == single.summary.model_dump(
        exclude={"config"}
    )


def test_unknown_backend_and_impossible_variants_are_refused():
    with pytest.raises(UnknownNameError, match="onnx"):
        load_encoder("minilm-offline", backend="onnxx")
    with pytest.raises(EncoderUnavailableError, match="hash"):
        load_encoder("hash", backend="onnx")
    encoder = load_encoder("minilm-offline", dtype="float16", device="cpu")
    with pytest.raises(EncoderUnavailableError, match="GPU"):
        encoder.encode(["a"])


# --------------------------------------------------------------------------- ONNX Runtime
@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    pytest.importorskip("onnxruntime")
    return tmp_path_factory.mktemp("onnx-exports")


@pytest.fixture(scope="module")
def sample_scores(export_dir):
    """The sample's first prediction file scored with torch, ONNX fp32 and ONNX int8."""
    bench = load_benchmark("sample")
    preds = load_predictions(sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0])
    config = ScoreConfig(encoder="minilm-offline", use_cache=False)
    runs = {}
    for backend in ("torch", "onnx", "onnx-int8"):
        encoder = load_encoder("minilm-offline", backend=backend, cache_dir=export_dir)
        runs[backend] = evaluate(bench, preds, config, encoder=encoder)
    return runs


def all_cosines(run) -> dict[tuple[str, int, int], float]:
    return {(r.id, i, j): c for r in run.items for i, j, c in r.matches}


@pytest.mark.slow
def test_onnx_fp32_gives_the_torch_matches(sample_scores):
    torch_run, onnx_run = sample_scores["torch"], sample_scores["onnx"]
    assert [(r.id, [m[:2] for m in r.matches]) for r in onnx_run.items] == [
        (r.id, [m[:2] for m in r.matches]) for r in torch_run.items
    ]
    a, b = all_cosines(torch_run), all_cosines(onnx_run)
    assert max(abs(a[k] - b[k]) for k in a) < 1e-5
    assert onnx_run.summary.match_f1 == torch_run.summary.match_f1


@pytest.mark.slow
def test_onnx_int8_stays_close_to_fp32(sample_scores):
    fp32, int8 = sample_scores["onnx"], sample_scores["onnx-int8"]
    assert abs(int8.summary.match_f1 - fp32.summary.match_f1) <= 0.02
    a, b = all_cosines(fp32), all_cosines(int8)
    shared = set(a) & set(b)
    assert len(shared) >= 0.9 * len(a)
    assert np.mean([abs(a[k] - b[k]) for k in shared]) < 0.02


@pytest.mark.slow
def test_onnx_tokenisation_is_the_sentence_transformers_one(export_dir):
    from crystalbench.encoders.onnx_backend import OnnxEncoder

    torch_encoder = load_encoder("minilm-offline", device="cpu")
    onnx_encoder = OnnxEncoder("minilm-offline", cache_dir=export_dir)
    texts = ["Side AC is 6.", "Ünïcödé — dashes… and 🙂", "x " * 600, "", "   padded  "]
    expected = torch_encoder.model.preprocess(texts)
    got = onnx_encoder.features(texts)
    assert set(got) <= set(expected)
    for name, array in got.items():
        assert np.array_equal(expected[name].numpy(), array), name
    assert got["input_ids"].shape[1] == 256  # truncated at max_seq_length


@pytest.mark.slow
def test_onnx_exports_are_cached_and_identities_never_mix(export_dir, sample_scores, tmp_path):
    from crystalbench.encoders import onnx_backend
    from crystalbench.encoders.onnx_backend import OnnxEncoder

    identities = {load_encoder("minilm-offline", backend=b).identity for b in ("torch",)}
    fp32 = OnnxEncoder("minilm-offline", cache_dir=export_dir)
    int8 = OnnxEncoder("minilm-offline", precision="int8", cache_dir=export_dir)
    identities |= {fp32.identity, int8.identity}
    assert len(identities) == 3
    # The export made by the fixture is reused: exporting again would be a bug.
    folder = fp32.export_folder
    assert (folder / "model.onnx").is_file()
    assert (folder / "model-int8.onnx").is_file()

    def no_export(*_, **__):
        raise AssertionError("exported twice")

    original = onnx_backend.export_sentence_transformer
    onnx_backend.export_sentence_transformer = no_export
    try:
        fresh = OnnxEncoder("minilm-offline", precision="int8", cache_dir=export_dir)
        vectors = fresh.encode(["The bar for 2019 is tallest."])
    finally:
        onnx_backend.export_sentence_transformer = original
    assert vectors.shape == (1, 384)
    assert np.isclose(np.linalg.norm(vectors[0]), 1.0, atol=1e-6)
    # One cache file, three encoders: each keeps its own vectors.
    store = EmbeddingStore(tmp_path / "e.sqlite")
    from crystalbench.encoders import CachingEncoder

    for encoder in (fp32, int8, load_encoder("minilm-offline", backend="torch", device="cpu")):
        CachingEncoder(encoder, store).embed(["Side AC is labelled 6."])
    stats = store.stats()
    assert sorted(k for k in stats if k != "__bytes__") == sorted(identities)


@pytest.mark.slow
def test_a_second_export_into_the_same_folder_keeps_the_first(tmp_path):
    from crystalbench.encoders.onnx_backend import (
        export_sentence_transformer,
        resolve_model_folder,
    )

    source = resolve_model_folder("minilm-offline")
    target = tmp_path / "model"
    first = export_sentence_transformer(source, target)
    stamp = first.fp32_path.stat().st_mtime_ns
    second = export_sentence_transformer(source, target)  # loses the rename race
    assert second.fp32_path.stat().st_mtime_ns == stamp
    assert [p.name for p in tmp_path.iterdir()] == ["model"]  # no scratch folder left


# --------------------------------------------------------------------------- CLI
@pytest.mark.slow
def test_cli_backend_and_workers_options(tmp_path, monkeypatch, export_dir):
    from crystalbench.cli.main import app

    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(tmp_path / "cache"))
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    runner = CliRunner()

    def score(out: Path, *extra: str) -> dict:
        result = runner.invoke(
            app,
            ["score", "-b", "sample", "-p", str(preds), "-o", str(out), "--no-progress", *extra],
        )
        assert result.exit_code == 0, result.output
        return json.loads((out / "summary.json").read_text())

    base = score(tmp_path / "a", "--encoder", "hash")
    spread = score(tmp_path / "b", "--encoder", "hash", "--workers", "2", "--batch-size", "8")
    assert spread["match_f1"] == base["match_f1"]
    onnx = score(
        tmp_path / "c",
        "--encoder",
        "minilm-offline",
        "--backend",
        "onnx-int8",
        "--cache-dir",
        str(export_dir),
    )
    assert onnx["config"]["encoder_identity"].startswith("onnx-int8:all-MiniLM-L6-v2:")
    bad = runner.invoke(
        app,
        ["score", "-b", "sample", "-p", str(preds), "-o", str(tmp_path / "d"), "--backend", "tpu"],
    )
    assert bad.exit_code == 2
    assert "onnx" in bad.output
