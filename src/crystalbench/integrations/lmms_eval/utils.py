"""lmms-eval hooks of the CRYSTAL task (``crystal.yaml`` names them ``utils.<function>``).

``crystal integrations lmms-eval -o DIR`` copies this file beside ``crystal.yaml``;
everything it does is :class:`crystalbench.integrations.lmms_eval.task.CrystalTask`'s, set up
from the ``crystal_task.json`` of the folder this file lies in (read on first use).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crystalbench.integrations.lmms_eval.task import task_for_folder

_FOLDER = Path(__file__).resolve().parent


def crystal_doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The item's image as a PIL image (an empty list when it has none)."""
    return task_for_folder(_FOLDER).doc_to_visual(doc)


def crystal_doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
    """The CRYSTAL prompt of the item (crystalbench's ``infer_v1`` unless configured)."""
    return task_for_folder(_FOLDER).doc_to_text(doc)


def crystal_process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
    """Score one output with crystalbench: the item's record under each metric's name."""
    return task_for_folder(_FOLDER).process_results(doc, results)


def crystal_aggregate_match_f1(results: list[dict[str, Any]]) -> float:
    return task_for_folder(_FOLDER).aggregate(results, "match_f1")


def crystal_aggregate_ordered_f1(results: list[dict[str, Any]]) -> float:
    return task_for_folder(_FOLDER).aggregate(results, "ordered_f1")


def crystal_aggregate_precision(results: list[dict[str, Any]]) -> float:
    return task_for_folder(_FOLDER).aggregate(results, "precision")


def crystal_aggregate_recall(results: list[dict[str, Any]]) -> float:
    return task_for_folder(_FOLDER).aggregate(results, "recall")


def crystal_aggregate_accuracy(results: list[dict[str, Any]]) -> float:
    return task_for_folder(_FOLDER).aggregate(results, "accuracy")
