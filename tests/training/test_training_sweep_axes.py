"""``crystal train-sweep``'s axes and seed table (issue 32.3): several seeds in one command,
strategies and component ablations as axes, mean and sd per configuration, 2-sd comparisons;
and, end to end on the tiny CPU model, the selected checkpoints, the seed table and the
over-optimization reports."""

from __future__ import annotations

import csv
import json
import statistics

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.training.config import load_train_config, phase_plans
from crystalbench.training.seeds import SeedRun, build_seed_table, render_seed_markdown
from crystalbench.training.sweep import SweepConfig, plan_sweep

runner = CliRunner()


def sweep(recipe="recipe:tiny-cpu", **axes):
    train = load_train_config(recipe, {"output_dir": "out", "data.train": "sample"})
    return SweepConfig(train=train, **axes)


def test_seeds_count_and_list_train_every_configuration_on_one_validation_split():
    runs = plan_sweep(sweep(grid=[0.6, 0.7], seeds=3))
    assert [(r.configuration, r.seed) for r in runs] == [
        (f"aw-{a}", s) for a in ("0.60", "0.70") for s in (42, 43, 44)
    ]
    assert runs[0].config.output_dir == "out/aw-0.60/seed-42"
    # Every seed's config records the base split's seed: rerun alone, it validates the same.
    assert {r.config.data.validation_seed for r in runs} == {42}
    assert [r.config.seed for r in runs[:3]] == [42, 43, 44]
    listed = plan_sweep(sweep(grid=[0.6], seeds="7,9"))
    assert [r.seed for r in listed] == [7, 9]
    # Without seeds the folders stay as they were: aw-0.60/.
    assert [r.config.output_dir for r in plan_sweep(sweep(grid=[0.6]))] == ["out/aw-0.60"]


def test_strategies_and_pcgrad_axes_apply_where_they_can():
    runs = plan_sweep(sweep(grid=[0.65], strategies="cpr,random,format-only", pcgrad="on,off"))
    assert [r.configuration for r in runs] == [
        "cpr_aw-0.65_pcgrad-on",
        "cpr_aw-0.65_pcgrad-off",
        "random",
        "format-only",
    ]
    assert [r.config.pcgrad.enabled for r in runs] == [True, False, False, False]
    assert [r.config.strategy for r in runs] == ["cpr", "cpr", "random", "format-only"]


def test_curriculum_and_phase2_rate_axes_on_the_curriculum_recipe():
    config = sweep(
        "recipe:qwen2_5_vl_3b_cpr_curriculum",
        grid=[0.65],
        curriculum="on,off",
        phase2_learning_rates="5e-7,2.5e-7",
    )
    runs = plan_sweep(config)
    assert [r.configuration for r in runs] == [
        "aw-0.65_curriculum-on_lr2-5e-07",
        "aw-0.65_curriculum-on_lr2-2.5e-07",
        "aw-0.65_curriculum-off_lr2-5e-07",
        "aw-0.65_curriculum-off_lr2-2.5e-07",
    ]
    plans = [phase_plans(r.config) for r in runs]
    assert [p[1].ordered for p in plans] == [True, True, False, False]
    assert [p[1].learning_rate for p in plans] == [5e-7, 2.5e-7, 5e-7, 2.5e-7]


def one_line_error(result, *needles):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize(
    ("flags", "needles"),
    [
        (["--curriculum", "on,off"], ["field curriculum", "cpr-curriculum"]),
        (["--seeds", "0"], ["field seeds", "at least 1"]),
        (["--seeds", "two"], ["field seeds", "a count"]),
        (["--seeds", "1,1"], ["field seeds", "once"]),
        (["--strategies", "cpr,nope"], ["field strategies"]),
        (["--strategies", "random", "--pcgrad", "on,off"], ["field pcgrad", "objective"]),
        (["--strategies", "random", "--grid", "0.6"], ["field grid", "CPR strategy"]),
        (["--pcgrad", "maybe"], ["field pcgrad"]),
        (["--metric", "heldout/nope"], ["field metric", "heldout/accuracy"]),
        (
            ["--strategies", "cpr-curriculum", "--phase2-lr", "1"],
            ["field phase2_learning_rates", "slower than phase 1"],
        ),
        (["--set", "evaluation.enabled=false"], ["evaluation.enabled must be true"]),
    ],
)
def test_a_bad_axis_is_one_line_naming_the_field(tmp_path, flags, needles):
    args = ["train-sweep", "--config", "recipe:tiny-cpu", "-o", str(tmp_path / "s"), *flags]
    one_line_error(runner.invoke(app, args), *needles)
    assert not (tmp_path / "s").exists()


def test_dry_run_prints_the_runs(tmp_path):
    result = runner.invoke(
        app,
        [
            *("train-sweep", "--config", "recipe:tiny-cpu", "-o", str(tmp_path / "s")),
            *("--grid", "0.6", "--strategies", "cpr,random", "--seeds", "2", "--dry-run"),
        ],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "4 run(s)" in result.output
    assert "random/seed-43" in result.output
    assert not (tmp_path / "s").exists()


def test_seed_table_means_sds_and_two_sd_verdicts_on_known_values():
    values = {
        ("cpr", 1): 0.60, ("cpr", 2): 0.64, ("cpr", 3): 0.62,
        ("random", 1): 0.40, ("random", 2): 0.44, ("random", 3): 0.42,
        ("format-only", 1): 0.58, ("format-only", 2): 0.70, ("format-only", 3): 0.52,
        ("one", 1): 0.1,
    }  # fmt: skip
    runs = [
        SeedRun(configuration=c, settings={"strategy": c}, seed=s, metrics={"harmonic": v})
        for (c, s), v in values.items()
    ]
    table = build_seed_table(runs, metric="harmonic")
    rows = {row.configuration: row.metrics["harmonic"] for row in table.rows}
    assert rows["cpr"].mean == pytest.approx(0.62)
    assert rows["cpr"].std == pytest.approx(statistics.stdev([0.60, 0.64, 0.62]))
    assert rows["format-only"].std == pytest.approx(statistics.stdev([0.58, 0.70, 0.52]))
    assert rows["one"].std is None
    assert rows["one"].n == 1
    verdicts = {(c.first, c.second): c for c in table.comparisons}
    # 0.20 apart, sds 0.02: far beyond 2 sd.
    assert verdicts["cpr", "random"].exceeds is True
    assert verdicts["cpr", "random"].threshold == pytest.approx(0.04)
    # 0.02 apart, the larger sd ~0.092: within 2 sd.
    assert verdicts["cpr", "format-only"].exceeds is False
    assert verdicts["cpr", "format-only"].difference == pytest.approx(0.02)
    assert verdicts["cpr", "one"].exceeds is None  # one seed: no verdict
    text = render_seed_markdown(table)
    assert "| cpr | 1 2 3 | 0.620 ± 0.020 |" in text
    assert "| harmonic | cpr | random | +0.200 | 0.040 | exceeds 2 sd |" in text
    assert "n/a (one seed)" in text


@pytest.mark.slow
def test_tiny_sweep_with_two_seeds_writes_the_selection_seed_table_and_reports(tmp_path):
    """End to end on the CPU: two seeds, a held-out grader, validation selection."""
    out = tmp_path / "sweep"
    result = runner.invoke(
        app,
        [
            *("train-sweep", "--config", "recipe:tiny-cpu", "-o", str(out)),
            *("--seeds", "2", "--grid", "0.65", "--metric", "heldout/accuracy"),
            *("--set", "grpo.max_steps=2", "--set", "grpo.eval_steps=1"),
            *("--set", "evaluation.max_items=4"),
        ],
    )
    assert result.exit_code == 0, result.output
    points = [json.loads(line) for line in (out / "sweep.jsonl").read_text().splitlines()]
    assert [(p["configuration"], p["seed"]) for p in points] == [("aw-0.65", 42), ("aw-0.65", 43)]
    for point in points:
        run = out / "aw-0.65" / f"seed-{point['seed']}"
        assert point["output_dir"] == str(run)
        assert point["n_items"] == 8  # the whole validation split, not max_items
        # The selected checkpoint, on the validation split, with its best link.
        best = json.loads((run / "best.json").read_text())
        assert best["split"] == "validation"
        assert best["metric"] == "harmonic"
        assert (run / "best").resolve() == (run / f"checkpoint-{best['step']}").resolve()
        assert point["selected"]["step"] == best["step"]
        # The held-out grader is in every validation, and the report is there.
        assert "heldout/f1_hash_strict" in point["metrics"]
        report = json.loads((run / "overoptimization.json").read_text())
        assert [row["step"] for row in report["rows"]] == [0, 1, 2]
        assert (run / "overoptimization.svg").is_file()
    # The seed table: the mean and sd recomputed from the two runs.
    table = json.loads((out / "seeds.json").read_text())
    (row,) = table["rows"]
    assert row["seeds"] == [42, 43]
    for name in ("harmonic", "heldout/accuracy", "heldout/f1_hash_strict", "accuracy"):
        values = [p["metrics"][name] for p in points]
        assert row["metrics"][name]["mean"] == pytest.approx(statistics.fmean(values))
        assert row["metrics"][name]["std"] == pytest.approx(statistics.stdev(values))
    with (out / "seeds.csv").open() as handle:
        (line,) = list(csv.DictReader(handle))
    assert float(line["harmonic_mean"]) == pytest.approx(row["metrics"]["harmonic"]["mean"])
    assert line["n_seeds"] == "2"
    assert "± " in (out / "seeds.md").read_text()
    assert "Best configuration by mean validation heldout/accuracy" in result.output
