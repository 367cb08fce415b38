"""The encoder x threshold ablation: thresholds read off one matching, rankings, encoder calls."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner
from validation_helpers import perturbed_predictions

from crystalbench.cli.main import app
from crystalbench.config.scoring import ScoreConfig
from crystalbench.data import load_benchmark
from crystalbench.encoders import HashEncoder, OneHotEncoder
from crystalbench.metrics import METRICS
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import Prediction
from crystalbench.validation.ablation import parse_encoders, run_ablation
from crystalbench.validation.thresholds import THRESHOLD_FIELDS, chain_at
from fakes import CountingEncoder, make_benchmark, make_item, write_jsonl

runner = CliRunner()
THRESHOLDS = (0.2, 0.3, 0.35, 0.45, 0.6)


@pytest.mark.parametrize("compat", ["none", "crystal-metrics-0.2"])
def test_higher_thresholds_read_off_one_matching_equal_scoring_again(compat):
    """Every per-item field and every summary number at each tau, from the lowest tau's
    matches, equals a fresh scoring run at that tau (exact equality, both rule sets)."""
    bench = load_benchmark("sample")
    preds = perturbed_predictions(bench, seed=1, keep=0.7)
    config = ScoreConfig(encoder="hash", use_cache=False, compat=compat)
    base = evaluate(bench, preds, config.model_copy(update={"threshold": THRESHOLDS[0]}))
    strict = compat != "none"
    changed = 0
    for tau in THRESHOLDS[1:]:
        direct = evaluate(bench, preds, config.model_copy(update={"threshold": tau}))
        for low, high in zip(base.items, direct.items, strict=True):
            derived = chain_at(low, tau, strict=strict, alpha=0.3, order_metric="lis")
            assert derived == {name: getattr(high, name) for name in THRESHOLD_FIELDS}, low.id
            changed += derived["f1"] != low.f1
    assert changed >= 10  # the thresholds really change items


def known_order_world():
    """Four items of two reference steps; vectors set so the cosines are exact:
    ``paraphraser`` matches both steps at cosine 0.6, ``exact-half`` one step at 1.0,
    ``exact-quarter`` one step on half the items."""
    table: dict[str, list[float]] = {}
    items, sets = [], {"paraphraser": [], "exact-half": [], "exact-quarter": []}

    def vector(*weights: tuple[int, float]) -> list[float]:
        row = [0.0] * 16
        for dim, weight in weights:
            row[dim] = weight
        return row

    for k in range(4):
        r1, r2 = f"Bar {k} reaches 40 units.", f"Bar {k} is the tallest one."
        p1, p2 = f"The height of bar {k} is about 40.", f"No bar is taller than bar {k}."
        table[r1], table[r2] = vector((4 * k, 1.0)), vector((4 * k + 1, 1.0))
        table[p1] = vector((4 * k, 0.6), (4 * k + 2, 0.8))
        table[p2] = vector((4 * k + 1, 0.6), (4 * k + 3, 0.8))
        items.append(make_item(f"i{k}", [r1, r2], answer="40"))
        sets["paraphraser"].append(Prediction(id=f"i{k}", reasoning_steps=[p1, p2], answer="40"))
        sets["exact-half"].append(Prediction(id=f"i{k}", reasoning_steps=[r1], answer="40"))
        quarter = [r1] if k < 2 else [p2.replace("No", "Not one")]
        if k >= 2:
            table[quarter[0]] = vector((4 * k + 3, 1.0))
        sets["exact-quarter"].append(Prediction(id=f"i{k}", reasoning_steps=quarter, answer="1"))
    return make_benchmark(items), sets, table


def test_rankings_of_prediction_sets_of_known_order():
    """At 0.3 and 0.5: paraphraser (F1 1) > exact-half (2/3) > exact-quarter (1/3); at 0.7
    the paraphrases fail: exact-half > exact-quarter > paraphraser (0). Kendall tau-b of the
    0.7 cells against the default (0.3) is -1/3, Spearman's rho -1/2."""
    bench, sets, table = known_order_world()
    counting = CountingEncoder(OneHotEncoder(table))
    report = run_ablation(
        bench,
        sets,
        [("onehot", "onehot")],
        thresholds=(0.3, 0.5, 0.7),
        config=ScoreConfig(use_cache=False),
        encoder_objects={"onehot": counting},
    )
    cells = {c.threshold: c for c in report.cells}
    assert report.default_threshold == 0.3  # 0.35 is not in the grid: the first
    assert cells[0.3].match_f1 == pytest.approx(
        {"paraphraser": 1.0, "exact-half": 2 / 3, "exact-quarter": 1 / 3}
    )
    assert (
        cells[0.3].ranking == cells[0.5].ranking == ["paraphraser", "exact-half", "exact-quarter"]
    )
    assert cells[0.7].ranking == ["exact-half", "exact-quarter", "paraphraser"]
    assert cells[0.5].kendall_tau == pytest.approx(1.0)
    assert cells[0.7].kendall_tau == pytest.approx(-1 / 3)
    assert cells[0.7].spearman_rho == pytest.approx(-0.5)
    assert report.min_kendall_tau == pytest.approx(-1 / 3)
    assert report.n_cells_same_ranking == 2
    assert report.mean_f1_by_encoder["onehot"] == pytest.approx((2 + 2 + 1) / 3 / 3)
    distinct = len(set(table) & {s for c in counting.calls for s in c})
    assert len(counting.seen) == distinct == len(set(counting.seen))  # each text once


def test_thresholds_reuse_the_similarities_and_cells_equal_separate_runs():
    """Five thresholds ask the encoder exactly what one threshold asks; every cell's metrics
    equal the summary of a separate ``evaluate`` at that encoder and tau."""
    bench = load_benchmark("sample")
    sets = {
        "careful": perturbed_predictions(bench, seed=2, keep=0.9),
        "sloppy": perturbed_predictions(bench, seed=3, keep=0.5),
        "terse": perturbed_predictions(bench, seed=4, keep=0.3),
    }
    one, five = CountingEncoder(HashEncoder()), CountingEncoder(HashEncoder())
    config = ScoreConfig(use_cache=False)
    single = run_ablation(
        bench,
        sets,
        [("hash", "hash")],
        thresholds=(0.35,),
        config=config,
        encoder_objects={"hash": one},
    )
    report = run_ablation(
        bench,
        sets,
        [("hash", "hash")],
        thresholds=THRESHOLDS,
        config=config,
        encoder_objects={"hash": five},
    )
    assert sorted(five.seen) == sorted(one.seen)
    assert len(five.seen) == len(set(five.seen))
    assert report.encoders[0].encoded == len(five.seen)
    for cell in report.cells:
        for name, preds in sets.items():
            direct = evaluate(
                bench, preds, ScoreConfig(encoder="hash", use_cache=False, threshold=cell.threshold)
            ).summary
            for metric in METRICS:
                assert cell.metrics[name][metric.key] == getattr(direct, metric.key), (
                    cell.threshold,
                    name,
                    metric.key,
                )
    default = next(c for c in report.cells if c.threshold == 0.35)
    assert single.cells[0].match_f1 == default.match_f1


def test_each_encoder_encodes_each_distinct_text_once():
    bench, sets, table = known_order_world()
    first, second = CountingEncoder(OneHotEncoder(table)), CountingEncoder()
    report = run_ablation(
        bench,
        sets,
        [("onehot", "x"), ("hash64", "y")],
        thresholds=(0.3, 0.35, 0.4, 0.45, 0.5),
        config=ScoreConfig(use_cache=False),
        encoder_objects={"onehot": first, "hash64": second},
    )
    assert len(report.cells) == 10
    for counting in (first, second):
        assert len(counting.seen) == len(set(counting.seen)) == len(set(table))
    assert [e.label for e in report.encoders] == ["onehot", "hash64"]
    assert report.default_encoder == "onehot"
    assert report.default_threshold == 0.35


def test_parse_encoders_and_bad_arguments():
    assert parse_encoders("a=minilm-offline, hash") == [("a", "minilm-offline"), ("hash", "hash")]
    from crystalbench.errors import InputError

    for text, words in [("", "at least one"), ("a=x,a=y", "used twice"), ("=x", "LABEL=NAME")]:
        with pytest.raises(InputError, match=words):
            parse_encoders(text)
    bench, sets, _ = known_order_world()
    with pytest.raises(InputError, match="default encoder"):
        run_ablation(
            bench, sets, [("h", "hash")], default_encoder="zz", config=ScoreConfig(use_cache=False)
        )
    with pytest.raises(InputError, match="not in the grid"):
        run_ablation(
            bench, sets, [("h", "hash")], default_threshold=0.9, config=ScoreConfig(use_cache=False)
        )


def test_crystal_ablate_writes_every_table_and_heatmap(tmp_path, cache_dir):
    bench = load_benchmark("sample")
    files = []
    for seed, keep in [(5, 0.9), (6, 0.6), (7, 0.3)]:
        records = [
            p.model_dump(exclude_none=True) for p in perturbed_predictions(bench, seed, keep)
        ]
        files.append(write_jsonl(tmp_path / f"model-{seed}.jsonl", records))
    out = tmp_path / "ablation"
    result = runner.invoke(
        app,
        [
            "validate",
            "ablate",
            "-b",
            "sample",
            "-p",
            str(files[0]),
            "-p",
            str(files[1]),
            "-p",
            str(files[2]),
            "--encoders",
            "hash,again=hash",
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads((out / "ablation.json").read_text())
    assert len(data["cells"]) == 10
    cell = data["cells"][0]
    assert {"encoder", "threshold", "match_f1", "kendall_tau"} <= set(cell)
    assert set(cell["match_f1"]) == {"model-5", "model-6", "model-7"}
    assert data["n_cells_same_ranking"] == 10  # one encoder twice: one ranking
    for name in (
        "ablation.md",
        "ablation.csv",
        "ablation.tex",
        "ablation.html",
        "ablation_f1.svg",
        "ablation_kendall.svg",
    ):
        assert (out / name).stat().st_size > 200, name
    csv_lines = (out / "ablation.csv").read_text().splitlines()
    assert len(csv_lines) == 1 + 10 * 3
    page = (out / "ablation.html").read_text()
    assert page.count("<svg") == 2 + 3
    assert "<script" not in page
    assert "\\begin{tabular}" in (out / "ablation.tex").read_text()
    # the second encoder found every vector in the cache the first one filled
    assert data["encoders"][1]["encoded"] == 0
    assert data["encoders"][1]["cache_hits"] > 0


def test_crystal_validate_ablate_reads_a_config_file(tmp_path, cache_dir):
    """The grid and the scoring choices from a YAML file; flags win; a typo names the file,
    the line and the field."""
    bench = load_benchmark("sample")
    records = [p.model_dump(exclude_none=True) for p in perturbed_predictions(bench, 5, 0.9)]
    preds = write_jsonl(tmp_path / "model-5.jsonl", records)
    config = tmp_path / "ablation.yaml"
    config.write_text(
        "benchmark: sample\nencoders: [hash]\nthresholds: 0.3,0.6\n"
        "scoring: {alpha: 0.5, use_cache: false}\n"
    )
    out = tmp_path / "ablation"
    args = ["validate", "ablate", "--config", str(config), "-p", str(preds), "-o", str(out)]
    result = runner.invoke(app, [*args, "--thresholds", "0.3,0.4,0.5", "--no-progress"])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "ablation.json").read_text())
    assert data["thresholds"] == [0.3, 0.4, 0.5]
    assert data["config"]["alpha"] == 0.5
    config.write_text("benchmark: sample\nencoders: [hash]\nthreshold: [0.3]\n")
    bad = runner.invoke(app, args)
    assert bad.exit_code == 2
    said = " ".join(bad.output.split())
    assert f"error: {config}:3: field threshold: unknown field; did you mean 'thresholds'" in said
    falling = runner.invoke(
        app,
        [*args[:2], "-b", "sample", "--encoders", "hash", "-p", str(preds), "-o", str(out),
         "--thresholds", "0.5,0.4"],
    )  # fmt: skip
    assert falling.exit_code == 2
    assert "field thresholds: values must increase: 0.5,0.4 (from --thresholds 0.5,0.4)" in (
        " ".join(falling.output.split())
    )
