"""The example copies shipped with the package build with ``crystal data build`` through the
same adapters as a real copy, and hold the bundled sample's items."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import load_benchmark
from crystalbench.errors import UnknownNameError
from crystalbench.sources import (
    EXAMPLES_DIR,
    BuildSpec,
    build_item_set,
    example_copy,
    read_item_set,
)

pytest.importorskip("pyarrow")

SAMPLE_SOURCE = {
    "mathvision": "mathvision",
    "scienceqa-img": "scienceqa",
    "realworldqa": "realworldqa",
    "mmvp": "mmvp",
    "plotqa": "plotqa",
}


@pytest.mark.parametrize("source", sorted(SAMPLE_SOURCE))
def test_each_example_builds_into_the_sample_items(source, tmp_path):
    options = {"sample": 8} if source == "plotqa" else {}
    record = build_item_set(
        BuildSpec(source=source, location=str(example_copy(source)), **options), tmp_path / "set"
    )
    items = read_item_set(tmp_path / "set").items
    sample = [i for i in load_benchmark("sample").items if i.source == SAMPLE_SOURCE[source]]
    assert record.counts.items == len(sample) == 8
    assert record.counts.skipped == 0
    built = sorted(items, key=lambda item: item.question)
    # The question as the adapter leaves it: RealWorldQA's options and instruction taken out.
    assert {i.question for i in built} == {s.question.split("\n")[0] for s in sample}
    for item in items:
        assert item.image is not None
        assert (tmp_path / "set" / item.image).is_file()
    if source in ("mmvp", "scienceqa-img", "mathvision"):
        assert sorted(i.options for i in items) == sorted(s.options for s in sample)


def test_textvqa_has_its_own_three_questions(tmp_path):
    build_item_set(BuildSpec(source="textvqa", location=str(example_copy("textvqa"))), tmp_path)
    items = read_item_set(tmp_path).items
    assert [i.answer for i in items] == ["coca cola", "23", "stop"]


def test_the_readme_commands_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for argv in (
        ["data", "build", "mmvp", "--from", str(EXAMPLES_DIR / "mmvp"), "-o", "items/mmvp"],
        ["data", "build", "plotqa", "--from", str(EXAMPLES_DIR / "plotqa"), "--sample", "8",
         "-o", "items/plotqa"],
    ):  # fmt: skip
        result = runner.invoke(app, argv)
        assert result.exit_code == 0, result.output
    assert "crystal data build plotqa --from DIR/plotqa --sample 8" in (
        (EXAMPLES_DIR / "README.md").read_text()
    )


def test_an_unknown_source_has_no_example_copy():
    with pytest.raises(UnknownNameError, match="did you mean 'mmvp'"):
        example_copy("mmvpp")
