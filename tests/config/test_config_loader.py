"""The one config loader: a file (YAML, JSON, TOML), documented environment variables and
flags, merged in that order, and the first bad value named with where it came from."""

from __future__ import annotations

import json

import pytest

from crystalbench.config.loader import Given, build_config, declared_environment
from crystalbench.config.scoring import ScoreConfig, load_config, load_config_with_overrides
from crystalbench.errors import InputError
from crystalbench.inference import InferenceConfig, RunConfig
from crystalbench.scoring.job import ScoreJob

NO_ENV: dict[str, str] = {}


def error_of(call):
    with pytest.raises(InputError) as caught:
        call()
    return caught.value


# --------------------------------------------------------------------------- files
def test_a_yaml_value_is_named_with_its_file_line_and_field(tmp_path):
    path = tmp_path / "score.yaml"
    path.write_text("encoder: hash\n\njudge:\n  url: http://x/v1\n  model: m\n  timeout: soon\n")
    error = error_of(lambda: build_config(ScoreConfig, files=[(path, "")], environ=NO_ENV))
    assert (error.path, error.line, error.field) == (str(path), 6, "judge.timeout")
    path.write_text("encoder: hash\nthreshold: 2\n")
    assert str(error_of(lambda: load_config(path))) == (
        f"{path}:2: field threshold: Input should be less than or equal to 1"
    )


def test_toml_and_json_files_load_like_yaml(tmp_path):
    toml = tmp_path / "score.toml"
    toml.write_text(
        'encoder = "hash"\nthreshold = 0.5\n[judge]\nurl = "http://x/v1"\nmodel = "m"\n'
    )
    config = load_config(toml)
    assert (config.encoder, config.threshold, config.judge.model) == ("hash", 0.5, "m")
    as_json = tmp_path / "score.json"
    as_json.write_text(json.dumps({"encoder": "hash", "threshold": 0.5}))
    assert load_config(as_json).threshold == 0.5
    toml.write_text('threshold = "high"\n')
    error = error_of(lambda: load_config(toml))
    assert (error.path, error.field) == (str(toml), "threshold")
    toml.write_text("threshold = \n")
    error = error_of(lambda: load_config(toml))
    assert "malformed TOML" in error.message
    assert (error.path, error.line) == (str(toml), 1)


def test_a_file_can_fill_a_nested_part_of_the_config(tmp_path):
    path = tmp_path / "scoring.yaml"
    path.write_text("encoder: hash\nthreshold: 0.4\n")
    flags = {"benchmark": Given("sample", "-b"), "predictions": Given(["p.jsonl"], "-p")}
    job = build_config(ScoreJob, files=[(path, "scoring")], flags=flags, environ=NO_ENV)
    assert (job.benchmark, job.scoring.encoder, job.scoring.threshold) == ("sample", "hash", 0.4)
    path.write_text("thresold: 0.4\n")
    error = error_of(lambda: build_config(ScoreJob, files=[(path, "scoring")], flags=flags))
    assert (error.path, error.line, error.field) == (str(path), 1, "scoring.thresold")
    assert error.message.startswith("unknown field; did you mean 'threshold'?")


# --------------------------------------------------------------------------- environment
def test_only_documented_variables_are_read_and_a_bad_one_is_named(tmp_path):
    assert declared_environment(RunConfig) == {
        "max_image_side": "CRYSTALBENCH_IMAGE_MAX_SIDE",
        "scoring.cache_dir": "CRYSTALBENCH_CACHE_DIR",
    }
    environ = {"CRYSTALBENCH_CACHE_DIR": str(tmp_path), "CRYSTALBENCH_THRESHOLD": "0.9"}
    config = build_config(ScoreConfig, environ=environ)
    assert (config.cache_dir, config.threshold) == (str(tmp_path), 0.35)  # no such variable
    environ = {"CRYSTALBENCH_IMAGE_MAX_SIDE": "huge"}
    error = error_of(
        lambda: build_config(InferenceConfig, flags={"model": Given("m", "-m")}, environ=environ)
    )
    assert error.field == "max_image_side"
    assert error.path is None
    assert error.message.endswith("(from the environment variable CRYSTALBENCH_IMAGE_MAX_SIDE)")


def test_files_then_variables_then_flags(tmp_path):
    path = tmp_path / "score.yaml"
    path.write_text("cache_dir: from-file\nthreshold: 0.4\n")
    environ = {"CRYSTALBENCH_CACHE_DIR": "from-env"}
    files = [(path, "")]
    assert build_config(ScoreConfig, files=files, environ=NO_ENV).cache_dir == "from-file"
    assert build_config(ScoreConfig, files=files, environ=environ).cache_dir == "from-env"
    flags = {"cache_dir": Given("from-flag", "--cache-dir")}
    both = build_config(ScoreConfig, files=files, flags=flags, environ=environ)
    assert (both.cache_dir, both.threshold) == ("from-flag", 0.4)


# --------------------------------------------------------------------------- flags
def test_a_bad_flag_is_named_as_typed():
    error = error_of(
        lambda: build_config(ScoreConfig, flags={"threshold": Given(7.0, "--tau", text="7")})
    )
    assert str(error) == "field threshold: Input should be less than or equal to 1 (from --tau 7)"


def test_a_missing_value_says_which_flag_gives_it(tmp_path):
    flags = {"benchmark": Given("sample", "-b"), "predictions": Given(["p"], "-p")}
    flags["scoring.judge.url"] = Given("http://x/v1", "--judge-url")
    hints = {"scoring.judge.model": "--judge-model"}
    error = error_of(lambda: build_config(ScoreJob, flags=flags, hints=hints))
    assert str(error) == (
        "field scoring.judge.model: required with scoring.judge.url (from --judge-url "
        "http://x/v1): give --judge-model"
    )
    error = error_of(lambda: build_config(InferenceConfig, hints={"model": "--model"}))
    assert str(error) == "field model: required: give --model"


def test_load_config_with_overrides_keeps_its_contract(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("model: m\nconcurrency: 0\n")
    from_file = error_of(lambda: load_config_with_overrides(InferenceConfig, path, {}))
    assert (from_file.path, from_file.line, from_file.field) == (str(path), 2, "concurrency")
    given = error_of(lambda: load_config_with_overrides(InferenceConfig, path, {"concurrency": -1}))
    assert (given.path, given.field) == (None, "concurrency")
    assert given.message == "Input should be greater than or equal to 1"  # no "from": code


def test_a_field_a_file_lacks_is_named_with_the_file(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("concurrency: 4\n")
    error = error_of(lambda: load_config(path, InferenceConfig))
    assert (error.path, error.field, error.message) == (str(path), "model", "required")
