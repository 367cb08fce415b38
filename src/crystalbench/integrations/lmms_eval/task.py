"""The CRYSTAL task for lmms-eval: installing the task folder, and what its hooks do.

``crystal integrations lmms-eval -o DIR --benchmark B`` writes ``DIR/crystal/``:

- ``crystal.yaml``: the task (``generate_until``, the docs as a JSON dataset, five metrics);
- ``utils.py``: the hooks the YAML names, each a call into :class:`CrystalTask`;
- ``crystal_docs.jsonl``: one row per item (``id``, ``source``, ``question``, ``options``,
  ``answer``, ``image``: an absolute path), the dataset lmms-eval iterates over;
- ``crystal_task.json``: the benchmark to score against (loaded with
  :func:`crystalbench.data.load_benchmark`, checked against the fingerprint it had at install
  time), the encoder, and the prompt.

lmms-eval then runs ``lmms-eval --include_path DIR --tasks crystal``. For each doc,
``process_results`` scores the model's output with crystalbench's scoring engine
(:class:`~crystalbench.scoring.ScoringEngine`: the same per-item record as ``crystal
score``'s ``examples.jsonl``, several reference chains and all) and hands that record to
every metric; each aggregation macro-averages the records with the engine's
:class:`~crystalbench.scoring.Aggregator`. So ``crystal_match_f1`` and the
others are the numbers ``crystal score`` prints for the same outputs. The encoder is the one
recorded at install (``--encoder``), or ``$CRYSTALBENCH_LMMS_EVAL_ENCODER`` when set.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crystalbench._internal.io import atomic_write_json, atomic_write_text, read_json_file
from crystalbench.config.scoring import ScoreConfig
from crystalbench.config.settings import LMMS_EVAL_ENCODER_ENV, LMMS_EVAL_TASK_NAME
from crystalbench.defaults import ENCODER
from crystalbench.errors import InputError
from crystalbench.types import BenchmarkItem, ItemResult, Prediction

TASK_FILES: tuple[str, ...] = ("crystal.yaml", "utils.py")
"""Files copied from the package into the task folder."""

DOCS_FILE = "crystal_docs.jsonl"
"""The docs lmms-eval iterates over."""

SETTINGS_FILE = "crystal_task.json"
"""What the hooks score against (benchmark, fingerprint, encoder, prompt)."""

DOCS_PLACEHOLDER = "@CRYSTAL_DOCS@"
"""Where ``crystal.yaml`` gets the absolute path of the docs."""

METRIC_KEYS: tuple[str, ...] = ("match_f1", "ordered_f1", "precision", "recall", "accuracy")
"""Summary metrics the task reports, as ``crystal_<key>``."""

PACKAGE_FOLDER = Path(__file__).resolve().parent
"""Where the task files ship inside crystalbench."""


def install_task(
    folder: str | Path,
    benchmark: str | Path,
    *,
    encoder: str = ENCODER,
    prompt: str | None = None,
    image_root: str | Path | None = None,
) -> Path:
    """Write the CRYSTAL task into ``folder/crystal`` for ``lmms-eval --include_path folder``.

    Args:
        folder: The folder lmms-eval includes (created if needed).
        benchmark: What :func:`crystalbench.data.load_benchmark` accepts (``sample``, the hub
            id, a ``.jsonl`` / ``.parquet`` file or a ``save_to_disk`` folder).
        encoder: The sentence encoder the hooks score with.
        prompt: Prompt template (``None``: crystalbench's ``infer_v1``).
        image_root: As in :func:`~crystalbench.data.load_benchmark`.

    Returns:
        The task folder (``folder/crystal``).

    Raises:
        InputError: The benchmark cannot be read (file, line and field named).
    """
    from crystalbench.data import load_benchmark
    from crystalbench.inference.prompts import load_prompt

    bench = load_benchmark(benchmark, image_root=image_root)
    template = load_prompt(prompt)
    target = Path(folder) / LMMS_EVAL_TASK_NAME
    target.mkdir(parents=True, exist_ok=True)
    images = target / "images"
    lines = []
    for position, item in enumerate(bench.items):
        image = None
        if item.image is not None:
            source = Path(item.image)
            if source.is_absolute() and source.is_file():
                image = str(source)
            else:  # hub rows carry their image bytes: write them beside the docs
                data = bench.image_bytes(item)
                if data:
                    images.mkdir(exist_ok=True)
                    written = images / f"{position:06d}.img"
                    written.write_bytes(data)
                    image = str(written.resolve())
        row = {
            "id": item.id,
            "source": item.source,
            "question": item.question,
            "options": list(item.options),
            "answer": item.answer,
            "image": image,
        }
        lines.append(json.dumps(row, ensure_ascii=False))
    docs = target / DOCS_FILE
    atomic_write_text(docs, "\n".join(lines) + "\n")
    yaml_text = (PACKAGE_FOLDER / "crystal.yaml").read_text(encoding="utf-8")
    atomic_write_text(
        target / "crystal.yaml", yaml_text.replace(DOCS_PLACEHOLDER, str(docs.resolve()))
    )
    shutil.copyfile(PACKAGE_FOLDER / "utils.py", target / "utils.py")
    atomic_write_json(
        target / SETTINGS_FILE,
        {
            "benchmark": str(benchmark),
            "image_root": str(image_root) if image_root is not None else None,
            "benchmark_fingerprint": bench.fingerprint,
            "encoder": encoder,
            "prompt": prompt,
            "prompt_hash": template.hash,
        },
    )
    return target


@dataclass
class CrystalTask:
    """What the task's hooks do, set up from a task folder's ``crystal_task.json``.

    The benchmark, prompt and scorer are loaded on first use (lmms-eval imports ``utils.py``
    long before it calls a hook) and kept for the process.

    Args:
        folder: The task folder (``crystal_task.json`` inside).
    """

    folder: Path
    _settings: dict[str, Any] | None = field(default=None, repr=False)
    _benchmark: Any = field(default=None, repr=False)
    _prompt: Any = field(default=None, repr=False)
    _scorer: Any = field(default=None, repr=False)

    @property
    def settings(self) -> dict[str, Any]:
        """``crystal_task.json``, read once."""
        if self._settings is None:
            path = self.folder / SETTINGS_FILE
            data = read_json_file(path, whole=False)
            if not isinstance(data, dict) or not isinstance(data.get("benchmark"), str):
                raise InputError(
                    "expected the object `crystal integrations lmms-eval -o DIR` writes",
                    path=path,
                    field="benchmark",
                )
            self._settings = data
        return self._settings

    @property
    def benchmark(self) -> Any:
        """The benchmark scored against, checked against its fingerprint at install time."""
        if self._benchmark is None:
            from crystalbench.data import load_benchmark

            settings = self.settings
            bench = load_benchmark(settings["benchmark"], image_root=settings.get("image_root"))
            recorded = settings.get("benchmark_fingerprint")
            if recorded is not None and recorded != bench.fingerprint:
                raise InputError(
                    f"benchmark {settings['benchmark']} has changed since the task was "
                    f"installed (fingerprint {bench.fingerprint}, installed {recorded}): "
                    "install the task again",
                    path=self.folder / SETTINGS_FILE,
                    field="benchmark_fingerprint",
                )
            self._benchmark = bench
        return self._benchmark

    def item(self, doc: dict[str, Any]) -> BenchmarkItem:
        """The benchmark item of a doc (by its ``id``)."""
        item_id = doc.get("id") if isinstance(doc, dict) else None
        item = self.benchmark.get(str(item_id)) if item_id is not None else None
        if item is None:
            raise InputError(
                f"doc id {item_id!r} is not an item of benchmark {self.benchmark.name}: the "
                f"docs and {SETTINGS_FILE} come from different installs",
                path=self.folder / DOCS_FILE,
                field="id",
            )
        return item

    def doc_to_visual(self, doc: dict[str, Any]) -> list[Any]:
        """The doc's image as an RGB PIL image in a list (empty without an image)."""
        path = doc.get("image")
        if not path:
            return []
        from PIL import Image

        with Image.open(path) as image:
            return [image.convert("RGB")]

    def doc_to_text(self, doc: dict[str, Any]) -> str:
        """The prompt ``crystal infer`` would send for this item."""
        if self._prompt is None:
            from crystalbench.inference.prompts import load_prompt

            self._prompt = load_prompt(self.settings.get("prompt"))
        return str(self._prompt.render(self.item(doc)))

    def scorer(self) -> Any:
        """The crystalbench scoring engine (its encoder built once, its vectors cached)."""
        if self._scorer is None:
            from crystalbench.scoring import ScoringEngine

            encoder = os.environ.get(LMMS_EVAL_ENCODER_ENV) or self.settings.get("encoder")
            self._scorer = ScoringEngine(ScoreConfig(encoder=encoder or ENCODER))
        return self._scorer

    def process_results(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        """Score one doc: its :class:`ItemResult` as JSON under each ``crystal_<metric>``.

        ``results`` holds the filtered outputs of the doc's requests (one for
        ``generate_until``); an output that is not text is scored as an empty response.
        """
        item = self.item(doc)
        output = results[0] if results else ""
        if isinstance(output, list):  # a filter that kept every sample
            output = output[0] if output else ""
        response = output if isinstance(output, str) else ""
        prediction = Prediction(id=item.id, response=response)
        (result,) = list(self.scorer().iter_results([item], {item.id: prediction}))
        record = result.model_dump(mode="json")
        return {f"{LMMS_EVAL_TASK_NAME}_{key}": record for key in METRIC_KEYS}

    def aggregate(self, records: list[dict[str, Any]], key: str) -> float:
        """The summary metric ``key`` over the scored docs (crystalbench's macro-average)."""
        from crystalbench.scoring import Aggregator

        aggregator = Aggregator()
        for record in records:
            aggregator.add(ItemResult.model_validate(record))
        summary = aggregator.summary({})
        return float(getattr(summary, key))


_TASKS: dict[Path, CrystalTask] = {}


def task_for_folder(folder: Path) -> CrystalTask:
    """The :class:`CrystalTask` of a task folder (one per folder and process)."""
    task = _TASKS.get(folder)
    if task is None:
        task = _TASKS[folder] = CrystalTask(folder)
    return task
