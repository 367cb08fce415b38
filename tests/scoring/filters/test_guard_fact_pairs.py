"""The labelled pair set of benchmarks/data/fact_pairs: well formed, reproducible, and the
guard's verdicts on it (no encoder: what the guard vetoes, not what cosine matches)."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from crystalbench.scoring.filters.guard import VETO_REASONS, FactGuard

PAIRS = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "fact_pairs"
FIELDS = {"id", "split", "origin", "label", "kind", "source", "ref", "pred", "options"}

pytestmark = pytest.mark.skipif(not PAIRS.is_dir(), reason="benchmarks/ is not in this checkout")


def load() -> list[dict[str, Any]]:
    records = []
    for path in sorted(PAIRS.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            record = json.loads(line)
            record["_where"] = f"{path.name}:{number}"
            records.append(record)
    return records


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fact_pairs_generate", PAIRS / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_pair_is_well_formed() -> None:
    records = load()
    assert len(records) >= 1000
    for record in records:
        where = record["_where"]
        assert set(record) - {"_where"} == FIELDS, where
        assert record["split"] in ("dev", "heldout", "sample"), where
        assert record["label"] in ("paraphrase", "contradiction", "unrelated"), where
        if record["label"] == "contradiction":
            assert record["kind"] in VETO_REASONS, where
        assert record["ref"].strip(), where
        assert record["pred"].strip(), where
        assert record["ref"] != record["pred"], where
        assert isinstance(record["options"], list), where
    ids = Counter(record["id"] for record in records)
    assert [i for i, n in ids.items() if n > 1] == []


def test_every_kind_is_in_every_split() -> None:
    records = load()
    for split in ("dev", "heldout"):
        kinds = {
            r["kind"] for r in records if r["split"] == split and r["label"] == "contradiction"
        }
        # entity swaps are read from copies (guard.slots); the pairs label them unrelated
        assert kinds == set(VETO_REASONS) - {"entity"}, split
        assert any(r["label"] == "paraphrase" for r in records if r["split"] == split)
        assert any(r["label"] == "unrelated" for r in records if r["split"] == split)
    sources = {r["source"] for r in records}
    assert {"mathvision", "scienceqa", "realworldqa", "plotqa", "mmvp", "textvqa"} <= sources


def test_the_generator_reproduces_the_committed_file() -> None:
    module = generator()
    fresh = [json.dumps(record, ensure_ascii=False) for record in module.generate(24, 8)]
    committed = (PAIRS / "generated.jsonl").read_text(encoding="utf-8").splitlines()
    assert fresh == committed


def test_the_issue_table_is_in_the_set() -> None:
    rows = [r for r in load() if r["origin"] == "issue-table"]
    assert len(rows) == 7
    assert Counter(r["label"] for r in rows) == {"contradiction": 5, "paraphrase": 2}


def _vetoed(records: list[dict[str, Any]]) -> tuple[float, float]:
    """Shares of contradictions and of paraphrases the guard vetoes."""
    contradictions = [r for r in records if r["label"] == "contradiction"]
    paraphrases = [r for r in records if r["label"] == "paraphrase"]

    def share(group: list[dict[str, Any]]) -> float:
        hits = sum(FactGuard(r["options"]).check(r["pred"], r["ref"]) is not None for r in group)
        return hits / len(group)

    return share(contradictions), share(paraphrases)


@pytest.mark.parametrize(
    ("split", "least_caught", "most_paraphrases_vetoed"),
    [("dev", 0.95, 0.0), ("heldout", 0.85, 0.02), ("sample", 0.70, 0.02)],
)
def test_the_guard_catches_contradictions_and_keeps_paraphrases(
    split: str, least_caught: float, most_paraphrases_vetoed: float
) -> None:
    """Regression bounds, below the recorded figures (benchmarks/RESULTS.md): the dev split
    was tuned on, the others were not."""
    caught, paraphrases_vetoed = _vetoed([r for r in load() if r["split"] == split])
    assert caught >= least_caught
    assert paraphrases_vetoed <= most_paraphrases_vetoed
