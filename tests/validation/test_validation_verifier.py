"""``crystal validate verifier``: VisualProcessBench's macro-F1 on a fixture of our own, whose
figures are worked out by hand below, and the command against a loopback server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.config.judging import VerifierConfig, VerifierValidationConfig
from crystalbench.errors import InputError
from crystalbench.judges.verifier import ScriptedVerifier
from crystalbench.types import StepVerdict
from crystalbench.validation.verifier import read_process_labels, validate_verifier, vpb_f1

runner = CliRunner()


def verdict(label: str | None, p: float | None) -> StepVerdict:
    return StepVerdict(
        pred=0, label=label, p_correct=p, judge="model:s", error=None if label else "failed"
    )


# step -> (human label, verifier label, p_correct)
SOLUTIONS = [
    ("A", [("a1", 1, "supported", 0.9), ("a2", -1, "wrong_logic", 0.6),
           ("a3", 0, "irrelevant", 0.7)]),
    ("B", [("b1", 1, "wrong_perception", 0.4), ("b2", -1, "supported", 0.6),
           ("b3", 1, "supported", 0.8)]),
    ("A", [("c1", -1, "wrong_perception", 0.3), ("c2", 1, None, None)]),
]  # fmt: skip


def write_labels(folder: Path, image: str = "img/x.png") -> Path:
    (folder / "img").mkdir(exist_ok=True)
    (folder / "img" / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    lines = []
    for source, steps in SOLUTIONS:
        lines.append(
            json.dumps(
                {
                    "image": [image],
                    "question": "How many bars?",
                    "answer": "3",
                    "response": {
                        "steps": [s[0] for s in steps],
                        "process_correctness": [s[1] for s in steps],
                    },
                    "policy_model": "m",
                    "data_source": source,
                }
            )
        )
    path = folder / "test.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def scripted() -> ScriptedVerifier:
    return ScriptedVerifier(
        {step: verdict(label, p) for _, steps in SOLUTIONS for step, _, label, p in steps}
    )


def config(path: Path, **extra: object) -> VerifierValidationConfig:
    return VerifierValidationConfig(
        labels=str(path),
        verifier=VerifierConfig(url="http://127.0.0.1:9/v1", model="s"),
        resamples=200,
        **extra,
    )


def test_fixed_threshold_by_hand(tmp_path):
    report = validate_verifier(config(write_labels(tmp_path), threshold=0.5), scripted())
    # At 0.5, steps labelled 1/-1 and verified (a3 neutral, c2 unverified left out):
    # a1 T+ P+, a2 T- P+, b1 T+ P-, b2 T- P+, b3 T+ P+, c1 T- P-.
    # correct: TP 2 (a1, b3), FP 2 (a2, b2), FN 1 (b1): F1 = 4 / 7.
    # wrong:   TP 1 (c1), FP 1 (b1), FN 2 (a2, b2):     F1 = 2 / 5.
    assert report["f1_correct"] == pytest.approx(4 / 7)
    assert report["f1_wrong"] == pytest.approx(2 / 5)
    assert report["macro_f1"] == pytest.approx((4 / 7 + 2 / 5) / 2)
    assert (report["n_steps"], report["n_neutral"], report["n_unverified"]) == (6, 1, 1)
    assert report["threshold"] == 0.5
    assert report["threshold_fitted_on"] == "given"
    # Source A: a1 T+ P+, a2 T- P+, c1 T- P-: correct 2/3, wrong 2/3.
    assert report["by_source"]["A"]["macro_f1"] == pytest.approx(2 / 3)
    # Source B: b1 T+ P-, b2 T- P+, b3 T+ P+: correct 2/4, wrong 0.
    assert report["by_source"]["B"]["macro_f1"] == pytest.approx(0.25)
    assert report["confusion"]["correct"] == {
        "supported": 2, "wrong_perception": 1, "wrong_logic": 0, "irrelevant": 0,
        "unverified": 1,
    }  # fmt: skip
    assert report["confusion"]["wrong"]["supported"] == 1
    assert report["confusion"]["neutral"]["irrelevant"] == 1
    low, high = report["interval"]
    assert 0.0 <= low <= report["macro_f1"] <= high <= 1.0


def test_threshold_fitted_on_dev_never_on_test(tmp_path):
    report = validate_verifier(config(write_labels(tmp_path), dev_every=3), scripted())
    # Dev = solution 1 (a1 T+ .9, a2 T- .6; a3 neutral). Candidates 0.5, 0.6, 0.7, 0.9:
    # 0.5 and 0.6 call a2 correct (macro 1/3); 0.7 separates them (macro 1): the lowest best.
    assert report["threshold"] == pytest.approx(0.7)
    assert report["threshold_fitted_on"] == "dev"
    assert report["n_test_solutions"] == 2
    # Test at 0.7: b1 T+ P-, b2 T- P-, b3 T+ P+, c1 T- P-.
    # correct: TP 1, FN 1: 2/3; wrong: TP 2, FP 1: 4/5.
    assert report["f1_correct"] == pytest.approx(2 / 3)
    assert report["f1_wrong"] == pytest.approx(4 / 5)
    assert report["macro_f1"] == pytest.approx((2 / 3 + 4 / 5) / 2)
    assert report["n_steps"] == 4
    assert set(report) >= {"macro_f1", "f1_correct", "f1_wrong", "threshold", "n_steps",
                           "by_source"}  # fmt: skip


def test_vpb_f1_matches_sklearn_by_hand():
    # correct: TP 1, FN 1, FP 0: 2/3; wrong: TP 2, FP 1: 4/5.
    assert vpb_f1([1, 1, -1, -1], [1, -1, -1, -1]) == pytest.approx((11 / 15, 2 / 3, 4 / 5))


@pytest.mark.parametrize("image", ["../outside.png", "/etc/passwd", "img/../../x.png"])
def test_image_paths_must_stay_inside_the_folder(tmp_path, image):
    path = write_labels(tmp_path, image=image)
    with pytest.raises(InputError, match="leaves the images folder") as caught:
        read_process_labels(path, tmp_path)
    assert caught.value.line == 1
    assert caught.value.field == "image"


def test_bad_labels_name_line_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    head = {"image": [], "question": "q", "answer": "a"}
    good = json.dumps({**head, "response": {"steps": ["s"], "process_correctness": [1]}})
    bad = json.dumps({**head, "response": {"steps": ["s", "t"], "process_correctness": [1, 2]}})
    path.write_text(good + "\n" + bad + "\n")
    with pytest.raises(InputError) as caught:
        read_process_labels(path)
    assert (caught.value.line, caught.value.field) == (2, "response.process_correctness")
    result = runner.invoke(
        app,
        ["validate", "verifier", "--labels", str(path), "--verifier-url", "http://127.0.0.1:9/v1",
         "--verifier-model", "m", "-o", str(tmp_path / "out")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "bad.jsonl:2" in result.output
    assert "Traceback" not in result.output


def test_the_command_against_a_loopback_server(tmp_path):
    pytest.importorskip("uvicorn")
    from servers.openai_server import LoopbackServer, ServerState

    def answer(label: str, p: float) -> str:
        return json.dumps({"label": label, "p_correct": p, "reason": "r"})

    path = write_labels(tmp_path)
    # A real PNG: the server decodes every image it is sent.
    from PIL import Image

    Image.new("RGB", (4, 4)).save(tmp_path / "img" / "x.png")
    answers = {
        f"Step to check:\n{step}": answer(label or "supported", p or 0.5)
        for _, steps in SOLUTIONS
        for step, _, label, p in steps
    }
    with LoopbackServer(ServerState()) as server:
        server.state.configure({"answers": answers})
        out = tmp_path / "out"
        args = ["validate", "verifier", "--labels", str(path), "--verifier-url",
                server.base_url, "--verifier-model", "vlm", "--cache-dir",
                str(tmp_path / "cache"), "--p-threshold", "0.5", "-o", str(out)]  # fmt: skip
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        report = json.loads((out / "verifier.json").read_text())
        sent = len(server.state.log)
        again = runner.invoke(app, args)
        assert again.exit_code == 0, again.output
        assert len(server.state.log) == sent  # the second run is served by the cache
    assert report["n_unverified"] == 0
    assert report["judge"]["logprobs_used"] is False  # the server gives none: JSON p
    assert "macro-F1" in result.output


def test_agreement_by_cosine_band(tmp_path):
    """Lines with ``reference_steps`` are banded by each step's best cosine to them (hash
    encoder: a step equal to a reference step has cosine 1, the top band)."""
    path = write_labels(tmp_path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        line["reference_steps"] = [line["response"]["steps"][0]]  # the first step, verbatim
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    report = validate_verifier(config(path, threshold=0.5, encoder="hash"), scripted())
    bands = report["by_band"]
    assert list(bands) == ["<0.20", "[0.20,0.35)", "[0.35,0.50)", "[0.50,0.70)", ">=0.70"]
    # The first steps a1 (T+ P+), b1 (T+ P-), c1 (T- P-) have cosine 1: 2 of 3 agree.
    assert (bands[">=0.70"]["n_steps"], bands[">=0.70"]["agreement"]) == (3, pytest.approx(2 / 3))
    # The rest (hash vectors of other sentences: cosine < 0.2): a2 T- P+, b2 T- P+, b3 T+ P+
    # (a3 neutral and c2 unverified left out): 1 of 3.
    assert (bands["<0.20"]["n_steps"], bands["<0.20"]["agreement"]) == (3, pytest.approx(1 / 3))
    assert bands["[0.35,0.50)"]["agreement"] is None
    assert validate_verifier(config(path, threshold=0.5), scripted())["by_band"] is None
