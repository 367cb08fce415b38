"""crystal-metrics 0.2.0's own test suite, run against crystal-metrics and against our drop-in.

The suite comes from crystal-metrics' sdist on PyPI (``pip download``, cached in the pytest
cache and checked against its SHA-256); its ``tests/`` are extracted and run in a pytest
subprocess twice, with :mod:`cm_suite_conftest` as their conftest: once against
crystal-metrics itself (the sdist's own ``src``), once with ``import crystal_metrics``
resolving to :mod:`crystalbench.compat.crystal_metrics`. Every test that passes against
crystal-metrics must pass against the drop-in. Its real-model parity test loads the offline
MiniLM, hence ``slow``. Skipped only when PyPI cannot be reached.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import NamedTuple

import pytest

import crystalbench

SDIST = "crystal_metrics-0.2.0.tar.gz"
SDIST_SHA256 = "72801b1bfc5ac3abd8cb65608a5ca8c2e002d46c0c1ad71cb8cf817112020229"
"""The file PyPI serves for crystal-metrics 0.2.0 (PyPI files never change)."""
TOP = "crystal_metrics-0.2.0"
CONFTEST = Path(__file__).with_name("cm_suite_conftest.py")
NETWORK_ERRORS = (
    "NewConnectionError",
    "ConnectionError",
    "Max retries exceeded",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "timed out",
    "ProxyError",
)
# VLM-R1's module names, re-exporting crystal-metrics 0.2.0 (see cm_suite_conftest).
VLMR1_SHIM = {
    "mllm_evaluator/__init__.py": "",
    "mllm_evaluator/mllm_evaluator.py": (
        "from crystal_metrics_reference.reasoning import MLLMReasoningEvaluator  # noqa: F401\n"
    ),
    "mllm_evaluator/accuracy_calculator.py": (
        "from crystal_metrics_reference.accuracy import AccuracyCalculator  # noqa: F401\n"
    ),
    "mllm_evaluator/causal_reward.py": (
        "from crystal_metrics_reference.rewards import (  # noqa: F401\n"
        "    causal_process_reward as causal_intervention_reward,\n)\n"
    ),
}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _sdist(folder: Path) -> Path:
    """The sdist in ``folder``, downloaded from PyPI when missing (skip when offline)."""
    path = folder / SDIST
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable, "-m", "pip", "download", "crystal-metrics==0.2.0",
            "--no-binary", ":all:", "--no-deps",
            "--retries", "1", "--timeout", "20", "-d", str(folder),
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        output = done.stdout + done.stderr
        if done.returncode != 0 or not path.is_file():
            if any(marker in output for marker in NETWORK_ERRORS):
                pytest.skip(f"PyPI cannot be reached: {output.strip().splitlines()[-1]}")
            pytest.fail(f"pip download of crystal-metrics 0.2.0 failed:\n{output}")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == SDIST_SHA256, f"{path} is not PyPI's crystal-metrics 0.2.0 sdist"
    return path


def _extract(sdist: Path, into: Path) -> Path:
    """Its ``tests/`` and ``src/`` (nothing else, nothing outside ``into``)."""
    with tarfile.open(sdist) as archive:
        members = [
            member
            for member in archive.getmembers()
            if member.name.startswith((f"{TOP}/tests/", f"{TOP}/src/"))
        ]
        archive.extractall(into, members=members, filter="data")
    return into / TOP


def _run(root: Path, target: str) -> dict[str, str]:
    """Run the extracted suite against ``target``; outcome per test id."""
    report = root / f"junit-{target}.xml"
    ours = str(Path(crystalbench.__file__).resolve().parents[1])
    paths = [str(root / "src")] if target == "real" else []
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([*paths, ours, os.environ.get("PYTHONPATH", "")]),
        "CRYSTALBENCH_CM_TARGET": target,
        "CRYSTALBENCH_CM_REFERENCE_SRC": str(root / "src"),
        "CRYSTAL_VLMR1_PATH": str(root / "vlmr1"),
        "HF_HUB_OFFLINE": "1",
    }
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
        str(root / "pytest.ini"), "--rootdir", str(root), f"--junitxml={report}", "tests",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=800)
    if not report.is_file():
        pytest.fail(f"the {target} run wrote no report:\n{done.stdout}\n{done.stderr}")
    outcomes: dict[str, str] = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        outcome = next((k for k in ("failure", "error", "skipped") if k in kinds), "passed")
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = outcome
    print(f"--- {target}: {done.stdout.strip().splitlines()[-1]}")
    return outcomes


class Suite(NamedTuple):
    root: Path
    """The extracted sdist: ``tests/`` (with our conftest), ``src/``, the VLM-R1 shim."""
    sdist: Path


@pytest.fixture(scope="module")
def suite(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Suite:
    """The extracted suite, with our conftest, an empty ini and the VLM-R1 shim."""
    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    folder = cache.mkdir("crystal-metrics-sdist") if cache is not None else None
    sdist = _sdist(folder or tmp_path_factory.mktemp("sdist"))
    root = _extract(sdist, tmp_path_factory.mktemp("crystal-metrics-suite"))
    (root / "tests" / "conftest.py").write_bytes(CONFTEST.read_bytes())
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    for name, text in VLMR1_SHIM.items():
        (root / "vlmr1" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "vlmr1" / name).write_text(text, encoding="utf-8")
    return Suite(root, sdist)


def test_sdist_ships_the_suite_but_not_its_conftest(suite):
    """What the runner relies on: five test modules, and no conftest of theirs (ours fills in)."""
    names = sorted(p.name for p in (suite.root / "tests").glob("test_*.py"))
    assert names == [
        "test_accuracy.py",
        "test_parity.py",
        "test_reasoning.py",
        "test_rewards.py",
        "test_rewards_parity.py",
    ]
    with tarfile.open(suite.sdist) as archive:
        assert not [name for name in archive.getnames() if name.endswith("conftest.py")]


def test_every_test_passing_against_crystal_metrics_passes_against_the_drop_in(suite):
    real = _run(suite.root, "real")
    dropin = _run(suite.root, "dropin")
    assert set(real) == set(dropin)
    counts = {
        name: {kind: sum(1 for v in runs.values() if v == kind) for kind in set(runs.values())}
        for name, runs in (("crystal-metrics", real), ("drop-in", dropin))
    }
    print(json.dumps(counts, sort_keys=True))
    passing = sorted(test for test, outcome in real.items() if outcome == "passed")
    lost = [test for test in passing if dropin[test] != "passed"]
    assert not lost, f"pass against crystal-metrics, not against the drop-in: {lost}"
    # With the shim and the offline model every test runs: none may quietly skip.
    skipped = [test for test, outcome in real.items() if outcome == "skipped"]
    assert not skipped, f"skipped against crystal-metrics: {skipped}"
