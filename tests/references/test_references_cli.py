"""``crystal references build`` / ``regenerate`` from the command line."""

from __future__ import annotations

import json

import yaml
from scripted_models import GENERATORS, VALIDATOR, ScriptedModels
from typer.testing import CliRunner

from crystalbench.cli.main import app

runner = CliRunner()


def test_build_and_regenerate_from_flags(server, item_set, sample_items, tmp_path, cache_dir):
    server.state.script = ScriptedModels(sample_items, reject_always={sample_items[1].id})
    out = tmp_path / "refs"
    flags = [f"--generator={g}={server.base_url}" for g in GENERATORS]
    result = runner.invoke(
        app,
        [
            "references",
            "build",
            "--items",
            str(item_set),
            *flags,
            "--validator",
            f"{VALIDATOR}={server.base_url}",
            "--encoder",
            "hash",
            "--limit",
            "3",
            "--max-rounds",
            "1",
            "--theta",
            "0.7",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "items 3 | accepted 2 | rejected 1" in result.output
    assert "1 item(s) still rejected" in result.output
    config = json.loads((out / "config.json").read_text())["config"]
    assert [g["name"] for g in config["generators"]] == list(GENERATORS)
    assert config["theta"] == 0.7
    assert config["max_rounds"] == 1

    server.state.script.reject_always.clear()
    ids = tmp_path / "rejected.txt"
    ids.write_text(f"# from review\n{sample_items[1].id}\n")
    result = runner.invoke(app, ["references", "regenerate", "--ids", str(ids), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "sent back 1 item(s)" in result.output
    assert "items 3 | accepted 3 | rejected 0" in result.output


def test_bad_input_exits_2_with_a_message(item_set, tmp_path):
    result = runner.invoke(
        app,
        [
            "references",
            "build",
            "--items",
            str(item_set),
            "--generator",
            "a=http://127.0.0.1:9/v1",
            "--no-validator",
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 2
    assert "min_chains=2 chains per round" in result.output
    assert "has no base URL" not in result.output  # the one generator has its URL
    # One generator given without its URL: the missing URL is named first.
    result = runner.invoke(
        app,
        ["references", "build", "--items", str(item_set), "-g", "qwen", "--no-validator",
         "--out", str(tmp_path / "o")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "generator 'qwen' has no base URL (--generator 'qwen=http://HOST:PORT/v1')" in (
        " ".join(result.output.split())
    )
    # Two generators without URLs and a validator without one: all three are named at once.
    result = runner.invoke(
        app,
        ["references", "build", "--items", str(item_set), "-g", "qwen", "-g", "gemma",
         "--validator", "molmo", "--out", str(tmp_path / "o")],
    )  # fmt: skip
    assert result.exit_code == 2
    flat = " ".join(result.output.split())
    for name in ("generator 'qwen'", "generator 'gemma'", "the validator 'molmo'"):
        assert f"{name} has no base URL" in flat
    result = runner.invoke(
        app, ["references", "build", "--items", str(item_set), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "has no base URL" in result.output
    ids = tmp_path / "ids.txt"
    ids.write_text("x\n")
    result = runner.invoke(
        app, ["references", "regenerate", "--ids", str(ids), "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "not a reference build" in result.output


def test_flags_merge_into_the_config_file(server, item_set, sample_items, tmp_path):
    """A generator the file lists keeps its settings and takes the flag's URL; --concurrency
    reaches every model; --ids picks items; a flag wins over the file."""
    server.state.script = ScriptedModels(sample_items)
    config = tmp_path / "refs.yaml"
    generators = [
        {"name": g, "model": g, "base_urls": ["http://127.0.0.1:9/v1"], "concurrency": 2}
        for g in GENERATORS
    ]
    config.write_text(
        yaml.safe_dump(
            {"items": str(item_set), "generators": generators, "encoder": "hash",
             "use_cache": False, "theta": 0.5, "max_rounds": 1}
        )
    )  # fmt: skip
    ids = ",".join(item.id for item in sample_items[:2])
    out = tmp_path / "refs"
    args = [f"--generator={g}={server.base_url}" for g in GENERATORS]
    result = runner.invoke(
        app,
        ["references", "build", "-c", str(config), *args, "--validator",
         f"{VALIDATOR}={server.base_url}", "--concurrency", "3", "--ids", ids, "--theta", "0.7",
         "-o", str(out), "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    stored = json.loads((out / "config.json").read_text())["config"]
    assert [(g["name"], g["model"], g["base_urls"], g["concurrency"])
            for g in stored["generators"]] == [
        (g, g, [server.base_url], 3) for g in GENERATORS
    ]  # fmt: skip
    assert stored["validator"]["concurrency"] == 3
    assert (stored["theta"], stored["max_rounds"]) == (0.7, 1)
    assert stored["ids"] == [item.id for item in sample_items[:2]]

    again = runner.invoke(
        app, ["references", "regenerate", "--ids", sample_items[0].id, "-o", str(out)]
    )
    assert again.exit_code == 0, again.output
    assert "sent back 1 item(s)" in again.output
    missing = runner.invoke(
        app, ["references", "regenerate", "--ids", "rejected.txt", "-o", str(out)]
    )
    assert missing.exit_code == 2
    assert "rejected.txt: field ids: ids file not found" in missing.output
