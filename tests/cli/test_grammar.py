"""One command grammar: every option of every ``crystal`` command means one thing, under one
name (:data:`tests.cli.grammar.MEANINGS`), shows its default and a readable type;
no option is hidden and no old spelling is kept."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from typer.testing import CliRunner

from crystalbench.cli.apps import new_app
from crystalbench.cli.main import app
from crystalbench.data import SAMPLE_DIR
from tests.cli.grammar import MEANINGS, WITHOUT_QUIET

runner = CliRunner()


def commands(root: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """``(name, click command)`` of every command of ``root``, sub-apps included."""
    if hasattr(root, "commands"):
        for name, sub in root.commands.items():
            yield from commands(sub, (*path, name))
    else:
        yield " ".join(path), root


def options(command: Any) -> Iterator[Any]:
    for param in command.params:
        if param.param_type_name == "option" and "--help" not in param.opts:
            yield param


def grammar_problems(root: Any, meanings: Mapping[str, str]) -> list[str]:
    """Every breach of one name, one meaning among the commands of ``root``."""
    problems: list[str] = []
    spellings_of: dict[str, set[str]] = defaultdict(set)
    for spelling, meaning in meanings.items():
        spellings_of[meaning].add(spelling)
    params_of: dict[str, set[str]] = defaultdict(set)
    for name, command in commands(root):
        for option in options(command):
            spellings = {*option.opts, *option.secondary_opts}
            if option.hidden:
                problems.append(f"{name}: hidden option {sorted(spellings)}")
                continue
            unknown = sorted(s for s in spellings if s not in meanings)
            if unknown:
                problems.append(f"{name}: {unknown} not declared in the grammar")
                continue
            said = {meanings[s] for s in spellings}
            if len(said) > 1:
                problems.append(f"{name}: one option, several meanings: {sorted(spellings)}")
                continue
            (meaning,) = said
            if spellings != spellings_of[meaning]:
                problems.append(
                    f"{name}: {sorted(spellings)} means {meaning!r}, which is spelled "
                    f"{sorted(spellings_of[meaning])} elsewhere"
                )
            params_of[meaning].add(option.name)
    for meaning, names in params_of.items():
        if len(names) > 1:
            problems.append(f"{meaning!r} is taken by parameters named {sorted(names)}")
    return problems


def full_app() -> Any:
    return typer.main.get_command(app)


# --------------------------------------------------------------------------- the grammar
def test_every_command_follows_the_grammar():
    assert grammar_problems(full_app(), MEANINGS) == []


def test_every_command_takes_quiet():
    """``-q/--quiet`` is in the grammar for every command (issue 30: ``validate sample-pairs
    -q`` was "No such option"); only :data:`WITHOUT_QUIET` lacks it, each with its reason."""
    lacking = []
    for name, command in commands(full_app()):
        if command.hidden:
            continue
        spellings = {s for option in options(command) for s in option.opts}
        if not {"-q", "--quiet"} <= spellings:
            lacking.append(name)
    assert sorted(lacking) == sorted(WITHOUT_QUIET)


def test_quiet_prints_nothing_but_errors(tmp_path, monkeypatch):
    """The option does what it says on a command that gained it."""
    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(tmp_path / "cache"))
    predictions = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    scored = tmp_path / "scored"
    score = ["score", "-b", "sample", "-p", str(predictions), "-o", str(scored), "-q"]
    assert runner.invoke(app, [*score, "--encoder", "hash"]).exit_code == 0
    draw = ["validate", "sample-pairs", str(scored), "-o", str(tmp_path / "pairs.jsonl")]
    loud = runner.invoke(app, draw)
    assert loud.exit_code == 0, loud.output
    assert "wrote" in loud.stdout
    quiet = runner.invoke(app, [*draw, "--overwrite", "-q"])
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stdout == ""
    assert (tmp_path / "pairs.jsonl").exists()


def test_the_table_holds_no_dead_names():
    used = {
        spelling
        for _, command in commands(full_app())
        for option in options(command)
        for spelling in (*option.opts, *option.secondary_opts)
    }
    assert sorted(set(MEANINGS) - used) == []


def _toy(**commands_: Any) -> Any:
    toy = new_app()
    for name, function in commands_.items():
        toy.command(name)(function)
    return typer.main.get_command(toy)


def test_the_check_catches_one_name_with_two_meanings():
    """``--format`` as the input format in one command and the output format in another."""

    def score(input_format: Annotated[str, typer.Option("--format")] = "auto") -> None: ...

    def board(output_format: Annotated[str, typer.Option("--format")] = "md") -> None: ...

    problems = grammar_problems(_toy(score=score, board=board), {"--format": "a format"})
    assert problems == ["'a format' is taken by parameters named ['input_format', 'output_format']"]


def test_the_check_catches_one_meaning_under_two_names():
    def run(out: Annotated[str, typer.Option("--out", "-o")] = "x") -> None: ...

    def train(out: Annotated[str, typer.Option("--output-dir", "-o")] = "x") -> None: ...

    table = {"--out": "output", "-o": "output", "--output-dir": "output"}
    problems = grammar_problems(_toy(run=run, train=train), table)
    assert any("'output', which is spelled" in problem for problem in problems), problems
    table = {"--out": "output", "-o": "output", "--output-dir": "training folder"}
    problems = grammar_problems(_toy(run=run, train=train), table)
    assert "train: one option, several meanings: ['--output-dir', '-o']" in problems


def test_the_check_catches_undeclared_and_hidden_options():
    def run(out: Annotated[str, typer.Option("--out")] = "x") -> None: ...

    def version(old: Annotated[str, typer.Option("--old", hidden=True)] = "x") -> None: ...

    problems = grammar_problems(_toy(run=run, version=version), {})
    assert "run: ['--out'] not declared in the grammar" in problems
    assert "version: hidden option ['--old']" in problems


# --------------------------------------------------------------------------- --help
def test_no_hidden_commands_or_old_names():
    """0.1.0 was never published: no command is kept under an old name."""
    root = full_app()
    hidden = [name for name, command in commands(root) if getattr(command, "hidden", False)]
    assert hidden == []
    assert "ablate" not in root.commands
    assert "ablate" in root.commands["validate"].commands


def test_set_and_a_config_file_meet_flags_in_one_config(tmp_path):
    """``--set`` reaches any field of the file's part of the config; a named flag wins over
    it; a malformed one names itself."""
    runs = ["train", "--config", "recipe:qwen2_5_vl_3b_cpr", "--dry-run"]
    result = runner.invoke(app, [*runs, "--set", "output_dir=/tmp/a", "-o", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert str(tmp_path / "b") in " ".join(result.output.split())
    bad = runner.invoke(app, [*runs, "--set", "grpo.learning_rate=fast"])
    assert bad.exit_code == 2
    said = " ".join(bad.output.split())
    assert "field grpo.learning_rate: Input should be a valid number" in said
    assert "(from --set grpo.learning_rate=fast)" in said
    assert "field --set: expects KEY=VALUE" in runner.invoke(app, [*runs, "--set", "x"]).output


def test_every_option_shows_its_default_and_a_readable_type():
    root = full_app()
    problems: list[str] = []
    for name, command in commands(root):
        context = typer.Context(command, info_name=name)
        for param in command.params:
            record = param.get_help_record(context)
            if record is None:  # hidden
                continue
            names, text = record
            if "<" in names or "list[" in names:
                problems.append(f"{name} {names}: type is not readable")
            if param.param_type_name == "argument":
                continue
            flag_without_default = param.is_flag and not param.secondary_opts
            if (
                not ("default:" in text or "required" in text or flag_without_default)
                and "--help" not in param.opts
            ):
                problems.append(f"{name} {names}: no default in --help")
    assert problems == []


def test_every_default_text_is_clean():
    """A default reads ``[default: (the config's seed, else 42)]``, never with parentheses
    inside typer's own (issue 30: ``[default: (the config's (42))]``)."""
    problems = []
    for name, command in commands(full_app()):
        context = typer.Context(command, info_name=name)
        for param in command.params:
            record = param.get_help_record(context)
            if record is None:
                continue
            _, text = record
            shown = text.rpartition("[default: ")[2]
            if shown != text and shown.startswith("(") and "(" in shown[1:]:
                problems.append(f"{name} {param.name}: [default: {shown}")
    assert problems == []


def test_help_texts_break_lines_only_where_the_terminal_does(monkeypatch):
    """Issue 30: docstrings' hard line breaks reached ``--help`` ("printing each" / "command it
    runs"). Every command's and group's help has whole paragraphs (lists keep their lines)."""
    problems = []
    root = full_app()
    groups = [(name, sub) for name, sub in root.commands.items() if hasattr(sub, "commands")]
    for name, command in [*commands(root), *groups]:
        for paragraph in (command.help or "").split("\n\n"):
            lines = paragraph.split("\n")
            listed = any(line.startswith((" ", "- ", "* ", "|")) for line in lines[1:])
            if len(lines) > 1 and not listed and not paragraph.startswith("\b"):
                problems.append(f"{name}: {lines[0]!r} / {lines[1]!r}")
    assert problems == []
    monkeypatch.setenv("COLUMNS", "200")
    page = runner.invoke(app, ["demo", "--help"]).output
    assert "instead, printing each command it runs" in page


def test_help_pages_read_well():
    for args in (["score", "--help"], ["run", "--help"], ["data", "build", "--help"]):
        result = runner.invoke(app, args, terminal_width=200)
        assert result.exit_code == 0, result.output
        assert "<" not in result.output.replace("<id>", ""), result.output
    page = runner.invoke(app, ["score", "--help"], terminal_width=200).output
    assert "[lis|kendall]" in page
    assert "[default: 0.35]" in page
    assert "--format" not in page  # old spellings are hidden


# --------------------------------------------------------------------------- old spellings
@pytest.fixture
def predictions() -> Path:
    return sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]


@pytest.mark.parametrize(
    ("args", "old"),
    [
        (["score", "-b", "sample", "-p", "x.jsonl", "--format", "crystal"], "--format"),
        (["run", "--out-dir", "x", "-m", "m"], "--out-dir"),
        (["run", "-m", "m", "--encoder-device", "cpu"], "--encoder-device"),
        (["run", "-m", "m", "--score-config", "s.yaml"], "--score-config"),
        (["infer", "-o", "x.jsonl", "-m", "m", "--backend", "vllm"], "--backend"),
        (["infer", "-o", "x.jsonl", "-m", "m", "--device", "cpu"], "--device"),
        (["compare", "a", "b", "--json", "x.json"], "--json"),
        (["compare", "a", "b", "--strict"], "--strict"),
        (["data", "build", "mmvp", "-o", "x", "--no-lenient"], "--no-lenient"),
        (["integrations", "lmms-eval", "--install", "x"], "--install"),
        (["serve-rewards", "--kind", "cpr"], "--kind"),
        (["train", "-c", "recipe:nope", "--output-dir", "x"], "--output-dir"),
        (["validate", "agreement", "--judge-url", "http://127.0.0.1:9/v1"], "--judge-url"),
    ],
)  # fmt: skip
def test_spellings_from_before_the_first_release_are_gone(tmp_path, monkeypatch, args, old):
    """0.1.0 was never published: an old spelling is click's "No such option", exit 2."""
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert f"No such option: {old}" in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert not (tmp_path / "x").exists()


def test_the_old_top_level_ablate_is_gone():
    result = runner.invoke(app, ["ablate", "--help"])
    assert result.exit_code == 2
    assert "No such command 'ablate'" in result.output


@pytest.mark.parametrize("command", [["serve-rewards"], ["review", "serve"]])
@pytest.mark.parametrize("port", ["99999", "-1"])
def test_a_port_out_of_range_is_a_usage_error(command, port):
    """Checked by the config (a port in a --config file too), before anything binds."""
    result = runner.invoke(app, [*command, "--port", port])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    rule = "is not a TCP port: give 1-65535, or 0 for a free one"
    assert f"error: field port: {port} {rule} (from --port {port})" in said
    assert "Traceback" not in result.output
