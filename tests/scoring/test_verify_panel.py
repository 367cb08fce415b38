"""Several verifier judges at once (``verifier.judges``, ``--verifier-model`` repeated): the
majority verdict per step, ties, each judge's votes, and the agreement between them, against
a scripted loopback server whose answers differ by model; the figures are worked out by hand
below."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from crystalbench.config.judging import VerifierConfig
from crystalbench.config.scoring import ScoreConfig
from crystalbench.data.loading import Benchmark
from crystalbench.judges.panel import PanelVerifier, majority_verdict
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import BenchmarkItem, Prediction, StepVerdict

pytest.importorskip("openai")
pytest.importorskip("uvicorn")
pytest.importorskip("krippendorff")
from servers.openai_server import LoopbackServer, ServerState

MATCHED = "The chart has three bars."
GREEN = "The sky in the picture is green."
FILLER = "I hope this helps!"
SUPPORTED = "Bar A is shorter than bar B."
SUM = "Adding 2 and 3 gives 6."


def label(name: str, p: float) -> str:
    return json.dumps({"label": name, "p_correct": p, "reason": f"{name} {p}"})


def at(step: str) -> str:
    return f"Step to check:\n{step}"


# Judge c has no answer for SUM: the server's default reply has no label (a failed verdict).
ANSWERS = {
    "a": {at(GREEN): label("wrong_perception", 0.2), at(SUPPORTED): label("supported", 0.9),
          at(SUM): label("wrong_logic", 0.1)},
    "b": {at(GREEN): label("wrong_perception", 0.3), at(SUPPORTED): label("supported", 0.8),
          at(SUM): label("supported", 0.7)},
    "c": {at(GREEN): label("supported", 0.9), at(SUPPORTED): label("supported", 0.7)},
}  # fmt: skip


def bench() -> Benchmark:
    return Benchmark(
        name="panel",
        items=[
            BenchmarkItem(id="q1", source="plotqa", question="Which bar is tallest?",
                          answer="C", reference_steps=[MATCHED, "The tallest bar is C."]),
            BenchmarkItem(id="q2", source="mmvp", question="What is 2 + 3?", answer="5",
                          reference_steps=["Two plus three makes five."]),
        ],
    )  # fmt: skip


PREDICTIONS = [
    Prediction(id="q1", reasoning_steps=[MATCHED, GREEN, FILLER, SUPPORTED], answer="C"),
    Prediction(id="q2", reasoning_steps=[SUM], answer="6"),
]


def config(server: LoopbackServer, tmp_path: Path, models: object) -> ScoreConfig:
    return ScoreConfig(
        encoder="hash",
        cache_dir=str(tmp_path / "cache"),
        verify="unmatched",
        verifier=VerifierConfig(
            url=server.base_url, model=models, probability="json", max_retries=0, timeout=5.0
        ),
    )


@pytest.fixture
def server():
    with LoopbackServer(ServerState()) as running:
        running.state.configure({"model_answers": ANSWERS})
        yield running


def test_three_judges_majority_votes_and_agreement(server, tmp_path):
    run = evaluate(bench(), PREDICTIONS, config(server, tmp_path, ["a", "b", "c"]))
    first, second = run.items
    by_pred = {v.pred: v for v in first.verdicts}
    green = by_pred[1]
    assert green.label == "wrong_perception"  # a, b against c
    assert green.votes == {
        "model:a": "wrong_perception",
        "model:b": "wrong_perception",
        "model:c": "supported",
    }
    assert green.p_correct == pytest.approx((0.2 + 0.3 + 0.9) / 3)
    assert green.judge == "panel:a+b+c"
    assert by_pred[2].judge == "rule:filler"  # the cascade still goes first
    assert by_pred[2].votes is None
    assert by_pred[3].label == "supported"
    (total,) = second.verdicts
    # a wrong_logic, b supported, c failed: a tie, the less favourable label wins.
    assert total.label == "wrong_logic"
    assert total.votes == {"model:a": "wrong_logic", "model:b": "supported", "model:c": None}
    assert total.p_correct == pytest.approx((0.1 + 0.7) / 2)

    summary = run.summary.verification
    # 5 steps, 1 matched, 1 supported by the majority: 2 / 5; one wrong_perception: 1 / 5.
    assert summary.verified_precision == pytest.approx(2 / 5)
    assert summary.hallucination_rate == pytest.approx(1 / 5)
    assert summary.n_unverified == 0  # a step is unverified only when every judge failed
    assert summary.requests == 9  # 3 steps x 3 judges, JSON only
    assert summary.judge["kind"] == "panel"
    assert [j["model"] for j in summary.judge["judges"]] == ["a", "b", "c"]
    agreement = summary.agreement
    assert agreement is not None
    assert agreement.judges == ["model:a", "model:b", "model:c"]
    # Units: GREEN (wp, wp, s), SUPPORTED (s, s, s), SUM (wl, s): 3, one of them unanimous...
    assert agreement.n_units == 3
    assert agreement.percent_agreement == pytest.approx(1 / 3)
    assert agreement.n_ties == 1
    # ...nominal alpha by hand: coincidences o(wp,wp) 1, o(wp,s) = o(s,wp) 1, o(s,s) 3,
    # o(wl,s) = o(s,wl) 1; n_wp 2, n_s 5, n_wl 1, n 8. D_o = 4 / 8, D_e = (2*5 + 2*1 + 5*1)
    # * 2 / (8 * 7) = 34 / 56: alpha = 1 - (1/2) / (34/56) = 3 / 17.
    assert agreement.krippendorff_alpha == pytest.approx(3 / 17)
    # Supported against the rest: n_not 3, n_s 5; D_e = 2 * 3 * 5 / 56: alpha = 1 / 15.
    assert agreement.krippendorff_alpha_supported == pytest.approx(1 / 15)
    a, b, c = (agreement.by_judge[f"model:{n}"] for n in "abc")
    assert a.verified_precision == pytest.approx(2 / 5)
    assert b.verified_precision == pytest.approx(3 / 5)  # b also supports SUM
    assert c.verified_precision == pytest.approx(3 / 4)  # c's failed SUM is out of its count
    assert c.n_unverified == 1
    assert c.hallucination_rate == pytest.approx(0.0)
    assert a.agreement_with_majority == pytest.approx(1.0)
    assert b.agreement_with_majority == pytest.approx(2 / 3)
    assert c.agreement_with_majority == pytest.approx(1 / 2)
    dumped = run.summary.model_dump(mode="json")
    assert dumped["verification"]["agreement"]["krippendorff_alpha"] == pytest.approx(3 / 17)
    record = json.loads(second.model_dump_json())
    assert record["verdicts"][0]["votes"]["model:c"] is None


def test_a_second_panel_run_is_served_by_the_cache(server, tmp_path):
    evaluate(bench(), PREDICTIONS, config(server, tmp_path, ["a", "b", "c"]))
    sent = len(server.state.log)
    assert sorted({entry["model"] for entry in server.state.log}) == ["a", "b", "c"]
    again = evaluate(bench(), PREDICTIONS, config(server, tmp_path, ["a", "b", "c"]))
    # Judge c's reply on SUM arrived (it has no label): cached like the rest, nothing sent.
    assert len(server.state.log) == sent
    assert again.summary.verification.cache_hits == 9
    assert again.summary.verification.agreement.krippendorff_alpha == pytest.approx(3 / 17)


def test_one_judge_has_no_votes_and_no_agreement(server, tmp_path):
    run = evaluate(bench(), PREDICTIONS, config(server, tmp_path, ["a"]))
    assert run.summary.verification.agreement is None
    assert all(v.votes is None for item in run.items for v in item.verdicts)
    assert "votes" not in json.loads(run.items[0].model_dump_json())["verdicts"][0]


def test_judges_in_the_config_with_their_own_urls(server, tmp_path):
    with LoopbackServer(ServerState()) as other:
        other.state.configure({"model_answers": ANSWERS})
        verifier = VerifierConfig(
            url=server.base_url,
            judges=[{"model": "a"}, {"model": "b", "url": other.base_url}],
            probability="json",
        )
        scoring = ScoreConfig(
            encoder="hash", use_cache=False, verify="unmatched", verifier=verifier
        )
        run = evaluate(bench(), PREDICTIONS, scoring)
        assert {e["model"] for e in server.state.log} == {"a"}
        assert {e["model"] for e in other.state.log} == {"b"}
    assert run.summary.verification.agreement.judges == ["model:a", "model:b"]


def test_model_and_judges_together_are_refused():
    with pytest.raises(ValidationError, match="not both"):
        VerifierConfig(url="http://h/v1", model="x", judges=[{"model": "a"}])
    with pytest.raises(ValidationError, match="distinct"):
        VerifierConfig(url="http://h/v1", model=["a", "a"])
    with pytest.raises(ValidationError, match="needs a model"):
        VerifierConfig(url="http://h/v1")


def test_majority_ties_go_to_the_less_favourable_label():
    def v(name: str | None) -> StepVerdict:
        return StepVerdict(pred=0, label=name, p_correct=None, judge="x", error="e")

    assert majority_verdict([v("supported"), v("irrelevant")], ["a", "b"]).label == "irrelevant"
    assert majority_verdict([v("wrong_logic"), v("wrong_perception")], ["a", "b"]).label == (
        "wrong_perception"
    )
    failed = majority_verdict([v(None), v(None)], ["a", "b"])
    assert failed.label is None
    assert "every judge failed" in failed.error
    with pytest.raises(ValueError):
        PanelVerifier([], [])
