"""The judge matcher against a scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import hashlib
import json
from importlib import resources

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.config.scoring import JudgeConfig, ScoreConfig
from crystalbench.errors import InputError
from crystalbench.judges.step_judge import (
    OpenAIStepJudge,
    judge_pair_decisions,
    load_step_prompt,
    parse_step_reply,
)
from crystalbench.report import load_run
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import Prediction
from crystalbench.validation.pairs import sample_pairs
from fakes import make_benchmark, make_item, write_jsonl
from servers.openai_server import LoopbackServer, ServerState

runner = CliRunner()

REFS = {
    "i1": ["The tallest bar is labelled 2019.", "Its value is 45 units.", "So the answer is 45."],
    "i2": ["The circle has radius 3 cm.", "The area is pi times 9."],
}
PREDS = {
    "i1": ["The year 2019 has the highest bar.", "That bar reads 45.", "The answer is 45."],
    "i2": ["The area is pi times 9.", "A radius of 3 cm is marked."],
}
VERDICTS = {
    # reference step -> the predicted step numbers (1-based) the scripted judge names
    "The tallest bar is labelled 2019.": [1],
    "Its value is 45 units.": [2],
    "So the answer is 45.": [2, 3],  # two candidates: one-to-one keeps one of them
    "The circle has radius 3 cm.": [2],
    "The area is pi times 9.": [],
}


def key(reference: str) -> str:
    return f"Reference step:\n{reference}\n"


def server_state(verdicts=VERDICTS, faults=None) -> ServerState:
    state = ServerState()
    state.configure(
        {
            "answers": {
                key(ref): json.dumps({"matches": numbers, "reason": "scripted"})
                for ref, numbers in verdicts.items()
            },
            "faults": faults or {},
        }
    )
    return state


def world():
    bench = make_benchmark(
        [make_item(item_id, steps, answer="45") for item_id, steps in REFS.items()]
    )
    preds = [Prediction(id=i, reasoning_steps=steps, answer="45") for i, steps in PREDS.items()]
    return bench, preds


def judge_config(server: LoopbackServer, **extra) -> ScoreConfig:
    return ScoreConfig(
        encoder="hash",
        use_cache=False,
        matcher="judge",
        matcher_judge=JudgeConfig(url=server.base_url, model="judge-model", concurrency=4),
        **extra,
    )


def test_the_judge_decides_the_candidates_and_matching_stays_one_to_one(cache_dir):
    bench, preds = world()
    with LoopbackServer(server_state()) as server:
        run = evaluate(bench, preds, judge_config(server))
        requests = len(server.state.log)
    first, second = run.items
    pairs = {(i, j) for i, j, _ in first.matches}
    # ref 2 ("So the answer is 45.") named preds 2 and 3; pred 2 also matched ref 1 ...
    assert {(0, 0), (1, 1)} <= pairs
    assert len(pairs) == 3
    assert (2, 2) in pairs  # ... so the one-to-one walk gives ref 2 the free pred 3
    assert first.f1 == 1.0
    assert {(i, j) for i, j, _ in second.matches} == {(1, 0)}  # "area" named nothing
    assert second.recall == 0.5
    assert requests == 5  # one request per reference step
    identity = run.summary.config["matcher_identity"]
    prompt = resources.files("crystalbench").joinpath("prompts/step_match_v1.txt").read_bytes()
    assert identity["prompt_hash"] == hashlib.sha256(prompt).hexdigest()
    assert (identity["model"], identity["base_url"]) == ("judge-model", server.base_url)
    assert identity["kind"] == "openai-step-match"
    assert identity["failed_reference_steps"] == 0
    assert run.summary.config["matcher"] == "judge"


def test_ties_in_the_judges_pairs_go_by_cosine_as_the_paper_matches(cache_dir):
    """Pred 1 is named for two reference steps: the pair with the higher cosine wins."""
    bench = make_benchmark([make_item("t", ["Bar A is 45.", "Bar A is tall."], answer="1")])
    preds = [Prediction(id="t", reasoning_steps=["Bar A is 45 units."], answer="1")]
    verdicts = {"Bar A is 45.": [1], "Bar A is tall.": [1]}
    with LoopbackServer(server_state(verdicts)) as server:
        run = evaluate(bench, preds, judge_config(server))
    cosine = evaluate(bench, preds, ScoreConfig(encoder="hash", use_cache=False, threshold=-1.0))
    assert [(i, j) for i, j, _ in run.items[0].matches] == [
        (i, j) for i, j, _ in cosine.items[0].matches
    ]
    assert len(run.items[0].matches) == 1


def test_verdicts_are_cached_on_disk(cache_dir):
    bench, preds = world()
    with LoopbackServer(server_state()) as server:
        config = judge_config(server).model_copy(update={"use_cache": True})
        first = evaluate(bench, preds, config)
        asked = len(server.state.log)
        again = evaluate(bench, preds, config)
        assert len(server.state.log) == asked  # nothing asked twice
    assert again.summary.config["matcher_identity"]["cache_hits"] == 5
    assert [i.matches for i in again.items] == [i.matches for i in first.items]
    assert (cache_dir / "step_judge.sqlite").is_file()


def test_a_failed_request_leaves_the_step_without_candidate_and_is_counted(cache_dir):
    bench, preds = world()
    faults = {key("Its value is 45 units."): [{"status": 500}] * 10}
    with LoopbackServer(server_state(faults=faults)) as server:
        config = judge_config(server).model_copy(update={"use_cache": True})
        run = evaluate(bench, preds, config)
        identity = run.summary.config["matcher_identity"]
        assert identity["failed_reference_steps"] == 1
        assert "InternalServerError" in identity["first_error"]
        assert (1, 1) not in {(i, j) for i, j, _ in run.items[0].matches}
        server.state.faults.clear()
        retried = evaluate(bench, preds, config)  # failures are not cached: asked again
    assert retried.summary.config["matcher_identity"]["failed_reference_steps"] == 0
    assert (1, 1) in {(i, j) for i, j, _ in retried.items[0].matches}


def test_crystal_score_matcher_judge_and_agreement_with_the_judge(tmp_path, cache_dir):
    bench, preds = world()
    bench_file = write_jsonl(tmp_path / "bench.jsonl", [i.model_dump() for i in bench.items])
    preds_file = write_jsonl(
        tmp_path / "preds.jsonl", [p.model_dump(exclude_none=True) for p in preds]
    )
    with LoopbackServer(server_state()) as server:
        result = runner.invoke(
            app,
            [
                "score",
                "-b",
                str(bench_file),
                "-p",
                str(preds_file),
                "--encoder",
                "hash",
                "-o",
                str(tmp_path / "judged"),
                "--matcher",
                "judge",
                "--matcher-url",
                server.base_url,
                "--matcher-model",
                "judge-model",
                "--no-progress",
            ],
        )
        assert result.exit_code == 0, result.output
        assert "judge matcher judge-model" in result.output
        assert "5 requests" in result.output
        asked = len(server.state.log)
        result = runner.invoke(
            app,
            [
                "score",
                "-b",
                str(bench_file),
                "-p",
                str(preds_file),
                "--encoder",
                "hash",
                "-o",
                str(tmp_path / "cosine"),
                "--no-progress",
            ],
        )
        assert result.exit_code == 0, result.output
        run = load_run(tmp_path / "cosine")
        assert run.config["matcher"] == "cosine"
        assert "matcher_identity" not in run.config
        # pairs from the cosine run, judged with the same requests: all from the cache
        sample = sample_pairs([run], per_band=10)
        judge = OpenAIStepJudge(server.base_url, "judge-model")
        decisions = judge_pair_decisions(sample.pairs, judge)
        judge.close()
        assert len(server.state.log) == asked
    for pair in sample.pairs:
        named = [n - 1 for n in VERDICTS[pair.ref_step]]
        assert decisions[pair.pair_id] == (pair.pred_index in named)
    # the same judge in `crystal validate agreement`, against labels that agree with it
    pairs_file = tmp_path / "pairs" / "pairs.jsonl"
    drawn = runner.invoke(
        app,
        ["validate", "sample-pairs", str(tmp_path / "cosine"), "-o", str(pairs_file),
         "--per-band", "10", "--seed", "3"],
    )  # fmt: skip
    assert drawn.exit_code == 0, drawn.output
    labels = [
        {"pair_id": pair.pair_id, "annotator": who, "label": "match" if said else "no_match"}
        for pair_id, said in decisions.items()
        for pair in sample.pairs
        if pair.pair_id == pair_id
        for who in ("a", "b")
    ]
    labels_file = write_jsonl(tmp_path / "labels.jsonl", labels)
    with LoopbackServer(server_state()) as server:
        result = runner.invoke(
            app,
            ["validate", "agreement", "--pairs", str(pairs_file), "--labels", str(labels_file),
             "-o", str(tmp_path / "agreement"), "--resamples", "0",
             "--matcher-url", server.base_url, "--matcher-model", "judge-model"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert server.state.log  # the judge was asked (another URL: another cache key)
    said = " ".join(result.output.split())
    assert f"judge:judge-model: {len(labels) // 2} pairs, agreement 100.0%" in said
    half = runner.invoke(
        app,
        ["validate", "agreement", "--pairs", str(pairs_file), "--labels", str(labels_file),
         "-o", str(tmp_path / "agreement"), "--matcher-url", "http://127.0.0.1:9/v1"],
    )  # fmt: skip
    assert half.exit_code == 2
    assert "field matcher_judge.model: required with matcher_judge.url (from --matcher-url" in (
        " ".join(half.output.split())
    )


def test_matcher_judge_needs_an_endpoint():
    with pytest.raises(ValueError, match="needs an endpoint"):
        ScoreConfig(matcher="judge")
    from crystalbench.config.loader import Given, build_config

    def flags(**values):
        return {name: Given(value, "--" + name) for name, value in values.items()}

    with pytest.raises(InputError, match="needs an endpoint"):
        build_config(ScoreConfig, flags=flags(matcher="judge"))
    config = build_config(
        ScoreConfig,
        flags=flags(matcher="judge", **{"judge.url": "http://x/v1", "judge.model": "m"}),
    )
    assert config.matcher_judge.url == "http://x/v1"  # shared with the answer judge
    with pytest.raises(InputError, match=r"field matcher_judge.model: required with"):
        build_config(ScoreConfig, flags=flags(matcher="judge", **{"matcher_judge.url": "http://x"}))


def test_the_ablation_refuses_the_judge_matcher():
    from crystalbench.validation.ablation import run_ablation

    bench, preds = world()
    config = ScoreConfig(matcher="judge", matcher_judge=JudgeConfig(url="http://x/v1", model="m"))
    with pytest.raises(InputError, match="cosine"):
        run_ablation(bench, {"a": preds}, [("h", "hash")], config=config)


@pytest.mark.parametrize(
    ("reply", "matches", "error"),
    [
        ('{"matches": [3, 1, 3], "reason": "x"}', [0, 2], None),
        ('<think>maybe 2</think>```json\n{"matches": null}\n```', [], None),
        ('Sure! {"matches": [2]} is my answer', [1], None),
        ('{"matches": [0]}', None, "step number 0 outside 1..3"),
        ('{"matches": ["2"]}', None, "is not an integer"),
        ('{"matches": 2}', None, "not a list"),
        ('{"verdict": true}', None, "unparseable reply"),
        ("", None, "empty reply"),
    ],
)
def test_reply_parsing(reply, matches, error):
    verdict = parse_step_reply(reply, 3)
    assert verdict.matches == matches
    if error is None:
        assert verdict.error is None
    else:
        assert error in verdict.error
        assert verdict.raw == reply


def test_the_prompt_numbers_the_predicted_steps_and_inserts_text_verbatim():
    prompt = load_step_prompt()
    messages = prompt.render("Ref {{predicted_steps}}", ["First.", "Second."])
    user = messages[1]["content"]
    assert "Reference step:\nRef {{predicted_steps}}\n" in user
    assert "1. First.\n2. Second." in user
    assert messages[0]["role"] == "system"
    assert "JSON" in messages[0]["content"]


def test_the_judge_is_asked_about_every_reference_chain(cache_dir):
    item = make_item("i2", ["The area is pi times 9."], answer="45").model_copy(
        update={"reference_chains": [["The circle has radius 3 cm."]]}
    )
    bench = make_benchmark([item])
    preds = [Prediction(id="i2", reasoning_steps=PREDS["i2"], answer="45")]
    with LoopbackServer(server_state()) as server:
        run = evaluate(bench, preds, judge_config(server))
        asked = len(server.state.log)
    (result,) = run.items
    assert asked == 2  # the primary's step and the alternative's
    assert run.summary.config["matcher_identity"]["failed_reference_steps"] == 0
    assert (result.ref_chain, result.n_ref_chains) == (1, 2)
    assert {(i, j) for i, j, _ in result.matches} == {(1, 0)}
    assert result.recall == 1.0
