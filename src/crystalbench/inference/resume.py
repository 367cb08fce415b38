"""Resuming a run: what an existing output file already answers, and what is left to ask.

Pure functions of the records already read (:class:`~.records.LoadedRecords`) and the
selected items, so the rules are tested without a backend:

- a file holding another model, prompt or sampling settings is a conflict
  (:func:`configuration_conflicts`), refused unless the caller allows mixing;
- items with a finished record are skipped; items with an error record are skipped too,
  unless ``retry_errors``: then their error records are dropped first (the caller
  rewrites the file without them) so the file never holds two records for one id
  (:func:`plan_resume`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crystalbench.inference.prompts import PromptTemplate
from crystalbench.inference.records import (
    GenerationSettings,
    InferenceRecord,
    LoadedRecords,
    describe_records,
)
from crystalbench.types import BenchmarkItem


def configuration_conflicts(
    loaded: LoadedRecords, model: str, prompt: PromptTemplate, settings: GenerationSettings
) -> list[str]:
    """How the records already in a file differ from this run's configuration.

    Returns:
        One phrase per differing part (models, prompt hashes, generation settings);
        empty when the file is empty or holds this configuration only.
    """
    found = describe_records(loaded.by_id.values())
    problems = []
    if any(m != model for m in found["models"]):
        problems.append(f"models {found['models']} (this run: {model!r})")
    if any(h != prompt.hash for h in found["prompt_hashes"]):
        problems.append(f"prompt hashes {found['prompt_hashes']} (this run: {prompt.hash})")
    wanted = settings.model_dump_json()
    if any(g != wanted for g in found["generation"]):
        problems.append(f"generation settings {found['generation']} (this run: {wanted})")
    return problems


@dataclass(frozen=True)
class ResumePlan:
    """What a run does with the records a file already holds."""

    pending: list[BenchmarkItem]
    """Selected items to ask, in selection order."""
    kept: dict[str, InferenceRecord]
    """Records that stay in the file (every record but the error records to retry)."""
    retried: set[str]
    """Ids whose error records are dropped to be asked again."""
    n_selected: int
    """Items selected."""
    n_already_done: int
    """Selected items with a finished record (skipped)."""
    n_skipped_errors: int
    """Selected items with an error record that stay skipped (no ``retry_errors``)."""
    needs_rewrite: bool
    """The file must be rewritten with :attr:`kept` before appending (error records to
    retry are dropped, or the file held an id twice)."""


def plan_resume(
    loaded: LoadedRecords, selected: Sequence[BenchmarkItem], *, retry_errors: bool
) -> ResumePlan:
    """Decide which selected items to ask, given the records already in the file.

    Examples:
        >>> from crystalbench.inference.records import LoadedRecords
        >>> plan = plan_resume(LoadedRecords(by_id={}), [], retry_errors=False)
        >>> plan.pending, plan.n_already_done, plan.needs_rewrite
        ([], 0, False)
    """
    done = loaded.done_ids
    failed = loaded.error_ids
    pending = [
        item for item in selected if item.id not in done and (retry_errors or item.id not in failed)
    ]
    retried = {item.id for item in pending if item.id in failed}
    kept = {i: r for i, r in loaded.by_id.items() if i not in retried}
    return ResumePlan(
        pending=pending,
        kept=kept,
        retried=retried,
        n_selected=len(selected),
        n_already_done=sum(1 for item in selected if item.id in done),
        n_skipped_errors=0 if retry_errors else sum(1 for i in selected if i.id in failed),
        needs_rewrite=bool(retried) or loaded.duplicates > 0,
    )
