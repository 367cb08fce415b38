"""The grader panel: tables, rankings, tau-b and paired gains recomputed from known per-item
scores, the ``crystal validate panel`` command, and ``validate ablate --limit``."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.config.scoring import ScoreConfig
from crystalbench.data import SAMPLE_DIR, load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.encoders import OneHotEncoder
from crystalbench.errors import InputError
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import Prediction
from crystalbench.validation.panel import ENSEMBLE, parse_graders, run_panel
from crystalbench.validation.render import panel_markdown
from fakes import make_benchmark, make_item

runner = CliRunner()
SAMPLE_SETS = SAMPLE_DIR / "predictions"
MODELS = ("base", "tuned", "other", "weak")
N_ITEMS = 12
RESAMPLES = 400
SEED = 3

# Matched steps (of two) per item, under each grader: the hand-made per-item scores. Match
# F1 of an item is k / 2 (two predicted steps, two reference steps). "tuned" gains a lot
# under the training grader and less under the held-out one.
K = {
    "train": {
        "base": [1, 0, 1, 1, 0, 2, 1, 0, 1, 1, 0, 1],
        "tuned": [2, 2, 1, 2, 1, 2, 2, 1, 2, 2, 1, 2],
        "other": [1, 1, 1, 2, 0, 1, 1, 1, 0, 1, 1, 1],
        "weak": [0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0],
    },
    "held": {
        "base": [1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1],
        "tuned": [1, 2, 1, 1, 1, 2, 1, 0, 2, 1, 1, 1],
        "other": [2, 1, 1, 2, 1, 1, 2, 1, 1, 1, 1, 2],
        "weak": [0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1],
    },
}


def known_panel_world():
    """Items of two reference steps; each grader is a one-hot encoder whose table makes the
    first ``k`` predicted steps of (grader, model, item) copies of their reference steps and
    the others orthogonal to everything."""
    dims = 2 * N_ITEMS + 2 * N_ITEMS * len(MODELS)

    def unit(dim: int) -> list[float]:
        row = [0.0] * dims
        row[dim] = 1.0
        return row

    items, sets = [], {m: [] for m in MODELS}
    tables: dict[str, dict[str, list[float]]] = {g: {} for g in K}
    for i in range(N_ITEMS):
        refs = [f"Item {i}: the bar reaches {10 + i} units.", f"Item {i}: it is the tallest."]
        items.append(make_item(f"i{i}", refs, answer="40"))
        for table in tables.values():
            table[refs[0]], table[refs[1]] = unit(2 * i), unit(2 * i + 1)
        for m, model in enumerate(MODELS):
            steps = [f"{model} says step {s} of item {i}." for s in range(2)]
            sets[model].append(Prediction(id=f"i{i}", reasoning_steps=steps, answer="40"))
            for grader, table in tables.items():
                for s, step in enumerate(steps):
                    own = 2 * N_ITEMS + 2 * (m * N_ITEMS + i) + s
                    table[step] = unit(2 * i + s) if s < K[grader][model][i] else unit(own)
    encoders = {g: OneHotEncoder(table) for g, table in tables.items()}
    return make_benchmark(items), sets, encoders


def expected_f1(grader: str) -> np.ndarray:
    """``(models, items)`` Match F1 from the hand-made counts (the ensemble: their minimum)."""
    if grader == ENSEMBLE:
        return np.minimum(expected_f1("train"), expected_f1("held"))
    return np.asarray([K[grader][m] for m in MODELS], dtype=np.float64) / 2


def expected_tau_interval(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """scipy's percentile bootstrap over items of tau-b between the models' means."""

    def tau(index: np.ndarray) -> float:
        return float(stats.kendalltau(a[:, index].mean(1), b[:, index].mean(1)).statistic)

    with np.errstate(all="ignore"):
        draws = stats.bootstrap(
            (np.arange(a.shape[1]),),
            tau,
            n_resamples=RESAMPLES,
            vectorized=False,
            method="percentile",
            rng=np.random.default_rng(SEED),
        ).bootstrap_distribution
    finite = draws[np.isfinite(draws)]
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def expected_gain(baseline: np.ndarray, treated: np.ndarray) -> tuple[float, float, float, float]:
    """Mean gain, its paired percentile interval and p-value, from scipy's resampling."""
    diffs = treated - baseline
    delta = float(diffs.mean())
    result = stats.bootstrap(
        (diffs,),
        np.mean,
        n_resamples=RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(SEED),
    )
    draws = result.bootstrap_distribution
    extreme = np.abs(draws - delta) >= abs(delta) - 1e-9 * max(1.0, abs(delta))
    p = min(1.0, (1 + int(extreme.sum())) / (1 + RESAMPLES))
    low, high = result.confidence_interval
    return delta, min(float(low), delta), max(float(high), delta), p


@pytest.fixture(scope="module")
def known_report():
    bench, sets, encoders = known_panel_world()
    return run_panel(
        bench,
        sets,
        parse_graders("train,held"),
        config=ScoreConfig(use_cache=False),
        baseline="base",
        treated="tuned",
        training_grader="train",
        n_resamples=RESAMPLES,
        seed=SEED,
        encoder_objects=encoders,
    )


def test_metrics_and_rankings_equal_the_hand_made_scores(known_report):
    report = known_report
    assert report.n_items == N_ITEMS
    assert report.models == list(MODELS)
    assert [g.label for g in report.graders] == ["train", "held", ENSEMBLE]
    for grader in ("train", "held", ENSEMBLE):
        means = expected_f1(grader).mean(axis=1)
        for m, model in enumerate(MODELS):
            got = report.metrics[grader][model]
            assert got["match_f1"] == pytest.approx(means[m], abs=1e-12), (grader, model)
            assert got["ordered_f1"] == pytest.approx(means[m], abs=1e-12)  # in order: LIS 1
            assert got["accuracy"] == 1.0
            assert got["steps"] == 2.0
        order = {model: m for m, model in enumerate(MODELS)}
        by_hand = sorted(MODELS, key=lambda model: (-means[order[model]], order[model]))
        assert report.rankings[grader] == by_hand
    assert report.rankings["train"][0] == "tuned"
    assert report.rankings["held"][0] == "other"


def test_tau_b_and_its_interval_equal_scipy_on_the_hand_made_scores(known_report):
    agreement = {(a.first, a.second): a for a in known_report.agreement}
    assert set(agreement) == {("train", "held"), ("train", ENSEMBLE), ("held", ENSEMBLE)}
    for (first, second), got in agreement.items():
        a, b = expected_f1(first), expected_f1(second)
        want = stats.kendalltau(a.mean(1), b.mean(1), variant="b")
        assert got.kendall_tau == pytest.approx(want.statistic, abs=1e-12)
        assert got.p_value == pytest.approx(want.pvalue, abs=1e-12)
        low, high = expected_tau_interval(a, b)
        assert (got.low, got.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high))
    # the rankings differ (other and tuned swap): tau-b is neither 1 nor undefined
    assert agreement[("train", "held")].kendall_tau == pytest.approx(2 / 3)


def test_paired_gains_and_confirmed_shares_equal_the_hand_made_scores(known_report):
    paired = known_report.paired
    assert (paired.baseline, paired.treated, paired.training_grader) == ("base", "tuned", "train")
    gains = {g.grader: g for g in paired.gains}
    assert list(gains) == ["train", "held", ENSEMBLE]
    b, t = MODELS.index("base"), MODELS.index("tuned")
    train_gain = expected_f1("train")[t].mean() - expected_f1("train")[b].mean()
    for grader, got in gains.items():
        f1 = expected_f1(grader)
        delta, low, high, p = expected_gain(f1[b], f1[t])
        assert got.baseline == pytest.approx(f1[b].mean(), abs=1e-12)
        assert got.treated == pytest.approx(f1[t].mean(), abs=1e-12)
        assert got.gain == pytest.approx(delta, abs=1e-12)
        assert (got.low, got.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high))
        assert got.p_value == pytest.approx(p, abs=1e-12)
        assert got.confirmed_share == pytest.approx(delta / train_gain, abs=1e-12)
    # train: 11 more matched steps of 24 (+0.458); held out: 6 more (+0.25): 6/11 confirmed
    assert gains["train"].gain == pytest.approx(11 / 24)
    assert gains["held"].gain == pytest.approx(6 / 24)
    assert gains["held"].confirmed_share == pytest.approx(6 / 11)
    assert paired.held_out_share == pytest.approx(6 / 11)
    assert paired.n_held_out_significant == int(gains["held"].low > 0)


def test_the_markdown_tables_show_the_report(known_report):
    text = panel_markdown(known_report)
    tuned = known_report.metrics
    row = next(line for line in text.splitlines() if line.startswith("| tuned |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1:] == [
        f"{tuned[g]['tuned']['match_f1']:.3f} ({known_report.rankings[g].index('tuned') + 1})"
        for g in ("train", "held", ENSEMBLE)
    ]
    assert "| train | held | 0.67 |" in text
    assert "| held | +0.250 |" not in text  # the gain row has baseline and treated first
    held = next(g for g in known_report.paired.gains if g.grader == "held")
    assert f"| held | {held.baseline:.3f} | {held.treated:.3f} | {held.gain:+.3f} |" in text
    assert "Every held-out grader confirms at least 55% of its gain" in text


def test_bad_panel_arguments_are_input_errors():
    bench, sets, encoders = known_panel_world()
    kwargs = {"config": ScoreConfig(use_cache=False), "encoder_objects": encoders}
    with pytest.raises(InputError, match="give --baseline and --treated together"):
        run_panel(bench, sets, parse_graders("train"), baseline="base", **kwargs)
    with pytest.raises(InputError, match="'nobody' is not one of the sets scored"):
        run_panel(bench, sets, parse_graders("train"), baseline="base", treated="nobody", **kwargs)
    with pytest.raises(InputError, match="training grader 'x' is not one of train, held"):
        run_panel(bench, sets, parse_graders("train,held"), training_grader="x", **kwargs)
    with pytest.raises(InputError, match="unknown metric 'f2'"):
        run_panel(bench, sets, parse_graders("train"), metric="f2", **kwargs)
    with pytest.raises(InputError, match="uses the judge matcher"):
        run_panel(bench, sets, parse_graders("train+judge"), **kwargs)
    with pytest.raises(InputError, match="grader label 'min' is the ensemble's"):
        parse_graders("min=hash")
    with pytest.raises(InputError, match="unknown grader modifier 'faxts'"):
        parse_graders("hash+faxts")


# --------------------------------------------------------------------------- the command
def _sample_args(out) -> list[str]:
    return ["validate", "panel", "-b", "sample", "-p", str(SAMPLE_SETS), "-o", str(out)]


def test_crystal_validate_panel_on_the_sample_with_hash_graders(tmp_path, cache_dir):
    """Hash graders at two thresholds and with the fact guard: every number in panel.json is
    the engine's (``evaluate`` with the grader's config), the ensemble is the per-item
    minimum, and the table is printed."""
    out = tmp_path / "panel"
    result = runner.invoke(
        app,
        [
            *_sample_args(out),
            "--grader",
            "hash",
            "--grader",
            "strict=hash@0.6,hash+facts",
            "--baseline",
            "messy-raw",
            "--treated",
            "terse-precise",
            "--training-grader",
            "strict",
            "--resamples",
            "200",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Match F1 per grader" in result.output
    assert "Kendall" in result.output
    data = json.loads((out / "panel.json").read_text())
    assert (out / "panel.md").stat().st_size > 500
    labels = [g["label"] for g in data["graders"]]
    assert labels == ["hash", "strict", "hash+facts", ENSEMBLE]
    assert [g["threshold"] for g in data["graders"][:3]] == [0.35, 0.6, 0.35]
    assert data["graders"][2]["guard"] == "facts"
    bench = load_benchmark("sample")
    models = sorted(p.stem for p in SAMPLE_SETS.glob("*.jsonl"))
    assert sorted(data["models"]) == models
    assert data["n_items"] == 40
    configs = {
        "hash": ScoreConfig(encoder="hash", use_cache=False),
        "strict": ScoreConfig(encoder="hash", threshold=0.6, use_cache=False),
        "hash+facts": ScoreConfig(encoder="hash", guard="facts", use_cache=False),
    }
    for model in models:
        preds = load_predictions(SAMPLE_SETS / f"{model}.jsonl")
        runs = {g: evaluate(bench, preds, c) for g, c in configs.items()}
        for grader, run in runs.items():
            assert data["metrics"][grader][model]["match_f1"] == run.summary.match_f1
            assert data["metrics"][grader][model]["recall"] == run.summary.recall
        lowest = np.min([[it.f1 for it in run.items] for run in runs.values()], axis=0)
        assert data["metrics"][ENSEMBLE][model]["match_f1"] == pytest.approx(lowest.mean())
    gains = {g["grader"]: g for g in data["paired"]["gains"]}
    assert gains["strict"]["confirmed_share"] == 1.0
    assert data["paired"]["training_grader"] == "strict"
    assert len(data["agreement"]) == 6  # four graders, every two


def test_crystal_validate_panel_bad_input_exits_2(tmp_path):
    out = tmp_path / "panel"
    bad = runner.invoke(app, [*_sample_args(out), "--grader", "hash+faxts", "--no-progress"])
    assert bad.exit_code == 2
    assert "unknown grader modifier 'faxts'" in bad.output
    assert "Traceback" not in bad.output
    missing = runner.invoke(
        app,
        [*_sample_args(out), "--grader", "hash", "--baseline", "messy-raw", "--treated", "x"],
    )
    assert missing.exit_code == 2
    assert "prediction set 'x' is not one of the sets scored" in " ".join(missing.output.split())


def _real_encoder(name: str) -> None:
    """Skip, saying why, when ``name`` cannot load here (its extra or model is missing)."""
    from crystalbench.encoders import load_encoder

    try:
        encoder = load_encoder(name)
        encoder.encode(["probe"])
    except Exception as exc:  # an optional extra or offline model that is not installed
        pytest.skip(f"{name} unavailable: {exc}")
    close = getattr(encoder, "close", None)
    if close is not None:
        close()


@pytest.mark.slow
def test_crystal_validate_panel_with_minilm_and_mpnet(tmp_path, cache_dir):
    """The two real offline encoders, each at crystal-metrics' threshold of its model."""
    _real_encoder("minilm-offline")
    _real_encoder("mpnet-offline")
    out = tmp_path / "panel"
    args = [*_sample_args(out)[:4], "-p", str(SAMPLE_SETS / "terse-precise.jsonl")]
    args += ["-p", str(SAMPLE_SETS / "messy-raw.jsonl"), "-o", str(out), "--limit", "6"]
    result = runner.invoke(
        app,
        [*args, "--grader", "minilm-offline,mpnet-offline", "--resamples", "50", "-q"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads((out / "panel.json").read_text())
    assert data["n_items"] == 6
    thresholds = {g["label"]: g["threshold"] for g in data["graders"]}
    assert thresholds == {"minilm-offline": 0.35, "mpnet-offline": 0.38, ENSEMBLE: None}
    identities = {g["label"]: g["identity"] for g in data["graders"]}
    assert "mpnet" in identities["mpnet-offline"].lower()
    assert 0.0 < data["metrics"]["mpnet-offline"]["terse-precise"]["match_f1"] <= 1.0


def test_crystal_validate_ablate_limit_scores_that_many_items(tmp_path, cache_dir):
    out = tmp_path / "ablation"
    result = runner.invoke(
        app,
        [
            "validate",
            "ablate",
            "-b",
            "sample",
            "-p",
            str(SAMPLE_SETS / "terse-precise.jsonl"),
            "-p",
            str(SAMPLE_SETS / "messy-raw.jsonl"),
            "--encoders",
            "hash",
            "--thresholds",
            "0.3,0.5",
            "--limit",
            "5",
            "-o",
            str(out),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads((out / "ablation.json").read_text())
    assert data["n_items"] == 5
    assert data["config"]["limit"] == 5
    # the means are over those 5 items: the same as crystal score --limit 5
    direct = evaluate(
        load_benchmark("sample"),
        load_predictions(SAMPLE_SETS / "terse-precise.jsonl"),
        ScoreConfig(encoder="hash", threshold=0.3, limit=5, use_cache=False),
    )
    cell = next(c for c in data["cells"] if c["threshold"] == 0.3)
    assert cell["match_f1"]["terse-precise"] == direct.summary.match_f1


def test_the_resamples_tau_b_is_scipys_with_ties_and_constant_sides():
    """The bootstrap's own tau-b (fast, by definition) equals scipy.stats.kendalltau on
    random short vectors with many ties, and is NaN exactly where scipy's is."""
    from crystalbench.validation.panel import _tau_b

    rng = np.random.default_rng(11)
    for _ in range(500):
        size = int(rng.integers(2, 8))
        a = rng.integers(0, 3, size).astype(float) / 2
        b = rng.integers(0, 3, size).astype(float) / 2
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            want = stats.kendalltau(a, b, variant="b").statistic
        got = _tau_b(a, b)
        if np.isnan(want):
            assert np.isnan(got), (a, b)
        else:
            assert got == pytest.approx(want, abs=1e-12), (a, b)
