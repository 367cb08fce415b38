"""Import of references folders and step-pair files, export of chains, rejected ids, pairs and
the audit log (SQLite, and PostgreSQL when configured)."""

from __future__ import annotations

import json

import pytest
from review_support import (
    chain_record,
    make_users,
    pair_rows,
    users_by_name,
    write_pairs,
    write_references,
)
from sqlalchemy import select
from sqlalchemy.orm import undefer

from crystalbench.errors import InputError
from crystalbench.review.assign import next_task, submit_label
from crystalbench.review.exporting import export_file, export_text
from crystalbench.review.importing import import_path
from crystalbench.review.labels import Submission
from crystalbench.review.models import Adjudication, Item, Task, utcnow
from crystalbench.review.settings import ReviewSettings

SETTINGS = ReviewSettings(gold_every=0)


def _tasks(db, kind):
    with db.read() as session:
        return (
            session.execute(
                select(Task)
                .options(undefer(Task.hidden))  # deferred: task pages never load it
                .where(Task.kind == kind)
                .order_by(Task.position)
            )
            .scalars()
            .all()
        )


def _review(db, user, kind, submission):
    with db.write() as session:
        task = next_task(session, user, kind, SETTINGS)
        assert task is not None
        submit_label(session, user, task.id, submission)
        return task.id


def test_a_references_folder_becomes_chain_tasks_with_support(db, tmp_path):
    folder = write_references(tmp_path / "refs", 3)
    summary = import_path(db, folder, actor="test")
    assert (summary.kind, summary.added, summary.unchanged) == ("chain", 3, 0)
    tasks = _tasks(db, "chain")
    assert [t.external_id for t in tasks] == ["item-0", "item-1", "item-2"]
    first = tasks[0]
    assert first.quota == 1
    assert not first.is_gold
    assert [s["support"] for s in first.payload["steps"]] == [4, 3, 2]
    assert first.payload["steps"][0]["members"][1].startswith("This chart 0")
    assert first.payload["round"] == 1
    assert "qwen2.5-vl-7b" in json.dumps(first.hidden)
    assert "qwen" not in json.dumps(first.payload)  # model names never reach the page data
    with db.read() as session:
        item = session.get(Item, first.item_id)
    assert (item.image_root, item.image) == (0, "images/item-0.png")
    # the same folder again changes nothing; the benchmark file alone is the same input
    assert import_path(db, folder, actor="test").unchanged == 3
    assert import_path(db, folder / "benchmark.jsonl", actor="test").added == 0


def test_a_regenerated_chain_is_a_new_task_and_only_the_newest_counts_for_rejection(db, tmp_path):
    folder = write_references(tmp_path / "refs", 2)
    import_path(db, folder, actor="test")
    make_users(db, ["rev"])
    reviewer = users_by_name(db)["rev"]
    reject = Submission(label="reject", reason="not_visible", step_flags=[["not_visible"], [], []])
    _review(db, reviewer, "chain", reject)  # item-0 rejected
    _review(db, reviewer, "chain", Submission(label="accept", step_flags=[[], [], []]))
    text, _ = export_text(db, "rejected", actor="test")
    assert text == "item-0\n"
    regenerated = [chain_record(0, steps=["A new first step.", "So the answer is 0."], round_=2)]
    write_references(tmp_path / "round2", records=regenerated)
    assert import_path(db, tmp_path / "round2", actor="test").added == 1
    assert [t.external_id for t in _tasks(db, "chain")] == ["item-0", "item-1", "item-0"]
    _review(db, reviewer, "chain", Submission(label="accept", step_flags=[[], []]))
    text, _ = export_text(db, "rejected", actor="test")
    assert text == ""
    lines = [json.loads(line) for line in export_text(db, "chains", actor="test")[0].splitlines()]
    assert [(r["item_id"], r["reference_round"], r["verdict"]) for r in lines] == [
        ("item-0", 1, "reject"),
        ("item-1", 1, "accept"),
        ("item-0", 2, "accept"),
    ]
    first = lines[0]
    assert first["status"] == "unanimous"
    assert first["reason"] == "not_visible"
    assert first["step_flags"] == [["not_visible"], [], []]
    assert first["reviews"][0]["annotator"] == "rev"
    assert first["reviews"][0]["verdict"] == "reject"


def test_chain_export_with_two_reviewers_and_an_adjudication(db, tmp_path):
    import_path(db, write_references(tmp_path / "refs", 1), annotators=2, actor="test")
    make_users(db, ["r1", "r2", "judge"])
    users = users_by_name(db)
    task = _review(db, users["r1"], "chain", Submission(label="accept", step_flags=[[], [], []]))
    _review(
        db,
        users["r2"],
        "chain",
        Submission(
            label="reject",
            reason="wrong_step",
            note="step 2 misreads the bar",
            step_flags=[[], ["wrong"], []],
        ),
    )
    (line,) = export_text(db, "chains", actor="test")[0].splitlines()
    record = json.loads(line)
    assert (record["verdict"], record["status"]) == (None, "unresolved")
    with db.write() as session:
        session.add(
            Adjudication(
                task_id=task,
                user_id=users["judge"].id,
                label="reject",
                reason="annotator_error",
                note="the second bar is mislabelled",
                overrides_majority=False,
                created_at=utcnow(),
            )
        )
    record = json.loads(export_text(db, "chains", actor="test")[0])
    assert (record["verdict"], record["status"], record["reason"]) == (
        "reject",
        "adjudicated",
        "annotator_error",
    )
    assert record["note"] == "the second bar is mislabelled"
    assert record["step_flags"] == [[], ["wrong"], []]  # the flags of the review that agrees
    assert sorted(r["annotator"] for r in record["reviews"]) == ["r1", "r2"]
    assert export_text(db, "rejected", actor="test")[0] == "item-0\n"


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_a_pair_file_becomes_pair_tasks_with_hidden_cosine_and_model(db, tmp_path, suffix):
    bench = write_references(tmp_path / "refs", 3)
    pairs = write_pairs(tmp_path / f"pairs{suffix}", pair_rows(5, 3, gold={4: "no_match"}))
    summary = import_path(db, pairs, benchmark=bench, actor="test")
    assert (summary.kind, summary.added, summary.gold) == ("pair", 5, 1)
    tasks = _tasks(db, "pair")
    assert [t.external_id for t in tasks] == [f"pair-{i}" for i in range(5)]
    assert tasks[0].payload == {
        "pred_step": "The bar 0 looks taller than the others.",
        "ref_step": "Bar 0 is the tallest bar in the chart.",
    }
    assert tasks[1].hidden == {"model": "secret-model-1", "cosine": 0.137, "band": "<0.20"}
    assert tasks[0].quota == 2
    assert tasks[4].quota is None
    assert tasks[4].gold_label == "no_match"
    with db.read() as session:
        items = session.execute(select(Item.item_key)).scalars().all()
    assert sorted(items) == ["item-0", "item-1", "item-2"]  # one row per item, not per pair


def test_the_same_pairs_as_csv_after_jsonl_change_nothing(db, tmp_path):
    bench = write_references(tmp_path / "refs", 3)
    rows = pair_rows(4, 3)
    import_path(db, write_pairs(tmp_path / "p.jsonl", rows), benchmark=bench, actor="test")
    again = import_path(db, write_pairs(tmp_path / "p.csv", rows), benchmark=bench, actor="test")
    assert (again.added, again.unchanged) == (0, 4)


def test_pairs_export_tags_every_final_label(db, tmp_path):
    bench = write_references(tmp_path / "refs", 2)
    import_path(
        db, write_pairs(tmp_path / "p.jsonl", pair_rows(3, 2)), benchmark=bench, actor="test"
    )
    make_users(db, ["a", "b", "judge"])
    users = users_by_name(db)
    plan = {"a": ["match", "match", "no_match"], "b": ["match", "no_match", "unsure"]}
    for name, labels in plan.items():
        for label in labels:
            _review(db, users[name], "pair", Submission(label=label))
    tasks = {t.external_id: t.id for t in _tasks(db, "pair")}
    with db.write() as session:
        session.add(
            Adjudication(
                task_id=tasks["pair-1"],
                user_id=users["judge"].id,
                label="no_match",
                reason="annotator_error",
                note=None,
                overrides_majority=False,
                created_at=utcnow(),
            )
        )
    out = tmp_path / "labels.jsonl"
    assert export_file(db, "pairs", out, actor="test") == 3
    records = {r["pair_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert (records["pair-0"]["final_label"], records["pair-0"]["final_status"]) == (
        "match",
        "unanimous",
    )
    assert (records["pair-1"]["final_label"], records["pair-1"]["final_status"]) == (
        "no_match",
        "adjudicated",
    )
    assert (records["pair-2"]["final_label"], records["pair-2"]["final_status"]) == (
        None,
        "unresolved",
    )
    labels = records["pair-1"]["labels"]
    assert [(r["annotator"], r["label"]) for r in labels] == [("a", "match"), ("b", "no_match")]
    assert all(r["time"].endswith("+00:00") for r in labels)
    assert records["pair-1"]["adjudication"]["adjudicator"] == "judge"
    assert records["pair-0"]["item_id"] == "item-0"
    assert "cosine" not in out.read_text()


def test_the_audit_export_holds_every_action_in_order(db, tmp_path):
    bench = write_references(tmp_path / "refs", 1)
    import_path(
        db, write_pairs(tmp_path / "p.jsonl", pair_rows(1, 1)), benchmark=bench, actor="cli:me"
    )
    make_users(db, ["a"])
    _review(db, users_by_name(db)["a"], "pair", Submission(label="match"))
    out = tmp_path / "audit.jsonl"
    export_file(db, "audit", out, actor="cli:me")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["action"] for r in rows] == ["import", "user.add", "task.hold", "label.add"]
    assert [r["id"] for r in rows] == sorted(r["id"] for r in rows)
    label = rows[-1]
    assert (label["actor"], label["old"], label["new"]) == ("a", None, {"label": "match"})
    assert label["task_id"] is not None
    # the export itself is on record
    export_file(db, "audit", out, actor="cli:me")
    assert json.loads(out.read_text().splitlines()[-1])["action"] == "export"


def test_unknown_export_kind(db):
    with pytest.raises(InputError, match="--kind must be one of chains, rejected, pairs, audit"):
        export_text(db, "everything", actor="test")


# --------------------------------------------------------------------------- bad inputs


def _pairs_error(db, tmp_path, rows, *, benchmark=True):
    bench = write_references(tmp_path / "refs", 2)
    path = write_pairs(tmp_path / "bad.jsonl", rows)
    with pytest.raises(InputError) as info:
        import_path(db, path, benchmark=bench if benchmark else None, actor="test")
    return str(info.value)


def test_a_pair_file_needs_a_benchmark(db, tmp_path):
    assert "needs --benchmark" in _pairs_error(db, tmp_path, pair_rows(1, 1), benchmark=False)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"item_id": "item-9"},
            "bad.jsonl:2: field item_id: item 'item-9' is not in the benchmark",
        ),
        (
            {"pair_id": "pair-0"},
            "bad.jsonl:2: field pair_id: duplicate pair_id 'pair-0' (first on line 1)",
        ),
        ({"cosine": "high"}, "bad.jsonl:2: field cosine: must be a number"),
        ({"gold_label": "unsure"}, "bad.jsonl:2: field gold_label: must be 'match' or 'no_match'"),
        ({"pred_step": ""}, "bad.jsonl:2: field pred_step: must be a non-empty string"),
        ({"ref_step": None}, "bad.jsonl:2: field ref_step: must be a non-empty string"),
    ],
)
def test_bad_pair_records_name_the_line_and_field(db, tmp_path, change, expected):
    rows = pair_rows(2, 2)
    rows[1].update(change)
    assert expected in _pairs_error(db, tmp_path, rows)
    assert _tasks(db, "pair") == []  # nothing half-imported


def test_a_pair_id_with_changed_content_is_refused(db, tmp_path):
    bench = write_references(tmp_path / "refs", 2)
    rows = pair_rows(2, 2)
    import_path(db, write_pairs(tmp_path / "p.jsonl", rows), benchmark=bench, actor="test")
    rows[1]["pred_step"] = "Something else entirely."
    with pytest.raises(
        InputError, match=r"p2.jsonl:2: field pair_id: pair_id 'pair-1' was imported before"
    ):
        import_path(db, write_pairs(tmp_path / "p2.jsonl", rows), benchmark=bench, actor="test")


def test_a_csv_without_the_columns_is_refused(db, tmp_path):
    bench = write_references(tmp_path / "refs", 1)
    path = tmp_path / "p.csv"
    path.write_text("pair_id,item_id,pred_step\np1,item-0,x\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"p\.csv:1: CSV header lacks ref_step"):
        import_path(db, path, benchmark=bench, actor="test")


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (
            {"reference_provenance": [{"support": 1}]},
            "benchmark.jsonl:2: field metadata.reference_provenance: must be a list with one "
            "entry per reference step (3)",
        ),
        (
            {"reference_provenance": [{"support": -1}, {"support": 1}, {"support": 1}]},
            "benchmark.jsonl:2: field metadata.reference_provenance[0]: support must be a "
            "non-negative integer",
        ),
        (
            {
                "reference_provenance": [
                    {"support": 1, "members": "x"},
                    {"support": 1},
                    {"support": 1},
                ]
            },
            "field metadata.reference_provenance[0]: models and members must be lists",
        ),
        (
            {"gold_verdict": "maybe"},
            "benchmark.jsonl:2: field metadata.gold_verdict: must be 'accept' or 'reject'",
        ),
    ],
)
def test_bad_provenance_names_the_line_and_field(db, tmp_path, metadata, expected):
    records = [chain_record(0), chain_record(1)]
    records[1]["metadata"].update(metadata)
    folder = write_references(tmp_path / "refs", records=records)
    with pytest.raises(InputError) as info:
        import_path(db, folder, actor="test")
    assert expected in str(info.value)


def test_images_outside_the_folder_or_missing_are_refused(db, tmp_path):
    (tmp_path / "secret.png").write_bytes(b"not for reviewers")
    record = chain_record(0)
    record["image"] = "../secret.png"
    folder = write_references(tmp_path / "refs", records=[record])
    with pytest.raises(InputError, match="outside the benchmark folder"):
        import_path(db, folder, actor="test")
    record["image"] = "images/missing.png"
    (folder / "benchmark.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="image file not found"):
        import_path(db, folder, actor="test")


def test_items_without_provenance_or_image_still_import(db, tmp_path):
    record = chain_record(0)
    record["metadata"] = {}
    record["image"] = None
    folder = write_references(tmp_path / "refs", records=[record])
    assert import_path(db, folder, actor="test").added == 1
    (task,) = _tasks(db, "chain")
    assert [s["support"] for s in task.payload["steps"]] == [None, None, None]


def test_a_gold_chain(db, tmp_path):
    records = [chain_record(0), chain_record(1, gold_verdict="reject")]
    summary = import_path(db, write_references(tmp_path / "refs", records=records), actor="test")
    assert summary.gold == 1
    gold = _tasks(db, "chain")[1]
    assert (gold.is_gold, gold.gold_label, gold.quota) == (True, "reject", None)


def test_unknown_inputs(db, tmp_path):
    with pytest.raises(InputError, match="file or folder not found"):
        import_path(db, tmp_path / "nothing.jsonl", actor="test")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no benchmark\.jsonl"):
        import_path(db, tmp_path / "empty", actor="test")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="expected a references folder"):
        import_path(db, tmp_path / "notes.txt", actor="test")
