"""Model-based answer extraction (``--extractor-url``) against a scripted OpenAI-compatible
server on loopback, through the official ``openai`` client: the answers stated only in a
sentence are read by the model and counted, a failed call is counted and leaves no answer,
a re-run sends no request (the reply cache), a dry run sends nothing, and without the option
every record is what the rules alone give."""

from __future__ import annotations

import json

import pytest

from crystalbench.config.judging import ExtractorConfig
from crystalbench.config.scoring import ScoreConfig
from crystalbench.data.loading import Benchmark
from crystalbench.judges.extractor import (
    AnswerQuery,
    OpenAIExtractor,
    ScriptedExtractor,
    load_extract_prompt,
    parse_extract_reply,
)
from crystalbench.scoring.engine import ScoringEngine
from crystalbench.scoring.extract import needs_model
from crystalbench.scoring.sets import ScoredSet
from crystalbench.types import BenchmarkItem, Prediction

pytest.importorskip("openai")
pytest.importorskip("uvicorn")
from servers.openai_server import LoopbackServer, ServerState

RULE = "The red bar is the tallest.\nAnswer: B"
SIX = "The rectangle is 2 yards long and 1 yard wide. Its perimeter works out to six yards."
GROUP = "The taller bar belongs to the second group, so that one wins."
UNSURE = "I cannot tell from the picture which one is larger."
PROSE = "Bard counted the apples on the table. There are five of them, which settles it."


def answer(value: str) -> str:
    return json.dumps({"answer": value})


def bench() -> Benchmark:
    def item(item_id: str, question: str, gold: str, options: tuple[str, ...] = ()):
        return BenchmarkItem(
            id=item_id,
            source="mathvista",
            question=question,
            options=list(options),
            answer=gold,
            reference_steps=["Read the chart.", "Compare the values."],
        )

    return Benchmark(
        name="extract-test",
        items=[
            item("rule", "Which bar is tallest?", "B", ("blue", "red")),
            item("six", "What is the perimeter of the rectangle in yards?", "6"),
            item("group", "Which group wins?", "B", ("first group", "second group")),
            item("unsure", "Which one is larger?", "A", ("left", "right")),
            item("prose", "How many apples are there?", "5"),
        ],
    )


def predictions() -> dict[str, Prediction]:
    texts = {"rule": RULE, "six": SIX, "group": GROUP, "unsure": UNSURE, "prose": PROSE}
    return {k: Prediction(id=k, response=v) for k, v in texts.items()}


SCRIPT = {
    "answers": {
        "works out to six yards": answer("6"),
        "so that one wins": answer("B"),
        "cannot tell from the picture": answer("none"),
        "There are five of them": "The answer is 5.",  # prose, not the JSON asked for
    }
}


def engine(server: LoopbackServer, cache, **options) -> ScoringEngine:
    extractor = ExtractorConfig(url=server.base_url, model="reader", max_retries=0, **options)
    config = ScoreConfig(encoder="hash", use_cache=True, cache_dir=str(cache), extractor=extractor)
    return ScoringEngine(config)


def run(scoring: ScoringEngine):
    """Records by id and the summary's ``extraction`` block of one set, through the engine's
    run (as ``crystal score`` scores)."""
    data = bench()
    (result,) = scoring.run(data, [ScoredSet.checked("t", data, list(predictions().values()))])
    assert result.summary.config["answer_extraction"] == "rules+model"
    assert result.summary.extraction is not None
    return {r.id: r for r in result.items}, result.summary.extraction


@pytest.fixture(scope="module")
def server():
    with LoopbackServer(ServerState()) as running:
        yield running


def test_sentence_only_answers_are_read_by_the_model_and_counted(server, tmp_path):
    server.state.configure({**SCRIPT, "served_model": "reader-2025-01"})
    records, summary = run(engine(server, tmp_path / "cache"))

    # The rule committed: not asked, recorded as before.
    assert records["rule"].answer_extraction == "answer_line"
    assert records["rule"].answer_extractor is None
    # The sentence-only class: read by the model, judged like any answer.
    for item_id, value in (("six", "6"), ("group", "B")):
        record = records[item_id]
        assert record.pred_answer == value
        assert record.answer_extraction == "model"
        assert record.answer_extractor == "model:reader"
        assert record.extraction_error is None
        assert record.answer_correct is True
    # The model says the response states no answer: none, as the rules left it.
    assert records["unsure"].pred_answer is None
    assert records["unsure"].answer_extractor == "model:reader"
    assert records["unsure"].answer_extraction is None
    assert records["unsure"].answer_correct is False
    # A reply that is not the JSON asked for: failed, no answer (never "5" from prose).
    assert records["prose"].pred_answer is None
    assert "unreadable reply" in (records["prose"].extraction_error or "")

    assert (summary.n_rules, summary.n_asked, summary.n_extracted) == (1, 4, 2)
    assert (summary.n_none, summary.n_failed) == (1, 1)
    assert summary.requests == 4
    assert summary.cache_hits == 0
    assert summary.prompt_tokens > 0
    assert summary.completion_tokens > 0
    assert summary.extractor["served_models"] == ["reader-2025-01"]
    assert summary.extractor["prompt_name"] == "extract_answer_v1"
    log = server.state.log
    assert len(log) == 4
    assert {entry["response_format"] for entry in log} == {"json_schema"}


def test_a_failed_call_is_counted_and_leaves_the_item_without_an_answer(server, tmp_path):
    server.state.configure({**SCRIPT, "faults": {"works out to six yards": [{"status": 500}]}})
    scoring = engine(server, tmp_path / "cache")
    records, summary = run(scoring)
    failed = records["six"]
    assert failed.pred_answer is None
    assert failed.answer_extraction is None
    assert failed.answer_correct is False
    assert "500" in (failed.extraction_error or "")
    assert failed.answer_extractor == "model:reader"
    assert summary.n_failed == 2  # the 500 and the unreadable reply
    assert summary.first_error is not None
    line = failed.model_dump(mode="json")
    assert line["extraction_error"] == failed.extraction_error

    # A failed call is not cached: the next run asks it again, the others come from the cache.
    server.state.log.clear()
    again, summary = run(engine(server, tmp_path / "cache"))
    assert again["six"].pred_answer == "6"
    assert again["six"].answer_extraction == "model"
    assert summary.requests == 1  # the 500 one; a reply that arrived (even unreadable) is kept
    assert summary.cache_hits == 3
    assert summary.n_failed == 1


def test_a_rerun_sends_no_request(server, tmp_path):
    server.state.configure(SCRIPT)
    first, counts = run(engine(server, tmp_path / "cache"))
    sent = len(server.state.log)
    assert sent == counts.requests == 4
    second, again = run(engine(server, tmp_path / "cache"))
    assert len(server.state.log) == sent  # nothing sent the second time
    assert again.requests == 0
    assert again.cache_hits == 4
    assert again.prompt_tokens == 0
    assert {k: r.model_dump() for k, r in second.items()} == {
        k: r.model_dump() for k, r in first.items()
    }


def test_a_dry_run_sends_nothing_and_answers_nothing(server, tmp_path, capsys):
    server.state.configure(SCRIPT)
    records, summary = run(engine(server, tmp_path / "cache", dry_run=True))
    assert server.state.log == []
    assert summary.dry_run
    assert summary.n_failed == summary.n_asked == 4
    assert summary.requests == 0
    assert all(records[k].pred_answer is None for k in ("six", "group", "unsure", "prose"))
    assert "nothing is sent" in capsys.readouterr().err


def test_the_default_is_rules_only_and_every_record_unchanged(server, tmp_path):
    """Without an extractor the records are the rules' alone, without the new fields; with
    one, the items a rule committed on (and every step figure) are exactly the same."""
    server.state.configure(SCRIPT)
    data = bench()
    default = ScoringEngine(ScoreConfig(encoder="hash", use_cache=False))
    plain = {r.id: r for r in default.iter_results(data.items, predictions())}
    assert all(r.answer_extractor is None and r.extraction_error is None for r in plain.values())
    for record in plain.values():
        line = record.model_dump(mode="json")
        assert "answer_extractor" not in line
        assert "extraction_error" not in line
    assert plain["six"].pred_answer is None  # the rules leave the sentence-only class
    assert default.extraction is None
    assert "extractor" not in ScoreConfig().record()
    record = default.config_record(data, None)
    assert record["answer_extraction"] == "rules"

    extracted, _ = run(engine(server, tmp_path / "cache"))
    assert plain["rule"].model_dump() == extracted["rule"].model_dump()
    answer_fields = {"answer_correct", "answer_rule", "pred_answer", "answer_extraction",
                     "answer_extractor", "extraction_error"}  # fmt: skip
    for item_id in plain:
        left = plain[item_id].model_dump(exclude=answer_fields)
        right = extracted[item_id].model_dump(exclude=answer_fields)
        assert left == right  # the steps are never touched
    with_model = engine(server, tmp_path / "cache")
    assert with_model.config_record(data, None)["answer_extraction"] == "rules+model"
    assert with_model.config.record()["extractor"]["model"] == "reader"


def test_the_extractor_never_sees_the_gold_answer():
    gold = "purple-elephant-42"
    item = BenchmarkItem(
        id="g", source="s", question="Which animal?", answer=gold, reference_steps=["Look."]
    )
    scripted = ScriptedExtractor({"a grey one": "elephant"})
    scoring = ScoringEngine(ScoreConfig(encoder="hash", use_cache=False), extractor=scripted)
    prediction = {"g": Prediction(id="g", response="It is a grey one with a trunk, I think.")}
    (record,) = scoring.iter_results([item], prediction)
    assert record.pred_answer == "elephant"
    assert len(scripted.queries) == 1
    assert gold not in " ".join(scripted.queries[0])
    prompt = load_extract_prompt()
    assert "gold" not in prompt.user_template
    assert "{{response}}" in prompt.user_template
    extractor = OpenAIExtractor(ExtractorConfig(url="http://127.0.0.1:9/v1", model="m"))
    request = extractor.request(scripted.queries[0])
    assert gold not in request.text()
    assert request.json_schema is not None
    assert request.json_schema["required"] == ["answer"]


def test_a_long_response_is_sent_as_its_ending():
    config = ExtractorConfig(url="http://127.0.0.1:9/v1", model="m", max_response_chars=200)
    extractor = OpenAIExtractor(config, use_cache=False)
    response = "x " * 500 + "So the final count is seven."
    text = extractor.request(AnswerQuery("How many?", response)).text()
    assert "So the final count is seven." in text
    assert "the start of the response is cut" in text
    assert text.count("x ") < 110


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"answer": "B"}', ("B", None)),
        ('```json\n{"answer": " 6 "}\n```', ("6", None)),
        ('{"answer": 6}', ("6", None)),
        ('<think>The last line says C.</think>{"answer": "C"}', ("C", None)),
        ('{"answer": "none"}', (None, None)),
        ('{"answer": "None."}', (None, None)),
        ('{"answer": null}', (None, None)),
        ('{"answer": ""}', (None, None)),
        ("The answer is B.", (None, "unreadable reply: no JSON object with an answer")),
        ('{"label": "B"}', (None, "unreadable reply: no JSON object with an answer")),
        ('{"answer": ["A", "C"]}', (None, "unreadable reply: answer ['A', 'C'] is not a string")),
        ('{"answer": true}', (None, "unreadable reply: answer True is not a string")),
        ("<think>Looking at the", (None, "no answer after the think block (unclosed)")),
        ("", (None, "empty reply")),
        (None, (None, "empty reply")),
    ],
)
def test_replies_are_read_strictly(reply, expected):
    assert parse_extract_reply(reply) == expected


def test_who_is_asked():
    from crystalbench.parsing import parse_prediction

    assert needs_model(parse_prediction(Prediction(id="1", response=GROUP)))
    assert not needs_model(parse_prediction(Prediction(id="1", response=RULE)))
    assert not needs_model(parse_prediction(Prediction(id="1", response=GROUP, answer="B")))
    structured = Prediction(id="1", reasoning_steps=["A step."], response=GROUP)
    assert not needs_model(parse_prediction(structured))
    assert not needs_model(parse_prediction(Prediction(id="1", response="  ")))
    assert not needs_model(None)
