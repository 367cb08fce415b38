"""The OpenAI-compatible backend against a real server on loopback, with injected faults.

The server (tests/servers/openai_server.py) decodes every image with Pillow and answers
with the size it decoded, so these tests also prove what was sent.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from crystalbench.data import load_benchmark
from crystalbench.data.loading import Benchmark
from crystalbench.errors import UnknownNameError
from crystalbench.inference import InferenceConfig, RetryPolicy, infer
from crystalbench.inference import images as images_module
from crystalbench.inference.backends.base import BackendUnavailableError, InferenceAbortedError
from crystalbench.inference.backends.openai_compat import OpenAIChatBackend
from crystalbench.types import BenchmarkItem
from servers.openai_server import LoopbackServer

MODEL = "test-model"
FAST = RetryPolicy(base_delay=0.01, max_delay=0.05)


@pytest.fixture(scope="module")
def server():
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def state(server):
    server.state.configure({})
    return server.state


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("sample")


def backend(*servers, concurrency=4, timeout=5.0, model=MODEL):
    return OpenAIChatBackend(
        model, [s.base_url for s in servers], concurrency=concurrency, timeout=timeout
    )


def rows(path):
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def requests_for(state, key):
    return [entry for entry in state.log if entry["key"] == key]


def test_every_sample_item_is_answered_from_its_decoded_image(server, state, bench, tmp_path):
    out = tmp_path / "p.jsonl"
    summary = infer(bench, backend(server), out, retry=FAST)
    got = rows(out)
    assert list(got) == bench.ids
    assert summary.n_ok == len(bench)
    assert summary.n_errors == 0
    for item in bench.items:
        with Image.open(item.image) as image:
            width, height = image.size
        record = got[item.id]
        assert record["steps"][0] == f"The image is {width} by {height} pixels."
        assert record["answer"] == "A"
        assert record["parse_status"] == "json"
        assert record["endpoint"] == server.base_url
        assert record["latency_s"] > 0
        assert record["attempts"] == 1
    served = {entry["prompt_tokens"] for entry in state.log}
    assert {r["prompt_tokens"] for r in got.values()} <= served
    assert summary.prompt_tokens == sum(entry["prompt_tokens"] for entry in state.log)
    assert summary.endpoints == [{"base_url": server.base_url, "sent": 40, "ok": 40, "failed": 0}]


def test_scripted_answers_reach_the_record(server, state, bench, tmp_path):
    item = bench.items[0]
    state.answers[item.question] = "Step 1: The mark is at C.\nAnswer: 10"
    out = tmp_path / "p.jsonl"
    infer(bench.subset(ids=[item.id]), backend(server), out)
    record = rows(out)[item.id]
    assert record["response"] == "Step 1: The mark is at C.\nAnswer: 10"
    assert record["steps"] == ["The mark is at C."]
    assert record["answer"] == "10"


def test_sampling_settings_are_sent(server, state, bench, tmp_path):
    from crystalbench.inference import GenerationSettings

    sent = []
    settings = GenerationSettings(temperature=0.0, max_tokens=77, top_p=0.9, seed=5)
    chat = backend(server)
    chat.extra_body = {"top_k": 3}
    original = chat.body
    chat.body = lambda request: sent.append(original(request)) or sent[-1]  # type: ignore[method-assign]
    config = InferenceConfig(model=chat.model, generation=settings)
    infer(bench.subset(limit=1), chat, tmp_path / "p.jsonl", config)
    (raw,) = sent
    body = json.loads(raw)
    assert (body["temperature"], body["max_tokens"], body["top_p"], body["seed"]) == (
        0.0,
        77,
        0.9,
        5,
    )
    assert body["top_k"] == 3
    assert body["model"] == MODEL
    content = body["messages"][0]["content"]
    assert content[0]["type"] == "image_url"
    assert content[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert content[1]["type"] == "text"


@pytest.mark.parametrize(
    ("faults", "kinds"),
    [
        ([{"status": 500}, {"status": 503}], ["500", "503"]),
        ([{"status": 408}, {"status": 409}], ["408", "409"]),
        ([{"garbage": "text"}, {"garbage": "json"}], ["garbage", "garbage"]),
    ],
)
def test_transient_faults_are_retried_until_the_answer(
    server, state, bench, tmp_path, faults, kinds
):
    item = bench.items[1]
    state.faults[item.question] = list(faults)
    out = tmp_path / "p.jsonl"
    summary = infer(bench.subset(limit=3), backend(server), out, retry=FAST)
    record = rows(out)[item.id]
    assert record["error"] is None
    assert record["attempts"] == len(faults) + 1
    assert len(requests_for(state, item.question)) == len(faults) + 1
    assert summary.n_ok == 3
    assert summary.attempts == 3 + len(kinds)


def test_a_timeout_is_retried(server, state, bench, tmp_path):
    item = bench.items[2]
    state.faults[item.question] = [{"sleep": 3.0}]
    out = tmp_path / "p.jsonl"
    infer(bench.subset(ids=[item.id]), backend(server, timeout=1.0), out, retry=FAST)
    record = rows(out)[item.id]
    assert record["error"] is None
    assert record["attempts"] == 2


def test_persistent_failures_become_error_records_and_the_run_goes_on(
    server, state, bench, tmp_path
):
    timing_out, failing = bench.items[3], bench.items[4]
    state.faults[timing_out.question] = [{"sleep": 2.5}] * 2
    state.faults[failing.question] = [{"status": 502}] * 3
    out = tmp_path / "p.jsonl"
    summary = infer(
        bench.subset(limit=6),
        backend(server, timeout=1.0),
        out,
        retry=RetryPolicy(max_attempts=2, base_delay=0.01),
    )
    got = rows(out)
    assert got[timing_out.id]["error_kind"] == "timeout"
    assert got[timing_out.id]["attempts"] == 2
    assert got[failing.id]["error_kind"] == "server_error"
    assert got[failing.id]["attempts"] == 2
    assert "HTTP 502" in got[failing.id]["error"]
    assert summary.n_ok == 4
    assert summary.errors_by_kind == {"timeout": 1, "server_error": 1}


@pytest.mark.parametrize(
    ("header", "value", "wait"), [("retry_after", "1", 1.0), ("retry_after_ms", "300", 0.3)]
)
def test_retry_after_is_honoured(server, state, bench, tmp_path, header, value, wait):
    item = bench.items[5]
    state.faults[item.question] = [{"status": 429, header: value}]
    slow_backoff = RetryPolicy(base_delay=20.0, max_delay=20.0)  # would wait >= 10 s
    infer(bench.subset(ids=[item.id]), backend(server), tmp_path / "p.jsonl", retry=slow_backoff)
    first, second = requests_for(state, item.question)
    assert first["status"] == 429
    assert second["status"] == 200
    gap = second["t"] - first["t"]
    assert wait <= gap < wait + 2.0


def big_image_benchmark(tmp_path, size):
    path = tmp_path / "big.png"
    Image.new("RGB", size, (20, 120, 220)).save(path)
    item = BenchmarkItem(
        id="big",
        source="s",
        question="How blue is the big image?",
        answer="1",
        reference_steps=["r"],
        image=str(path),
    )
    return Benchmark(name="big", items=[item], image_loader=lambda it: Path(it.image).read_bytes())


def test_an_image_rejected_as_too_large_is_downscaled(server, state, tmp_path):
    state.max_image_side = 800
    bench = big_image_benchmark(tmp_path, (1500, 900))
    out = tmp_path / "p.jsonl"
    infer(bench, backend(server), out, retry=FAST)
    record = rows(out)["big"]
    assert record["error"] is None
    assert record["image_max_side"] == 512
    assert record["attempts"] == 3
    sizes = [tuple(entry["image"]) for entry in state.log]
    assert sizes == [(1500, 900), (1024, 614), (512, 307)]
    assert record["steps"][0] == "The image is 512 by 307 pixels."


def test_an_image_too_large_even_downscaled_is_an_error_record(server, state, tmp_path):
    state.max_image_side = 100
    bench = big_image_benchmark(tmp_path, (1500, 900))
    out = tmp_path / "p.jsonl"
    summary = infer(bench, backend(server), out, retry=FAST)
    record = rows(out)["big"]
    assert record["error_kind"] == "image_too_large"
    assert record["image_max_side"] == 512
    assert "Image too large" in record["error"]
    assert summary.errors_by_kind == {"image_too_large": 1}


def test_max_image_side_downscales_before_sending(server, state, tmp_path):
    bench = big_image_benchmark(tmp_path, (1500, 900))
    capped = InferenceConfig(model="m", max_image_side=300)
    infer(bench, backend(server), tmp_path / "p.jsonl", capped)
    assert [tuple(e["image"]) for e in state.log] == [(300, 180)]


def test_each_image_is_encoded_once_however_many_attempts(
    server, state, bench, tmp_path, monkeypatch
):
    encodes = []
    real = images_module.b64encode
    monkeypatch.setattr(images_module, "b64encode", lambda data: (encodes.append(1), real(data))[1])
    chosen = bench.items[:5]
    for item in chosen:
        state.faults[item.question] = [{"status": 500}, {"garbage": "text"}]
    summary = infer(bench.subset(limit=5), backend(server), tmp_path / "p.jsonl", retry=FAST)
    assert len(state.log) == 15  # three requests per item...
    assert len(encodes) == 5  # ...one encoding per item
    assert summary.image_encodes == 5
    assert summary.attempts == 15


def test_a_bad_key_stops_the_run(server, state, bench, tmp_path):
    state.faults[bench.items[0].question] = [{"status": 401, "message": "invalid api key"}]
    with pytest.raises(InferenceAbortedError, match="invalid api key"):
        infer(bench.subset(limit=3), backend(server, concurrency=1), tmp_path / "p.jsonl")


def test_an_unknown_model_is_caught_before_the_run(server, state, bench, tmp_path):
    with pytest.raises(UnknownNameError, match="test-model"):
        infer(bench.subset(limit=3), backend(server, model="qwen-typo"), tmp_path / "p.jsonl")
    assert state.log == []  # not a single chat request was sent
    assert not (tmp_path / "p.jsonl").exists()


def test_requests_spread_over_replicas(server, state, bench, tmp_path):
    with LoopbackServer() as second:
        second.state.configure({"delay": 0.01})
        state.delay = 0.01
        summary = infer(bench, backend(server, second, concurrency=2), tmp_path / "p.jsonl")
        first_count, second_count = len(state.log), len(second.state.log)
    assert first_count + second_count == len(bench)
    assert min(first_count, second_count) >= len(bench) // 4
    assert {e["base_url"]: e["sent"] for e in summary.endpoints} == {
        server.base_url: first_count,
        second.base_url: second_count,
    }
    assert {r["endpoint"] for r in rows(tmp_path / "p.jsonl").values()} == {
        server.base_url,
        second.base_url,
    }


def test_a_dead_replica_is_skipped(server, state, bench, tmp_path):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    chat = OpenAIChatBackend(MODEL, [server.base_url, dead], concurrency=2, timeout=5.0)
    summary = infer(bench.subset(limit=12), chat, tmp_path / "p.jsonl", retry=FAST)
    assert summary.n_ok == 12
    assert any("unreachable" in w for w in summary.warnings)
    assert len(state.log) == 12


def test_no_reachable_endpoint_fails_fast(bench, tmp_path):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    with pytest.raises(BackendUnavailableError, match="cannot reach"):
        infer(bench.subset(limit=2), OpenAIChatBackend(MODEL, [dead]), tmp_path / "p.jsonl")


def test_the_body_sent_is_valid_json_with_the_file_pixels(server, state, bench, tmp_path):
    item = next(i for i in bench.items if i.options)
    chat = backend(server)
    seen = []
    original = chat.body
    chat.body = lambda request: seen.append(original(request)) or seen[-1]  # type: ignore[method-assign]
    infer(bench.subset(ids=[item.id]), chat, tmp_path / "p.jsonl")
    import base64

    body = json.loads(seen[0])
    image_part, text_part = body["messages"][0]["content"]
    from crystalbench.inference import load_prompt

    assert text_part == {"type": "text", "text": load_prompt().render(item)}
    url = image_part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    sent = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    with Image.open(item.image) as original_image:
        assert sent.convert("RGB").tobytes() == original_image.convert("RGB").tobytes()


# --- the replica pool on its own -----------------------------------------------------------
def pool_of(*limits):
    from crystalbench.inference.backends.openai_compat import Replica, ReplicaPool

    return ReplicaPool(
        [Replica(base_url=f"r{i}", client=None, limit=n) for i, n in enumerate(limits)]
    )


def test_pool_balances_by_load_and_waits_when_full():
    import asyncio

    async def scenario():
        pool = pool_of(2, 2)
        taken = [await pool.acquire() for _ in range(4)]
        assert sorted(r.base_url for r in taken) == ["r0", "r0", "r1", "r1"]
        waiter = asyncio.create_task(pool.acquire())
        await asyncio.sleep(0.01)
        assert not waiter.done()  # every slot is taken
        await pool.release(taken[0], None)
        assert (await asyncio.wait_for(waiter, 1)).base_url == taken[0].base_url

    asyncio.run(scenario())


def test_pool_avoids_a_sick_replica_but_uses_a_lone_one():
    import asyncio

    from crystalbench.inference.backends.base import BackendError

    async def scenario():
        pool = pool_of(4, 4)
        sick, _healthy = pool.replicas
        refused = BackendError("connection", "refused", retryable=True)
        sick.in_flight += 1
        await pool.release(sick, refused)
        assert [(await pool.acquire()).base_url for _ in range(4)] == ["r1"] * 4
        waiter = asyncio.create_task(pool.acquire())  # healthy is full: wait, do not use r0
        await asyncio.sleep(0.05)
        assert not waiter.done()
        waiter.cancel()

        alone = pool_of(2)
        (only,) = alone.replicas
        only.in_flight += 1
        await alone.release(only, refused)
        assert (await alone.acquire()) is only  # sick, but nothing better exists

    asyncio.run(scenario())


def test_pool_blocks_a_rate_limited_replica_for_its_retry_after():
    import asyncio
    import time

    from crystalbench.inference.backends.base import BackendError

    async def scenario():
        pool = pool_of(4)
        (replica,) = pool.replicas
        replica.in_flight += 1
        await pool.release(
            replica, BackendError("rate_limit", "429", retryable=True, retry_after=0.3)
        )
        started = time.monotonic()
        await pool.acquire()
        return time.monotonic() - started

    assert asyncio.run(scenario()) >= 0.29


@pytest.mark.parametrize("with_image", [True, False])
def test_the_spliced_body_equals_the_plain_json_body(with_image):
    from crystalbench.inference import GenerationSettings
    from crystalbench.inference.backends.base import GenerationRequest
    from crystalbench.inference.images import PreparedImage

    buffer = io.BytesIO()
    Image.new("RGB", (50, 30), "green").save(buffer, "PNG")
    image = PreparedImage(buffer.getvalue()) if with_image else None
    prompt = 'He said "ñ" \\ {"answer": 1}\n\ttab \u2603 \x00 end'
    request = GenerationRequest("1", prompt, image, GenerationSettings(seed=1), image_max_side=20)
    chat = OpenAIChatBackend("m/ü", ["http://127.0.0.1:9/v1"], extra_body={"top_k": 2})
    assert json.loads(chat.body(request)) == chat.payload(request)
    if with_image:
        assert image.encodes == 1  # payload() reused the memoised URL
