"""Resume planning on its own: which items a rerun asks, which records stay."""

from __future__ import annotations

from crystalbench.inference import GenerationSettings, InferenceRecord, LoadedRecords, load_prompt
from crystalbench.inference.resume import configuration_conflicts, plan_resume
from fakes import make_item


def record(item_id, *, ok=True, model="m", settings=None):
    return InferenceRecord(
        id=item_id,
        model=model,
        backend="openai",
        response="Answer: B" if ok else None,
        error=None if ok else "boom",
        error_kind=None if ok else "server_error",
        prompt_name="infer_v1",
        prompt_hash=load_prompt().hash,
        generation=settings or GenerationSettings(),
        created_at="2026-01-01T00:00:00+00:00",
    )


def loaded(*records, duplicates=0):
    return LoadedRecords(by_id={r.id: r for r in records}, duplicates=duplicates)


ITEMS = [make_item(i) for i in ("1", "2", "3", "4")]


def test_finished_and_failed_items_are_skipped_without_retry_errors():
    plan = plan_resume(loaded(record("1"), record("2", ok=False)), ITEMS, retry_errors=False)
    assert [i.id for i in plan.pending] == ["3", "4"]
    assert (plan.n_selected, plan.n_already_done, plan.n_skipped_errors) == (4, 1, 1)
    assert plan.retried == set()
    assert set(plan.kept) == {"1", "2"}
    assert not plan.needs_rewrite


def test_retry_errors_drops_the_error_records_before_asking_again():
    plan = plan_resume(loaded(record("1"), record("2", ok=False)), ITEMS, retry_errors=True)
    assert [i.id for i in plan.pending] == ["2", "3", "4"]
    assert plan.retried == {"2"}
    assert set(plan.kept) == {"1"}
    assert plan.n_skipped_errors == 0
    assert plan.needs_rewrite


def test_records_outside_the_selection_stay_and_duplicates_force_a_rewrite():
    plan = plan_resume(
        loaded(record("9", ok=False), record("1"), duplicates=1), ITEMS[:2], retry_errors=True
    )
    assert [i.id for i in plan.pending] == ["2"]
    assert set(plan.kept) == {"9", "1"}  # not selected: its error record is left alone
    assert plan.needs_rewrite  # one record per id after outside edits


def test_configuration_conflicts_name_what_differs():
    prompt = load_prompt()
    same = loaded(record("1"))
    assert configuration_conflicts(same, "m", prompt, GenerationSettings()) == []
    other = loaded(record("1", model="a"), record("2", settings=GenerationSettings(seed=1)))
    problems = configuration_conflicts(other, "m", prompt, GenerationSettings())
    assert len(problems) == 2
    assert problems[0].startswith("models ['a', 'm']")
    assert problems[1].startswith("generation settings")
