"""Images sent to a model: decoded fully, bombs refused, downscaled before the first request.

``PreparedImage`` caps the longer side at ``IMAGE_MAX_SIDE`` (or ``max_side``, or
``CRYSTALBENCH_IMAGE_MAX_SIDE``), so the first data URL a server receives is already
within it; smaller limits asked on retry still get their own memoised variant. A truncated
or bomb image is refused before anything is sent and becomes that item's error record.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image

from crystalbench.config.settings import IMAGE_MAX_SIDE
from crystalbench.data.loading import Benchmark
from crystalbench.errors import ImageError
from crystalbench.inference import InferenceConfig, infer
from crystalbench.inference.backends.scripted import ScriptedBackend
from crystalbench.inference.images import PreparedImage
from crystalbench.types import BenchmarkItem

ANSWER = '{"reasoning_steps": ["The chart has four bars."], "answer": "4"}'


def encoded(size, fmt="PNG") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (30, 140, 90)).save(buffer, fmt)
    return buffer.getvalue()


def sent_size(url: str) -> tuple[int, int]:
    header, payload = url.split(",", 1)
    assert header.startswith("data:image/")
    with Image.open(io.BytesIO(base64.b64decode(payload))) as image:
        image.load()
        return image.size


def forged_png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b"")


def test_the_first_data_url_is_already_within_the_default_side():
    image = PreparedImage(encoded((IMAGE_MAX_SIDE + 952, 600)))
    assert sent_size(image.data_url()) == (IMAGE_MAX_SIDE, round(600 * IMAGE_MAX_SIDE / 3000))
    assert image.size == (3000, 600)  # the original, for the retry policy
    assert image.variant_size(None) == sent_size(image.data_url())


def test_max_side_caps_every_variant_and_variants_stay_memoised():
    image = PreparedImage(encoded((1600, 800)), max_side=1000)
    first = image.data_url()
    assert sent_size(first) == (1000, 500)
    assert image.data_url() is first
    assert image.data_url(4000) is first  # a larger ask never exceeds the cap
    assert image.data_url(1000) is first
    smaller = image.data_url(512)  # a retry after "image too large"
    assert sent_size(smaller) == (512, 256)
    assert image.data_url(512) is smaller
    assert image.encodes == 2
    assert image.pil().size == (1000, 500)
    assert image.pil(100).size == (100, 50)


def test_a_small_image_is_sent_as_it_is():
    data = encoded((300, 200), "JPEG")
    image = PreparedImage(data, max_side=1000)
    assert image.variant() == (data, "image/jpeg")
    assert image.data_url() == "data:image/jpeg;base64," + base64.b64encode(data).decode()


def test_the_side_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("CRYSTALBENCH_IMAGE_MAX_SIDE", "64")
    image = PreparedImage(encoded((256, 128)))
    assert image.max_side == 64
    assert sent_size(image.data_url()) == (64, 32)
    assert PreparedImage(encoded((256, 128)), max_side=200).max_side == 200


def test_a_truncated_image_is_refused_before_sending():
    whole = io.BytesIO()
    noise = bytes((i * 131) % 253 for i in range(96 * 96 * 3))
    Image.frombytes("RGB", (96, 96), noise).save(whole, "PNG")
    cut = PreparedImage(whole.getvalue()[: len(whole.getvalue()) // 2])
    with pytest.raises(ImageError, match=r"cannot decode image \(OSError: image file is truncated"):
        cut.data_url()
    with pytest.raises(ValueError, match="cannot decode"):
        _ = cut.size


def test_a_bomb_is_refused_before_decoding():
    with pytest.raises(ImageError, match="decompression bomb"):
        _ = PreparedImage(forged_png(60_000, 60_000)).size
    with pytest.raises(ImageError, match=r"over the cap of 1,000"):
        _ = PreparedImage(encoded((50, 50)), max_pixels=1000).size


def _bench(tmp_path: Path, images: dict[str, bytes]) -> Benchmark:
    items = []
    for item_id, data in images.items():
        (tmp_path / f"{item_id}.png").write_bytes(data)
        items.append(
            BenchmarkItem(
                id=item_id,
                source="plotqa",
                question=f"How many bars does chart {item_id} have?",
                answer="4",
                reference_steps=["Count the bars."],
                image=str(tmp_path / f"{item_id}.png"),
            )
        )
    return Benchmark(name="t", items=items, image_loader=lambda it: Path(it.image).read_bytes())


def test_infer_sends_downscaled_images_and_records_bad_ones_as_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("CRYSTALBENCH_IMAGE_MAX_SIDE", "256")
    whole = encoded((900, 300))
    cut = io.BytesIO()
    Image.frombytes("RGB", (80, 80), bytes((i * 7) % 255 for i in range(80 * 80 * 3))).save(
        cut, "PNG"
    )
    bench = _bench(
        tmp_path,
        {"big": whole, "cut": cut.getvalue()[:200], "bomb": forged_png(50_000, 50_000)},
    )
    backend = ScriptedBackend({"*": ANSWER})
    out = tmp_path / "p.jsonl"
    summary = infer(bench, backend, out, InferenceConfig(model=backend.model, abort_after=0))
    assert backend.calls == ["big"]
    assert sent_size(backend.requests[0].image.data_url(backend.requests[0].image_max_side)) == (
        256,
        85,
    )
    records = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert records["big"]["error"] is None
    assert records["cut"]["error_kind"] == "image"
    assert "cannot decode image of item cut" in records["cut"]["error"]
    assert records["bomb"]["error_kind"] == "image"
    assert "decompression bomb" in records["bomb"]["error"]
    assert summary.errors_by_kind == {"image": 2}
