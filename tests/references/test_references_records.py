"""Journals, output classification, verdict parsing and configuration: the edge cases."""

from __future__ import annotations

import json

import pytest

from crystalbench.errors import InputError
from crystalbench.references import load_references_config, read_ids_file
from crystalbench.references.config import endpoints_from_flags
from crystalbench.references.generation import classify_output, derive_seed
from crystalbench.references.records import (
    FolderLockedError,
    Journal,
    RegenerationRecord,
    lock_folder,
)
from crystalbench.references.validator import parse_verdict


def regen(key: str) -> RegenerationRecord:
    return RegenerationRecord(key=key, item_id=key.split("|")[0], after_round=1)


def test_journal_repairs_a_torn_tail_and_names_a_bad_line(tmp_path):
    path = tmp_path / "j.jsonl"
    journal = Journal(path, RegenerationRecord, fsync_interval=0)
    journal.append(regen("a|after-r1"))
    with pytest.raises(RuntimeError, match="already written"):
        journal.append(regen("a|after-r1"))
    journal.close()
    with path.open("a") as handle:
        handle.write('{"key": "b|after-r1", "item_id": "b", "aft')
    again = Journal(path, RegenerationRecord)
    assert list(again.records) == ["a|after-r1"]
    assert again.torn is not None
    assert again.torn.offset == len(path.read_bytes())
    again.append(regen("b|after-r1"))
    again.close()
    assert list(Journal(path, RegenerationRecord).records) == ["a|after-r1", "b|after-r1"]
    with path.open("a") as handle:
        handle.write('{"key": "c", "surprise": 1}\n')
    with pytest.raises(InputError, match=r"j\.jsonl:3") as error:
        Journal(path, RegenerationRecord)
    assert "RegenerationRecord" in str(error.value)


def test_one_build_per_folder(tmp_path):
    with lock_folder(tmp_path), pytest.raises(FolderLockedError), lock_folder(tmp_path):
        pass


@pytest.mark.parametrize(
    ("text", "finish", "status"),
    [
        ('{"reasoning_steps": ["The bar is red."], "answer": "B"}', "stop", "ok"),
        ('```json\n{"reasoning_steps": ["The bar is red.",], "answer": "B"}\n```', "stop", "ok"),
        ('{"reasoning_steps": ["The bar is red."], "answer": "B"}', "length", "truncated"),
        ('{"reasoning_steps": ["The bar is red.", "The lin', "stop", "truncated"),
        ("", "stop", "empty"),
        ("   \n ", None, "empty"),
        ('{"reasoning_steps": [], "answer": "B"}', "stop", "wrong_schema"),
        ('{"steps": ["The bar is red."], "answer": "B"}', "stop", "wrong_schema"),
        ("Step 1: The bar is red.\nStep 2: So B.\nAnswer: B", "stop", "wrong_schema"),
        ("qwertyuiop", "stop", "garbage"),
        (None, None, "empty"),
    ],
)
def test_classify_output(text, finish, status):
    assert classify_output(text, finish)[0] == status


def test_seeds_differ_across_every_coordinate():
    base = (0, "generate", "item", "model", 1, 0, 0)
    seeds = {derive_seed(*base)}
    for position, other in enumerate([1, "validate", "item2", "model2", 2, 1, 1]):
        changed = list(base)
        changed[position] = other
        seeds.add(derive_seed(*changed))
    assert len(seeds) == 8


@pytest.mark.parametrize(
    ("reply", "status", "accept"),
    [
        ('<think>hmm {"accept": true}</think>{"accept": false, "reasons": "bad"}', "ok", False),
        ('{"accept": "yes", "visual_grounding": false}', "ok", False),
        (
            '{"logical_validity": 1, "sequence_coherence": 1, "visual_grounding": 1, '
            '"answer_consistency": 1}',
            "ok",
            True,
        ),
        ('{"logical_validity": true}', "unparsed", None),
        ('{"accept": "maybe"}', "unparsed", None),
        ("", "unparsed", None),
        ("I accept this chain.", "unparsed", None),
    ],
)
def test_parse_verdict(reply, status, accept):
    verdict = parse_verdict(reply)
    assert (verdict.status, verdict.accept) == (status, accept)


def test_config_errors_name_the_field(tmp_path):
    with pytest.raises(InputError, match="generator names must be unique"):
        load_references_config(overrides={"generators": [{"name": "a"}, {"name": "a"}]})
    path = tmp_path / "refs.yaml"
    path.write_text("theta: 2\n")
    with pytest.raises(InputError, match=r"refs\.yaml.*field theta"):
        load_references_config(path)
    path.write_text("thetta: 0.5\n")
    with pytest.raises(InputError, match="thetta"):
        load_references_config(path)


def test_flags_merge_with_the_config_file_endpoints():
    config = load_references_config(
        overrides={
            "generators": [{"name": "q", "model": "Qwen/X", "concurrency": 3}],
            "min_chains": 1,
        }
    )
    merged = endpoints_from_flags(
        ["q=http://a/v1", "q=http://b/v1", "g=http://c/v1"], config.generators
    )
    assert merged[0] == {
        **config.generators[0].model_dump(),
        "base_urls": ["http://a/v1", "http://b/v1"],
    }
    assert merged[1] == {"name": "g", "base_urls": ["http://c/v1"]}


def test_ids_file_errors(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n")
    with pytest.raises(InputError, match="no ids"):
        read_ids_file(empty)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "a"}) + "\n" + json.dumps({"verdict": "reject"}) + "\n")
    with pytest.raises(InputError, match=r"bad\.jsonl:2"):
        read_ids_file(bad)
