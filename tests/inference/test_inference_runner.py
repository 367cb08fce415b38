"""The runner with deterministic backends: resume, retries, error records, batches, aborts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from crystalbench.data import load_benchmark
from crystalbench.data.loading import Benchmark
from crystalbench.errors import InputError
from crystalbench.inference import (
    GenerationSettings,
    InferenceConfig,
    RetryPolicy,
    infer,
    load_prompt,
)
from crystalbench.inference.backends.base import (
    BackendError,
    Completion,
    InferenceAbortedError,
)
from crystalbench.inference.backends.scripted import ScriptedBackend
from crystalbench.types import BenchmarkItem

ANSWER = '{"reasoning_steps": ["The bar is red."], "answer": "B"}'
FAST = RetryPolicy(base_delay=0.001, max_delay=0.002)


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("sample")


def ids_in(path):
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def records(path):
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_every_item_gets_one_record_in_benchmark_order(bench, tmp_path):
    out = tmp_path / "p.jsonl"
    summary = infer(bench, ScriptedBackend({"*": ANSWER}, max_in_flight=8), out, retry=FAST)
    assert ids_in(out) == bench.ids
    assert summary.n_ok == len(bench)
    assert summary.n_errors == 0
    first = records(out)[bench.ids[0]]
    assert first["steps"] == ["The bar is red."]
    assert first["answer"] == "B"
    assert first["parse_status"] == "json"
    assert first["prompt_hash"] == load_prompt().hash
    assert first["generation"] == {
        "temperature": 0.1,
        "max_tokens": 4096,
        "top_p": None,
        "seed": None,
    }
    assert first["backend"] == "scripted"
    assert first["attempts"] == 1


def test_the_prompt_sent_is_the_rendered_template(bench, tmp_path):
    backend = ScriptedBackend({"*": ANSWER})
    item = next(i for i in bench.items if i.options)
    infer(bench.subset(ids=[item.id]), backend, tmp_path / "p.jsonl")
    (request,) = backend.requests
    assert request.prompt == load_prompt().render(item)
    assert "A) " + item.options[0] in request.prompt
    assert request.image is not None
    assert request.image.size[0] > 0


def test_a_rerun_skips_finished_items(bench, tmp_path):
    out = tmp_path / "p.jsonl"
    infer(bench.subset(limit=5), ScriptedBackend({"*": ANSWER}), out)
    backend = ScriptedBackend({"*": ANSWER})
    summary = infer(bench.subset(limit=8), backend, out)
    assert sorted(backend.calls) == sorted(bench.ids[5:8])
    assert summary.n_already_done == 5
    assert summary.n_run == 3
    assert ids_in(out) == bench.ids[:8]


def test_error_records_are_kept_until_retry_errors(bench, tmp_path):
    out = tmp_path / "p.jsonl"
    broken = bench.ids[2]
    failing = ScriptedBackend(
        {"*": ANSWER},
        failures={broken: [BackendError("server_error", "boom", retryable=True)] * 3},
    )
    summary = infer(
        bench.subset(limit=4), failing, out, retry=RetryPolicy(max_attempts=3, base_delay=0.001)
    )
    assert summary.n_errors == 1
    assert summary.errors_by_kind == {"server_error": 1}
    assert Counter(failing.calls)[broken] == 3
    error = records(out)[broken]
    assert error["error_kind"] == "server_error"
    assert error["attempts"] == 3
    assert error["response"] is None
    assert error["steps"] is None

    plain = ScriptedBackend({"*": ANSWER})
    summary = infer(bench.subset(limit=4), plain, out)
    assert plain.calls == []
    assert summary.n_skipped_errors == 1
    assert summary.n_pending == 1

    class Watching(ScriptedBackend):
        async def complete(self, request):
            on_disk = ids_in(out)
            assert len(on_disk) == len(set(on_disk)), "a duplicate id appeared mid-run"
            assert broken not in on_disk  # the error record was dropped before the retry
            return await super().complete(request)

    retrying = Watching({"*": ANSWER})
    again = InferenceConfig(model=retrying.model, retry_errors=True)
    summary = infer(bench.subset(limit=4), retrying, out, again)
    assert retrying.calls == [broken]
    assert summary.n_retried_errors == 1
    assert summary.n_ok == 1
    assert summary.n_pending == 0
    assert ids_in(out) == bench.ids[:4]
    assert records(out)[broken]["response"] == ANSWER


def test_another_configuration_is_refused_unless_allowed(bench, tmp_path):
    out = tmp_path / "p.jsonl"
    infer(bench.subset(limit=2), ScriptedBackend({"*": ANSWER}, model="model-a"), out)
    for backend, settings in [
        (ScriptedBackend({"*": ANSWER}, model="model-b"), GenerationSettings()),
        (ScriptedBackend({"*": ANSWER}, model="model-a"), GenerationSettings(temperature=0.7)),
    ]:
        config = InferenceConfig(model=backend.model, generation=settings)
        with pytest.raises(InputError, match="another configuration"):
            infer(bench.subset(limit=3), backend, out, config)
    summary = infer(
        bench.subset(limit=3),
        ScriptedBackend({"*": ANSWER}, model="model-b"),
        out,
        InferenceConfig(model="model-b", allow_mixed=True),
    )
    assert summary.n_run == 1
    assert {r["model"] for r in records(out).values()} == {"model-a", "model-b"}


def test_fatal_errors_stop_the_run_and_keep_what_was_written(bench, tmp_path):
    out = tmp_path / "p.jsonl"
    backend = ScriptedBackend(
        {"*": ANSWER},
        failures={bench.ids[3]: [BackendError("auth", "invalid key", fatal=True)]},
        max_in_flight=1,
    )
    with pytest.raises(InferenceAbortedError, match="invalid key"):
        infer(bench, backend, out)
    written = ids_in(out)
    assert bench.ids[3] not in written
    assert len(written) == len(set(written)) >= 1
    assert all(records(out)[i]["error"] is None for i in written)


def test_a_run_whose_first_items_all_fail_is_stopped(bench, tmp_path):
    out = tmp_path / "p.jsonl"
    backend = ScriptedBackend({}, max_in_flight=2)  # every item: not_scripted
    with pytest.raises(InferenceAbortedError, match="first 5 items all failed"):
        infer(bench, backend, out, InferenceConfig(model=backend.model, abort_after=5))
    assert 5 <= len(ids_in(out)) < len(bench)


def test_an_unreadable_image_fails_its_item_only(tmp_path):
    from PIL import Image

    Image.new("RGB", (32, 32), "red").save(tmp_path / "ok.png")
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\ngarbage")
    items = [
        BenchmarkItem(
            id=i,
            source="s",
            question=f"Q{i}?",
            answer="1",
            reference_steps=["r"],
            image=str(tmp_path / name),
        )
        for i, name in [("1", "ok.png"), ("2", "broken.png"), ("3", "missing.png")]
    ]
    bench = Benchmark(
        name="tmp", items=items, image_loader=lambda item: Path(item.image).read_bytes()
    )
    out = tmp_path / "p.jsonl"
    backend = ScriptedBackend({"*": ANSWER})
    summary = infer(bench, backend, out, InferenceConfig(model=backend.model, abort_after=0))
    assert backend.calls == ["1"]
    assert summary.errors_by_kind == {"image": 2}
    got = records(out)
    assert "cannot decode" in got["2"]["error"]
    assert got["2"]["attempts"] == 0
    assert "FileNotFoundError" in got["3"]["error"]


class FakeBatchBackend:
    """Answers batches; any batch holding a poisoned id fails as a whole (like a CUDA error)."""

    name = "fake-batch"
    model = "batchy"

    def __init__(self, poison=(), batch_size=4):
        self.poison = set(poison)
        self.batch_size = batch_size
        self.batches = []

    def complete_batch(self, requests):
        self.batches.append([r.item_id for r in requests])
        if self.poison & {r.item_id for r in requests}:
            raise RuntimeError("CUDA error: device-side assert triggered")
        return [Completion(text=ANSWER, prompt_tokens=10, completion_tokens=5) for _ in requests]

    def close(self):
        pass


def test_batches_isolate_a_failing_item_by_splitting(bench, tmp_path):
    out = tmp_path / "p.jsonl"
    poison = bench.ids[5]
    backend = FakeBatchBackend(poison=[poison], batch_size=4)
    summary = infer(bench.subset(limit=8), backend, out)
    assert backend.batches[0] == bench.ids[0:4]
    assert backend.batches[1] == bench.ids[4:8]  # fails, then splits down to the poison
    assert [poison] in backend.batches
    assert summary.n_ok == 7
    assert summary.errors_by_kind == {"generation": 1}
    got = records(out)
    assert "device-side assert" in got[poison]["error"]
    assert got[bench.ids[4]]["latency_s"] is not None
    assert ids_in(out) == bench.ids[:8]


def test_batch_size_zero_sends_everything_at_once(bench, tmp_path):
    backend = FakeBatchBackend(batch_size=0)
    infer(bench.subset(limit=6), backend, tmp_path / "p.jsonl")
    assert backend.batches == [bench.ids[:6]]


def test_infer_works_inside_a_running_event_loop(bench, tmp_path):
    import asyncio

    async def notebook_cell():
        return infer(bench.subset(limit=2), ScriptedBackend({"*": ANSWER}), tmp_path / "p.jsonl")

    assert asyncio.run(notebook_cell()).n_ok == 2


def test_rich_progress_shows_rates_errors_and_eta(bench, tmp_path):
    from io import StringIO

    from rich.console import Console

    from crystalbench.inference.progress import RichProgress

    buffer = StringIO()
    progress = RichProgress(
        console=Console(file=buffer, force_terminal=True, width=200), refresh_interval=0
    )
    backend = ScriptedBackend(
        {"*": ANSWER}, failures={bench.ids[1]: [BackendError("bad_request", "nope")]}
    )
    infer(bench.subset(limit=4), backend, tmp_path / "p.jsonl", progress=progress)
    text = buffer.getvalue()
    for expected in ("4/4", "it/s", "tok/s", "1 errors", "ETA"):
        assert expected in text


def test_log_progress_prints_lines_for_logs(bench, tmp_path):
    from io import StringIO

    from crystalbench.inference.progress import LogProgress

    stream = StringIO()
    infer(
        bench.subset(limit=3),
        ScriptedBackend({"*": ANSWER}),
        tmp_path / "p.jsonl",
        progress=LogProgress(stream, interval=0),
    )
    lines = stream.getvalue().splitlines()
    assert lines[0] == "inference: 3 items to answer"
    assert len(lines) == 4
    assert lines[-1].startswith("inference: 3/3 items,")
    assert "0 errors" in lines[-1]


def test_a_failed_preflight_leaves_the_file_untouched(bench, tmp_path):
    out = tmp_path / "p.jsonl"
    failing = ScriptedBackend(
        {"*": ANSWER}, failures={bench.ids[1]: [BackendError("bad_request", "nope")]}
    )
    infer(bench.subset(limit=3), failing, out)
    before = out.read_bytes()

    class Refusing(ScriptedBackend):
        closed = False

        async def preflight(self):
            raise InferenceAbortedError("the key was refused")

        async def aclose(self):
            self.closed = True

    refusing = Refusing({"*": ANSWER})
    with pytest.raises(InferenceAbortedError, match="refused"):
        infer(bench.subset(limit=3), refusing, out, InferenceConfig(model="m", retry_errors=True))
    assert out.read_bytes() == before  # the error record to retry is still there
    assert refusing.calls == []
    assert refusing.closed
