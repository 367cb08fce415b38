"""The review app on a folder written by the real ``crystalbench.references`` pipeline: build
(scripted generators and validator on a loopback server), import, review, export the rejected
ids, regenerate them with ``regenerate_references``, import the new round."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

REFERENCE_TESTS = Path(__file__).resolve().parents[1] / "references"
if str(REFERENCE_TESTS) not in sys.path:  # the scripted models live with the references tests
    sys.path.insert(0, str(REFERENCE_TESTS))

from references_helpers import FAST, config_data, write_item_set  # noqa: E402
from references_server import ReferenceServer, ServerState  # noqa: E402
from review_support import make_users, users_by_name  # noqa: E402
from scripted_models import GENERATORS, VALIDATOR, ScriptedModels  # noqa: E402
from sqlalchemy import select  # noqa: E402
from sqlalchemy.orm import undefer  # noqa: E402

from crystalbench.data import load_benchmark  # noqa: E402
from crystalbench.references import (  # noqa: E402
    build_references,
    load_references_config,
    read_ids_file,
    regenerate_references,
)
from crystalbench.references.engine import LocalEngine  # noqa: E402
from crystalbench.review.assign import next_task, submit_label, visible_task  # noqa: E402
from crystalbench.review.exporting import export_file, export_text  # noqa: E402
from crystalbench.review.importing import import_path  # noqa: E402
from crystalbench.review.labels import Submission  # noqa: E402
from crystalbench.review.models import Task  # noqa: E402
from crystalbench.review.settings import ReviewSettings  # noqa: E402

N_ITEMS = 3


@pytest.fixture
def reference_server():
    with ReferenceServer(ServerState(models=[*GENERATORS, VALIDATOR])) as running:
        yield running


def _engine(server, items):
    config = load_references_config(overrides=config_data(server, items, limit=N_ITEMS))
    return config, LocalEngine(config, retry=dataclasses.replace(FAST, max_attempts=3))


def _review_next(db, user, verdict):
    with db.write() as session:
        task = next_task(session, user, "chain", ReviewSettings(gold_every=0))
        assert task is not None
        view = visible_task(session, user, task.id)
        n_steps = len(view.task.payload["steps"])
        reason = "not_visible" if verdict == "reject" else None
        flags = [["not_visible"]] + [[] for _ in range(n_steps - 1)]
        submit_label(
            session,
            user,
            task.id,
            Submission(label=verdict, reason=reason, step_flags=flags if reason else None),
        )
        return view.task.external_id


def test_a_real_reference_build_goes_through_review_and_back_to_regeneration(
    sqlite_db, reference_server, tmp_path
):
    db = sqlite_db
    sample = load_benchmark("sample").items
    reference_server.state.script = ScriptedModels(sample)
    items = write_item_set(tmp_path / "items", limit=N_ITEMS)
    out = tmp_path / "refs"
    config, engine = _engine(reference_server, items)
    result = build_references(config, out, engine=engine)
    assert len(result.accepted) == N_ITEMS
    built = {item.id: item for item in load_benchmark(out).items}

    summary = import_path(db, out, actor="test")
    assert (summary.kind, summary.added) == ("chain", N_ITEMS)
    with db.read() as session:
        tasks = session.execute(select(Task).options(undefer(Task.hidden))).scalars().all()
    assert sorted(t.external_id for t in tasks) == sorted(built)
    for task in tasks:
        item = built[task.external_id]
        provenance = item.metadata["reference_provenance"]
        steps = task.payload["steps"]
        assert [s["text"] for s in steps] == item.reference_steps
        assert [s["support"] for s in steps] == [p["support"] for p in provenance]
        assert [s["members"] for s in steps] == [
            [m["text"] for m in p["members"]] for p in provenance
        ]
        assert task.payload["round"] == item.metadata["reference_round"] == 1
        assert not any(model in json.dumps(task.payload) for model in GENERATORS)
        assert "gen-a" in json.dumps(task.hidden)  # the provenance is kept, hidden

    make_users(db, ["rev"])
    reviewer = users_by_name(db)["rev"]
    rejected = _review_next(db, reviewer, "reject")
    for _ in range(N_ITEMS - 1):
        _review_next(db, reviewer, "accept")
    ids_file = tmp_path / "rejected.txt"
    assert export_file(db, "rejected", ids_file, actor="test") == 1
    assert read_ids_file(ids_file) == [rejected]

    regenerate_references(out, read_ids_file(ids_file), source=str(ids_file), engine=engine)
    again = import_path(db, out, actor="test")
    assert (again.added, again.unchanged) == (1, N_ITEMS - 1)
    assert export_text(db, "rejected", actor="test")[0] == ""  # the new round awaits review
    _review_next(db, reviewer, "accept")
    lines = [json.loads(line) for line in export_text(db, "chains", actor="test")[0].splitlines()]
    rounds = sorted((r["item_id"], r["reference_round"], r["verdict"]) for r in lines)
    assert (rejected, 1, "reject") in rounds
    assert (rejected, 2, "accept") in rounds
    assert len(rounds) == N_ITEMS + 1
