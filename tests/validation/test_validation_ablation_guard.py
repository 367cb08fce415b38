"""The fact guard as one more axis of the ablation: one row per encoder and guard, each cell
equal to a separate scoring run with that guard, thresholds still read off one matching."""

from __future__ import annotations

import json
import random
import re

import pytest
from typer.testing import CliRunner
from validation_helpers import perturbed_predictions

from crystalbench.cli.main import app
from crystalbench.config.scoring import ScoreConfig
from crystalbench.data import load_benchmark
from crystalbench.encoders import HashEncoder
from crystalbench.errors import InputError
from crystalbench.metrics import METRICS
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import Prediction
from crystalbench.validation.ablation import run_ablation
from crystalbench.validation.thresholds import THRESHOLD_FIELDS, chain_at
from fakes import CountingEncoder, write_jsonl

runner = CliRunner()
THRESHOLDS = (0.2, 0.35, 0.5, 0.7)
NUMBER = re.compile(r"\d+")


def wrong_numbers(bench, seed: int) -> list[Prediction]:
    """The reference chains with every number moved: many pairs for the guard to veto."""
    rng = random.Random(seed)
    return [
        Prediction(
            id=item.id,
            reasoning_steps=[
                NUMBER.sub(lambda m: str(int(m.group()) + rng.choice([1, 2])), step)
                for step in item.reference_steps
            ],
            answer=item.answer,
        )
        for item in bench.items
    ]


@pytest.mark.parametrize("guard", ["facts", "facts-strict"])
@pytest.mark.parametrize("compat", ["none", "crystal-metrics-0.2"])
def test_thresholds_read_off_one_guarded_matching_equal_scoring_again(guard, compat):
    """A vetoed pair is vetoed at every tau, and a step's closest reference step is the
    same wherever it is a candidate: the matches at a higher tau stay a prefix."""
    bench = load_benchmark("sample")
    preds = wrong_numbers(bench, seed=1)
    config = ScoreConfig(encoder="hash", use_cache=False, compat=compat, guard=guard)
    base = evaluate(bench, preds, config.model_copy(update={"threshold": THRESHOLDS[0]}))
    assert base.summary.n_vetoed_pairs > 20
    for tau in THRESHOLDS[1:]:
        direct = evaluate(bench, preds, config.model_copy(update={"threshold": tau}))
        for low, high in zip(base.items, direct.items, strict=True):
            derived = chain_at(low, tau, strict=compat != "none", alpha=0.3, order_metric="lis")
            assert derived == {name: getattr(high, name) for name in THRESHOLD_FIELDS}, low.id


def test_one_row_per_encoder_and_guard_each_cell_a_separate_run():
    bench = load_benchmark("sample")
    sets = {
        "honest": perturbed_predictions(bench, seed=2, keep=0.9),
        "copier": wrong_numbers(bench, seed=3),
    }
    counting = CountingEncoder(HashEncoder())
    report = run_ablation(
        bench,
        sets,
        [("hash", "hash")],
        thresholds=(0.35, 0.5),
        config=ScoreConfig(use_cache=False),
        encoder_objects={"hash": counting},
        guards=["none", "facts", "facts-strict"],
    )
    assert report.guards == ["none", "facts", "facts-strict"]
    assert [(e.label, e.guard) for e in report.encoders] == [
        ("hash+none", "none"),
        ("hash+facts", "facts"),
        ("hash+facts-strict", "facts-strict"),
    ]
    assert report.default_encoder == "hash+none"
    assert "guard" not in report.config  # varied, so not a shared setting
    assert len(report.cells) == 3 * 2
    for cell in report.cells:
        for name, preds in sets.items():
            config = ScoreConfig(
                encoder="hash", use_cache=False, threshold=cell.threshold, guard=cell.guard
            )
            direct = evaluate(bench, preds, config).summary
            for metric in METRICS:
                assert cell.metrics[name][metric.key] == getattr(direct, metric.key), (
                    cell.encoder,
                    cell.threshold,
                    name,
                    metric.key,
                )
    copier = {c.encoder: c.match_f1["copier"] for c in report.cells if c.threshold == 0.35}
    # a copy with a wrong value is blocked under both guards (issue 30): strict <= facts
    assert copier["hash+facts-strict"] <= copier["hash+facts"] < copier["hash+none"]
    # One encoder object for every guard: each text is encoded once per scoring.
    assert len(counting.seen) == 3 * len(set(counting.seen))


def test_one_guard_keeps_the_encoder_labels_and_bad_guards_fail():
    bench = load_benchmark("sample")
    sets = {"honest": perturbed_predictions(bench, seed=2, keep=0.9)}
    config = ScoreConfig(encoder="hash", use_cache=False, guard="facts")
    report = run_ablation(bench, sets, [("hash", "hash")], thresholds=(0.35,), config=config)
    assert [e.label for e in report.encoders] == ["hash"]
    assert report.guards == ["facts"]
    assert report.cells[0].guard == "facts"
    assert report.config["guard"] == "facts"
    with pytest.raises(InputError, match="unknown guard 'fact'"):
        run_ablation(bench, sets, [("hash", "hash")], guards=["fact"], config=config)
    with pytest.raises(InputError, match="default guard"):
        run_ablation(
            bench, sets, [("h", "hash")], guards=["none"], default_guard="facts", config=config
        )


def test_crystal_ablate_takes_guards(tmp_path):
    bench = load_benchmark("sample")
    files = [
        write_jsonl(tmp_path / "copier.jsonl", [p.model_dump() for p in wrong_numbers(bench, 4)]),
        write_jsonl(
            tmp_path / "honest.jsonl",
            [p.model_dump(exclude_none=True) for p in perturbed_predictions(bench, 5, 0.8)],
        ),
    ]
    out = tmp_path / "ablation"
    args = ["validate", "ablate", "-b", "sample", "-p", str(files[0]), "-p", str(files[1])]
    result = runner.invoke(
        app,
        [
            *args,
            "--encoders",
            "hash",
            "--guards",
            "none,facts-strict",
            "--thresholds",
            "0.35,0.5",
            "--out",
            str(out),
            "--no-cache",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "hash+facts-strict" in result.output
    data = json.loads((out / "ablation.json").read_text())
    assert [c["encoder"] for c in data["cells"]] == ["hash+none"] * 2 + ["hash+facts-strict"] * 2
    assert "Fact guards: none, facts-strict" in (out / "ablation.md").read_text()
    bad = runner.invoke(app, [*args, "--encoders", "hash", "--guards", "nope", "-o", str(out)])
    assert bad.exit_code == 2
    assert "unknown guard 'nope'" in bad.output
