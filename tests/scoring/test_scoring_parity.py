"""One scoring engine behind every door: a set scored alone (``evaluate``) and the same set
scored among others (``evaluate_many``, in one chunk or in many) give identical per-item
records, identical summaries and identical ``examples.jsonl`` bytes, under every scoring
option: compat step rules, compat answer rules, the LLM judge for free-form answers, the
judge matcher (a real OpenAI-compatible server on loopback, the official ``openai`` client),
alternative reference chains, MMVP pairs, both order metrics, thresholds, alpha, difficulty
cut-offs, a source subset and lenient unknown ids.

This test fails on the code before the single engine (checked against that commit's
``scoring.py`` / ``scoring_many.py``): there ``evaluate_many`` asked the judge matcher about
the primary chain only (``matcher.prepare(work, steps, tick)`` without the chains that
``evaluate`` passed), so an item whose prediction follows an alternative chain scored Match
F1 1.0 alone and 0.8 among several sets here (with a judge that names nothing in the
primary chain, the issue's 1.0 against 0.0). Both doors now share one engine, so dropping
the chains again (checked: ``ready.chains[:1]`` in ``JudgeMatcher.requests``) breaks both
alike; the judge-matcher tests then fail on their expected values (the alternative chain,
judged, scores 1.0; ``examples.jsonl`` names it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crystalbench.config.scoring import JudgeConfig, ScoreConfig
from crystalbench.data import SAMPLE_DIR, load_benchmark
from crystalbench.data.loading import Benchmark
from crystalbench.data.predictions import PredictionSet, load_predictions
from crystalbench.judges import ScriptedJudge
from crystalbench.scoring.difficulty import DifficultyConfig
from crystalbench.scoring.evaluation import RunResult, evaluate
from crystalbench.scoring.evaluation_many import evaluate_many
from crystalbench.scoring.results import EXAMPLES_FILE
from crystalbench.types import Prediction
from fakes import make_benchmark, make_item, write_jsonl
from servers.openai_server import LoopbackServer, ServerState

SAMPLE_FILES = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))

VOLATILE_CONFIG = ("created_at", "predictions", "model")
"""Config fields that differ between any two runs, or name the set rather than the scoring."""
JUDGE_COUNTERS = ("requests", "cache_hits", "failures")
"""The judge's own request counters: one endpoint serves every set of a run, and a request
two sets share is asked once, so these count the run, not the set (the set's own count of
reference steps left without a verdict is ``failed_reference_steps``, compared)."""


def comparable(summary: Any) -> dict[str, Any]:
    """The summary as JSON, without what may differ between two runs of the same set."""
    data = summary.model_dump(mode="json")
    data.pop("run_id")
    for key in VOLATILE_CONFIG:
        data["config"].pop(key)
    for key in JUDGE_COUNTERS:
        data["config"].get("matcher_identity", {}).pop(key, None)
    return data


def assert_same_run(alone: RunResult, together: RunResult, name: str) -> None:
    assert len(alone.items) == len(together.items), name
    for a, b in zip(alone.items, together.items, strict=True):
        assert a.model_dump() == b.model_dump(), (name, a.id)
    assert comparable(together.summary) == comparable(alone.summary), name


def world() -> tuple[Benchmark, dict[str, PredictionSet | list[Prediction]]]:
    """The sample (MMVP pairs, five model styles) plus items with alternative chains (one
    with a blank step) and free-form answers, and a set that follows the alternatives."""
    sample = load_benchmark("sample")
    items = list(sample.items)
    sets: dict[str, PredictionSet | list[Prediction]] = {
        path.stem: load_predictions(path) for path in SAMPLE_FILES
    }
    terse = sets["terse-precise"]
    assert isinstance(terse, PredictionSet)
    extra: list[Prediction] = []
    for k, item in enumerate(items[:12]):  # the terse set's steps become an alternative chain
        steps = terse.by_id[item.id].reasoning_steps or ["An alternative step."]
        chain = [*steps, "   "] if k % 3 == 0 else list(steps)
        items[k] = item.model_copy(update={"reference_chains": [chain, ["Unused chain."]]})
        extra.append(Prediction(id=item.id, reasoning_steps=steps[::-1], answer=item.answer))
    for k in range(4):
        items.append(
            make_item(
                f"free-{k}",
                [f"The sign reads word {k}.", "The word names a colour."],
                answer=["crimson", "navy", "olive", "teal"][k],
                answer_type="free_form",
                source="realworldqa",
                reference_chains=[[f"Word {k} is printed on the sign."]],
            )
        )
        extra.append(
            Prediction(
                id=f"free-{k}",
                reasoning_steps=[f"Word {k} is printed on the sign.", "It is a colour."],
                answer=["dark red", "navy", "green", "teal blue"][k],
            )
        )
    sets["alternatives"] = extra
    return make_benchmark(items, name="parity"), sets


def answer_judge() -> ScriptedJudge:
    """A judge for free-form answers: synonyms are right, ``green`` is unscored."""
    right = {("crimson", "dark red"): True, ("teal", "teal blue"): True}
    return ScriptedJudge(lambda question, gold, predicted: right.get((gold, predicted)))


CONFIGS = {
    "paper": {},
    "compat-steps": {"compat": "crystal-metrics-0.2"},
    "compat-answers": {"answer_rules": "crystal-metrics-0.2"},
    "compat-both-kendall": {
        "compat": "crystal-metrics-0.2",
        "answer_rules": "crystal-metrics-0.2",
        "order_metric": "kendall",
        "alpha": 0.5,
        "threshold": 0.3,
    },
    "kendall-alpha-1": {"order_metric": "kendall", "alpha": 1.0},
    "low-threshold-alpha-0": {"threshold": 0.05, "alpha": 0.0},
    "high-threshold": {"threshold": 0.6},
    "every-pair-is-a-candidate": {"threshold": -1.0},
    "sources-and-difficulty": {
        "sources": ["mmvp", "realworldqa", "mathvision"],
        "difficulty": DifficultyConfig(step_cuts=(2, 4), tier_cuts=(1, 2)),
    },
    "lenient": {"lenient": True},
}


@pytest.fixture(scope="module")
def parity_world() -> tuple[Benchmark, dict[str, PredictionSet | list[Prediction]]]:
    return world()


@pytest.mark.parametrize("chunk_items", [8192, 7])
@pytest.mark.parametrize("options", list(CONFIGS.values()), ids=list(CONFIGS))
def test_every_option_scores_the_same_alone_and_among_sets(
    parity_world, options, chunk_items, tmp_path
):
    bench, sets = parity_world
    config = ScoreConfig(encoder="hash", use_cache=False, **options)
    sets = dict(sets)
    if config.lenient:
        sets["ghosts"] = load_predictions(
            write_jsonl(
                tmp_path / "ghosts.jsonl",
                [{"id": "mmvp-01", "answer": "(a)"}, {"id": "nowhere", "answer": "1"}, "{bad"],
            ),
            lenient=True,
        )
    alone = {
        name: evaluate(bench, preds, config, judge=answer_judge(), out_dir=tmp_path / "a" / name)
        for name, preds in sets.items()
    }
    many = evaluate_many(
        bench,
        sets,
        config,
        judge=answer_judge(),
        out_dir=tmp_path / "m",
        chunk_items=chunk_items,
    )
    assert many.ok
    assert list(many.runs) == list(sets)
    for name in sets:
        assert_same_run(alone[name], many.runs[name], name)
        written = (tmp_path / "m" / name / EXAMPLES_FILE).read_bytes()
        assert written == (tmp_path / "a" / name / EXAMPLES_FILE).read_bytes(), name
    # The options took effect: the parity is not that of runs that ignore them.
    summary = many.runs["alternatives"].summary
    if config.compat == "none" and config.threshold < 0.5:
        assert summary.n_alt_chain_won > 0
    if config.compat != "none":
        assert summary.n_alt_chain_won == 0
    if not config.sources:
        assert many.runs["messy-raw"].summary.pairs is not None
        assert {i.answer_rule for i in many.runs["alternatives"].items} >= {"judge"}
    if config.lenient:
        ghosts = many.runs["ghosts"].summary
        assert (ghosts.n_unknown_ids, ghosts.n_invalid_records) == (1, 1)


# ----------------------------------------------------------------------------- judge matcher

CHAIN_REFS = {
    "alt": ["The chart has four bars.", "The tallest bar is B.", "B reads 40."],
    "plain": ["The circle has radius 3 cm.", "The area is pi times 9."],
}
ALTERNATIVE = ["Bar B is the highest.", "Its value is 40."]
PREDICTED = {
    "follows-the-alternative": {
        "alt": ["Bar B is the highest.", "Its value is 40."],
        "plain": ["A radius of 3 cm is marked.", "The area is pi times 9."],
    },
    "follows-the-primary": {
        "alt": ["There are four bars.", "B is the tallest.", "It reads 40."],
        "plain": ["The area is pi times 9."],
    },
}
VERDICTS = {
    # set -> reference step -> the predicted step numbers (1-based) the scripted judge names
    "follows-the-alternative": {
        "Bar B is the highest.": [1],
        "Its value is 40.": [2],
        "The chart has four bars.": [],
        "The tallest bar is B.": [1],
        "B reads 40.": [2],
        "The circle has radius 3 cm.": [1],
        "The area is pi times 9.": [2],
    },
    "follows-the-primary": {
        "Bar B is the highest.": [2],
        "Its value is 40.": [3],
        "The chart has four bars.": [1],
        "The tallest bar is B.": [2],
        "B reads 40.": [3],
        "The circle has radius 3 cm.": [],
        "The area is pi times 9.": [1],
    },
}


def judge_key(name: str, item_id: str, reference: str) -> str:
    """The prompt text that identifies one question: the reference step and the set's chain."""
    first = PREDICTED[name][item_id][0]
    return f"Reference step:\n{reference}\n\nPredicted steps:\n1. {first}\n"


def judge_script(skip: str | None = None) -> dict[str, Any]:
    """Every question answered as :data:`VERDICTS` says (but the reference step ``skip``)."""
    answers = {}
    for name, verdicts in VERDICTS.items():
        for item_id, refs in (*CHAIN_REFS.items(), ("alt", ALTERNATIVE)):
            for ref in refs:
                if ref != skip:
                    answers[judge_key(name, item_id, ref)] = json.dumps(
                        {"matches": verdicts[ref], "reason": "scripted"}
                    )
    return {"answers": answers}


def judge_state() -> ServerState:
    state = ServerState()
    state.configure(judge_script())
    return state


def judge_world() -> tuple[Benchmark, dict[str, list[Prediction]]]:
    bench = make_benchmark(
        [
            make_item("alt", CHAIN_REFS["alt"], answer="40", reference_chains=[ALTERNATIVE]),
            make_item("plain", CHAIN_REFS["plain"], answer="9"),
        ]
    )
    sets = {
        name: [Prediction(id=i, reasoning_steps=steps, answer="40") for i, steps in chains.items()]
        for name, chains in PREDICTED.items()
    }
    return bench, sets


def judge_config(server: LoopbackServer, **judge: Any) -> ScoreConfig:
    """The judge matcher at ``server`` (hash encoder, no embedding cache)."""
    return ScoreConfig(
        encoder="hash",
        use_cache=False,
        matcher="judge",
        matcher_judge=JudgeConfig(url=server.base_url, model="judge-model", **judge),
    )


@pytest.mark.parametrize("chunk_items", [8192, 1])
def test_the_judge_matcher_scores_the_same_alone_and_among_sets(cache_dir, chunk_items):
    bench, sets = judge_world()
    with LoopbackServer(judge_state()) as server:
        config = judge_config(server, concurrency=4)
        alone = {name: evaluate(bench, preds, config) for name, preds in sets.items()}
        many = evaluate_many(bench, sets, config, chunk_items=chunk_items)
    assert many.ok
    for name in sets:
        assert_same_run(alone[name], many.runs[name], name)
    follows = many.runs["follows-the-alternative"].items[0]
    assert (follows.ref_chain, follows.f1) == (1, 1.0)  # the alternative chain, judged
    primary = many.runs["follows-the-primary"].items[0]
    assert (primary.ref_chain, len(primary.matches), primary.f1) == (0, 3, 1.0)
    identity = many.runs["follows-the-primary"].summary.config["matcher_identity"]
    assert identity["failed_reference_steps"] == 0


def test_judge_matcher_failures_are_counted_per_set(cache_dir):
    """A reference step the judge cannot answer counts in the summary of each set that asked
    about it, as in that set's own run, not in every set's."""
    bench, sets = judge_world()
    state = ServerState()
    state.configure(
        {
            **judge_script(skip="Bar B is the highest."),
            "faults": {"Reference step:\nBar B is the highest.\n": [{"status": 400}] * 20},
        }
    )
    with LoopbackServer(state) as server:
        config = judge_config(server, timeout=5)
        alone = {name: evaluate(bench, preds, config) for name, preds in sets.items()}
        many = evaluate_many(bench, sets, config)
    failed = {
        name: run.summary.config["matcher_identity"]["failed_reference_steps"]
        for name, run in many.runs.items()
    }
    assert failed == {
        name: run.summary.config["matcher_identity"]["failed_reference_steps"]
        for name, run in alone.items()
    }
    assert failed == {"follows-the-alternative": 1, "follows-the-primary": 1}
    for name in sets:
        assert_same_run(alone[name], many.runs[name], name)


def test_examples_of_a_judged_run_name_the_chain(tmp_path: Path, cache_dir):
    """The judged alternative chain is what ``examples.jsonl`` records, alone or not."""
    bench, sets = judge_world()
    with LoopbackServer(judge_state()) as server:
        config = judge_config(server)
        evaluate(bench, sets["follows-the-alternative"], config, out_dir=tmp_path / "alone")
        evaluate_many(bench, sets, config, out_dir=tmp_path / "many")
    alone = (tmp_path / "alone" / EXAMPLES_FILE).read_bytes()
    assert alone == (tmp_path / "many" / "follows-the-alternative" / EXAMPLES_FILE).read_bytes()
    first = json.loads(alone.splitlines()[0])
    assert (first["ref_chain"], first["ref_steps"]) == (1, ALTERNATIVE)
