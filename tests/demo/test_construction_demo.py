"""``crystal demo --construction``: the whole construction life cycle offline, through the
same ``crystal`` commands a real run uses, in a temporary folder."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.demo.construction import (
    DEMO_SOURCES,
    MARKER,
    construction_steps,
    missing_extras,
    run_construction_demo,
)
from crystalbench.errors import CrystalbenchError, InputError

runner = CliRunner()


def test_the_steps_are_the_life_cycle_with_the_servers_url():
    url = "http://127.0.0.1:9999/v1"
    steps = construction_steps(Path("d"), url, encoder="hash", students=["terse-precise"])
    verbs = [step.argv[:2] for step in steps]
    assert verbs == [
        *[("data", "build")] * len(DEMO_SOURCES),
        ("data", "merge"),
        ("references", "build"),
        ("review", "import"),
        ("infer", "-b"),
        ("score", "-b"),
    ]
    build = steps[len(DEMO_SOURCES) + 1].command
    for name in ("gen-literal", "gen-grounded", "gen-terse", "gen-digressive"):
        assert f"-g {name}={url}" in build
    assert f"--validator validator={url}" in build
    assert "--sample 8" in steps[DEMO_SOURCES.index("plotqa")].command


def test_a_folder_holding_other_files_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="holds other files"):
        run_construction_demo(tmp_path, encoder="hash", echo=lambda line: None, capture=True)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_missing_extras_are_named_at_once(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("pyarrow", "sqlalchemy") else real(name, *a),
    )
    assert missing_extras("hash") == ["hub", "review"]
    with pytest.raises(CrystalbenchError, match=r"pip install 'crystalbench\[hub,review\]'"):
        run_construction_demo("unused", encoder="hash", echo=lambda line: None)


def test_the_cli_flag_runs_the_library_function(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(
        "crystalbench.demo.construction.run_construction_demo",
        lambda out, **kwargs: calls.append((out, kwargs["encoder"])),
    )
    result = runner.invoke(app, ["demo", "--construction", "-o", str(tmp_path / "d")])
    assert result.exit_code == 0, result.output
    assert calls == [(tmp_path / "d", "minilm-offline")]


@pytest.mark.slow
def test_the_life_cycle_end_to_end(tmp_path, monkeypatch):
    """Every command runs as its own process; the folder ends with an item set, references,
    a review database, predictions and scores, and the printed commands are the ones run."""
    pytest.importorskip("pyarrow")
    pytest.importorskip("openai")
    pytest.importorskip("sqlalchemy")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(tmp_path / "cache"))
    lines: list[str] = []
    demo = run_construction_demo(Path("demo"), encoder="hash", echo=lines.append, capture=True)
    out = tmp_path / "demo"
    assert (out / MARKER).is_file()
    printed = [line for line in lines if line.startswith("crystal ")]
    assert printed[: len(demo.commands)] == demo.commands
    assert demo.url.startswith("http://127.0.0.1:")
    assert all(demo.url in c for c in demo.commands if c.startswith("crystal references"))
    # The item set: the sample's 40 items, from five sources.
    items = (out / "items" / "all" / "items.jsonl").read_text().splitlines()
    assert len(items) == 40
    # References: accepted chains with provenance; the rest reported, nothing lost.
    accepted = [json.loads(line) for line in (out / "references" / "benchmark.jsonl").open()]
    summary = json.loads((out / "references" / "summary.json").read_text())
    assert summary["n_items"] == 40
    assert summary["n_accepted"] == len(accepted) >= 30
    assert summary["n_accepted"] + summary["n_rejected"] == 40
    assert summary["n_regenerated"] > 0  # the validator sent items back for new rounds
    assert all(row["metadata"]["reference_provenance"] for row in accepted)
    # The review database holds one chain task per accepted item.
    with sqlite3.connect(out / "review.sqlite") as db:
        query = "SELECT COUNT(*) FROM review_tasks WHERE kind = 'chain'"
        (chains,) = db.execute(query).fetchone()
    assert chains == len(accepted)
    # Two model styles were run and scored on the new benchmark.
    for student in ("terse-precise", "verbose-recall"):
        records = (out / "predictions" / f"{student}.jsonl").read_text().splitlines()
        assert len(records) == len(accepted)
        scored = json.loads((out / "scores" / student / "summary.json").read_text())
        assert scored["n_items"] == len(accepted)
    terse = json.loads((out / "scores" / "terse-precise" / "summary.json").read_text())
    verbose = json.loads((out / "scores" / "verbose-recall" / "summary.json").read_text())
    assert terse["precision"] > verbose["precision"]  # the styles keep their character
    assert verbose["recall"] > terse["recall"]
    # A second run replaces its own folder.
    again = run_construction_demo(Path("demo"), encoder="hash", echo=lambda line: None,
                                  capture=True, students=["terse-precise"])  # fmt: skip
    assert not (out / "predictions" / "verbose-recall.jsonl").exists()
    assert again.out == Path("demo")
