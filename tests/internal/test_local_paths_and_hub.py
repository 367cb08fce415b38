"""A mistyped local path is "no such file or folder" before any hub lookup, and an unreachable
hub fails a model or dataset load in seconds (a real loopback server that never answers or
refuses, pointed at by ``HF_ENDPOINT``)."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench._internal.hub_probe import forget_probes, hub_unreachable_reason, probe_hub
from crystalbench._internal.paths import local_path, local_path_reason
from crystalbench.cli.main import app
from crystalbench.data import SAMPLE_DIR, load_benchmark
from crystalbench.encoders.model_files import HubUnreachableError, hub_model_source
from crystalbench.errors import BenchmarkUnavailableError, InputError

runner = CliRunner()


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with ``src/MMVP`` in it, as in a checkout."""
    (tmp_path / "src" / "MMVP").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def no_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any hub lookup fails the test: the paths below must be refused before one."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the hub was asked")

    monkeypatch.setattr("crystalbench.data.hub.load_hub", refuse)
    monkeypatch.setattr("crystalbench.data.loading.load_hub", refuse)
    monkeypatch.setattr("crystalbench.sources.reading.load_hub", refuse)


# --------------------------------------------------------------------------- local paths


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("./runs", "starts with './'"),
        ("../runs", "starts with '../'"),
        ("/abs/x", "starts with '/'"),
        ("~/x", "starts with '~'"),
        ("preds.jsonl", "ends in '.jsonl'"),
        ("data/crystal.parquet", "ends in '.parquet'"),
        ("board.CSV", "ends in '.csv'"),
        ("src/MMVPX", "the folder 'src' exists here"),
    ],
)
def test_what_reads_as_a_local_path(checkout, text, reason):
    assert reason in (local_path_reason(text) or "")


@pytest.mark.parametrize("text", ["waybarrios/CRYSTAL", "MathLLMs/MathVision", "sample", "hash"])
def test_hub_ids_and_names_are_not_local_paths(checkout, text):
    assert local_path_reason(text) is None
    assert local_path(text) is None


def test_an_existing_path_is_returned(checkout):
    assert local_path("src/MMVP") == Path("src/MMVP")


def test_the_closest_names_in_the_folder_are_suggested(checkout):
    with pytest.raises(InputError, match=r"did you mean 'src/MMVP'\?") as info:
        local_path("src/MMVX", option="--from")
    assert str(info.value).startswith("src/MMVX: field --from: no such file or folder")


def test_load_benchmark_refuses_a_mistyped_folder_before_the_hub(checkout, no_hub):
    with pytest.raises(InputError, match="no such file or folder") as info:
        load_benchmark("src/MMVPX")
    assert "src/MMVPX" in str(info.value)
    with pytest.raises(InputError, match="no such file or folder"):
        load_benchmark("./crystal.jsonl")


@pytest.mark.parametrize(
    "argv",
    [
        ["data", "build", "mmvp", "--from", "src/MMVPX", "-o", "out"],
        ["data", "stats", "-b", "src/MMVPX"],
        ["data", "stats", "-b", "./items/items.jsonl"],
        ["references", "build", "--items", "src/MMVPX", "-o", "refs", "--no-validator",
         "-g", "a=http://127.0.0.1:9/v1", "-g", "b=http://127.0.0.1:9/v1"],
        ["score", "-b", "src/MMVPX", "-p", str(SAMPLE_DIR / "predictions" / "terse-precise.jsonl"),
         "-o", "out", "--encoder", "hash"],
        ["score", "-b", "./crystal.parquet", "-p",
         str(SAMPLE_DIR / "predictions" / "terse-precise.jsonl"), "-o", "out", "--encoder", "hash"],
    ],
)  # fmt: skip
def test_commands_say_no_such_file_or_folder(checkout, no_hub, argv):
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert "no such file or folder" in result.output
    assert "datasets" not in result.output  # not "the hub dataset ... needs 'datasets'"
    assert "Traceback" not in result.output


def test_a_mistyped_encoder_folder_is_not_sent_to_the_hub(checkout):
    from crystalbench.encoders import load_encoder

    with pytest.raises(InputError, match="no such file or folder") as info:
        load_encoder("./models/distilroberta")
    assert "--encoder" in str(info.value)


def test_a_missing_item_set_folder_is_named(checkout):
    from crystalbench.sources import read_item_set

    with pytest.raises(InputError, match="no such file or folder"):
        read_item_set("items/mmvp")


# --------------------------------------------------------------------------- the hub


class SilentServer:
    """Accepts connections on loopback and never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def close(self) -> None:
        self.sock.close()


def _refused_url() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Offline mode off, an empty Hugging Face cache, probes forgotten before and after."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.delenv("CRYSTALBENCH_HUB_PROBE_TIMEOUT", raising=False)
    forget_probes()
    yield
    forget_probes()


@pytest.fixture
def silent(monkeypatch: pytest.MonkeyPatch, online: None) -> Iterator[SilentServer]:
    server = SilentServer()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    yield server
    server.close()


def test_a_silent_hub_is_found_out_within_the_probe_timeout(silent):
    started = time.monotonic()
    reason = hub_unreachable_reason()
    seconds = time.monotonic() - started
    assert reason is not None
    assert "did not answer within 3 s" in reason
    assert seconds < 5.0
    started = time.monotonic()
    assert hub_unreachable_reason() == reason  # kept for the process: no second wait
    assert time.monotonic() - started < 0.1


def test_a_refused_connection_is_unreachable_at_once(online, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", _refused_url())
    started = time.monotonic()
    reason = hub_unreachable_reason()
    assert reason is not None
    assert "ConnectionRefusedError" in reason
    assert time.monotonic() - started < 2.0


def test_a_hub_that_answers_is_reachable(online, monkeypatch):
    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        assert probe_hub(url, timeout=3) is None
        monkeypatch.setenv("HF_ENDPOINT", url)
        assert hub_unreachable_reason() is None
    finally:
        server.shutdown()


def test_offline_mode_answers_without_the_network(online, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://192.0.2.1")  # TEST-NET: would never answer
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = time.monotonic()
    assert hub_unreachable_reason() == "offline mode is on (HF_HUB_OFFLINE=1)"
    assert time.monotonic() - started < 0.1


def test_the_probe_can_be_turned_off(silent, monkeypatch):
    monkeypatch.setenv("CRYSTALBENCH_HUB_PROBE_TIMEOUT", "0")
    assert hub_unreachable_reason() is None
    monkeypatch.setenv("CRYSTALBENCH_HUB_PROBE_TIMEOUT", "soon")
    with pytest.raises(InputError, match="must be a number of seconds"):
        hub_unreachable_reason()


def test_an_encoder_not_on_this_machine_fails_fast_with_the_offline_choices(silent):
    from crystalbench.encoders.sentence import SentenceTransformerEncoder

    started = time.monotonic()
    with pytest.raises(HubUnreachableError) as info:
        SentenceTransformerEncoder("all-distilroberta-v1").load()
    assert time.monotonic() - started < 6.0
    message = str(info.value)
    assert "is not on this machine and the model hub cannot be reached" in message
    assert "--encoder minilm-offline" in message


def test_a_cached_encoder_loads_from_the_cache_when_the_hub_is_silent(silent, tmp_path):
    """The hub cache's layout (``models--org--name/snapshots/<rev>``, ``refs/main``)."""
    folder = tmp_path / "hf" / "hub" / "models--org--tiny"
    snapshot = folder / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text("0123abcd")
    assert hub_model_source("org/tiny") == str(snapshot)


def test_a_hub_dataset_fails_fast_and_names_the_local_copies(silent):
    pytest.importorskip("datasets")
    from crystalbench.data.hub import load_hub

    started = time.monotonic()
    with pytest.raises(BenchmarkUnavailableError) as info:
        load_hub("crystalbench-test/no-such-dataset", "test", option="--benchmark")
    assert time.monotonic() - started < 6.0
    message = str(info.value)
    assert "the hub could not be reached" in message
    assert "did not answer within 3 s" in message
    assert "--benchmark DIR" in message
    assert "HF_HUB_OFFLINE=1" in message


def test_the_readme_scoring_command_fails_in_seconds_against_a_silent_hub(silent, tmp_path):
    """The README's first scoring command, default encoder, as a fresh process (82 s of hub
    retries before; see benchmarks/RESULTS.md)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_OFFLINE")}
    env["HF_ENDPOINT"] = silent.url
    env["CRYSTALBENCH_CACHE_DIR"] = str(tmp_path / "cache")
    predictions = SAMPLE_DIR / "predictions" / "terse-precise.jsonl"
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "crystalbench.cli.main", "score", "-b", "sample",
         "-p", str(predictions), "-o", str(tmp_path / "out")],
        env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    seconds = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    assert "model hub cannot be reached" in done.stderr
    assert "minilm-offline" in done.stderr
    assert seconds < 30.0  # the probe's 3 s plus a process start on a loaded machine
