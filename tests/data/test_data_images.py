"""Images stay inside the benchmark, and only whole images within the pixel cap are used.

An item's image is resolved (symlinks included) and must lie under the benchmark file's
folder or under an ``image_root`` the user names; anything else is refused when the
benchmark loads, naming file, line and field, and the file is never opened. Images are
decoded fully (a truncated PNG is an error) and a decompression bomb is refused from its
header.
"""

from __future__ import annotations

import io
import json
import pathlib
import struct
import warnings
import zlib

import pytest
from PIL import Image, ImageFile
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import load_benchmark
from crystalbench.data.images import decode_image
from crystalbench.errors import ImageError, InputError
from fakes import write_jsonl


def png(size=(24, 16), color=(220, 40, 40)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def noisy_png(size=(64, 64)) -> bytes:
    """A PNG that does not compress to nothing, so cutting it loses pixel rows."""
    image = Image.frombytes(
        "RGB", size, bytes((i * 37) % 251 for i in range(size[0] * size[1] * 3))
    )
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def forged_png(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims ``width x height`` pixels (a decompression bomb)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


def item(i: int, image: str | None) -> dict:
    return {
        "id": f"chart-{i}",
        "source": "plotqa",
        "question": f"How many bars does chart {i} have?",
        "answer": "4",
        "reference_steps": ["Count the bars from left to right.", "There are four bars."],
        "image": image,
    }


@pytest.fixture
def layout(tmp_path):
    """``bench/`` with ``bench/images/ok.png``, and ``outside/secret.png`` beside it."""
    bench = tmp_path / "bench"
    (bench / "images").mkdir(parents=True)
    (bench / "images" / "ok.png").write_bytes(png())
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.png").write_bytes(png(color=(0, 0, 255)))
    return bench, outside


@pytest.fixture
def reads(monkeypatch):
    """Every path opened through ``Path.read_bytes`` / ``Path.open`` / ``open``."""
    opened: list[str] = []
    real_read_bytes = pathlib.Path.read_bytes
    real_open = pathlib.Path.open

    def read_bytes(self):
        opened.append(str(self))
        return real_read_bytes(self)

    def path_open(self, *args, **kwargs):
        opened.append(str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "read_bytes", read_bytes)
    monkeypatch.setattr(pathlib.Path, "open", path_open)
    return opened


def _refused(path, reads, secret, *, image_root=None):
    with pytest.raises(ImageError) as info:
        load_benchmark(path, image_root=image_root)
    assert not any(p.endswith("secret.png") for p in reads), "the outside file was read"
    message = str(info.value)
    assert message.startswith(f"{path}:2: field image: image ")
    assert f"resolves to {secret.resolve()}, outside the benchmark folder" in message
    assert "--image-root" in message
    return info.value


def test_an_absolute_path_outside_is_refused_unread(layout, reads):
    bench, outside = layout
    secret = outside / "secret.png"
    path = write_jsonl(bench / "b.jsonl", [item(0, "images/ok.png"), item(1, str(secret))])
    error = _refused(path, reads, secret)
    assert isinstance(error, InputError)


def test_a_dotdot_escape_is_refused(layout, reads):
    bench, outside = layout
    path = write_jsonl(
        bench / "b.jsonl", [item(0, "images/ok.png"), item(1, "images/../../outside/secret.png")]
    )
    _refused(path, reads, outside / "secret.png")


def test_a_symlink_escape_is_refused(layout, reads):
    bench, outside = layout
    (bench / "images" / "link.png").symlink_to(outside / "secret.png")
    (bench / "linked").symlink_to(outside, target_is_directory=True)
    path = write_jsonl(bench / "b.jsonl", [item(0, "images/ok.png"), item(1, "images/link.png")])
    _refused(path, reads, outside / "secret.png")
    path = write_jsonl(bench / "c.jsonl", [item(0, "images/ok.png"), item(1, "linked/secret.png")])
    _refused(path, reads, outside / "secret.png")


def test_a_symlink_inside_the_benchmark_folder_is_fine(layout):
    bench, _ = layout
    (bench / "alias.png").symlink_to(bench / "images" / "ok.png")
    loaded = load_benchmark(write_jsonl(bench / "b.jsonl", [item(0, "alias.png")]))
    assert loaded.items[0].image == str((bench / "images" / "ok.png").resolve())
    assert loaded.image_bytes(loaded.items[0]) == png()


def test_image_root_allows_a_folder_outside(layout):
    bench, outside = layout
    rows = [item(0, "images/ok.png"), item(1, str(outside / "secret.png"))]
    path = write_jsonl(bench / "b.jsonl", rows)
    loaded = load_benchmark(path, image_root=outside)
    assert loaded.image_bytes(loaded.items[1]) == png(color=(0, 0, 255))
    assert loaded.image_bytes(loaded.items[0]) == png()
    with pytest.raises(ImageError, match="image root is not a folder"):
        load_benchmark(path, image_root=outside / "secret.png")


def test_a_symlink_swapped_in_after_loading_is_refused_unread(layout, reads):
    bench, outside = layout
    loaded = load_benchmark(write_jsonl(bench / "b.jsonl", [item(0, "images/ok.png")]))
    target = bench / "images" / "ok.png"
    target.unlink()
    target.symlink_to(outside / "secret.png")
    with pytest.raises(ImageError, match=r"now resolves to .*outside the allowed folders"):
        loaded.image_bytes(loaded.items[0])
    assert not any(p.endswith("secret.png") for p in reads)


def test_a_path_with_a_nul_byte_is_an_input_error(layout):
    bench, _ = layout
    path = write_jsonl(bench / "b.jsonl", [item(0, "images/ok\x00.png")])
    with pytest.raises(ImageError, match=r"b\.jsonl:1: field image: invalid image path"):
        load_benchmark(path)


def test_a_truncated_png_is_an_error_not_a_partial_image(layout):
    bench, _ = layout
    whole = noisy_png()
    (bench / "images" / "cut.png").write_bytes(whole[: len(whole) // 2])
    loaded = load_benchmark(write_jsonl(bench / "b.jsonl", [item(0, "images/cut.png")]))
    with pytest.raises(ImageError) as info:
        loaded.image_bytes(loaded.items[0])
    assert "cannot decode image of item chart-0" in str(info.value)
    assert "truncated" in str(info.value)
    assert str(info.value).startswith(f"{(bench / 'images' / 'cut.png').resolve()}: field image:")
    assert ImageFile.LOAD_TRUNCATED_IMAGES is False


@pytest.mark.parametrize(
    ("width", "height"),
    [(100_000, 100_000), (10_000, 10_000), (8_000, 7_000)],
    ids=["past-pillow-error", "past-pillow-warning", "past-our-cap"],
)
def test_a_decompression_bomb_is_refused_from_its_header(layout, width, height):
    bench, _ = layout
    (bench / "images" / "bomb.png").write_bytes(forged_png(width, height))
    loaded = load_benchmark(write_jsonl(bench / "b.jsonl", [item(0, "images/bomb.png")]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Pillow's DecompressionBombWarning must not leak
        with pytest.raises(ImageError, match="decompression bomb"):
            loaded.image_bytes(loaded.items[0])


def test_the_pixel_cap_comes_from_the_environment(layout, monkeypatch):
    bench, _ = layout
    loaded = load_benchmark(write_jsonl(bench / "b.jsonl", [item(0, "images/ok.png")]))
    assert loaded.image_bytes(loaded.items[0]) == png()
    monkeypatch.setenv("CRYSTALBENCH_IMAGE_MAX_PIXELS", "300")
    with pytest.raises(ImageError, match=r"has 24 x 16 = 384 pixels, over the cap of 300"):
        loaded.image_bytes(loaded.items[0])


def test_decode_image_refuses_bytes_that_are_no_image():
    with pytest.raises(ValueError, match="cannot decode image"):
        decode_image(b"GIF89a but not really")


# ----------------------------------------------------------------------------- Parquet


def test_parquet_path_only_images_must_stay_inside(layout):
    pytest.importorskip("datasets")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    bench, outside = layout
    paths = ["images/ok.png", str(outside / "secret.png")]
    table = pa.table(
        {
            "image": [{"bytes": None, "path": path} for path in paths],
            "question": ["How many bars?", "How many lines?"],
            "answer": ["4", "2"],
            "reference_steps": [["Count the bars."], ["Count the lines."]],
            "choices": [[], []],
            "options": [[], []],
            "source": ["plotqa", "plotqa"],
        }
    )
    path = bench / "crystal.parquet"
    pq.write_table(table, path)
    loaded = load_benchmark(path)
    assert loaded.image_bytes(loaded.items[0]) == png()
    with pytest.raises(ImageError, match="outside the benchmark folder"):
        loaded.image_bytes(loaded.items[1])
    allowed = load_benchmark(path, image_root=outside)
    assert allowed.image_bytes(allowed.items[1]) == png(color=(0, 0, 255))


# ----------------------------------------------------------------------------- the CLI

runner = CliRunner()


def _scored(bench_file, tmp_path, *extra):
    preds = write_jsonl(
        tmp_path / "p.jsonl", [{"id": "chart-0", "reasoning_steps": ["Count."], "answer": "4"}]
    )
    out = tmp_path / "run"
    args = ["score", "-b", str(bench_file), "-p", str(preds), "-o", str(out)]
    result = runner.invoke(app, [*args, "--encoder", "hash", "--no-progress", "--no-cache", *extra])
    return result, out


def test_crystal_score_and_report_refuse_an_outside_image_unless_image_root(layout, tmp_path):
    bench, outside = layout
    path = write_jsonl(bench / "b.jsonl", [item(0, str(outside / "secret.png"))])
    result, out = _scored(path, tmp_path)
    assert result.exit_code == 2, result.output
    assert "b.jsonl:1: field image:" in result.output.replace("\n", "")
    assert "Traceback" not in result.output
    result, out = _scored(path, tmp_path, "--image-root", str(outside))
    assert result.exit_code == 0, result.output

    report = tmp_path / "report.html"
    args = ["report", str(out), "-o", str(report), "-b", str(path), "--resamples", "20"]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2, refused.output
    assert "outside the benchmark folder" in refused.output.replace("\n", "")
    assert not report.exists()
    allowed = runner.invoke(app, [*args, "--image-root", str(outside)])
    assert allowed.exit_code == 0, allowed.output
    assert "1 item images embedded" in report.read_text()


def test_crystal_report_names_an_undecodable_image(layout, tmp_path):
    bench, _ = layout
    whole = noisy_png()
    (bench / "images" / "cut.png").write_bytes(whole[: len(whole) // 2])
    path = write_jsonl(bench / "b.jsonl", [item(0, "images/cut.png")])
    result, out = _scored(path, tmp_path)
    assert result.exit_code == 0, result.output
    report = tmp_path / "report.html"
    done = runner.invoke(app, ["report", str(out), "-o", str(report), "-b", str(path)])
    assert done.exit_code == 0, done.output
    text = done.output.replace("\n", "")
    assert "image of item chart-0 could not be embedded" in text
    assert "cannot decode image of item chart-0" in text
    assert "1 could not be read" in report.read_text()
    assert json.loads((out / "summary.json").read_text())["n_items"] == 1
