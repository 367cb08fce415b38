"""The results of one run belong together: crashes, leftovers, locks and file modes.

Runs are killed for real (``SIGKILL`` in a child process) at each step of the write; the
folder must then hold the previous pair or the new pair, never the new examples beside the
old summary.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from crystalbench._internal.io import current_umask
from crystalbench.errors import InputError
from crystalbench.report import ReportWarning, build_report, load_run
from crystalbench.scoring import results
from crystalbench.scoring.evaluation import evaluate
from crystalbench.scoring.results import ResultsWriter, file_sha256
from crystalbench.types import Prediction
from fakes import HASH_CONFIG, make_benchmark, make_item

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX locks and signals")

ITEMS = [
    make_item(
        str(i),
        [f"Chart {i} has three bars.", "The middle bar is the tallest.", "So the answer is 3."],
        answer="3",
    )
    for i in range(60)
]

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path

    import crystalbench._internal.io
    import crystalbench.scoring.results
    from crystalbench.config.scoring import ScoreConfig
    from crystalbench.data.loading import Benchmark
    from crystalbench.scoring.evaluation import evaluate
    from crystalbench.types import BenchmarkItem, Prediction

    out, answer, kill_at = sys.argv[1], sys.argv[2], sys.argv[3]
    items = [
        BenchmarkItem(id=str(i), source="plotqa", question=f"How many bars in chart {i}?",
                      answer="3", reference_steps=[f"Chart {i} has three bars.",
                      "The middle bar is the tallest.", "So the answer is 3."])
        for i in range(60)
    ]
    preds = [Prediction(id=str(i), reasoning_steps=[f"Chart {i} has three bars."],
                        answer=answer) for i in range(60)]

    def die(*_):
        os.kill(os.getpid(), signal.SIGKILL)

    real_replace = os.replace

    def replace_or_die(name):
        def replace(src, dst):
            if Path(dst).name == name:
                die()
            return real_replace(src, dst)
        return replace

    if kill_at == "streaming":
        real_write = crystalbench.scoring.results.ResultsWriter.write
        def write(self, item):
            if self.count == 30:
                self._handle.flush()
                die()
            real_write(self, item)
        crystalbench.scoring.results.ResultsWriter.write = write
    elif kill_at == "summary":  # the summary's temporary file is written, not renamed
        os.replace = replace_or_die("summary.json")
    elif kill_at == "examples":  # the summary is committed; the examples not yet renamed
        os.replace = replace_or_die("examples.jsonl")
    evaluate(Benchmark(name="t", items=items), preds,
             ScoreConfig(encoder="hash", use_cache=False), out_dir=out)
    """
)


def _score_in_child(out: Path, answer: str, kill_at: str = "never") -> int:
    env = dict(os.environ)
    src = str(Path(results.__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(out), answer, kill_at],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if kill_at == "never":
        assert done.returncode == 0, done.stderr
    return done.returncode


def _pair_answer(folder: Path) -> str:
    """Which run the folder holds, checking that summary and examples agree."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReportWarning)
        run = load_run(folder)
    answers = {item.pred_answer for item in run.items}
    assert len(answers) == 1
    assert len(run.items) == run.summary.n_items == 60
    accuracy = 1.0 if answers == {"3"} else 0.0
    assert run.summary.accuracy == accuracy  # the summary was computed from these items
    return answers.pop()


@pytest.mark.parametrize(
    ("kill_at", "expected"),
    [("streaming", "3"), ("summary", "3"), ("examples", "4")],
)
def test_a_killed_run_leaves_the_old_pair_or_the_new_one(tmp_path, kill_at, expected):
    out = tmp_path / "run"
    _score_in_child(out, "3")
    before = {name: (out / name).read_bytes() for name in ("examples.jsonl", "summary.json")}
    assert _score_in_child(out, "4", kill_at) == -signal.SIGKILL
    leftovers = sorted(p.name for p in out.iterdir() if p.name.endswith((".tmp", ".pending")))
    assert leftovers, "the kill should leave a temporary file behind"
    assert _pair_answer(out) == expected
    if expected == "3":  # the previous pair, byte for byte
        assert {name: (out / name).read_bytes() for name in before} == before
    else:  # the reader finished the interrupted commit: examples.jsonl is the new run's
        summary = json.loads((out / "summary.json").read_text())
        assert file_sha256(out / "examples.jsonl") == summary["examples_sha256"]
    # The next run cleans up what the killed one left.
    _score_in_child(out, "5")
    assert _pair_answer(out) == "5"
    assert sorted(p.name for p in out.iterdir()) == [
        ".crystalbench.lock",
        "examples.jsonl",
        "summary.json",
    ]


def test_a_reader_during_a_write_reads_the_pending_examples(tmp_path):
    out = tmp_path / "run"
    _score_in_child(out, "3")
    assert _score_in_child(out, "4", "examples") == -signal.SIGKILL
    lock = results._try_lock(out)  # another run holds the folder: the reader must not move
    assert lock is not None
    try:
        assert _pair_answer(out) == "4"
        assert any(p.name.endswith(".pending") for p in out.iterdir())
    finally:
        results._unlock(lock)
    assert _pair_answer(out) == "4"
    assert not any(p.name.endswith(".pending") for p in out.iterdir())


def test_two_runs_cannot_write_into_one_folder_at_once(tmp_path):
    bench = make_benchmark(ITEMS[:3])
    with (
        ResultsWriter(tmp_path / "run"),
        pytest.raises(InputError, match="another run is writing results"),
    ):
        evaluate(bench, [], HASH_CONFIG, out_dir=tmp_path / "run")
    evaluate(bench, [], HASH_CONFIG, out_dir=tmp_path / "run")  # free again


def test_a_failed_run_keeps_the_previous_pair(tmp_path, monkeypatch):
    bench = make_benchmark(ITEMS[:5])
    out = tmp_path / "run"
    evaluate(bench, [Prediction(id="0", reasoning_steps=["x"])], HASH_CONFIG, out_dir=out)
    before = (out / "summary.json").read_bytes(), (out / "examples.jsonl").read_bytes()

    def broken(*_args, **_kwargs):
        raise RuntimeError("the judge went away")

    monkeypatch.setattr("crystalbench.scoring.ScoringEngine.verdicts", broken)
    with pytest.raises(RuntimeError):
        evaluate(bench, [], HASH_CONFIG, out_dir=out)
    assert ((out / "summary.json").read_bytes(), (out / "examples.jsonl").read_bytes()) == before
    assert sorted(p.name for p in out.iterdir()) == [
        ".crystalbench.lock",
        "examples.jsonl",
        "summary.json",
    ]


def test_the_summary_names_its_examples(tmp_path):
    run = evaluate(make_benchmark(ITEMS[:4]), [], HASH_CONFIG, out_dir=tmp_path / "a")
    written = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert written["run_id"] == run.summary.run_id
    assert len(written["run_id"]) == 32
    assert written["examples_sha256"] == file_sha256(tmp_path / "a" / "examples.jsonl")
    # RunResult.write gives another folder the same pair.
    run.write(tmp_path / "b")
    assert (tmp_path / "b" / "examples.jsonl").read_bytes() == (
        tmp_path / "a" / "examples.jsonl"
    ).read_bytes()
    assert load_run(tmp_path / "b").summary.run_id == run.summary.run_id


def test_examples_edited_since_the_write_are_flagged(tmp_path):
    out = tmp_path / "run"
    evaluate(make_benchmark(ITEMS[:4]), [], HASH_CONFIG, out_dir=out)
    lines = (out / "examples.jsonl").read_text().splitlines()
    (out / "examples.jsonl").write_text("\n".join(lines[:3]) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReportWarning)
        run = load_run(out)
    messages = [str(w.message) for w in caught]
    assert any("is not the file written with summary.json" in m for m in messages)
    assert any("counts 4 items but examples.jsonl holds 3" in m for m in messages)
    assert len(run.items) == 3


def test_results_written_before_run_ids_load_unchecked(tmp_path):
    out = tmp_path / "run"
    evaluate(make_benchmark(ITEMS[:4]), [], HASH_CONFIG, out_dir=out)
    summary = json.loads((out / "summary.json").read_text())
    del summary["run_id"], summary["examples_sha256"]
    (out / "summary.json").write_text(json.dumps(summary))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReportWarning)
        assert load_run(out).summary.run_id is None


UMASK_CHILD = textwrap.dedent(
    """
    import os, sys
    os.umask(int(sys.argv[2], 8))
    from crystalbench.config.scoring import ScoreConfig
    from crystalbench.data.loading import Benchmark
    from crystalbench.report import build_report
    from crystalbench.scoring.evaluation import evaluate
    from crystalbench.types import BenchmarkItem
    item = BenchmarkItem(id="1", source="plotqa", question="How many bars?", answer="3",
                         reference_steps=["There are three bars."])
    out = sys.argv[1]
    evaluate(Benchmark(name="t", items=[item]), [], ScoreConfig(encoder="hash", use_cache=False),
             out_dir=out)
    build_report([out], os.path.join(out, "report.html"), n_resamples=10)
    """
)


@pytest.mark.parametrize(("umask", "mode"), [("022", 0o644), ("027", 0o640), ("077", 0o600)])
def test_output_files_follow_the_umask(tmp_path, umask, mode):
    env = dict(os.environ)
    src = str(Path(results.__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    out = tmp_path / "run"
    subprocess.run(
        [sys.executable, "-c", UMASK_CHILD, str(out), umask],
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    for name in ("examples.jsonl", "summary.json", "report.html"):
        assert (out / name).stat().st_mode & 0o777 == mode, name


def test_report_is_written_with_the_umask_in_process(tmp_path):
    """The same for a report built in this process (no chmod of its own any more)."""
    out = tmp_path / "run"
    evaluate(make_benchmark(ITEMS[:2]), [], HASH_CONFIG, out_dir=out)
    page = build_report([out], tmp_path / "r.html", n_resamples=10)
    assert page.stat().st_mode & 0o777 == 0o666 & ~current_umask()
