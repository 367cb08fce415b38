"""Training pools: validation split, prompts, TRL rows, and the leakage check (library and CLI)."""

from __future__ import annotations

import json
import shutil

import pytest
from PIL import Image
from typer.testing import CliRunner

from crystalbench.data import Benchmark, load_benchmark
from crystalbench.errors import InputError
from crystalbench.training.data import (
    item_messages,
    load_pool,
    prompt_text,
    split_validation,
    to_trl_dataset,
)
from crystalbench.training.leakage import check_leakage, difference_hash, hamming, image_fingerprint
from crystalbench.types import BenchmarkItem


def item(i, source="a", steps=1, **kw):
    return BenchmarkItem(
        id=f"{source}{i}",
        source=source,
        question="?",
        answer="x",
        reference_steps=["s"] * steps,
        **kw,
    )


# ------------------------------------------------------------------ split and prompts


def test_validation_split_is_15_percent_stratified_and_seeded():
    items = [item(i, s) for s in "abc" for i in range(20)]
    split = split_validation(items, 0.15, seed=7)
    assert len(split.validation) == 9  # round(0.15 * 60)
    assert len(split.train) == 51
    assert {x.id for x in split.train}.isdisjoint({x.id for x in split.validation})
    assert sorted({x.source: 0 for x in split.validation}) == ["a", "b", "c"]
    assert all(sum(x.source == s for x in split.validation) == 3 for s in "abc")
    # Depends on ids and seed only, not on the order of the pool.
    again = split_validation(list(reversed(items)), 0.15, seed=7)
    assert {x.id for x in again.validation} == {x.id for x in split.validation}
    other = split_validation(items, 0.15, seed=8)
    assert {x.id for x in other.validation} != {x.id for x in split.validation}


def test_validation_split_needs_two_items():
    with pytest.raises(InputError, match="cannot split"):
        split_validation([item(0)], 0.15)
    assert len(split_validation([item(0), item(1)], 0.15).validation) == 1


def test_prompt_lists_options_and_asks_for_the_json_object():
    mc = BenchmarkItem(
        id="1",
        source="x",
        question="Which bar is tallest?",
        options=["2019", "2020"],
        answer="B",
        reference_steps=["Compare."],
    )
    text = prompt_text(mc)
    assert text.startswith("Which bar is tallest?\nOptions:\nA. 2019\nB. 2020\n\n")
    assert '{"reasoning_steps": ["...", "..."], "answer": "..."}' in text
    assert text.endswith('"answer" is the letter of the correct option.')
    numeric = mc.model_copy(update={"options": [], "answer": "12"})
    assert prompt_text(numeric).endswith('"answer" is the number only (no units).')
    assert item_messages(numeric) == [{"role": "user", "content": prompt_text(numeric)}]


def test_pool_loads_any_jsonl_and_rejects_items_without_steps(tmp_path):
    good = tmp_path / "pool.jsonl"
    good.write_text(
        json.dumps(
            {
                "id": "1",
                "source": "s",
                "question": "?",
                "answer": "a",
                "reference_steps": ["x", "y"],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    assert [i.id for i in load_pool(str(good)).items] == ["1"]
    blank = tmp_path / "blank.jsonl"
    blank.write_text(
        json.dumps(
            {"id": "1", "source": "s", "question": "?", "answer": "a", "reference_steps": ["  "]}
        )
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="no reference steps"):
        load_pool(str(blank))


def test_trl_rows_carry_prompt_image_and_reward_columns(tmp_path):
    bench = load_benchmark("sample").subset(limit=3)
    rows = to_trl_dataset(
        bench.items, bench.image_bytes, cache_dir=tmp_path, system_prompt="Be exact."
    )
    assert len(rows) == 3
    first = rows[0]
    assert first["prompt"][0] == {"role": "system", "content": "Be exact."}
    assert first["prompt"][1]["role"] == "user"
    assert first["prompt"][1]["content"] == prompt_text(bench.items[0])
    assert isinstance(first["image"], Image.Image)
    assert first["reference_steps"] == bench.items[0].reference_steps
    assert first["n_reference_steps"] == len(bench.items[0].reference_steps)
    assert first["answer"] == bench.items[0].answer
    assert first["answer_type"] == "numeric"
    # Text-only pools have no image column at all (TRL would treat None images as images).
    text_only = [i.model_copy(update={"image": None}) for i in bench.items]
    assert (
        "image" not in to_trl_dataset(text_only, bench.image_bytes, cache_dir=tmp_path).column_names
    )


# ------------------------------------------------------------------ leakage


def _copy_pool(tmp_path, sample, ids, *, resize=None, question=None):
    """A JSONL pool that copies sample items (optionally resizing the image or rewording)."""
    rows = []
    for item_id in ids:
        original = sample.get(item_id)
        name = f"copy-{item_id}.png"
        image = Image.open(original.image)
        if resize:
            image = image.resize(resize)
        image.convert("RGB").save(tmp_path / name, format="PNG")
        rows.append(
            {
                "id": f"train-{item_id}",
                "source": original.source,
                "question": question or ("  " + original.question.upper() + "  "),
                "options": original.options,
                "answer": original.answer,
                "reference_steps": original.reference_steps,
                "image": name,
            }
        )
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return load_benchmark(str(path))


def test_planted_duplicate_is_found_even_reencoded_and_resized(tmp_path):
    sample = load_benchmark("sample")
    exact = _copy_pool(tmp_path, sample, ["plotqa-03"])
    report = check_leakage(exact, sample)
    assert [(m.train_id, m.benchmark_id, m.reason) for m in report.leaks] == [
        ("train-plotqa-03", "plotqa-03", "same_pixels")
    ]
    assert not report.clean

    resized_dir = tmp_path / "resized"
    resized_dir.mkdir()
    original = Image.open(sample.get("mmvp-02").image)
    resized = _copy_pool(
        resized_dir, sample, ["mmvp-02"], resize=(original.width // 2, original.height // 2)
    )
    report = check_leakage(resized, sample)
    assert [(m.benchmark_id, m.reason) for m in report.leaks] == [("mmvp-02", "similar_image")]
    assert report.leaks[0].image_distance is not None
    assert report.leaks[0].image_distance <= 4


def test_clean_pool_passes_and_near_misses_are_only_counted(tmp_path, pool_dir):
    from tiny_vlm_training import write_pool

    sample = load_benchmark("sample")
    clean = load_benchmark(str(write_pool(pool_dir)))
    assert check_leakage(clean, sample).clean

    # Same image, different question: counted as an image-only overlap, not a leak.
    other = _copy_pool(tmp_path, sample, ["scienceqa-02"], question="What colour is the border?")
    report = check_leakage(other, sample)
    assert report.clean
    assert report.n_image_only == 1
    assert report.image_only == [("train-scienceqa-02", "scienceqa-02")]


def test_text_only_items_leak_on_the_question():
    def text_item(item_id, question):
        return BenchmarkItem(
            id=item_id, source="s", question=question, answer="4", reference_steps=["Add."]
        )

    bench = Benchmark(name="bench", items=[text_item("b1", "What is 2 + 2?")])
    # "what is 2 + 2" and "what is 2+2" stay different after normalisation: the check is
    # exact on the normalised question, it does not guess at paraphrases.
    near = Benchmark(
        name="train", items=[text_item("t1", "what is 2+2"), text_item("t2", "What is 3 + 3?")]
    )
    assert check_leakage(near, bench).clean
    same = Benchmark(name="train", items=[text_item("t1", "  WHAT is 2 + 2 ")])
    assert [(m.train_id, m.reason) for m in check_leakage(same, bench).leaks] == [
        ("t1", "no_image")
    ]


def test_image_hashes():
    gradient = Image.linear_gradient("L").rotate(-90)
    assert difference_hash(gradient) == 2**64 - 1
    assert difference_hash(gradient.resize((64, 64))) == 2**64 - 1
    assert hamming(0b1100, 0b0101) == 2
    with pytest.raises(InputError, match="unreadable image"):
        image_fingerprint(b"not an image", where="pool:7")


@pytest.fixture
def pool_dir(tmp_path):
    return tmp_path / "pool"


def test_check_leakage_cli_exit_codes(tmp_path):
    from crystalbench.cli.main import app
    from tiny_vlm_training import write_pool

    runner = CliRunner()
    clean = write_pool(tmp_path / "clean")
    result = runner.invoke(app, ["data", "check-leakage", str(clean), "-b", "sample"])
    assert result.exit_code == 0, result.output
    assert "clean" in result.output

    sample_copy = tmp_path / "leaky"
    shutil.copytree(
        load_benchmark("sample").get("mathvision-01").image.rsplit("/", 2)[0], sample_copy
    )
    out = tmp_path / "report.json"
    result = runner.invoke(
        app,
        [
            "data",
            "check-leakage",
            str(sample_copy / "benchmark.jsonl"),
            "-b",
            "sample",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 1
    report = json.loads(out.read_text())
    assert len(report["leaks"]) == 40
    result = runner.invoke(
        app, ["data", "check-leakage", str(tmp_path / "missing.jsonl"), "-b", "sample"]
    )
    assert result.exit_code == 2
