"""The demo server (``crystal references demo-server``) through the official ``openai``
client, on a real loopback port: what it lists, how each scripted model answers, how it
tells items apart, and what it refuses."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from crystalbench.data import load_benchmark
from crystalbench.demo.models import DISTRACTORS, GENERATORS, generator_chain
from crystalbench.demo.server import DemoServer, served_models
from crystalbench.errors import InputError
from crystalbench.references.config import ReferencesConfig
from crystalbench.references.generation import load_reference_prompt
from crystalbench.types import BenchmarkItem

pytest.importorskip("uvicorn")
openai = pytest.importorskip("openai")


@pytest.fixture(scope="module")
def server() -> Iterator[DemoServer]:
    with DemoServer(port=0) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: DemoServer) -> Any:
    return openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=30)


@pytest.fixture(scope="module")
def sample() -> Any:
    return load_benchmark("sample")


def _ask(client: Any, model: str, prompt: str, *, image: bytes | None = None,
         seed: int | None = None) -> str:  # fmt: skip
    content: list[dict[str, Any]] = []
    if image is not None:
        url = "data:image/png;base64," + base64.b64encode(image).decode()
        content.append({"type": "image_url", "image_url": {"url": url}})
    content.append({"type": "text", "text": prompt})
    reply = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": content}], seed=seed,
        temperature=0.7, max_tokens=2048,
    )  # fmt: skip
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage.completion_tokens >= 0
    return str(reply.choices[0].message.content)


def _generate_prompt(item: BenchmarkItem) -> str:
    return load_reference_prompt(ReferencesConfig().generate_prompt).render(item)


def test_it_lists_its_models(client):
    listed = [model.id for model in client.models.list()]
    assert listed == served_models()
    assert listed[:4] == list(GENERATORS)


def test_each_generator_rewrites_the_sample_chain_in_its_style(client, sample):
    item = sample.get("mathvision-01")
    prompt = _generate_prompt(item)
    chains = {}
    for name in GENERATORS:
        reply = json.loads(_ask(client, name, prompt, seed=3))
        assert reply["answer"] == item.answer
        chains[name] = reply["reasoning_steps"]
        assert chains[name] == generator_chain(name, item.reference_steps, 3)
    assert chains["gen-literal"] == item.reference_steps
    assert all(s.startswith("In the image, ") for s in chains["gen-grounded"])
    assert len(chains["gen-terse"]) == len(item.reference_steps) - 1
    # The same request gives the same chain; seeds vary the digressive one.
    again = json.loads(_ask(client, "gen-digressive", prompt, seed=3))["reasoning_steps"]
    assert again == chains["gen-digressive"]
    digressions = {
        any(d in s for d in DISTRACTORS for s in generator_chain("gen-digressive", ["a"], seed))
        for seed in range(12)
    }
    assert digressions == {True, False}


def test_the_validator_rejects_a_claim_the_image_does_not_show(client, sample):
    item = sample.get("plotqa-02")
    prompt_file = load_reference_prompt(ReferencesConfig().validate_prompt)
    good = json.loads(_ask(client, "validator", prompt_file.render(item, item.reference_steps)))
    assert good["accept"] is True
    assert good["first_error_step"] == -1
    bad_chain = [*item.reference_steps[:2], DISTRACTORS[0], *item.reference_steps[2:]]
    bad = json.loads(_ask(client, "validator", prompt_file.render(item, bad_chain)))
    assert bad["accept"] is False
    assert bad["visual_grounding"] is False
    assert bad["first_error_step"] == 3
    assert bad["reasons"] == ["step 3 claims something the image does not show"]


def test_items_with_the_same_question_are_told_apart(client, sample):
    """MMVP's pairs ask the same question: the correct answer tells them apart in a
    generation prompt, the picture in an inference prompt (as ``crystal infer`` sends it)."""
    from crystalbench.inference.prompts import load_prompt

    first, second = sample.get("mmvp-01"), sample.get("mmvp-02")
    assert first.question == second.question
    for item in (first, second):
        reply = json.loads(_ask(client, "gen-literal", _generate_prompt(item)))
        assert reply["reasoning_steps"] == item.reference_steps
    for item in (first, second):
        text = _ask(client, "oracle", load_prompt().render(item), image=sample.image_bytes(item))
        assert json.loads(text)["reasoning_steps"] == item.reference_steps


def test_model_styles_answer_with_the_sample_predictions(client, sample):
    from crystalbench.data import SAMPLE_DIR
    from crystalbench.inference.prompts import load_prompt

    item = sample.get("scienceqa-03")
    records = {
        json.loads(line)["id"]: json.loads(line)
        for line in (SAMPLE_DIR / "predictions" / "terse-precise.jsonl").read_text().splitlines()
    }
    text = _ask(client, "terse-precise", load_prompt().render(item), image=sample.image_bytes(item))
    reply = json.loads(text)
    assert reply["reasoning_steps"] == records[item.id]["reasoning_steps"]
    assert reply["answer"] == records[item.id]["answer"]


def test_an_item_it_does_not_know_gets_a_generic_chain(client):
    item = BenchmarkItem(id="x", source="textvqa", question="what does the sign say?",
                         answer="stop", reference_steps=["r"])  # fmt: skip
    reply = json.loads(_ask(client, "gen-literal", _generate_prompt(item), seed=1))
    assert reply == {
        "reasoning_steps": [
            "The question asks: what does the sign say?",
            "The image shows the part of the scene the question is about.",
            "Reading that part of the image gives stop.",
            "So the answer is stop.",
        ],
        "answer": "stop",
    }
    # Any other generator name takes one of the four styles, the same one every time.
    first = _ask(client, "qwen2.5-vl-72b", _generate_prompt(item), seed=1)
    assert _ask(client, "qwen2.5-vl-72b", _generate_prompt(item), seed=1) == first


def test_what_it_refuses(server, client):
    with pytest.raises(openai.BadRequestError, match="does not stream"):
        client.chat.completions.create(
            model="gen-literal", messages=[{"role": "user", "content": "hi"}], stream=True
        )
    with pytest.raises(openai.BadRequestError, match="messages must be a non-empty list"):
        client.chat.completions.create(model="gen-literal", messages=[])
    raw = httpx.post(server.url + "/chat/completions", content=b'{"model": "x", "messages": [')
    assert raw.status_code == 400
    assert "not JSON" in raw.json()["error"]["message"]
    assert httpx.get(server.url + "/nowhere").status_code == 404


def test_it_listens_on_loopback_only():
    with pytest.raises(InputError, match="loopback only"):
        DemoServer(port=0, host="0.0.0.0")
    with pytest.raises(InputError, match="is not a TCP port"):
        DemoServer(port=70000)
