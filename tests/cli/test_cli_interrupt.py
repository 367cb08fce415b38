"""Ctrl-C during ``crystal score``: one line saying what was kept and how to go on, exit
130, no traceback (issue 30: it printed nothing)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crystalbench.cli.main import app
from crystalbench.data import SAMPLE_DIR

runner = CliRunner()
PREDICTIONS = SAMPLE_DIR / "predictions" / "terse-precise.jsonl"


def _interrupt(*_: object, **__: object) -> None:
    raise KeyboardInterrupt


def _started(code: str, args: list[str], tmp_path: Path) -> subprocess.Popen[str]:
    """``code`` run as ``crystal ARGS`` in a child process, returned once it says "scoring"."""
    env = {**os.environ, "CRYSTALBENCH_CACHE_DIR": str(tmp_path / "cache")}
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stderr is not None
    deadline = time.monotonic() + 60
    while "scoring" not in child.stderr.readline():
        assert child.poll() is None, "the child ended before scoring"
        assert time.monotonic() < deadline
    return child


@pytest.mark.parametrize(
    ("cache", "kept"),
    [
        ("--cache", "the step vectors encoded so far are kept in the embedding cache"),
        ("--no-cache", "nothing was kept (--no-cache): rerunning the same command starts again"),
    ],
)
def test_ctrl_c_says_what_was_kept(tmp_path, monkeypatch, cache, kept):
    monkeypatch.setattr("crystalbench.scoring.job.score_job", _interrupt)
    out = tmp_path / "out"
    args = ["score", "-b", "sample", "-p", str(PREDICTIONS), "-o", str(out), "--encoder", "hash"]
    result = runner.invoke(app, [*args, cache, "--cache-dir", str(tmp_path / "c")])
    assert result.exit_code == 130
    said = " ".join(result.stderr.split())
    assert said.startswith(f"interrupted: no results were written to {out}")
    assert kept in said
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, KeyboardInterrupt)
    if cache == "--cache":
        assert str(tmp_path / "c") in said


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_a_real_sigint_exits_130_without_a_traceback(tmp_path):
    """The whole path: a real process, a real SIGINT while it scores five sets."""
    code = (
        "import sys, time\n"
        "import crystalbench.scoring.job as job\n"
        "real = job.score_job\n"
        "def slow(*a, **k):\n"
        "    print('scoring', file=sys.stderr, flush=True)\n"
        "    time.sleep(30)\n"
        "    return real(*a, **k)\n"
        "job.score_job = slow\n"
        "from crystalbench.cli.entry import main\n"
        "sys.argv = ['crystal', *sys.argv[1:]]\n"
        "sys.exit(main())\n"
    )
    args = ["score", "-b", "sample", "-p", str(PREDICTIONS), "-o", str(tmp_path / "o")]
    child = _started(code, [*args, "--encoder", "hash", "--no-progress"], tmp_path)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert "Traceback" not in err
    assert err.strip().startswith("interrupted: no results were written to")


SETS = ["terse-precise", "verbose-recall", "scrambled-order"]


def _set_args(out: object) -> list[str]:
    args = ["score", "-b", "sample", "-o", str(out), "--encoder", "hash", "--no-progress"]
    for name in SETS:
        args += ["-p", f"{name}={SAMPLE_DIR / 'predictions' / f'{name}.jsonl'}"]
    return args


def _leftovers(root: object) -> list[str]:
    from pathlib import Path

    base = Path(str(root))
    return sorted(str(p.relative_to(base)) for p in base.rglob("*"))


@pytest.mark.parametrize("existing", [False, True], ids=["new-folder", "empty-folder"])
def test_ctrl_c_while_several_sets_score_leaves_no_lock_nor_folders(
    tmp_path, monkeypatch, existing
):
    """Issue 30: Ctrl-C after every set's writer is open (their folders and lock files
    exist) leaves OUT as it was: gone when the run made it, empty when it was there."""
    from crystalbench.scoring.engine import ScoringEngine

    def interrupt_while_scoring(self: object, *args: object, **kwargs: object) -> object:
        assert len(list((tmp_path / "out").rglob(".crystalbench.lock"))) == len(SETS)
        raise KeyboardInterrupt

    monkeypatch.setattr(ScoringEngine, "iter_scored", interrupt_while_scoring)
    out = tmp_path / "out"
    if existing:
        out.mkdir()
    result = runner.invoke(app, [*_set_args(out), "--cache-dir", str(tmp_path / "c")])
    assert result.exit_code == 130, result.output
    assert out.exists() == existing, _leftovers(tmp_path)
    if existing:
        assert _leftovers(out) == []


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_a_real_sigint_while_several_sets_score_leaves_nothing(tmp_path):
    code = (
        "import sys, time\n"
        "from crystalbench.scoring.engine import ScoringEngine\n"
        "real = ScoringEngine.iter_scored\n"
        "def slow(self, *a, **k):\n"
        "    print('scoring', file=sys.stderr, flush=True)\n"
        "    time.sleep(30)\n"
        "    return real(self, *a, **k)\n"
        "ScoringEngine.iter_scored = slow\n"
        "from crystalbench.cli.entry import main\n"
        "sys.argv = ['crystal', *sys.argv[1:]]\n"
        "sys.exit(main())\n"
    )
    out = tmp_path / "runs" / "o"
    child = _started(code, _set_args(out), tmp_path)
    assert len(list(out.rglob(".crystalbench.lock"))) == len(SETS)  # the writers are open
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert "Traceback" not in err
    assert not (tmp_path / "runs").exists(), _leftovers(tmp_path / "runs")
