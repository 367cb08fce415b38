"""The step verifier (``--verify``) against a scripted OpenAI-compatible server on loopback,
through the official ``openai`` client: labels, logprob probabilities, JSON-schema replies,
the cascade's saved calls, failures counted unverified, the reply cache proven by a second
run that sends no request, and ``--verify none`` leaving every number as it was."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest

from crystalbench.config.judging import Price, VerifierConfig
from crystalbench.config.scoring import ScoreConfig
from crystalbench.data.loading import Benchmark
from crystalbench.errors import InputError
from crystalbench.judges.verifier import OpenAIVerifier, StepCheck
from crystalbench.scoring.engine import ScoringEngine
from crystalbench.scoring.evaluation import evaluate
from crystalbench.scoring.verify import is_filler
from crystalbench.types import BenchmarkItem, Prediction

pytest.importorskip("openai")
pytest.importorskip("uvicorn")
from servers.openai_server import LoopbackServer, ServerState

REF = ["The chart has three bars.", "The tallest bar is C."]
MATCHED = "The chart has three bars."
GREEN = "The sky in the picture is green."
FILLER = "I hope this helps!"
SUM = "Adding 2 and 3 gives 6."
SUPPORTED = "Bar A is shorter than bar B."


def label(name: str, p: float = 0.5, reason: str = "scripted") -> str:
    return json.dumps({"label": name, "p_correct": p, "reason": reason})


def png(path: Path) -> str:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), (200, 10, 10)).save(buffer, format="PNG")
    path.write_bytes(buffer.getvalue())
    return str(path)


def bench(tmp_path: Path) -> Benchmark:
    image = png(tmp_path / "chart.png")
    items = [
        BenchmarkItem(
            id="q1",
            source="plotqa",
            question="Which bar is tallest?",
            options=["A", "B", "C"],
            answer="C",
            reference_steps=REF,
            image=image,
        ),
        BenchmarkItem(
            id="q2",
            source="mmvp",
            question="What is 2 + 3?",
            answer="5",
            reference_steps=["Two plus three makes five."],
            image=image,
        ),
    ]
    return Benchmark(name="verify-test", items=items)


def predictions() -> list[Prediction]:
    return [
        Prediction(id="q1", reasoning_steps=[MATCHED, GREEN, FILLER, SUPPORTED], answer="C"),
        Prediction(id="q2", reasoning_steps=[SUM], answer="6"),
    ]


def at(step: str) -> str:
    """The server's key for a step: the step as the one to check (earlier steps also
    appear in later prompts)."""
    return f"Step to check:\n{step}"


def script(**extra: object) -> dict[str, object]:
    return {
        "answers": {
            at(GREEN): label("wrong_perception", 0.3, "the sky is not shown"),
            at(SUM): label("wrong_logic", 0.1, "2 + 3 is 5"),
            at(SUPPORTED): label("supported", 0.8, "A is shorter"),
        },
        "logprobs": {
            at(GREEN): {"no": math.log(0.9), "yes": math.log(0.1)},
            at(SUM): {"no": math.log(0.75), "yes": math.log(0.25)},
            at(SUPPORTED): {"yes": math.log(0.6), "no": math.log(0.2)},
        },
        "fingerprint": "fp-test-1",
        "served_model": "org/vlm-7b",
        **extra,
    }


def verify_config(server: LoopbackServer, tmp_path: Path, **verifier: object) -> ScoreConfig:
    options = {"url": server.base_url, "model": "vlm", "max_retries": 0, "timeout": 5.0}
    options.update(verifier)
    return ScoreConfig(
        encoder="hash",
        cache_dir=str(tmp_path / "cache"),
        verify="unmatched",
        verifier=VerifierConfig(**options),
    )


def run(config: ScoreConfig, tmp_path: Path, lines: list[str] | None = None):
    engine = ScoringEngine(config)
    if engine.verification is not None and lines is not None:
        engine.verification.announce = lines.append
    from crystalbench.scoring.sets import ScoredSet

    benchmark = bench(tmp_path)
    from crystalbench.scoring.sets import as_prediction_set

    scored = ScoredSet.checked("", benchmark, as_prediction_set(predictions()))
    (result,) = engine.run(benchmark, [scored])
    return result


@pytest.fixture
def server():
    with LoopbackServer(ServerState()) as running:
        running.state.configure(script())
        yield running


def test_unmatched_steps_get_verdicts_and_the_summary_counts_them(server, tmp_path):
    lines: list[str] = []
    result = run(verify_config(server, tmp_path), tmp_path, lines)
    first, second = result.items
    assert [m[0] for m in first.matches] == [0]
    by_pred = {v.pred: v for v in first.verdicts}
    assert sorted(by_pred) == [1, 2, 3]  # the matched step 0 is not asked
    assert by_pred[1].label == "wrong_perception"
    assert by_pred[1].p_correct == pytest.approx(0.1)  # 0.1 / (0.1 + 0.9), from logprobs
    assert by_pred[1].judge == "model:vlm"
    assert by_pred[2].label == "irrelevant"
    assert by_pred[2].judge == "rule:filler"
    assert by_pred[3].label == "supported"
    assert by_pred[3].p_correct == pytest.approx(0.75)  # 0.6 / (0.6 + 0.2)
    assert [v.label for v in second.verdicts] == ["wrong_logic"]
    assert second.verdicts[0].p_correct == pytest.approx(0.25)

    summary = result.summary.verification
    assert summary is not None
    # 5 predicted steps, 1 matched, 1 supported: 2 / 5; one wrong_perception: 1 / 5.
    assert (summary.n_steps, summary.n_matched, summary.n_checked) == (5, 1, 4)
    assert summary.verified_precision == pytest.approx(2 / 5)
    assert summary.hallucination_rate == pytest.approx(1 / 5)
    assert summary.labels == {
        "supported": 1,
        "wrong_perception": 1,
        "wrong_logic": 1,
        "irrelevant": 1,
    }
    assert summary.label_shares["supported"] == pytest.approx(0.25)
    assert summary.n_rule_labelled == 1  # the filler: one step, two requests saved
    assert summary.n_model_verdicts == 3
    assert summary.n_unverified == 0
    assert summary.requests == 6  # 3 steps x (JSON label + yes/no token)
    assert summary.cache_hits == 0
    assert summary.prompt_tokens > 0
    assert summary.completion_tokens > 0
    assert summary.judge["served_models"] == ["org/vlm-7b"]
    assert summary.judge["system_fingerprints"] == ["fp-test-1"]
    assert summary.judge["logprobs_used"] is True
    assert summary.by_source["plotqa"].verified_precision == pytest.approx(2 / 4)
    assert summary.by_source["mmvp"].verified_precision == pytest.approx(0.0)
    # The requests: a JSON schema for the label, one guided yes/no token with logprobs.
    log = server.state.log
    kinds = [(e["response_format"] or "", e["logprobs"]) for e in log]
    assert sorted(kinds) == [("", True)] * 3 + [("json_schema", False)] * 3
    assert all(e["image"] == [8, 6] for e in log)  # the item's image was sent
    assert {tuple(e["guided_choice"] or ()) for e in log if e["logprobs"]} == {("yes", "no")}
    assert lines
    assert "at most 5 steps" in lines[0]
    # The record and the summary as written.
    record = json.loads(first.model_dump_json())
    assert {"pred", "label", "p_correct", "reason", "judge"} <= set(record["verdicts"][0])
    assert "verification" in result.summary.model_dump(mode="json")


def test_a_second_run_sends_no_request(server, tmp_path):
    first = run(verify_config(server, tmp_path), tmp_path)
    sent = len(server.state.log)
    again = run(verify_config(server, tmp_path), tmp_path)
    assert len(server.state.log) == sent == 6
    summary = again.summary.verification
    assert summary.requests == 0
    assert summary.cache_hits == 6
    assert [r.verdicts for r in again.items] == [r.verdicts for r in first.items]
    assert summary.judge["served_models"] == ["org/vlm-7b"]  # kept with the cached reply


def test_failed_calls_are_unverified_and_out_of_the_denominators(server, tmp_path):
    server.state.configure(script(faults={at(SUM): [{"status": 500}], at(GREEN): [{"sleep": 3.0}]}))
    result = run(verify_config(server, tmp_path, timeout=1.0), tmp_path)
    summary = result.summary.verification
    assert summary.n_unverified == 2  # the 500 and the slow reply
    assert summary.first_error
    failed = [v for item in result.items for v in item.verdicts if v.label is None]
    assert {v.pred for v in failed} == {0, 1}
    assert all(v.error for v in failed)
    # 5 steps - 2 unverified = 3 counted: matched + supported = 2.
    assert summary.verified_precision == pytest.approx(2 / 3)
    assert summary.hallucination_rate == pytest.approx(0.0)
    # Failures are not cached: the next run asks again.
    server.state.configure(script())
    again = run(verify_config(server, tmp_path), tmp_path).summary.verification
    assert again.n_unverified == 0
    # The two failed label requests are sent again; the rest (their yes/no tokens included,
    # which arrived) come from the cache.
    assert again.requests == 2
    assert again.cache_hits == 4


def test_without_logprobs_the_json_probability_is_used(server, tmp_path):
    server.state.configure(script(logprobs={}))
    result = run(verify_config(server, tmp_path), tmp_path)
    verdicts = {v.pred: v for v in result.items[0].verdicts}
    assert verdicts[1].p_correct == pytest.approx(0.3)
    assert verdicts[3].p_correct == pytest.approx(0.8)
    summary = result.summary.verification
    assert summary.judge["logprobs_used"] is False
    # One probe for logprobs, then only the JSON requests.
    assert summary.requests == 3 + 1


def test_a_model_that_thinks_first_is_refused_logprob_scoring(server, tmp_path):
    thinking = {at(GREEN): {"<think>": -0.01, "yes": -6.0}, at(SUPPORTED): {"<think>": -0.01}}
    server.state.configure(script(logprobs=thinking))
    strict = run(verify_config(server, tmp_path, probability="logprobs"), tmp_path)
    verdicts = {v.pred: v for v in strict.items[0].verdicts}
    assert verdicts[1].label is None
    assert "logprob scoring refused" in verdicts[1].error
    with pytest.raises(InputError, match="reasoning model"):
        OpenAIVerifier(
            VerifierConfig(url=server.base_url, model="r1", reasoning=True, probability="logprobs")
        )


def test_think_blocks_are_stripped_and_unclosed_ones_counted(server, tmp_path):
    answers = dict(script()["answers"])
    answers[at(GREEN)] = "<think>No sky... wait, no sky.</think>" + label("wrong_perception")
    answers[at(SUPPORTED)] = "<think>Bar A looks"
    server.state.configure(script(answers=answers, logprobs={}))
    result = run(verify_config(server, tmp_path, reasoning=True), tmp_path)
    verdicts = {v.pred: v for v in result.items[0].verdicts}
    assert verdicts[1].label == "wrong_perception"
    assert verdicts[3].label is None
    assert "unclosed" in verdicts[3].error
    summary = result.summary.verification
    assert summary.unclosed_think == 1
    assert not any(e["logprobs"] for e in server.state.log)  # a reasoning model: JSON only


def test_dry_run_sends_nothing_and_prints_the_requests(server, tmp_path):
    lines: list[str] = []
    config = verify_config(
        server,
        tmp_path,
        dry_run=True,
        prices={"vlm": Price(input_per_million=1.0, output_per_million=2.0)},
    )
    result = run(config, tmp_path, lines)
    assert server.state.log == []
    summary = result.summary.verification
    assert summary.dry_run
    assert summary.requests == 0
    assert summary.n_unverified == 3
    assert "estimated cost" in lines[0]
    assert sum("dry run: POST" in line for line in lines) == 6
    assert lines[-1] == "dry run: 6 requests not sent"


def test_reference_chain_only_when_configured(server, tmp_path):
    verifier = OpenAIVerifier(VerifierConfig(url=server.base_url, model="vlm"), use_cache=False)
    check = StepCheck("Q?", GREEN, (MATCHED,), reference=None)
    label_request, _ = verifier.requests(check)
    assert "Reference" not in label_request.text()
    label_request, _ = verifier.requests(check._replace(reference=tuple(REF)))
    assert "The tallest bar is C." in label_request.text()
    assert "C" not in check.question  # the gold answer is never part of a check


def test_guard_vetoed_steps_are_labelled_without_a_call(server, tmp_path):
    benchmark = Benchmark(
        name="guard",
        items=[
            BenchmarkItem(
                id="g", source="plotqa", question="How tall is the bar?", answer="50",
                reference_steps=["The bar is 50 units tall."],
            )
        ],
    )  # fmt: skip
    config = verify_config(server, tmp_path).model_copy(update={"guard": "facts"})
    run_ = evaluate(
        benchmark,
        [Prediction(id="g", reasoning_steps=["The bar is 40 units tall."], answer="40")],
        config,
    )
    (item,) = run_.items
    assert item.vetoed
    assert item.matches == []
    (verdict,) = item.verdicts
    assert verdict.judge == "rule:guard-number"
    assert verdict.label == "wrong_logic"
    assert run_.summary.verification.n_rule_labelled == 1
    assert server.state.log == []


def test_verify_none_gives_todays_records(tmp_path):
    plain = ScoreConfig(encoder="hash", use_cache=False)
    explicit = ScoreConfig(encoder="hash", use_cache=False, verify="none")
    benchmark = bench(tmp_path)
    one = evaluate(benchmark, predictions(), plain)
    two = evaluate(benchmark, predictions(), explicit)
    assert [r.model_dump_json() for r in one.items] == [r.model_dump_json() for r in two.items]
    assert "verdicts" not in json.loads(one.items[0].model_dump_json())
    dumped = two.summary.model_dump(mode="json")
    assert "verification" not in dumped
    assert "verify" not in dumped["config"]
    assert "verifier" not in dumped["config"]


def test_verify_needs_a_verifier():
    with pytest.raises(ValueError, match="needs a verifier"):
        ScoreConfig(verify="unmatched")
    with pytest.raises(ValueError, match="unknown verify mode"):
        ScoreConfig(verify="some")


def test_filler_rules():
    assert is_filler("Let me know if you have any other questions.")
    assert is_filler("Let's solve this step by step.")
    assert not is_filler("Let A be the apex of the triangle.")
