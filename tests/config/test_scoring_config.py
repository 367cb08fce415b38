"""Configs refuse a bad compat or answer-rules name when they are built, not later."""

from __future__ import annotations

from typing import get_args

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.config.scoring import ScoreConfig, load_config
from crystalbench.defaults import (
    ANSWER_RULES,
    COMPAT_CRYSTAL_METRICS,
    COMPAT_MODES,
    AnswerRules,
    CompatMode,
)
from crystalbench.errors import InputError


def test_the_valid_names_have_one_source():
    assert get_args(CompatMode) == COMPAT_MODES == ("none", "crystal-metrics-0.2")
    assert get_args(AnswerRules) == ANSWER_RULES == ("paper", "crystal-metrics-0.2")
    assert COMPAT_CRYSTAL_METRICS in COMPAT_MODES
    assert ScoreConfig.model_fields["compat"].annotation == CompatMode
    assert ScoreConfig.model_fields["answer_rules"].annotation == AnswerRules


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("compat", "paper", "unknown compat mode 'paper'"),  # passed until evaluate() before
        ("compat", "crystal-metrics", "did you mean 'crystal-metrics-0.2'"),
        ("answer_rules", "none", "unknown answer rules 'none'"),
        ("answer_rules", "crystal_metrics", "did you mean 'crystal-metrics-0.2'"),
    ],
)
def test_a_bad_name_fails_when_the_config_is_built(field, value, message):
    with pytest.raises(ValidationError, match=message) as info:
        ScoreConfig(**{field: value})
    assert info.value.errors()[0]["loc"] == (field,)


def test_good_names_pass():
    config = ScoreConfig(compat="crystal-metrics-0.2", answer_rules="crystal-metrics-0.2")
    assert (config.compat, config.answer_rules) == ("crystal-metrics-0.2", "crystal-metrics-0.2")
    assert ScoreConfig().record()["compat"] == "none"


def test_a_config_file_with_a_bad_name_fails_on_load(tmp_path):
    path = tmp_path / "score.yaml"
    path.write_text("encoder: hash\ncompat: paper\n")
    with pytest.raises(
        InputError, match=r"score\.yaml:2: field compat: unknown compat mode 'paper'"
    ):
        load_config(path)
    path.write_text("encoder: hash\ncompat: 3\n")
    with pytest.raises(InputError, match="field compat"):
        load_config(path)


def test_the_cli_exits_2_on_a_bad_name(tmp_path):
    result = CliRunner().invoke(
        app,
        [
            *("score", "-b", "sample", "-p", str(tmp_path / "p.jsonl")),
            *("-o", str(tmp_path / "o"), "--answer-rules", "paper-ish", "--encoder", "hash"),
        ],
    )
    assert result.exit_code == 2
    assert "unknown answer rules 'paper-ish'" in result.output
