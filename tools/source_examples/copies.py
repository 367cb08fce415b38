"""The bundled sample's items in every source's published layout: the package's example data.

``crystal data build SOURCE --from DIR`` reads a source in the layout it publishes; these
copies let a user (and ``crystal demo --construction``) try that without downloading anything.
Each holds the sample's 8 items of that source (``src/crystalbench/data/sample``: synthetic
items drawn for crystalbench, nothing copied from the real datasets), with the sample's own
images, written by :mod:`tools.source_examples.layouts` as the source publishes them:

- ``mathvision/``: ``data/test-00000-of-00001-*.parquet`` (``id``, ``question``, ``options``,
  ``decoded_image``, a letter ``answer`` for multiple choice, ``level``, ``subject``);
- ``scienceqa-img/``: ``ScienceQA-IMG/test-00000-of-00001.parquet`` (``choices`` and the
  gold's index in ``answer``);
- ``realworldqa/``: ``data/test-0000N-of-00002-*.parquet`` (options and RealWorldQA's
  instruction inside the question text);
- ``mmvp/``: ``Questions.csv`` and ``MMVP Images/N.jpg`` (the ``(a) X (b) Y`` options);
- ``plotqa/``: ``test/qa_pairs_V1.json`` and ``test/png/N.png`` (numeric answers as numbers);
- ``textvqa/``: ``TextVQA_0.5.1_train.json`` and ``train_images/`` (three questions of
  :func:`textvqa_rows`: the sample has no TextVQA item).

Run ``python -m tools.source_examples`` from the repository root to rewrite
``src/crystalbench/sources/examples`` (``--out DIR`` writes elsewhere);
``tests/repo_tools/test_source_examples.py`` checks the committed copies are what it writes.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PIL import Image

from crystalbench.data.loading import SAMPLE_DIR
from tools.source_examples.layouts import (
    MC_INSTRUCTION,
    OPEN_INSTRUCTION,
    image_struct,
    write_mathvision,
    write_mmvp_original,
    write_plotqa,
    write_realworldqa,
    write_scienceqa,
    write_textvqa_release,
)

__all__ = [
    "EXAMPLES_DIR",
    "SOURCES",
    "build_source_examples",
    "mathvision_rows",
    "mmvp_rows",
    "plotqa_pairs",
    "realworldqa_rows",
    "sample_rows",
    "scienceqa_rows",
    "textvqa_rows",
]

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "src/crystalbench/sources/examples"
"""Where the package keeps the copies (``crystalbench.sources.EXAMPLES_DIR``)."""

SOURCES = ("mathvision", "scienceqa-img", "realworldqa", "mmvp", "plotqa", "textvqa")
"""One folder per source adapter, named as ``crystal data build`` names the source."""

_LETTERS = "ABCDEFGHIJ"


def sample_rows(source: str) -> list[dict[str, Any]]:
    """The sample's records (as stored in ``benchmark.jsonl``) of one source, in order."""
    lines = (SAMPLE_DIR / "benchmark.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return [row for row in rows if row["source"] == source]


def _image(row: Mapping[str, Any]) -> bytes:
    return (SAMPLE_DIR / row["image"]).read_bytes()


def _jpeg(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with Image.open(io.BytesIO(data)) as image:
        image.convert("RGB").save(buffer, format="JPEG", quality=92)
    return buffer.getvalue()


def _number(row: Mapping[str, Any]) -> int:
    return int(str(row["id"]).rsplit("-", 1)[1])


def _answer_index(row: Mapping[str, Any]) -> int:
    """The gold's position among the options: a letter, or the option's own text."""
    answer, options = row["answer"], row["options"]
    if len(answer) == 1 and answer in _LETTERS[: len(options)]:
        return _LETTERS.index(answer)
    return list(options).index(answer)


def mathvision_rows() -> list[dict[str, Any]]:
    """The sample's MathVision items in ``MathLLMs/MathVision``'s columns."""
    out = []
    for row in sample_rows("mathvision"):
        number = _number(row)
        options = list(row["options"])
        answer = _LETTERS[_answer_index(row)] if options else row["answer"]
        out.append(
            {
                "id": str(number),
                "question": row["question"],
                "options": options,
                "image": f"images/{number}.png",
                "decoded_image": image_struct(_image(row), f"{number}.png"),
                "answer": answer,
                "solution": "",
                "level": int(row["metadata"].get("level", 1)),
                "subject": str(row["metadata"].get("subject", "")),
            }
        )
    return out


def scienceqa_rows() -> list[dict[str, Any]]:
    """The sample's ScienceQA items in ``lmms-lab/ScienceQA``'s columns (the gold's index)."""
    out = []
    for row in sample_rows("scienceqa"):
        meta = row["metadata"]
        out.append(
            {
                "image": image_struct(_image(row)),
                "question": row["question"],
                "choices": list(row["options"]),
                "answer": _answer_index(row),
                "hint": "",
                "task": "closed choice",
                "grade": str(meta.get("grade", "")),
                "subject": str(meta.get("subject", "")),
                "topic": str(meta.get("topic", "")),
                "category": "",
                "skill": "",
                "lecture": "",
                "solution": "",
            }
        )
    return out


def realworldqa_rows() -> list[dict[str, Any]]:
    """The sample's RealWorldQA items as ``xai-org/RealworldQA`` has them: options and the
    instruction inside the question text."""
    out = []
    for row in sample_rows("realworldqa"):
        question = row["question"]
        if MC_INSTRUCTION not in question and OPEN_INSTRUCTION not in question:
            question = f"{question} {OPEN_INSTRUCTION}"
        out.append({"image": image_struct(_image(row)), "question": question,
                    "answer": row["answer"]})  # fmt: skip
    return out


def mmvp_rows() -> list[dict[str, Any]]:
    """The sample's MMVP items in ``Questions.csv``'s columns (pairs as consecutive indices)."""
    return [
        {
            "Index": _number(row),
            "Question": row["question"],
            "Options": row["metadata"]["original_options"],
            "Correct Answer": row["answer"],
            "image_file": row["image"],
        }
        for row in sample_rows("mmvp")
    ]


_PLOT_TYPES = {"vbar": "vbar_categorical", "hbar": "hbar_categorical", "line": "line"}
_TEMPLATES = {
    "range": "min_max",
    "argmax": "min_max",
    "mean": "compound",
    "compare": "comparison",
    "difference": "compound",
    "sum": "compound",
}


def _plotqa_answer(row: Mapping[str, Any]) -> Any:
    answer = row["answer"]
    if row["options"]:
        return row["options"][_answer_index(row)]  # PlotQA has no options: the option's text
    text = answer.replace(",", "")
    try:
        return float(text)  # PlotQA's numeric answers are JSON numbers
    except ValueError:
        return answer


def plotqa_pairs() -> list[dict[str, Any]]:
    """The sample's PlotQA items as QA pairs of the release (one plot each)."""
    out = []
    for index, row in enumerate(sample_rows("plotqa")):
        meta = row["metadata"]
        out.append(
            {
                "image_index": index,
                "question_string": row["question"],
                "answer": _plotqa_answer(row),
                "answer_bbox": [],
                "template": _TEMPLATES.get(str(meta.get("template")), "compound"),
                "type": _PLOT_TYPES.get(str(meta.get("chart")), "line"),
            }
        )
    return out


def textvqa_rows() -> list[dict[str, Any]]:
    """The TextVQA example (the sample has no TextVQA item): three questions, a clear
    majority, a normalisation merge and a tie among the ten answers."""

    def row(qid: int, image_id: str, question: str, answers: list[str]) -> dict[str, Any]:
        return {
            "question": question,
            "image_id": image_id,
            "image_classes": ["Sign", "Building"],
            "flickr_original_url": f"https://farm.example/{image_id}_o.jpg",
            "flickr_300k_url": f"https://farm.example/{image_id}_z.jpg",
            "image_width": 48,
            "image_height": 32,
            "answers": answers,
            "question_tokens": question.lower().rstrip("?").split(),
            "question_id": qid,
            "set_name": "train",
        }

    return [
        row(
            34602,
            "0054c91397f2fe05",
            "what brand is the soda?",
            [
                "coca cola",
                "Coca Cola",
                "coca-cola",
                "pepsi",
                "coca cola",
                "coke",
                "coca cola",
                "Coca-Cola",
                "coca cola",
                "cola",
            ],
        ),
        row(
            34603,
            "00685bc495504d61",
            "what number is on the jersey?",
            ["23", "23", "23", "32", "23", "23", "23", "23", "23", "2"],
        ),
        row(
            34604,
            "006d10667d17b924",
            "what does the sign say?",
            ["stop", "yield", "stop", "yield", "exit", "stop", "yield", "go", "halt", "slow"],
        ),
    ]


README = """# Example copies of the CRYSTAL sources

The bundled sample's items (`../../sample`: synthetic, drawn for crystalbench; nothing here
comes from the real datasets) written in each source's published layout, so that
`crystal data build` can be tried offline; `crystal demo --construction` runs on them.

- `mathvision/`: `data/test-00000-of-00001-*.parquet`
- `scienceqa-img/`: `ScienceQA-IMG/test-00000-of-00001.parquet`
- `realworldqa/`: `data/test-0000N-of-00002-*.parquet`
- `mmvp/`: `Questions.csv`, `MMVP Images/N.jpg`
- `plotqa/`: `test/qa_pairs_V1.json`, `test/png/N.png`
- `textvqa/`: `TextVQA_0.5.1_train.json`, `train_images/` (three questions of its own: the
  sample has no TextVQA item)

Try one (`DIR` is this folder: `python -c "from crystalbench.sources import
EXAMPLES_DIR; print(EXAMPLES_DIR)"`):

    crystal data build mmvp --from DIR/mmvp -o items/mmvp
    crystal data build plotqa --from DIR/plotqa --sample 8 -o items/plotqa

Written by `python -m tools.source_examples` in the crystalbench repository.
"""


def build_source_examples(out: Path = EXAMPLES_DIR) -> Path:
    """Write every source's copy under ``out`` (``out/<source>/``) and the README.

    Returns:
        ``out``.
    """
    import shutil

    out.mkdir(parents=True, exist_ok=True)
    for source in SOURCES:
        if (out / source).exists():
            shutil.rmtree(out / source)
    write_mathvision(out / "mathvision", mathvision_rows())
    write_scienceqa(out / "scienceqa-img", {"test": scienceqa_rows()})
    write_realworldqa(out / "realworldqa", realworldqa_rows())
    mmvp = mmvp_rows()
    write_mmvp_original(
        out / "mmvp",
        mmvp,
        image_for=lambda row: _jpeg((SAMPLE_DIR / row["image_file"]).read_bytes()),
    )
    plots = sample_rows("plotqa")
    write_plotqa(out / "plotqa", plotqa_pairs(), image_for=lambda index: _image(plots[index]))
    write_textvqa_release(out / "textvqa", textvqa_rows())
    (out / "README.md").write_text(README, encoding="utf-8")
    return out
