"""Pair sampling: candidates from scored runs, strata, spread, files, cache-first cosines."""

from __future__ import annotations

import csv
import json
from collections import Counter

import numpy as np
import pytest
from typer.testing import CliRunner
from validation_helpers import perturbed_predictions

from crystalbench.cli.main import app
from crystalbench.config.scoring import ScoreConfig
from crystalbench.data import load_benchmark
from crystalbench.encoders import EmbeddingStore, HashEncoder
from crystalbench.errors import InputError
from crystalbench.report import load_run
from crystalbench.scoring.evaluation_many import evaluate_many
from crystalbench.validation import best_unmatched
from crystalbench.validation.pairs import read_pairs, sample_pairs, write_pairs
from fakes import CountingEncoder, write_jsonl

runner = CliRunner()


def test_best_unmatched_golden():
    S = np.array([[0.9, 0.7, 0.1], [0.8, 0.2, 0.3]], dtype=np.float32)
    pairs = best_unmatched(S, [(0, 0, 0.9), (1, 1, 0.2)])
    as_text = [(i, j, round(c, 2)) for i, j, c in pairs]
    # rows: pred 0 -> ref 1 (0.7), pred 1 -> ref 0 (0.8); columns: ref 0 -> pred 1 (listed),
    # ref 1 -> pred 0 (listed), ref 2 -> pred 1 (0.3)
    assert as_text == [(0, 1, 0.7), (1, 0, 0.8), (1, 2, 0.3)]
    assert best_unmatched(np.array([[0.5]], dtype=np.float32), [(0, 0, 0.5)]) == []
    assert best_unmatched(np.zeros((0, 3), dtype=np.float32), []) == []


@pytest.fixture
def scored(tmp_path):
    """Three models' results folders scored with the hash encoder into a private cache."""
    bench = load_benchmark("sample")
    store = EmbeddingStore(tmp_path / "cache" / "embeddings.sqlite")
    sets = {
        "careful": perturbed_predictions(bench, seed=11, keep=0.9),
        "sloppy": perturbed_predictions(bench, seed=12, keep=0.6),
        "terse": perturbed_predictions(bench, seed=13, keep=0.3),
    }
    many = evaluate_many(
        bench, sets, ScoreConfig(encoder="hash"), store=store, out_dir=tmp_path / "runs"
    )
    assert many.ok
    runs = [load_run(tmp_path / "runs" / name) for name in sets]
    return runs, store


def test_pairs_are_stratified_spread_and_exact(scored):
    runs, store = scored
    counting = CountingEncoder(HashEncoder())
    sample = sample_pairs(runs, per_band=9, store=store, encoders={"hash-bow-v1:256": counting})
    assert counting.calls == []  # every vector came from the cache scoring filled
    assert [b.band for b in sample.bands] == [
        "<0.20",
        "[0.20,0.35)",
        "[0.35,0.50)",
        "[0.50,0.70)",
        ">=0.70",
    ]
    assert all(b.drawn == 9 for b in sample.bands)
    assert len(sample.pairs) == 45
    for band in sample.bands:  # round-robin over models: three each
        assert sorted(band.by_model.values()) == [3, 3, 3], band
    texts = [(p.pred_step, p.ref_step) for p in sample.pairs]
    assert len(set(texts)) == len(texts)
    assert len({p.pair_id for p in sample.pairs}) == 45
    per_band_items = Counter((p.band, p.model, p.item_id) for p in sample.pairs)
    assert max(per_band_items.values()) == 1  # a fresh item per model while they last
    by_run = {run.name: run for run in runs}
    for pair in sample.pairs:
        item = by_run[pair.model].items[by_run[pair.model].position(pair.item_id)]
        assert item.pred_steps[pair.pred_index] == pair.pred_step
        assert item.ref_steps[pair.ref_index] == pair.ref_step
        assert pair.pred_steps == item.pred_steps
        assert pair.ref_steps == item.ref_steps
        vectors = HashEncoder().encode([pair.pred_step, pair.ref_step])
        assert float(vectors[0] @ vectors[1]) == pytest.approx(pair.cosine, abs=1e-6)
        matched = {(i, j): c for i, j, c in item.matches}
        if pair.kind == "matched":
            assert matched[(pair.pred_index, pair.ref_index)] == pair.cosine
        else:
            assert (pair.pred_index, pair.ref_index) not in matched
        low = {"<0.20": -1, "[0.20,0.35)": 0.2, "[0.35,0.50)": 0.35}.get(pair.band)
        if low is not None:
            assert pair.cosine >= low
    kinds = Counter(p.kind for p in sample.pairs)
    assert kinds["matched"] > 0
    assert kinds["unmatched"] > 0
    assert {p.source for p in sample.pairs} >= {"mathvision", "scienceqa", "plotqa"}


def test_the_same_seed_draws_the_same_pairs(scored):
    runs, store = scored
    first = sample_pairs(runs, per_band=5, store=store, seed=3)
    again = sample_pairs(runs, per_band=5, store=store, seed=3)
    other = sample_pairs(runs, per_band=5, store=store, seed=4)
    assert [p.pair_id for p in first.pairs] == [p.pair_id for p in again.pairs]
    assert [p.pair_id for p in first.pairs] != [p.pair_id for p in other.pairs]
    shared = {p.pair_id: p for p in first.pairs} | {p.pair_id: p for p in other.pairs}
    assert all(shared[p.pair_id] == p for p in other.pairs)  # ids are stable


def test_a_short_band_gives_what_it_has(scored):
    runs, store = scored
    sample = sample_pairs(runs, per_band=500, edges=(0.2, 0.35, 0.5, 0.7), store=store)
    assert sample.short_bands
    for band in sample.bands:
        assert band.drawn <= band.available
        assert band.drawn <= 500
    empty = sample_pairs(runs, per_band=3, edges=(-0.99, 0.35), store=store)
    assert next((b.band, b.available, b.drawn) for b in empty.bands) == ("<-0.99", 0, 0)
    assert len(empty.pairs) == 6


def test_cosines_that_differ_from_the_scored_ones_stop_the_draw(scored):
    runs, _ = scored
    other = HashEncoder(dim=32)  # claims the run's identity, embeds differently
    with pytest.raises(InputError) as caught:
        sample_pairs(runs, per_band=3, store=None, encoders={"hash-bow-v1:256": other})
    assert caught.value.field == "matches"
    assert "not those the run was scored with" in caught.value.message


def test_without_the_cache_the_recorded_encoder_is_loaded(scored):
    runs, _ = scored
    sample = sample_pairs(runs[:1], per_band=2, store=None)
    assert len(sample.pairs) == 10


def test_files_round_trip_and_the_blind_csv_hides_the_cosine(scored, tmp_path):
    runs, store = scored
    sample = sample_pairs(runs, per_band=4, store=store)
    paths = write_pairs(sample, tmp_path / "pairs" / "pairs.jsonl")
    assert read_pairs(paths["jsonl"]) == sample.pairs
    from_csv = read_pairs(paths["csv"])
    assert [p.pair_id for p in from_csv] == [p.pair_id for p in sample.pairs]
    assert [p.cosine for p in from_csv] == [p.cosine for p in sample.pairs]
    assert all(p.pred_steps is None for p in from_csv)
    with paths["blind_csv"].open(newline="") as handle:
        blind = list(csv.DictReader(handle))
    assert list(blind[0]) == ["pair_id", "item_id", "pred_step", "ref_step", "annotator", "label"]
    first = json.loads(paths["jsonl"].read_text().splitlines()[0])
    with paths["csv"].open(newline="") as handle:
        header = next(csv.reader(handle))
    for name in ("pair_id", "item_id", "model", "pred_step", "ref_step", "cosine", "band"):
        assert name in first  # what the review app imports (JSONL and CSV)
        assert name in header
    assert isinstance(first["cosine"], float)
    assert isinstance(first["item_id"], str)
    manifest = json.loads(paths["sampling"].read_text())
    assert manifest["n_pairs"] == 20
    assert manifest["per_band"] == 4


def test_a_bad_pairs_file_names_line_and_field(tmp_path):
    good = {
        "pair_id": "p1",
        "item_id": "1",
        "model": "m",
        "pred_step": "a",
        "ref_step": "b",
        "cosine": 0.5,
        "band": "[0.35,0.50)",
    }
    path = write_jsonl(tmp_path / "pairs.jsonl", [good, {**good, "pair_id": "p2", "cosine": None}])
    with pytest.raises(InputError) as caught:
        read_pairs(path)
    assert (caught.value.line, caught.value.field) == (2, "cosine")
    path = write_jsonl(tmp_path / "twice.jsonl", [good, good])
    with pytest.raises(InputError, match="duplicate pair_id") as caught:
        read_pairs(path)
    assert caught.value.line == 2
    path = write_jsonl(tmp_path / "extra.jsonl", [{**good, "colour": "red"}])
    with pytest.raises(InputError, match="unknown field") as caught:
        read_pairs(path)
    assert caught.value.field == "colour"


def test_sample_then_label_then_agreement_on_the_command_line(tmp_path, cache_dir):
    """The three commands of the README: score, sample-pairs, agreement (labels filled into
    the blind CSV)."""
    bench = load_benchmark("sample")
    for name, seed, keep in [("careful", 21, 0.9), ("terse", 22, 0.4)]:
        records = [
            p.model_dump(exclude_none=True) for p in perturbed_predictions(bench, seed, keep)
        ]
        write_jsonl(tmp_path / "preds" / f"{name}.jsonl", records)
    result = runner.invoke(
        app,
        [
            "score",
            "-b",
            "sample",
            "-p",
            str(tmp_path / "preds"),
            "--encoder",
            "hash",
            "-o",
            str(tmp_path / "runs"),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        app,
        [
            "validate",
            "sample-pairs",
            str(tmp_path / "runs" / "careful"),
            str(tmp_path / "runs" / "terse"),
            "--per-band",
            "4",
            "--out",
            str(tmp_path / "pairs.jsonl"),
        ],
    )
    assert result.exit_code == 0, result.output
    drawn = (tmp_path / "pairs.jsonl").read_bytes()
    draw = [
        "validate", "sample-pairs", str(tmp_path / "runs" / "careful"), "--per-band", "2",
        "--seed", "5", "--out", str(tmp_path / "pairs.jsonl"),
    ]  # fmt: skip
    result = runner.invoke(app, draw)  # a second draw would orphan the labels of the first
    assert result.exit_code == 2, result.output
    assert "earlier draw" in result.output
    assert "--overwrite" in result.output
    assert (tmp_path / "pairs.jsonl").read_bytes() == drawn
    result = runner.invoke(app, [*draw, "--overwrite"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "pairs.jsonl").read_bytes() != drawn
    result = runner.invoke(  # the first draw again, for the labels below
        app, [*draw[:3], str(tmp_path / "runs" / "terse"), "--per-band", "4", "--out",
              str(tmp_path / "pairs.jsonl"), "--overwrite"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (tmp_path / "pairs.jsonl").read_bytes() == drawn
    with (tmp_path / "pairs.blind.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    cosine = {p.pair_id: p.cosine for p in read_pairs(tmp_path / "pairs.jsonl")}
    for row in rows:  # an annotator who agrees with tau = 0.5
        row["annotator"], row["label"] = (
            "ann",
            "match" if cosine[row["pair_id"]] >= 0.5 else "no_match",
        )
    with (tmp_path / "labels.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = runner.invoke(
        app,
        [
            "validate",
            "agreement",
            "--pairs",
            str(tmp_path / "pairs.jsonl"),
            "--labels",
            str(tmp_path / "labels.csv"),
            "--out",
            str(tmp_path / "agreement"),
            "--resamples",
            "50",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "agreement" / "agreement.json").read_text())
    assert data["overall"]["n"] == 20
    assert data["overall"]["false_negatives"] == 0
    assert data["by_band"][0]["agreement"] == 1.0
    assert data["by_band"][4]["agreement"] == 1.0
    assert data["threshold_search"]["best_kappa"] == pytest.approx(1.0)
    assert 0.35 < data["threshold_search"]["best_threshold"] <= 0.5
