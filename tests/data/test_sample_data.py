"""The bundled sample benchmark and its prediction files.

Checks the committed files in ``crystalbench/data/sample`` (shape, answer types, images,
prediction ids) and, with the real offline encoder, that the five model styles separate the
way the paper describes. That ``tools/sample_builder`` (outside the installed package)
regenerates them byte for byte is checked in ``tests/repo_tools/test_sample_builder.py``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from crystalbench.data import SAMPLE_DIR
from crystalbench.types import BenchmarkItem, Prediction
from tools.sample_builder import MISSING_IN_MESSY, PREDICTION_STYLES, SOURCES

BENCHMARK = SAMPLE_DIR / "benchmark.jsonl"
PREDICTIONS = SAMPLE_DIR / "predictions"
STRUCTURED_STYLES = [s for s in PREDICTION_STYLES if s != "messy-raw"]

# Hand-written type rules, independent of crystalbench.answers: options or an explicit type
# first, then yes/no, then numbers (plain, with thousands separators, decimals or LaTeX).
NUMERIC = re.compile(r"^-?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$")
LATEX_NUMERIC = re.compile(r"^(\d*\\sqrt\{\d+\}|\\frac\{\d+\}\{\d+\}|\d*\\pi)$")
LETTER_GOLD = re.compile(r"^[A-E]$")
MMVP_GOLD = re.compile(r"^\([ab]\)$")
EMBEDDED_OPTION = re.compile(r"^([A-E])\. (.+)$", re.MULTILINE)
META_STEP = re.compile(r"^Select option ([A-E]) from the provided list of choices\.$")


def load_items(path: Path = BENCHMARK) -> list[BenchmarkItem]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [BenchmarkItem.model_validate_json(line) for line in lines]


def load_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def answer_kind(item: BenchmarkItem) -> str:
    if item.answer_type is not None:
        return item.answer_type
    if item.options:
        return "multiple_choice"
    if item.answer.strip().lower() in {"yes", "no"}:
        return "yes_no"
    if NUMERIC.match(item.answer) or LATEX_NUMERIC.match(item.answer):
        return "numeric"
    return "free_form"


def choices(item: BenchmarkItem) -> list[str]:
    """Options given separately, or embedded RealWorldQA-style in the question."""
    if item.options:
        return list(item.options)
    return [text for _, text in EMBEDDED_OPTION.findall(item.question)]


def gold_index(item: BenchmarkItem) -> int | None:
    """Which option the gold names (a letter, ``(a)`` or the option text)."""
    opts = choices(item)
    if LETTER_GOLD.match(item.answer):
        return "ABCDE".index(item.answer)
    if MMVP_GOLD.match(item.answer):
        return "ab".index(item.answer[1])
    return opts.index(item.answer) if item.answer in opts else None


@pytest.fixture(scope="module")
def items() -> list[BenchmarkItem]:
    return load_items()


# --- the benchmark file ------------------------------------------------------------------------


def test_every_line_is_a_benchmark_item_with_8_per_source(items: list[BenchmarkItem]) -> None:
    assert len(items) == 40
    assert Counter(item.source for item in items) == dict.fromkeys(SOURCES, 8)


def test_ids_are_unique_and_named_after_their_source(items: list[BenchmarkItem]) -> None:
    ids = [item.id for item in items]
    assert len(set(ids)) == len(ids)
    for item in items:
        assert re.fullmatch(rf"{item.source}-\d\d", item.id), item.id


def test_images_are_relative_small_pngs_that_open(items: list[BenchmarkItem]) -> None:
    for item in items:
        assert item.image == f"images/{item.id}.png"
        path = SAMPLE_DIR / item.image
        with Image.open(path) as image:
            assert image.format == "PNG"
            assert max(image.size) <= 640
            image.load()
    total = sum(p.stat().st_size for p in SAMPLE_DIR.rglob("*") if p.is_file())
    assert total < 2_000_000


def test_reference_chains_have_3_to_20_steps_and_crystal_like_length(
    items: list[BenchmarkItem],
) -> None:
    lengths = [len(item.reference_steps) for item in items]
    assert all(3 <= n <= 20 for n in lengths), lengths
    assert 8 <= sum(lengths) / len(lengths) <= 12
    for item in items:
        assert all(step.strip() == step and step for step in item.reference_steps)
        assert len(set(item.reference_steps)) == len(item.reference_steps), item.id


def test_all_answer_types_and_gold_forms_appear(items: list[BenchmarkItem]) -> None:
    kinds = Counter(answer_kind(item) for item in items)
    assert set(kinds) == {"multiple_choice", "numeric", "yes_no", "free_form"}
    mc = [item for item in items if answer_kind(item) == "multiple_choice"]
    assert any(LETTER_GOLD.match(i.answer) and i.options for i in mc)  # letter gold
    assert any(i.answer in i.options for i in mc)  # option-text gold (ScienceQA)
    assert any(MMVP_GOLD.match(i.answer) for i in mc)  # MMVP "(a)" gold
    assert any(not i.options for i in mc)  # RealWorldQA: options embedded in the question
    numeric = [item.answer for item in items if answer_kind(item) == "numeric"]
    assert any("," in g for g in numeric)
    assert any("." in g for g in numeric)
    assert {"\\frac{3}{2}", "2\\sqrt{3}"} <= set(numeric)
    assert {"Yes", "No"} <= {i.answer for i in items if answer_kind(i) == "yes_no"}


def test_multiple_choice_golds_name_an_existing_option(items: list[BenchmarkItem]) -> None:
    for item in items:
        if answer_kind(item) != "multiple_choice":
            continue
        index = gold_index(item)
        assert index is not None, item.id
        assert index < len(choices(item)), item.id
        if not item.options:
            assert item.question.endswith(
                "Please answer directly with only the letter of the correct option and nothing "
                "else."
            )


def test_meta_steps_select_the_gold_option(items: list[BenchmarkItem]) -> None:
    seen = 0
    for item in items:
        for step in item.reference_steps:
            match = META_STEP.match(step)
            if match:
                seen += 1
                assert "ABCDE".index(match.group(1)) == gold_index(item), item.id
    assert seen >= 3


def test_difficulty_is_set_on_some_items_only(items: list[BenchmarkItem]) -> None:
    given = [item.difficulty for item in items if item.difficulty is not None]
    assert 5 <= len(given) < len(items)
    assert {"easy", "medium", "hard"} <= set(given)


def test_mmvp_items_come_in_pairs_with_opposite_answers(items: list[BenchmarkItem]) -> None:
    pairs: dict[str, list[BenchmarkItem]] = {}
    for item in items:
        if item.source == "mmvp":
            pairs.setdefault(item.metadata["pair"], []).append(item)
    assert len(pairs) == 4
    for members in pairs.values():
        first, second = members
        assert first.question == second.question
        assert first.options == second.options
        assert {first.answer, second.answer} == {"(a)", "(b)"}


# --- prediction files --------------------------------------------------------------------------


def test_prediction_files_exist_for_every_style() -> None:
    assert sorted(p.stem for p in PREDICTIONS.glob("*.jsonl")) == sorted(PREDICTION_STYLES)


@pytest.mark.parametrize("style", PREDICTION_STYLES)
def test_prediction_ids_are_unique_benchmark_ids(style: str, items: list[BenchmarkItem]) -> None:
    records = load_records(PREDICTIONS / f"{style}.jsonl")
    ids = [Prediction.model_validate(r).id for r in records]
    assert len(set(ids)) == len(ids)
    assert set(ids) <= {item.id for item in items}
    assert all(r["model"] == style for r in records)


@pytest.mark.parametrize("style", STRUCTURED_STYLES)
def test_structured_styles_cover_every_item(style: str, items: list[BenchmarkItem]) -> None:
    records = load_records(PREDICTIONS / f"{style}.jsonl")
    assert [r["id"] for r in records] == [item.id for item in items]
    for record in records:
        assert set(record) == {"id", "model", "reasoning_steps", "answer"}
        assert record["reasoning_steps"]
        assert all(s.strip() for s in record["reasoning_steps"])


def test_messy_raw_holds_raw_text_of_every_shape_and_misses_two_items(
    items: list[BenchmarkItem],
) -> None:
    records = load_records(PREDICTIONS / "messy-raw.jsonl")
    assert all(set(r) == {"id", "model", "response"} for r in records)
    missing = {item.id for item in items} - {r["id"] for r in records}
    assert missing == set(MISSING_IN_MESSY)
    texts = [r["response"] for r in records]
    for marker in ("```json", "<think>", "**Step 1:**", "Final answer: \\boxed{", ",]"):
        assert any(marker in t for t in texts), marker
    assert "I cannot help with that." in texts
    assert "}}}###" in texts

    def loads(text: str) -> object:
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return None

    cut = [t for t in texts if t.startswith('{"reasoning_steps"') and loads(t) is None]
    assert len(cut) >= 2  # the truncated outputs (trailing-comma ones start the same way)
    assert sum(t.startswith("{") and t.endswith("}") and loads(t) is not None for t in texts) >= 2


def test_style_shapes_follow_their_templates(items: list[BenchmarkItem]) -> None:
    n_ref = {item.id: len(item.reference_steps) for item in items}
    terse = load_records(PREDICTIONS / "terse-precise.jsonl")
    verbose = load_records(PREDICTIONS / "verbose-recall.jsonl")
    weak = load_records(PREDICTIONS / "right-answer-weak-reasoning.jsonl")
    assert all(2 <= len(r["reasoning_steps"]) <= 5 for r in terse)
    ratio = np.mean([len(r["reasoning_steps"]) / n_ref[r["id"]] for r in verbose])
    assert 1.5 <= ratio <= 2.0
    assert all(1 <= len(r["reasoning_steps"]) <= 2 for r in weak)


def test_weak_reasoning_style_mostly_answers_right(items: list[BenchmarkItem]) -> None:
    """Hand rule: the answer is the gold, or a letter naming the gold's option."""
    by_id = {item.id: item for item in items}
    right = 0
    for record in load_records(PREDICTIONS / "right-answer-weak-reasoning.jsonl"):
        item = by_id[record["id"]]
        answer = record["answer"].strip()
        if answer.lower() == item.answer.lower():
            right += 1
        elif item.options or choices(item):
            letters = "ab" if MMVP_GOLD.match(item.answer) else "ABCDE"
            token = answer.strip("()")
            right += token in letters and letters.index(token) == gold_index(item)
    assert right >= 36


# --- the styles separate as in the paper (real offline encoder) -------------------------------


@pytest.mark.slow
def test_styles_separate_like_the_paper_with_the_offline_encoder(
    items: list[BenchmarkItem],
) -> None:
    """Terse: P >> R; verbose: R > P; scrambled: LIS low, Ordered F1 < F1; weak: F1 tiny."""
    pytest.importorskip("sentence_transformers")
    from crystalbench.encoders import load_encoder
    from crystalbench.scoring.matching import cosine_matrix, score_chain

    try:
        encoder = load_encoder("minilm-offline")
        encoder.encode(["probe"])
    except Exception as exc:  # the optional offline model is not installed
        pytest.skip(f"minilm-offline unavailable: {exc}")
    styles = {s: load_records(PREDICTIONS / f"{s}.jsonl") for s in STRUCTURED_STYLES}
    texts = sorted(
        {step for item in items for step in item.reference_steps}
        | {step for records in styles.values() for r in records for step in r["reasoning_steps"]}
    )
    vectors = dict(zip(texts, encoder.encode(texts), strict=True))
    refs = {item.id: np.stack([vectors[t] for t in item.reference_steps]) for item in items}
    means: dict[str, dict[str, float]] = {}
    for style, records in styles.items():
        scores = [
            score_chain(
                cosine_matrix(np.stack([vectors[t] for t in r["reasoning_steps"]]), refs[r["id"]])
            )
            for r in records
        ]
        means[style] = {
            key: float(np.mean([getattr(s, key) for s in scores]))
            for key in ("precision", "recall", "f1", "lis", "ordered_f1")
        }
    terse, verbose = means["terse-precise"], means["verbose-recall"]
    scrambled, weak = means["scrambled-order"], means["right-answer-weak-reasoning"]
    assert terse["precision"] > 0.85
    assert terse["recall"] < 0.5
    assert terse["precision"] - terse["recall"] > 0.4
    assert verbose["recall"] > 0.85
    assert verbose["recall"] > verbose["precision"] + 0.2
    assert scrambled["f1"] > 0.8
    assert scrambled["lis"] < 0.6
    assert scrambled["ordered_f1"] < scrambled["f1"] - 0.1
    assert terse["lis"] > 0.9
    assert verbose["lis"] > scrambled["lis"] + 0.3
    assert weak["f1"] < 0.2
