"""``evaluate_many``: several prediction sets in one run give exactly the numbers of separate
runs, the encoder sees each distinct text once, and a bad set fails alone."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from crystalbench.config.scoring import ScoreConfig
from crystalbench.data import SAMPLE_DIR, load_benchmark
from crystalbench.data.predictions import load_predictions
from crystalbench.encoders import load_encoder
from crystalbench.scoring.evaluation import evaluate
from crystalbench.scoring.evaluation_many import evaluate_many
from crystalbench.scoring.results import EXAMPLES_FILE, SUMMARY_FILE, ResultsWriter
from crystalbench.types import Prediction
from fakes import HASH_CONFIG, CountingEncoder, make_benchmark, make_item, write_jsonl

SAMPLE_FILES = sorted((SAMPLE_DIR / "predictions").glob("*.jsonl"))

COMPAT_CONFIG = ScoreConfig(
    encoder="hash",
    use_cache=False,
    compat="crystal-metrics-0.2",
    answer_rules="crystal-metrics-0.2",
    order_metric="kendall",
    threshold=0.3,
    alpha=0.5,
    sources=["mmvp", "plotqa"],
)


@pytest.fixture(scope="module")
def sample():
    return load_benchmark("sample")


def comparable(summary):
    """A summary as JSON, without what differs between any two runs (ids, timestamps)."""
    data = summary.model_dump(mode="json")
    data.pop("run_id")
    data["config"].pop("created_at")
    return data


def assert_same_items(alone, together, cosine_tolerance=0.0):
    """Per-item records equal; the cosines of matched pairs within ``cosine_tolerance``."""
    assert len(alone) == len(together)
    for a, b in zip(alone, together, strict=True):
        a, b = a.model_dump(), b.model_dump()
        pairs_a, pairs_b = a.pop("matches"), b.pop("matches")
        assert a == b
        assert [m[:2] for m in pairs_a] == [m[:2] for m in pairs_b]
        for m, n in zip(pairs_a, pairs_b, strict=True):
            assert abs(m[2] - n[2]) <= cosine_tolerance, (a["id"], m, n)


def assert_same_runs(separate, many, cosine_tolerance=0.0):
    assert list(many.runs) == list(separate)
    for name, alone in separate.items():
        together = many.runs[name]
        assert_same_items(alone.items, together.items, cosine_tolerance)
        assert comparable(together.summary) == comparable(alone.summary)


def test_sample_sets_score_exactly_as_separate_runs(sample, tmp_path):
    assert len(SAMPLE_FILES) == 5
    sets = {path.stem: load_predictions(path) for path in SAMPLE_FILES}
    separate = {
        name: evaluate(sample, preds, HASH_CONFIG, out_dir=tmp_path / "alone" / name)
        for name, preds in sets.items()
    }
    many = evaluate_many(sample, sets, HASH_CONFIG, out_dir=tmp_path / "many")
    assert many.ok
    assert_same_runs(separate, many)
    for name in sets:  # the files on disk too, byte for byte
        alone, together = tmp_path / "alone" / name, tmp_path / "many" / name
        assert (together / EXAMPLES_FILE).read_bytes() == (alone / EXAMPLES_FILE).read_bytes()
        a = json.loads((alone / SUMMARY_FILE).read_text())
        b = json.loads((together / SUMMARY_FILE).read_text())
        assert a.pop("run_id") != b.pop("run_id")
        a["config"].pop("created_at"), b["config"].pop("created_at")
        assert a == b
        assert b["config"]["predictions"] == str(SAMPLE_FILES[list(sets).index(name)])


def test_other_settings_and_lenient_unknown_ids_match_separate_runs(sample, tmp_path):
    """Compat rules, kendall, a source subset and lenient skips: the same numbers still."""
    config = COMPAT_CONFIG.model_copy(update={"lenient": True})
    extra = write_jsonl(
        tmp_path / "extra.jsonl",
        [
            {"id": "mmvp-01", "reasoning_steps": ["", "The dog faces left."], "answer": "(a)"},
            {"id": "ghost", "answer": "1"},
            "{broken",
        ],
    )
    paths = {"extra": extra, **{p.stem: p for p in SAMPLE_FILES[:3]}}
    separate = {
        name: evaluate(sample, load_predictions(path, lenient=True), config)
        for name, path in paths.items()
    }
    many = evaluate_many(sample, paths, config)
    assert many.ok
    assert_same_runs(separate, many)
    summary = many.runs["extra"].summary
    assert (summary.n_unknown_ids, summary.n_invalid_records, summary.n_items) == (1, 1, 16)


def expected_texts(many):
    return {s for run in many.runs.values() for item in run.items for s in item.pred_steps} | {
        s for run in many.runs.values() for item in run.items for s in item.ref_steps
    }


@pytest.mark.parametrize("chunk_items", [4096, 12, 5])
def test_the_encoder_sees_each_distinct_text_once(sample, chunk_items):
    sets = {path.stem: load_predictions(path) for path in SAMPLE_FILES}
    encoder = CountingEncoder()
    many = evaluate_many(sample, sets, HASH_CONFIG, encoder=encoder, chunk_items=chunk_items)
    counts = Counter(encoder.seen)
    assert counts, "nothing was encoded"
    assert max(counts.values()) == 1, counts.most_common(3)
    assert set(counts) == expected_texts(many)
    assert many.encode_stats.encoded == len(counts)
    alone = CountingEncoder()
    for preds in sets.values():
        evaluate(sample, preds, HASH_CONFIG, encoder=alone)
    assert len(alone.seen) > len(encoder.seen)  # separate runs encode the references again
    assert set(alone.seen) == set(encoder.seen)


def test_texts_recurring_across_chunks_are_encoded_once_and_score_the_same():
    """A step shared by items far apart (and by both sets) crosses chunk boundaries."""
    common = "Read the value of the tallest bar."
    items = [
        make_item(i, [common if i % 3 == 0 else f"Count the {i} bars.", f"Add {i} and 2."])
        for i in range(1, 13)
    ]
    bench = make_benchmark(items)
    sets = {
        "copy": [
            Prediction(id=i.id, reasoning_steps=[common, f"Add {i.id} and 2."]) for i in items
        ],
        "other": [Prediction(id=i.id, reasoning_steps=[common, "Guess."]) for i in items],
    }
    encoder = CountingEncoder()
    many = evaluate_many(bench, sets, HASH_CONFIG, encoder=encoder, chunk_items=4)
    assert Counter(encoder.seen)[common] == 1
    assert max(Counter(encoder.seen).values()) == 1
    separate = {
        name: evaluate(bench, preds, HASH_CONFIG, encoder=CountingEncoder())
        for name, preds in sets.items()
    }
    assert_same_runs(separate, many)
    assert many.runs["copy"].summary.precision > many.runs["other"].summary.precision


def test_a_bad_set_fails_alone_and_the_others_are_complete(sample, tmp_path):
    good = SAMPLE_FILES[0]
    malformed = write_jsonl(tmp_path / "malformed.jsonl", [{"id": "mmvp-01"}, "{oops"])
    unknown = write_jsonl(tmp_path / "unknown.jsonl", [{"id": "mmvp-01"}, {"id": "nope"}])
    entries = [
        ("good", good),
        ("malformed", malformed),
        ("unknown", unknown),
        ("missing", tmp_path / "missing.jsonl"),
        ("good", SAMPLE_FILES[1]),  # the name again
        ("GOOD", SAMPLE_FILES[2]),  # the same folder on a case-insensitive file system
        ("../escape", SAMPLE_FILES[3]),
        ("memory", [Prediction(id="mmvp-01", answer="(a)")] * 2),
        ("last", SAMPLE_FILES[4]),
    ]
    many = evaluate_many(sample, entries, HASH_CONFIG, out_dir=tmp_path / "out")
    assert list(many.runs) == ["good", "last"]
    messages = {f.name + "@" + f.source: str(f.error) for f in many.failures}
    assert [f.name for f in many.failures] == [
        "malformed",
        "unknown",
        "missing",
        "good",
        "GOOD",
        "../escape",
        "memory",
    ]
    assert messages[f"malformed@{malformed}"].startswith(f"{malformed}:2: malformed JSON")
    assert messages[f"unknown@{unknown}"].startswith(f"{unknown}:2: field id: unknown item id")
    assert "predictions not found" in messages[f"missing@{tmp_path / 'missing.jsonl'}"]
    assert "duplicate name 'good', already given to" in messages[f"good@{SAMPLE_FILES[1]}"]
    assert "duplicate name 'GOOD'" in messages[f"GOOD@{SAMPLE_FILES[2]}"]
    assert "refused name '../escape': it holds '/'" in messages[f"../escape@{SAMPLE_FILES[3]}"]
    assert "duplicate prediction id 'mmvp-01'" in messages["memory@<memory>"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["good", "last"]
    assert not (tmp_path / "escape").exists()
    for name, path in (("good", good), ("last", SAMPLE_FILES[4])):
        alone = evaluate(sample, load_predictions(path), HASH_CONFIG, out_dir=tmp_path / name)
        assert comparable(many.runs[name].summary) == comparable(alone.summary)
        lines = (tmp_path / "out" / name / EXAMPLES_FILE).read_text().splitlines()
        assert len(lines) == len(sample)


def test_a_failed_set_keeps_its_folder_s_previous_results(sample, tmp_path):
    out = tmp_path / "out"
    evaluate_many(sample, {"a": SAMPLE_FILES[0]}, HASH_CONFIG, out_dir=out)
    before = (out / "a" / SUMMARY_FILE).read_bytes(), (out / "a" / EXAMPLES_FILE).read_bytes()
    broken = write_jsonl(tmp_path / "broken.jsonl", ["{"])
    many = evaluate_many(sample, {"a": broken, "b": SAMPLE_FILES[1]}, HASH_CONFIG, out_dir=out)
    assert [f.name for f in many.failures] == ["a"]
    assert ((out / "a" / SUMMARY_FILE).read_bytes(), (out / "a" / EXAMPLES_FILE).read_bytes()) == (
        before
    )
    assert (out / "b" / SUMMARY_FILE).is_file()


def test_a_folder_another_run_is_writing_fails_that_set_alone(sample, tmp_path):
    out = tmp_path / "out"
    (out / "busy").mkdir(parents=True)
    (out / "file").write_text("not a folder")
    with ResultsWriter(out / "busy"):
        many = evaluate_many(
            sample,
            {"busy": SAMPLE_FILES[0], "file": SAMPLE_FILES[1], "free": SAMPLE_FILES[2]},
            HASH_CONFIG,
            out_dir=out,
        )
    assert list(many.runs) == ["free"]
    errors = {f.name: str(f.error) for f in many.failures}
    assert "another run is writing results into this folder" in errors["busy"]
    assert errors["file"] == f"{out / 'file'}: exists and is not a folder"


def test_in_memory_names_need_no_folder_rules(sample):
    many = evaluate_many(sample, {"a/b": SAMPLE_FILES[0]}, HASH_CONFIG)
    assert list(many.runs) == ["a/b"]
    nothing = evaluate_many(sample, {}, HASH_CONFIG)
    assert (nothing.runs, nothing.failures) == ({}, [])


def test_progress_runs_across_all_sets(sample):
    seen: dict[str, list[tuple[int, int | None]]] = {}
    sets = {path.stem: load_predictions(path) for path in SAMPLE_FILES[:3]}
    many = evaluate_many(
        sample,
        sets,
        HASH_CONFIG,
        progress=lambda stage, n, total: seen.setdefault(stage, []).append((n, total)),
    )
    total = 3 * len(sample)
    assert sum(n for n, _ in seen["score"]) == total
    assert {t for _, t in seen["score"]} == {total}
    assert sum(n for n, _ in seen["parse"]) == total
    # The encoding bar has a total (texts encoded or found) and reaches it.
    (encode_total,) = {t for _, t in seen["encode"]}
    assert encode_total is not None
    assert sum(n for n, _ in seen["encode"]) == encode_total >= many.encode_stats.encoded
    assert set(many.timings) >= {"load", "parse", "embed", "score", "write", "total"}


def test_keep_items_false_still_writes_every_item(sample, tmp_path):
    many = evaluate_many(
        sample, {"a": SAMPLE_FILES[0]}, HASH_CONFIG, out_dir=tmp_path, keep_items=False
    )
    assert many.runs["a"].items == []
    assert len((tmp_path / "a" / EXAMPLES_FILE).read_text().splitlines()) == len(sample)


@pytest.mark.slow
def test_minilm_sets_score_as_separate_runs(sample):
    """The real encoder: one run over the five sets equals five runs (no cache in either).

    Every metric of every item and every summary number is identical. The cosine recorded
    with each matched pair may differ in its last float32 bits (about 1e-7): torch pads each
    batch to its longest text, and one run's batches mix the texts of all sets. The disk
    cache does the same to separate runs (a second run reads the first run's vectors).
    """
    config = ScoreConfig(encoder="minilm-offline", use_cache=False)
    encoder = load_encoder(config.encoder)
    sets = {path.stem: load_predictions(path) for path in SAMPLE_FILES}
    separate = {
        name: evaluate(sample, preds, config, encoder=encoder) for name, preds in sets.items()
    }
    many = evaluate_many(sample, sets, config, encoder=encoder)
    assert_same_runs(separate, many, cosine_tolerance=1e-6)
