"""``crystal references build --precedence``: which consensus steps are interchangeable,
inferred from the candidate chains, end to end against the scripted loopback server, then
scored by ``crystal score``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from references_helpers import write_item_set
from scripted_models import GENERATORS, VALIDATOR, ScriptedModels
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import load_benchmark
from crystalbench.scoring.evaluation import evaluate
from crystalbench.types import Prediction
from fakes import HASH_CONFIG

runner = CliRunner()

MAY = "The bar for May is 40."
JUNE = "The bar for June is 55."
COMPARE = "June minus May is 15."
ANSWER = "So the answer is 15."
READ_ORDER = {  # each generator's chain: two read the bars May first, two June first
    "gen-a": [MAY, JUNE, COMPARE, ANSWER],
    "gen-b": [JUNE, MAY, COMPARE, ANSWER],
    "gen-c": [MAY, JUNE, COMPARE, ANSWER],
    "gen-d": [JUNE, MAY, COMPARE],  # leaves the answer step out
}


@dataclass
class ChartModels(ScriptedModels):
    """The scripted models, every generator writing the chart solution in its own order."""

    orders: dict[str, list[str]] = field(default_factory=lambda: dict(READ_ORDER))

    def __call__(self, model: str, prompt: str, seed: int | None) -> dict[str, Any]:
        if model == VALIDATOR:
            return super().__call__(model, prompt, seed)
        item = self.item_for(prompt)
        steps = self.orders[model]
        return {"text": json.dumps({"reasoning_steps": steps, "answer": item.answer})}


def build(server, items, out, *flags: str):
    result = runner.invoke(
        app,
        [
            "references",
            "build",
            "--items",
            str(items),
            *(f"--generator={g}={server.base_url}" for g in GENERATORS),
            "--validator",
            f"{VALIDATOR}={server.base_url}",
            "--encoder",
            "hash",
            "--theta",
            "0.7",
            "--quiet",
            "--out",
            str(out),
            *flags,
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads((out / "summary.json").read_text())


def test_four_generators_reading_two_values_in_either_order(server, sample_items, tmp_path):
    items = write_item_set(tmp_path / "items", limit=2)
    server.state.script = ChartModels(sample_items)
    summary = build(server, items, tmp_path / "refs", "--precedence")
    bench = load_benchmark(tmp_path / "refs")
    assert len(bench.items) == 2
    for item in bench.items:
        steps = item.reference_steps
        assert sorted(steps[:2]) == sorted([MAY, JUNE])  # the tie of mean positions aside
        assert steps[2:] == [COMPARE, ANSWER]
        at = {text: k for k, text in enumerate(steps)}
        assert item.reference_precedence == sorted(
            [(at[MAY], at[COMPARE]), (at[JUNE], at[COMPARE]), (at[COMPARE], at[ANSWER])]
        )
        provenance = item.metadata["reference_provenance"]
        assert provenance[at[MAY]]["precedes"] == [{"step": at[COMPARE], "agree": 4, "both": 4}]
        assert provenance[at[JUNE]]["precedes"] == [{"step": at[COMPARE], "agree": 4, "both": 4}]
        assert provenance[at[COMPARE]]["precedes"] == [{"step": at[ANSWER], "agree": 3, "both": 3}]
        assert provenance[at[ANSWER]]["precedes"] == []
        assert item.metadata["reference_build"]["precedence"] == {
            "share": 1.0,
            "min_chains": 1,
            "n_chains": 4,
            "against_chain": [],
            "contested": [],
        }
    assert summary["config"]["precedence"] is True
    assert summary["precedence"] == {
        "share": 1.0,
        "min_chains": 1,
        "n_items_with_interchangeable_steps": 2,
        "n_interchangeable_pairs": 2,
        "n_edges": 6,
        "n_against_chain": 0,
        "n_contested": 0,
    }

    # The construction report's item view says which steps may swap and what must come first.
    report = (tmp_path / "refs" / "report.html").read_text(encoding="utf-8")
    assert report.count('<span class="tag either">either order</span> with step 2') == 2
    assert report.count('<span class="tag either">either order</span> with step 1') == 2
    assert report.count("after step 1 (4/4 chains), step 2 (4/4 chains)") == 2
    assert report.count("after step 3 (3/3 chains)") == 2
    assert report.count("3 edges, 1 pair of steps in either order") == 2

    # A model reading June first keeps full order credit against the inferred precedence;
    # against the chain's own order (the same build without --precedence) it loses it.
    def swapped(item):
        first, second = item.reference_steps[:2]
        steps = [second, first, *item.reference_steps[2:]]
        return Prediction(id=item.id, reasoning_steps=steps, answer=item.answer)

    with_order = evaluate(bench, [swapped(i) for i in bench.items], HASH_CONFIG)
    assert [r.lis for r in with_order.items] == [1.0, 1.0]
    assert with_order.summary.n_precedence == 2

    sent = len(server.state.log)
    summary = build(server, items, tmp_path / "refs", "--no-precedence")
    assert len(server.state.log) == sent  # the setting changes only the outputs
    assert "precedence" not in summary
    plain = load_benchmark(tmp_path / "refs")
    assert [i.reference_steps for i in plain.items] == [i.reference_steps for i in bench.items]
    assert all(i.reference_precedence is None for i in plain.items)
    assert all("precedes" not in p for i in plain.items for p in i.metadata["reference_provenance"])
    assert "either order" not in (tmp_path / "refs" / "report.html").read_text(encoding="utf-8")
    without = evaluate(plain, [swapped(i) for i in plain.items], HASH_CONFIG)
    assert [r.lis for r in without.items] == [0.75, 0.75]
    assert without.summary.n_precedence == 0
    assert plain.fingerprint != bench.fingerprint


def test_a_share_below_one_lets_a_majority_order_two_steps(server, sample_items, tmp_path):
    """Three chains of four read May first: with --precedence-share 0.75 that is an edge
    (the default, 1.0, leaves the two interchangeable, as above)."""
    items = write_item_set(tmp_path / "items", limit=1)
    orders = dict(READ_ORDER, **{"gen-b": [MAY, JUNE, COMPARE, ANSWER]})  # 3 of 4: May first
    server.state.script = ChartModels(sample_items, orders=orders)
    build(server, items, tmp_path / "refs", "--precedence", "--precedence-share", "0.75")
    (item,) = load_benchmark(tmp_path / "refs").items
    assert item.reference_steps == [MAY, JUNE, COMPARE, ANSWER]
    assert item.reference_precedence == [(0, 1), (1, 2), (2, 3)]
    assert item.metadata["reference_provenance"][0]["precedes"] == [
        {"step": 1, "agree": 3, "both": 4}
    ]
    assert item.metadata["reference_build"]["precedence"]["share"] == 0.75
