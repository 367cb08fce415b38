"""A newcomer's first commands: ``crystal data sample`` writes the files the documentation
scores, and a mistyped predictions path says what was meant."""

from __future__ import annotations

from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import SAMPLE_DIR

runner = CliRunner()
STYLES = sorted(path.name for path in (SAMPLE_DIR / "predictions").glob("*.jsonl"))


def test_data_sample_writes_the_sample_prediction_sets(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["data", "sample"])
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in (tmp_path / "runs").iterdir()) == STYLES
    for name in STYLES:
        assert (tmp_path / "runs" / name).read_bytes() == (
            SAMPLE_DIR / "predictions" / name
        ).read_bytes()
    assert "crystal score -b sample -p runs/terse-precise.jsonl" in result.output
    again = runner.invoke(app, ["data", "sample", "-q"])  # the same files: nothing to refuse
    assert again.exit_code == 0, again.output
    assert again.output == ""


def test_data_sample_refuses_to_replace_other_files(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "terse-precise.jsonl").write_text('{"id": "mine"}\n', encoding="utf-8")
    result = runner.invoke(app, ["data", "sample", "-o", str(out)])
    assert result.exit_code == 2
    assert "--overwrite" in result.output
    assert (out / "terse-precise.jsonl").read_text(encoding="utf-8") == '{"id": "mine"}\n'
    assert sorted(p.name for p in out.iterdir()) == ["terse-precise.jsonl"]
    replaced = runner.invoke(app, ["data", "sample", "-o", str(out), "--overwrite", "-q"])
    assert replaced.exit_code == 0, replaced.output
    assert sorted(p.name for p in out.iterdir()) == STYLES


def score(predictions: str, out: str):
    return runner.invoke(
        app, ["score", "-b", "sample", "-p", predictions, "-o", out, "--encoder", "hash"]
    )


def test_a_mistyped_predictions_path_gets_did_you_mean(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["data", "sample", "-q"]).exit_code == 0
    result = score("runs/terse-precis.jsonl", "results")
    assert result.exit_code == 2
    assert (
        "runs/terse-precis.jsonl: predictions not found; did you mean "
        "'runs/terse-precise.jsonl'?" in result.output
    )
    assert not (tmp_path / "results").exists()


def test_a_missing_file_points_to_the_sample(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = score("verbose-recal.jsonl", "results")  # the sample's name, mistyped
    assert result.exit_code == 2
    assert "did you mean the sample's verbose-recall.jsonl?" in result.output
    assert "`crystal data sample -o runs`" in result.output
    plain = score("preds.jsonl", "results")  # the docs' old name, in an empty folder
    assert plain.exit_code == 2
    assert "predictions not found (to try the bundled sample: `crystal data sample" in (
        plain.output
    )
