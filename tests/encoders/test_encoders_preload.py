"""Loading the ONNX Runtime session in the background, and the ``crystal score`` fast start.

- :meth:`OnnxEncoder.preload` loads the session on another thread; encoding waits for it
  and gives exactly the vectors of an encoder loaded the ordinary way; nothing starts
  without a cached export; a failed background load is raised by ``encode``.
- The ``crystal`` console script (:mod:`crystalbench.cli.entry`) runs ``score`` as a
  one-command app that behaves like the full app (output, errors, exit codes), starts the
  encoder from a quick look at the command line before typer is imported, and the command
  takes that encoder only when its own parsed values are the same.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from typer.testing import CliRunner

from crystalbench.cli.entry import fast_app, score_encoder_hint
from crystalbench.cli.main import app
from crystalbench.data import SAMPLE_DIR
from crystalbench.defaults import ENCODER
from crystalbench.encoders import early_encoder, keep_early_encoder, load_encoder
from crystalbench.encoders.onnx_backend import OnnxEncoder

TEXTS = ["The triangle has three sides.", "Its area is 6.", "So the answer is B."]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    """A cache folder holding the MiniLM export (made once, with torch, here)."""
    pytest.importorskip("onnxruntime")
    folder = tmp_path_factory.mktemp("preload-cache")
    OnnxEncoder("minilm-offline", cache_dir=folder).load()
    return folder


def test_preload_loads_on_another_thread_and_gives_the_same_vectors(export_dir, monkeypatch):
    threads: list[str] = []
    original = OnnxEncoder._load

    def noting_load(self):
        threads.append(threading.current_thread().name)
        original(self)

    monkeypatch.setattr(OnnxEncoder, "_load", noting_load)
    early = OnnxEncoder("minilm-offline", cache_dir=export_dir)
    assert early.preload() is True
    assert early.preload() is False  # one load only
    got = early.encode(TEXTS)
    assert threads == ["onnx-preload"]
    plain = OnnxEncoder("minilm-offline", cache_dir=export_dir)
    want = plain.encode(TEXTS)
    assert threads == ["onnx-preload", "MainThread"]
    assert np.array_equal(got, want)
    assert early.identity == plain.identity
    assert plain.preload() is False  # loaded already: nothing to start
    early.close()


def test_preload_starts_nothing_without_a_cached_export(tmp_path):
    encoder = OnnxEncoder("minilm-offline", cache_dir=tmp_path)
    assert encoder.preload() is False
    assert not encoder.export_folder.exists()  # no export made behind the user's back
    auto = load_encoder("minilm-offline", device="cpu", cache_dir=tmp_path)
    assert auto.preload() is False  # type: ignore[attr-defined]


def test_preload_never_downloads_or_imports_to_find_a_model(tmp_path, monkeypatch):
    """A hub name that is not on this machine: no load starts, and nothing goes looking for
    it (no huggingface_hub, no torch, no download): the command does that, in its own time."""
    from crystalbench.encoders import onnx_backend

    def must_not_run(name):
        raise AssertionError(f"resolve_model_folder({name!r}) was called by preload")

    monkeypatch.setattr(onnx_backend, "resolve_model_folder", must_not_run)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    encoder = OnnxEncoder("some-org/not-downloaded", cache_dir=tmp_path)
    assert encoder.preload() is False
    assert encoder._preload is None


def test_a_failed_background_load_is_raised_by_encode(export_dir, tmp_path):
    broken_cache = tmp_path / "cache"
    source = OnnxEncoder("minilm-offline", cache_dir=export_dir).export_folder
    target = broken_cache / "onnx" / source.name
    shutil.copytree(source, target)
    (target / "model.onnx").write_bytes(b"this is not an ONNX graph")
    encoder = OnnxEncoder("minilm-offline", cache_dir=broken_cache)
    assert encoder.preload() is True
    encoder.close()  # the background load has failed by now
    with pytest.raises(Exception, match=r"(?i)protobuf|onnx|load"):
        encoder.encode(TEXTS)
    with pytest.raises(Exception, match=r"(?i)protobuf|onnx|load"):  # and again: never cached
        encoder.encode(TEXTS)


# --------------------------------------------------------------------------- entry point
@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["-b", "B", "-p", "P", "-o", "O"], (ENCODER, {})),
        (["-b", "B", "--encoder", "minilm", "--tau", "0.4"], ("minilm", {})),
        (
            ["--encoder=hash", "--device=cpu", "--cache-dir", "c/"],
            ("hash", {"device": "cpu", "cache_dir": "c/"}),
        ),
        (["-b", "B", "--config", "c.yaml"], None),
        (["-b", "B", "--config=c.yaml"], None),
        (["-b", "B", "--backend=onnx-int8"], (ENCODER, {"backend": "onnx-int8"})),
        (["--workers", "2", "--devices", "a,b"], (ENCODER, {"workers": 2, "devices": ["a", "b"]})),
        (["-b", "B", "--batch-size", "many"], None),  # malformed: the command will say so
        (["-b", "B", "--encoder"], None),  # a value is missing: the command will say so
        (["-b", "B", "--", "--encoder", "x"], (ENCODER, {})),
    ],
)  # fmt: skip
def test_the_score_hint_reads_the_encoder_flags(args, hint):
    assert score_encoder_hint(args) == hint


def test_every_encoder_option_of_the_config_has_a_flag_the_hint_reads():
    """The hint reads the flags of the ScoreConfig fields ``load_encoder`` takes: a new
    encoder option in ``encoder_options`` cannot be missed (no hand-kept list)."""
    from crystalbench.cli.entry import encoder_fields
    from crystalbench.cli.score_options import SCORE_CONFIG_AT, SCORE_FLAGS
    from crystalbench.config.scoring import ScoreConfig

    options = set(ScoreConfig().encoder_options())
    assert options <= encoder_fields()
    flagged = {flag.field.removeprefix(SCORE_CONFIG_AT + ".") for flag in SCORE_FLAGS}
    assert options | {"encoder"} <= flagged


def test_the_key_of_the_hint_is_the_key_of_the_parsed_config(tmp_path, monkeypatch):
    """The entry point keeps the early encoder under the key the command computes from its
    own config: flags, defaults and $CRYSTALBENCH_CACHE_DIR alike."""
    from crystalbench.cli.entry import encoder_key
    from crystalbench.config.loader import Given, build_config
    from crystalbench.scoring.job import ScoreJob

    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(tmp_path / "cache"))
    args = ["--encoder", "hash", "--workers", "2", "--dtype", "float32"]
    name, options = score_encoder_hint(args)
    job = build_config(
        ScoreJob,
        flags={
            "benchmark": Given("sample", "-b"),
            "predictions": Given(["p.jsonl"], "-p"),
            "scoring.encoder": Given("hash", "--encoder"),
            "scoring.workers": Given(2, "--workers"),
            "scoring.dtype": Given("float32", "--dtype"),
        },
    )
    assert job.scoring.cache_dir == str(tmp_path / "cache")  # from the variable
    config = job.scoring
    assert encoder_key(name, options) == encoder_key(config.encoder, config.encoder_options())
    other = config.model_copy(update={"workers": 3})
    assert encoder_key(name, options) != encoder_key(other.encoder, other.encoder_options())


def test_an_early_encoder_is_taken_only_under_its_exact_key():
    encoder = load_encoder("hash")
    keep_early_encoder(("score", "hash", None, None), encoder)
    assert early_encoder(("score", "hash", "cpu", None)) is None
    assert early_encoder(("score", "hash", None, None)) is encoder
    assert early_encoder(("score", "hash", None, None)) is None  # taken once


def _invoke(target, args, prog):
    result = CliRunner().invoke(target, args, prog_name=prog)
    return result.exit_code, result.output


def test_the_one_command_app_behaves_like_the_full_app(tmp_path):
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "answer": "A"}\n{"id": \n', encoding="utf-8")
    common = ["-b", "sample", "--encoder", "hash", "--no-progress", "--no-cache"]
    cases = {
        "good": [*common, "-p", str(preds)],
        "bad": [*common, "-p", str(bad)],
        "missing option": ["-p", str(preds)],
        "help": ["--help"],
    }
    for label, args in cases.items():
        full = _invoke(app, ["score", *args, "-o", str(tmp_path / "full")], "crystal")
        fast = _invoke(fast_app("score"), [*args, "-o", str(tmp_path / "fast")], "crystal score")
        assert fast[0] == full[0], label
        assert fast[1].replace("fast", "full") == full[1], label
    assert _invoke(fast_app("score"), cases["bad"] + ["-o", str(tmp_path)], "c")[0] == 2
    full = json.loads((tmp_path / "full" / "summary.json").read_text())
    fast = json.loads((tmp_path / "fast" / "summary.json").read_text())
    assert {k: fast[k] for k in ("match_f1", "accuracy", "n_items")} == {
        k: full[k] for k in ("match_f1", "accuracy", "n_items")
    }


@pytest.mark.slow
def test_crystal_score_starts_its_encoder_before_typer_and_takes_it(export_dir, tmp_path):
    """The console script's path, in a fresh interpreter: the session starts loading on a
    background thread before typer is imported, the command uses that very encoder, and
    nothing of torch / transformers is imported."""
    preds = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))[0]
    out = tmp_path / "out"
    args = ["score", "-b", "sample", "-p", str(preds), "-o", str(out), "--no-progress"]
    args += ["--encoder", "minilm-offline"]
    code = f"""
        import json, sys, threading
        from crystalbench.encoders import onnx_backend
        seen = {{}}
        preload, load = onnx_backend.OnnxEncoder.preload, onnx_backend.OnnxEncoder._load
        def noting_preload(self):
            seen.setdefault("typer_imported_at_preload", "typer" in sys.modules)
            return preload(self)
        def noting_load(self):
            seen.setdefault("loaded_on", threading.current_thread().name)
            seen["loads"] = seen.get("loads", 0) + 1  # 2 if the command built its own
            return load(self)
        onnx_backend.OnnxEncoder.preload = noting_preload
        onnx_backend.OnnxEncoder._load = noting_load
        from crystalbench import encoders
        from crystalbench.cli.entry import main
        try:
            main({args!r})
        except SystemExit as exc:
            assert not exc.code, exc.code
        heavy = sorted(m for m in sys.modules
                       if m.split(".")[0] in ("torch", "transformers", "sentence_transformers"))
        seen["heavy"] = heavy
        seen["left_kept"] = len(encoders._EARLY)
        print(json.dumps(seen))
    """
    env = {**os.environ, "CRYSTALBENCH_CACHE_DIR": str(export_dir), "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {
        "typer_imported_at_preload": False,
        "loaded_on": "onnx-preload",
        "heavy": [],
        "loads": 1,
        "left_kept": 0,
    }
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["encoder_identity"].startswith("onnx-fp32:all-MiniLM-L6-v2:")
