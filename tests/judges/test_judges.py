"""Judges: reply parsing, prompt, scripted judge, verdict cache, and OpenAIJudge over HTTP.

The OpenAI judge is tested against a real FastAPI/uvicorn server on loopback, reached
through the official ``openai`` client: request shape, caching (counted server-side),
failures (garbage, HTTP 500, timeouts, refused connections), retries and bounded
concurrency.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from crystalbench.answers import score_answer, score_answers
from crystalbench.errors import UnknownNameError
from crystalbench.judges import (
    Judge,
    JudgeVerdict,
    OpenAIJudge,
    ScriptedJudge,
    VerdictCache,
    judge_many,
    load_prompt,
    parse_judge_reply,
)
from crystalbench.types import BenchmarkItem

PROMPT_FILE = Path(__file__).parents[2] / "src" / "crystalbench" / "prompts" / "judge_v1.txt"

# ----------------------------------------------------------------------------- reply parsing


@pytest.mark.parametrize(
    ("raw", "correct", "reason"),
    [
        ('{"correct": true, "reason": "same city"}', True, "same city"),
        ('{"correct": false, "reason": "different"}', False, "different"),
        ('```json\n{"correct": true, "reason": "ok"}\n```', True, "ok"),
        ('Sure! Here it is: {"correct": false, "reason": "no"} Hope it helps.', False, "no"),
        ('<think>maybe {"correct": false}</think>{"correct": true, "reason": "r"}', True, "r"),
        ('{"correct": "true", "reason": "string bool"}', True, "string bool"),
        ('{"correct": "No"}', False, None),
        ('{"correct": 1}', True, None),
        ('{"other": 1} then {"correct": false}', False, None),
        ('"correct": true, but the JSON is broken', True, None),
        ("correct: false", False, None),
    ],
)
def test_parse_judge_reply_reads_verdicts(raw, correct, reason):
    verdict = parse_judge_reply(raw)
    assert (verdict.correct, verdict.reason, verdict.error) == (correct, reason, None)
    assert verdict.raw == raw


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (None, "empty reply"),
        ("", "empty reply"),
        ("   ", "empty reply"),
        ("The answer is true.", "unparseable reply"),  # a stray "true" is not a verdict
        ("It is not true that they match", "unparseable reply"),
        ('{"correct": "perhaps"}', "reply field 'correct' not a bool"),
        ('{"correct": null}', "reply field 'correct' not a bool"),
        ("<think>unfinished", "unparseable reply"),
    ],
)
def test_parse_judge_reply_failures(raw, error):
    verdict = parse_judge_reply(raw)
    assert (verdict.correct, verdict.error) == (None, error)


# ----------------------------------------------------------------------------- prompt


def test_prompt_hash_is_sha256_of_the_file():
    prompt = load_prompt("judge_v1")
    assert prompt.sha256 == hashlib.sha256(PROMPT_FILE.read_bytes()).hexdigest()
    assert prompt.name == "judge_v1"
    assert "JSON" in prompt.system
    assert "[user]" not in prompt.system
    for placeholder in ("{{question}}", "{{gold}}", "{{predicted}}"):
        assert prompt.user_template.count(placeholder) == 1


def test_prompt_render_inserts_values_verbatim():
    prompt = load_prompt()
    messages = prompt.render("What is {{gold}}?", "4 $\\frac{1}{2}$", "{{question}}")
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert "What is {{gold}}?" in user  # a value is never expanded again
    assert "4 $\\frac{1}{2}$" in user
    assert user.count("{{question}}") == 1
    assert "{{predicted}}" not in user


def test_unknown_prompt_raises():
    with pytest.raises(UnknownNameError, match="judge_v1"):
        load_prompt("judge_v2")


# ----------------------------------------------------------------------------- scripted judge


def test_scripted_judge_table_and_protocol():
    judge = ScriptedJudge({("Q", "4", "four"): True, ("4", "five"): False})
    assert isinstance(judge, Judge)
    assert judge.judge("Q", "4", "four").correct is True
    assert judge.judge("other question", "4", "five").correct is False
    assert judge.judge("Q", "4", "six").error == "no scripted verdict"
    assert judge.identity.kind == "scripted"
    assert (
        judge.identity.prompt_hash
        == ScriptedJudge({("4", "five"): False, ("Q", "4", "four"): True}).identity.prompt_hash
    )
    assert judge.identity.prompt_hash != ScriptedJudge({("4", "five"): True}).identity.prompt_hash


def test_scripted_judge_callable_and_failures():
    def decide(question, gold, predicted):
        if predicted == "raise":
            raise TimeoutError("slow")
        return None if predicted == "none" else predicted == gold

    judge = ScriptedJudge(decide)
    assert judge.judge("q", "a", "a").correct is True
    assert judge.judge("q", "a", "b").correct is False
    assert judge.judge("q", "a", "none").correct is None
    failed = judge.judge("q", "a", "raise")
    assert (failed.correct, failed.error) == (None, "TimeoutError: slow")
    assert len(judge.calls) == 4
    assert judge.identity.prompt_hash is None


def test_judge_many_generic_keeps_order_with_threads():
    judge = ScriptedJudge(lambda q, gold, predicted: predicted == gold)
    requests = [("q", str(i), str(i if i % 2 else -i)) for i in range(1, 9)]
    verdicts = judge_many(judge, requests, max_workers=4)
    assert [v.correct for v in verdicts] == [i % 2 == 1 for i in range(1, 9)]


def test_judge_many_turns_exceptions_into_verdicts():
    class Broken:
        identity = None

        def judge(self, question, gold, predicted):
            raise ValueError("bad")

    verdicts = judge_many(Broken(), [("q", "a", "b")] * 2, max_workers=2)  # type: ignore[arg-type]
    assert [(v.correct, v.error) for v in verdicts] == [(None, "ValueError: bad")] * 2


# ----------------------------------------------------------------------------- verdict cache


def test_verdict_cache_round_trip_and_persistence(tmp_path):
    path = tmp_path / "sub" / "judge.sqlite"
    cache = VerdictCache(path)
    key = VerdictCache.key("m", "u", "h", "q", "g", "p")
    assert cache.get(key) is None
    cache.put(key, JudgeVerdict(correct=False, reason="differs", raw="{...}"))
    cache.put(VerdictCache.key("m", "u", "h", "q", "g", "x"), JudgeVerdict(correct=None))
    assert len(cache) == 1  # undecided verdicts are never cached
    cache.close()
    again = VerdictCache(path)
    assert again.get(key) == JudgeVerdict(correct=False, reason="differs", raw="{...}")
    again.close()


def test_verdict_cache_keys_do_not_collide():
    keys = {
        VerdictCache.key("m", "u", "h", "q", "g", "p"),
        VerdictCache.key("m", "u", "h", "q", "gp", ""),
        VerdictCache.key("m", "u", "h", "qg", "", "p"),
        VerdictCache.key("m2", "u", "h", "q", "g", "p"),
        VerdictCache.key("m", "u2", "h", "q", "g", "p"),
        VerdictCache.key("m", "u", "h2", "q", "g", "p"),
    }
    assert len(keys) == 6


# ----------------------------------------------------------------------------- loopback server

try:
    import fastapi
    import uvicorn
    from fastapi import Request  # module level: FastAPI resolves string annotations here
except ImportError:  # the server tests skip; the rest of this file still runs
    fastapi = uvicorn = Request = None  # type: ignore[assignment]

_USER_RE = re.compile(
    r"Question:\n(?P<question>.*)\n\nReference answer:\n(?P<gold>.*)\n\n"
    r"Candidate answer:\n(?P<predicted>.*)\n\nIs the candidate",
    re.S,
)


class FakeJudgeServer:
    """An OpenAI-compatible judge model: scripted by the candidate answer's text.

    - contains ``GARBAGE``: a 200 reply whose content is not JSON;
    - contains ``FAIL500``: HTTP 500;
    - contains ``FLAKY``: HTTP 500 the first time, a verdict afterwards;
    - contains ``SLOW``: answers after 2 seconds;
    - contains ``CONC``: answers after 0.2 seconds (to observe concurrency);
    - otherwise ``{"correct": gold.lower() in predicted.lower(), "reason": ...}``.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.flaky_seen: set[str] = set()
        self.lock = threading.Lock()
        self.app = self._build()

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.in_flight = self.max_in_flight = 0
            self.flaky_seen.clear()

    def _build(self) -> Any:
        from fastapi.responses import JSONResponse

        app = fastapi.FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> Any:
            body = await request.json()
            with self.lock:
                self.requests.append(
                    {"body": body, "authorization": request.headers.get("authorization")}
                )
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                return await self._answer(body, JSONResponse)
            finally:
                with self.lock:
                    self.in_flight -= 1

        return app

    async def _answer(self, body: dict[str, Any], response_class: Any) -> Any:
        user = body["messages"][-1]["content"]
        fields = _USER_RE.search(user)
        assert fields is not None, user
        gold, predicted = fields["gold"], fields["predicted"]
        if "FAIL500" in predicted:
            return response_class({"error": {"message": "boom"}}, status_code=500)
        if "FLAKY" in predicted:
            with self.lock:
                first = predicted not in self.flaky_seen
                self.flaky_seen.add(predicted)
            if first:
                return response_class({"error": {"message": "try again"}}, status_code=500)
        if "SLOW" in predicted:
            await asyncio.sleep(2.0)
        if "CONC" in predicted:
            await asyncio.sleep(0.2)
        if "GARBAGE" in predicted:
            content = "Well, it depends on how you look at it."
        else:
            correct = gold.lower() in predicted.lower()
            content = json.dumps({"correct": correct, "reason": f"server says {correct}"})
        return response_class(
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )


@pytest.fixture(scope="module")
def server():
    if fastapi is None or uvicorn is None:
        pytest.skip("fastapi and uvicorn are needed for the loopback server")
    fake = FakeJudgeServer()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(fake.app, log_level="warning", lifespan="off")
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not runner.started:
        assert time.time() < deadline, "loopback server did not start"
        time.sleep(0.02)
    fake.url = f"http://127.0.0.1:{port}/v1"  # type: ignore[attr-defined]
    yield fake
    runner.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture
def fake(server):
    server.reset()
    return server


def make_judge(fake, tmp_path, **options):
    options.setdefault("max_retries", 0)
    options.setdefault("timeout", 10.0)
    return OpenAIJudge(fake.url, "judge-model", cache_dir=tmp_path, **options)


def test_openai_judge_verdict_and_request_shape(fake, tmp_path):
    judge = make_judge(fake, tmp_path, api_key="sk-test-key", max_tokens=64)
    verdict = judge.judge("Which city?", "Paris", "It is Paris, France.")
    assert (verdict.correct, verdict.reason, verdict.error) == (True, "server says True", None)
    assert json.loads(verdict.raw or "") == {"correct": True, "reason": "server says True"}
    assert judge.judge("Which city?", "Paris", "Lyon").correct is False
    assert len(fake.requests) == 2
    request = fake.requests[0]
    body = request["body"]
    assert body["model"] == "judge-model"
    assert body["temperature"] == 0
    assert body["max_tokens"] == 64
    assert request["authorization"] == "Bearer sk-test-key"
    prompt = load_prompt("judge_v1")
    assert body["messages"][0] == {"role": "system", "content": prompt.system}
    assert (
        body["messages"][1]["content"]
        == prompt.render("Which city?", "Paris", "It is Paris, France.")[1]["content"]
    )
    judge.close()


def test_openai_judge_identity_and_info(fake, tmp_path):
    judge = make_judge(fake, tmp_path, api_key="sk-secret")
    identity = judge.identity
    assert identity.kind == "openai"
    assert identity.model == "judge-model"
    assert identity.base_url == fake.url
    assert identity.prompt_name == "judge_v1"
    assert identity.prompt_hash == hashlib.sha256(PROMPT_FILE.read_bytes()).hexdigest()
    info = judge.info()
    assert info["prompt_hash"] == identity.prompt_hash
    assert info["temperature"] == 0.0
    assert "sk-secret" not in json.dumps(info)
    assert fake.requests == []  # building a judge contacts nobody


def test_openai_judge_caches_on_disk(fake, tmp_path):
    judge = make_judge(fake, tmp_path)
    first = judge.judge("Q", "Paris", "Paris")
    second = judge.judge("Q", "Paris", "Paris")
    assert first.correct is True
    assert second == first
    assert len(fake.requests) == 1
    assert (judge.stats.requests, judge.stats.cache_hits) == (1, 1)
    judge.close()

    reopened = make_judge(fake, tmp_path)  # a new process would see the same file
    assert reopened.judge("Q", "Paris", "Paris").correct is True
    assert len(fake.requests) == 1
    other_model = OpenAIJudge(fake.url, "another-model", cache_dir=tmp_path, max_retries=0)
    assert other_model.judge("Q", "Paris", "Paris").correct is True
    assert len(fake.requests) == 2  # the key includes the model
    reopened.judge("Q2", "Paris", "Paris")
    assert len(fake.requests) == 3  # ... and the question


def test_openai_judge_without_cache_always_asks(fake, tmp_path):
    judge = make_judge(fake, tmp_path, use_cache=False)
    judge.judge("Q", "Paris", "Paris")
    judge.judge("Q", "Paris", "Paris")
    assert len(fake.requests) == 2
    assert not (tmp_path / "judge.sqlite").exists()


def test_openai_judge_garbage_reply_is_unscored_and_not_cached(fake, tmp_path):
    judge = make_judge(fake, tmp_path)
    verdict = judge.judge("Q", "Paris", "GARBAGE Paris")
    assert (verdict.correct, verdict.error) == (None, "unparseable reply")
    assert verdict.raw == "Well, it depends on how you look at it."
    judge.judge("Q", "Paris", "GARBAGE Paris")
    assert len(fake.requests) == 2  # failures are retried on the next run, not cached
    assert judge.stats.failures == 2


def test_openai_judge_http_500_is_unscored(fake, tmp_path):
    verdict = make_judge(fake, tmp_path).judge("Q", "Paris", "FAIL500")
    assert verdict.correct is None
    assert verdict.error is not None
    assert "500" in verdict.error
    assert len(fake.requests) == 1


def test_openai_judge_retries_server_errors(fake, tmp_path):
    judge = make_judge(fake, tmp_path, max_retries=2)
    verdict = judge.judge("Q", "Paris", "FLAKY Paris")
    assert verdict.correct is True
    assert len(fake.requests) == 2


def test_openai_judge_timeout_is_unscored(fake, tmp_path):
    judge = make_judge(fake, tmp_path, timeout=0.5)
    started = time.monotonic()
    verdict = judge.judge("Q", "Paris", "SLOW Paris")
    assert time.monotonic() - started < 1.9
    assert verdict.correct is None
    assert verdict.error is not None
    assert "Timeout" in verdict.error


def test_openai_judge_connection_refused_is_unscored(tmp_path):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    judge = OpenAIJudge(f"http://127.0.0.1:{port}/v1", "m", cache_dir=tmp_path, max_retries=0)
    verdict = judge.judge("Q", "a", "b")
    assert verdict.correct is None
    assert verdict.error is not None
    assert "Connection" in verdict.error


def test_openai_judge_many_is_concurrent_bounded_and_ordered(fake, tmp_path):
    judge = make_judge(fake, tmp_path, max_workers=3)
    requests = [("Q", "Paris", f"CONC {i} {'Paris' if i % 2 else 'Rome'}") for i in range(8)]
    requests += [requests[0], requests[1]]  # duplicates are asked once
    verdicts = judge.judge_many(requests)
    assert [v.correct for v in verdicts] == [i % 2 == 1 for i in range(8)] + [False, True]
    assert len(fake.requests) == 8
    # Concurrency is proven by the server seeing several requests at once (not by timing,
    # which a loaded machine would make flaky); the bound by never more than max_workers.
    assert 2 <= fake.max_in_flight <= 3


def test_score_answers_with_openai_judge_end_to_end(fake, tmp_path):
    judge = make_judge(fake, tmp_path)
    items = [
        BenchmarkItem(id="0", source="x", question="City?", answer="Paris", reference_steps=[]),
        BenchmarkItem(id="1", source="x", question="City?", answer="Rome", reference_steps=[]),
        BenchmarkItem(id="2", source="x", question="Count?", answer="3", reference_steps=[]),
        BenchmarkItem(id="3", source="x", question="City?", answer="Oslo", reference_steps=[]),
    ]
    answers = ["the city of Paris", "Milan", "3", "FAIL500"]
    verdicts = score_answers(answers, items, judge=judge)
    assert [(v.correct, v.rule) for v in verdicts] == [
        (True, "judge"),
        (False, "judge"),
        (True, "numeric"),
        (None, "judge_failed"),
    ]
    assert len(fake.requests) == 3  # the numeric item never reaches the judge
    single = score_answer("the city of Paris", items[0], judge=judge)
    assert (single.correct, single.rule) == (True, "judge")
    assert len(fake.requests) == 3  # served from the cache


def test_crystal_score_with_judge_flags_end_to_end(fake, tmp_path, monkeypatch):
    """`crystal score --judge-url/--judge-model` judges free-form mismatches over HTTP."""
    from typer.testing import CliRunner

    from crystalbench.cli.main import app

    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(tmp_path / "cache"))
    bench = tmp_path / "bench.jsonl"
    items = [
        {
            "id": "a",
            "source": "realworldqa",
            "question": "What is on the sign?",
            "answer": "stop",
            "reference_steps": ["The sign is red."],
        },
        {
            "id": "b",
            "source": "realworldqa",
            "question": "What animal is shown?",
            "answer": "dog",
            "reference_steps": ["A dog sits on the grass."],
        },
        {
            "id": "c",
            "source": "realworldqa",
            "question": "What colour is the car?",
            "answer": "red",
            "reference_steps": ["The car is red."],
        },
    ]
    bench.write_text("".join(json.dumps(i) + "\n" for i in items))
    preds = tmp_path / "p.jsonl"
    rows = [
        {"id": "a", "reasoning_steps": ["The sign is red."], "answer": "it says stop"},
        {"id": "b", "reasoning_steps": ["A dog sits."], "answer": "FAIL500 dog"},
        {"id": "c", "reasoning_steps": ["The car is red."], "answer": "Red"},
    ]
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "score",
            "-b",
            str(bench),
            "-p",
            str(preds),
            "-o",
            str(out),
            "--encoder",
            "hash",
            "--judge-url",
            fake.url,
            "--judge-model",
            "judge-model",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    examples = [json.loads(line) for line in (out / "examples.jsonl").read_text().splitlines()]
    assert [(e["answer_correct"], e["answer_rule"]) for e in examples] == [
        (True, "judge"),
        (None, "judge_failed"),
        (True, "exact"),
    ]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_judge_unscored"] == 1
    assert summary["config"]["judge"]["model"] == "judge-model"
    assert summary["config"]["judge"]["prompt_hash"] == load_prompt().sha256
    asked = [r["body"]["messages"][-1]["content"] for r in fake.requests]
    assert not any("Red" in content for content in asked)  # exact matches skip the judge


def test_the_key_a_judge_sends_comes_from_the_named_variable(fake, tmp_path, monkeypatch):
    """Over a real request: the default variable unset sends EMPTY (local servers), a named
    variable sends its value (crystalbench._internal.openai_client's one rule)."""
    from types import SimpleNamespace

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CB_JUDGE_KEY", "sk-from-variable")
    for variable, sent in (
        ("OPENAI_API_KEY", "Bearer EMPTY"),
        ("CB_JUDGE_KEY", "Bearer sk-from-variable"),
    ):
        fake.reset()
        config = SimpleNamespace(url=fake.url, model="judge-model", api_key_env=variable)
        judge = OpenAIJudge.from_config(config, cache_dir=tmp_path / variable)
        assert judge.judge("Which city?", "Paris", "Paris").correct is True
        judge.close()
        assert [r["authorization"] for r in fake.requests] == [sent]
