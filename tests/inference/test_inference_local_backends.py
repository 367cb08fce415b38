"""Local backends: transformers on a tiny random Qwen2.5-VL, offline vLLM through its API."""

from __future__ import annotations

import base64
import io
import json
import sys
import types

import pytest

from crystalbench.data import load_benchmark
from crystalbench.inference import GenerationSettings, InferenceConfig, infer, load_prompt
from crystalbench.inference.backends.base import BackendUnavailableError

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny():
    from tiny_models import tiny_qwen2_5_vl

    return tiny_qwen2_5_vl(seed=0)


@pytest.fixture(scope="module")
def two_items():
    bench = load_benchmark("sample")
    with_options = next(i for i in bench.items if i.options)
    return bench.subset(ids=[bench.items[0].id, with_options.id])


def rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_transformers_backend_generates_for_two_sample_items(tiny, two_items, tmp_path):
    from crystalbench.inference.backends.transformers_local import TransformersBackend

    model, processor = tiny
    backend = TransformersBackend(
        model, processor=processor, device="cpu", batch_size=2, model_name="tiny-qwen2.5-vl"
    )
    out = tmp_path / "p.jsonl"
    settings = GenerationSettings(temperature=0.0, max_tokens=6)
    summary = infer(two_items, backend, out, InferenceConfig(model="tiny", generation=settings))

    assert summary.n_ok == 2
    assert summary.n_errors == 0
    records = rows(out)
    assert [r["id"] for r in records] == two_items.ids
    for record in records:
        assert record["backend"] == "transformers"
        assert record["model"] == "tiny-qwen2.5-vl"
        assert 1 <= record["completion_tokens"] <= 6
        assert record["finish_reason"] in {"stop", "length"}
        assert isinstance(record["response"], str)
        assert record["parse_status"] is not None
        assert record["endpoint"] == "transformers:cpu"
    # The prompt holds the rendered template and the image's tokens: longer than the text.
    text_length = len(load_prompt().render(two_items.items[0]))
    assert records[0]["prompt_tokens"] > text_length


def test_transformers_greedy_generation_is_deterministic_and_batch_independent(tiny, two_items):
    from crystalbench.inference.backends.base import GenerationRequest
    from crystalbench.inference.backends.transformers_local import TransformersBackend
    from crystalbench.inference.images import PreparedImage

    model, processor = tiny
    backend = TransformersBackend(model, processor=processor, device="cpu")
    settings = GenerationSettings(temperature=0.0, max_tokens=5)
    prompt = load_prompt()

    def request(item):
        image = PreparedImage(two_items.image_bytes(item))
        return GenerationRequest(item.id, prompt.render(item), image, settings)

    first, second = two_items.items
    together = backend.complete_batch([request(first), request(second)])
    alone = backend.complete_batch([request(second)])
    assert together[1].text == alone[0].text  # left padding does not change the answer
    assert together[1].completion_tokens == alone[0].completion_tokens
    again = backend.complete_batch([request(first), request(second)])
    assert [c.text for c in again] == [c.text for c in together]


def test_transformers_loads_a_saved_model_folder(tiny, two_items, tmp_path):
    from crystalbench.inference.backends.transformers_local import TransformersBackend

    model, processor = tiny
    model.save_pretrained(tmp_path / "tiny")
    backend = TransformersBackend(
        str(tmp_path / "tiny"), processor=processor, device="cpu", dtype="float32"
    )
    assert backend.model == str(tmp_path / "tiny")
    summary = infer(
        two_items.subset(limit=1),
        backend,
        tmp_path / "p.jsonl",
        InferenceConfig(model="tiny", generation={"temperature": 0.0, "max_tokens": 3}),
    )
    assert summary.n_ok == 1


def test_an_unknown_dtype_is_refused():
    from crystalbench.errors import UnknownNameError
    from crystalbench.inference.backends.transformers_local import resolve_dtype

    assert str(resolve_dtype("auto", "cpu")) == "torch.float32"
    assert str(resolve_dtype("bf16", "cpu")) == "torch.bfloat16"
    with pytest.raises(UnknownNameError):
        resolve_dtype("float8", "cpu")


# --- offline vLLM, against a stand-in module with vLLM's documented API -------------------
class _Output:
    def __init__(self, text, token_ids, finish_reason):
        self.text, self.token_ids, self.finish_reason = text, token_ids, finish_reason


class _RequestOutput:
    def __init__(self, prompt_token_ids, outputs):
        self.prompt_token_ids, self.outputs = prompt_token_ids, outputs


def fake_vllm(calls):
    module = types.ModuleType("vllm")

    class SamplingParams:
        def __init__(self, **kwargs):
            self.kwargs = kwargs

    class LLM:
        def __init__(self, **kwargs):
            calls["engine"] = kwargs

        def chat(self, messages, sampling_params=None, use_tqdm=True, **kwargs):
            calls.setdefault("chats", []).append((messages, sampling_params, use_tqdm, kwargs))
            outputs = []
            for conversation in messages:
                content = conversation[0]["content"]
                url = content[0]["image_url"]["url"]
                from PIL import Image

                size = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size
                text = json.dumps({"reasoning_steps": [f"{size[0]}x{size[1]}"], "answer": "A"})
                outputs.append(_RequestOutput([1] * 11, [_Output(text, [5, 6, 7], "stop")]))
            return outputs

    module.LLM = LLM
    module.SamplingParams = SamplingParams
    return module


def test_vllm_backend_uses_llm_chat_with_data_urls(two_items, tmp_path, monkeypatch):
    from crystalbench.inference.backends.vllm_offline import VLLMOfflineBackend

    calls: dict = {}
    monkeypatch.setitem(sys.modules, "vllm", fake_vllm(calls))
    backend = VLLMOfflineBackend(
        "Qwen/Qwen2.5-VL-7B-Instruct", batch_size=0, tensor_parallel_size=2, max_model_len=8192
    )
    assert calls["engine"]["limit_mm_per_prompt"] == {"image": 1}
    assert calls["engine"]["tensor_parallel_size"] == 2
    assert calls["engine"]["max_model_len"] == 8192
    out = tmp_path / "p.jsonl"
    settings = GenerationSettings(temperature=0.2, max_tokens=64, top_p=0.9, seed=3)
    summary = infer(two_items, backend, out, InferenceConfig(model="m", generation=settings))
    assert summary.n_ok == 2
    ((messages, params, use_tqdm, _),) = calls["chats"]  # one call for the whole selection
    assert len(messages) == 2
    assert use_tqdm is False
    assert params[0].kwargs == {"temperature": 0.2, "max_tokens": 64, "top_p": 0.9, "seed": 3}
    assert messages[0][0]["content"][1] == {
        "type": "text",
        "text": load_prompt().render(two_items.items[0]),
    }
    records = rows(out)
    from PIL import Image

    with Image.open(two_items.items[0].image) as image:
        assert records[0]["steps"] == [f"{image.size[0]}x{image.size[1]}"]
    assert records[0]["prompt_tokens"] == 11
    assert records[0]["completion_tokens"] == 3
    assert records[0]["backend"] == "vllm"


def test_vllm_backend_explains_a_missing_install(monkeypatch):
    from crystalbench.inference.backends.vllm_offline import VLLMOfflineBackend

    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    with pytest.raises(BackendUnavailableError, match="vllm serve"):
        VLLMOfflineBackend("some/model")
