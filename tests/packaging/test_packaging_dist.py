"""The built package: what the sdist and the wheel hold, their metadata, the build floor,
and every command that needs an extra on a core-only install.

The sdist and wheel are built once per module from the checkout's tracked files (as
``tools/smoke_wheel.py`` does; here without build isolation, with this environment's
setuptools). ``tools/smoke_wheel.py`` installs the wheel with extras and runs the commands;
``--sdist-tests`` runs the sdist's own tests against its install (``.ci/run`` runs both).
"""

from __future__ import annotations

import email
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tools.smoke_wheel import tracked_copy

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
IN_GIT = (ROOT / ".git").exists()
needs_git = pytest.mark.skipif(not IN_GIT, reason="needs a git checkout (not an unpacked sdist)")


def git_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return sorted(n for n in listed.stdout.decode().split("\0") if n and (ROOT / n).is_file())


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict[str, Path]:
    """``{"sdist": ..., "wheel": ...}`` built from the tracked files (the wheel from the
    unpacked sdist)."""
    pytest.importorskip("build")
    work = tmp_path_factory.mktemp("dist")
    source = tracked_copy(ROOT, work / "source")
    out = work / "out"
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return {"sdist": next(out.glob("*.tar.gz")), "wheel": next(out.glob("*.whl"))}


def wheel_metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(archive.read(name))


@needs_git
def test_the_sdist_holds_every_tracked_file_and_nothing_else(dist):
    """Tests, their data, tools/, benchmarks/, docs, constraints.txt, the Makefile, LICENSE
    and the changelog travel with the sdist, so its tests run (``--sdist-tests``)."""
    with tarfile.open(dist["sdist"]) as archive:
        names = {m.name.split("/", 1)[1] for m in archive.getmembers() if m.isfile()}
    generated = {"PKG-INFO", "setup.cfg"} | {n for n in names if ".egg-info/" in n}
    expected = set(git_files()) - {".gitignore"}
    assert sorted(expected - names) == []
    assert sorted(names - expected - generated) == []
    for needed in ("LICENSE", "CHANGELOG.md", "constraints.txt", "Makefile", "tests/conftest.py"):
        assert needed in names


def test_the_wheel_holds_the_package_and_its_data_only(dist):
    with zipfile.ZipFile(dist["wheel"]) as archive:
        names = set(archive.namelist())
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"crystalbench"}
    for data in (
        "crystalbench/py.typed",
        "crystalbench/prompts/references_generate_v1.txt",
        "crystalbench/data/sample/benchmark.jsonl",
        "crystalbench/review/static/review.css",
        "crystalbench/review/templates/login.html",
        "crystalbench/review/migrations/versions/v0001_initial.py",
        "crystalbench/review/migrations/script.py.mako",
        "crystalbench/integrations/lmms_eval/crystal.yaml",
    ):
        assert data in names, data
    licenses = [n for n in names if ".dist-info/licenses/" in n]
    assert [Path(n).name for n in licenses] == ["LICENSE"]


def test_the_wheel_metadata(dist):
    meta = wheel_metadata(dist["wheel"])
    from crystalbench._version import __version__

    assert meta["Version"] == __version__
    assert meta["License-Expression"] == "MIT"
    assert meta["Requires-Python"] == ">=3.10"
    classifiers = meta.get_all("Classifier")
    for needed in (
        "Development Status :: 4 - Beta",
        "Operating System :: POSIX :: Linux",
        "Typing :: Typed",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ):
        assert needed in classifiers
    low = re.search(r">=3\.(\d+)", meta["Requires-Python"])
    assert low is not None
    versions = sorted(
        int(c.rsplit(".", 1)[1]) for c in classifiers if re.fullmatch(r".*Python :: 3\.\d+", c)
    )
    assert versions[0] == int(low.group(1)), "classifiers start at Requires-Python"
    assert versions == list(range(versions[0], versions[-1] + 1))
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert urls == PYPROJECT["project"]["urls"]
    assert meta.get_content_type() == "text/plain"  # the body is the README
    assert meta["Description-Content-Type"] == "text/markdown"
    extras = set(meta.get_all("Provides-Extra"))
    assert extras == set(PYPROJECT["project"]["optional-dependencies"])


def test_twine_accepts_both_strictly(dist):
    pytest.importorskip("twine")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "twine",
            "check",
            "--strict",
            str(dist["sdist"]),
            str(dist["wheel"]),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2


def test_the_changelog_follows_keep_a_changelog():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    from crystalbench._version import __version__

    headings = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.MULTILINE)
    assert headings[0] == ("Unreleased", "")
    released = [version for version, _ in headings[1:]]
    assert __version__ in released or headings[0][0] == "Unreleased"
    for version, _ in headings:
        assert re.search(rf"^\[{re.escape(version)}\]: https://", text, re.MULTILINE), version
    sections = set(re.findall(r"^### (\w+)$", text, re.MULTILINE))
    assert sections <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_the_license_is_the_mit_text_the_metadata_names():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "crystalbench developers" in text
    assert PYPROJECT["project"]["license"] == "MIT"
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]


# ----------------------------------------------------------------------------- slow


def clean_env() -> dict[str, str]:
    """This environment without ``PYTHON*`` variables (a ``PYTHONPATH`` holding the
    checkout's ``src`` would make pip and the commands see the checkout, not the install)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}


def make_venv(folder: Path, *packages: str) -> Path:
    """A fresh virtual environment with ``packages``; its python."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=300)
    python = folder / "bin" / "python"
    if packages:
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "-c",
                str(ROOT / "constraints.txt"),
                *packages,
            ],
            check=True,
            capture_output=True,
            timeout=1200,
            env=clean_env(),
        )
    return python


@pytest.mark.slow
def test_setuptools_77_is_the_floor_that_builds(tmp_path):
    """``license = "MIT"`` (an SPDX expression, PEP 639) needs setuptools 77; 76 rejects it.
    Each is tried in a throwaway environment, building without isolation."""
    floor = PYPROJECT["build-system"]["requires"]
    assert floor == ["setuptools>=77"]
    source = tracked_copy(ROOT, tmp_path / "source")
    results = {}
    for version in ("76.1.0", "77.0.3"):
        python = make_venv(tmp_path / f"st{version}", f"setuptools=={version}", "build")
        done = subprocess.run(
            [
                str(python),
                "-m",
                "build",
                "--no-isolation",
                "--sdist",
                "--wheel",
                "--outdir",
                str(tmp_path / f"out{version}"),
                str(source),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
            env=clean_env(),
        )
        results[version] = done
    assert results["76.1.0"].returncode != 0
    assert "project.license" in results["76.1.0"].stdout + results["76.1.0"].stderr
    assert results["77.0.3"].returncode == 0, results["77.0.3"].stderr[-3000:]


@pytest.fixture(scope="module")
def core_install(dist, tmp_path_factory) -> Path:
    """The wheel installed with no extra (``pip install crystalbench``): its ``bin`` folder."""
    folder = tmp_path_factory.mktemp("core")
    python = make_venv(folder / "venv", str(dist["wheel"]))
    return python.parent


# (command, the extra it must name). Files the commands read need not exist: the extra is
# checked before any input is read. The sample's predictions are found in the install.
CORE_COMMANDS = [
    (
        ["score", "-b", "sample", "-p", "{sample}/predictions/terse-precise.jsonl", "-o", "o"],
        "embed",
    ),
    (
        [
            "score",
            "-b",
            "sample",
            "-p",
            "{sample}/predictions/terse-precise.jsonl",
            "-o",
            "o",
            "--encoder",
            "minilm-offline",
        ],
        "embed",
    ),
    (["demo"], "embed"),
    (["validate", "agreement", "--pairs", "p.jsonl", "--labels", "l.csv", "-o", "o"], "validate"),
    (["review", "add-user", "ann", "--db", "r.db"], "review"),
    (["review", "serve", "--db", "r.db", "--port", "0"], "review"),
    (["review", "import", "x.jsonl", "--db", "r.db"], "review"),
    (["serve-rewards", "--port", "0", "--encoder", "hash"], "serve"),
    (["data", "build", "mmvp", "--from", "MMVP/MMVP", "-o", "set"], "hub"),
    (["score", "-b", "waybarrios/CRYSTAL", "-p", "x.jsonl", "-o", "o", "--encoder", "hash"], "hub"),
    (
        [
            "score",
            "-b",
            "sample",
            "--input-format",
            "vlmevalkit",
            "-p",
            "run.xlsx",
            "-o",
            "o",
            "--encoder",
            "hash",
        ],
        "harnesses",
    ),
    (["train", "--config", "recipe:qwen2_5_vl_3b_cpr", "-o", "t"], "train"),
    (
        [
            "references",
            "build",
            "--items",
            "sample",
            "-o",
            "refs",
            "--encoder",
            "hash",
            "-g",
            "a=http://127.0.0.1:9/v1",
            "-g",
            "b=http://127.0.0.1:9/v1",
            "--no-validator",
        ],
        "openai",
    ),
    (
        [
            "infer",
            "-b",
            "sample",
            "--model-backend",
            "transformers",
            "--model",
            "m",
            "-o",
            "i.jsonl",
        ],
        "transformers",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "extra"), CORE_COMMANDS, ids=[" ".join(args[:2]) for args, _ in CORE_COMMANDS]
)
def test_a_core_install_names_the_missing_extra(core_install, tmp_path, args, extra):
    """Exit 2, no traceback, ``pip install 'crystalbench[EXTRA]'`` whole: on an install
    with no extra (no torch: that is the point)."""
    (tmp_path / "run.xlsx").write_bytes(b"PK not a workbook")  # it must exist to be read
    sample = subprocess.run(
        [
            str(core_install / "python"),
            "-c",
            "from crystalbench.data import SAMPLE_DIR as S; print(S)",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=clean_env(),
    ).stdout.strip()
    env = {
        **clean_env(),
        "HF_HUB_OFFLINE": "1",
        "CRYSTALBENCH_CACHE_DIR": str(tmp_path / "cache"),
        "COLUMNS": "200",
    }
    done = subprocess.run(
        [str(core_install / "crystal"), *(a.replace("{sample}", sample) for a in args)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output
    assert f"pip install 'crystalbench[{extra}]'" in output, output


@pytest.mark.slow
def test_a_core_install_has_no_torch_and_every_help_page_works(core_install, tmp_path):
    crystal = str(core_install / "crystal")
    python = str(core_install / "python")
    missing = subprocess.run(
        [python, "-c", "import importlib.util as u; print(u.find_spec('torch') is None)"],
        capture_output=True,
        text=True,
        check=True,
        env=clean_env(),
    )
    assert missing.stdout.strip() == "True"
    from crystalbench.cli.commands import COMMANDS, GROUPS, load

    pages = [[name] for name in COMMANDS] + [
        [group, info.name]
        for group in GROUPS
        for info in load(GROUPS[group]).registered_commands
        if not info.hidden and info.name
    ]
    for page in pages:
        done = subprocess.run(
            [crystal, *page, "--help"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
            env=clean_env(),
        )
        assert done.returncode == 0, (page, done.stdout + done.stderr)


UVICORN_FLOOR = "0.30.0"
"""The oldest uvicorn the ``serve`` and ``review`` extras allow (``uvicorn>=0.30,<1``)."""


@pytest.mark.slow
def test_the_reward_server_limits_hold_on_the_oldest_uvicorn_allowed(dist, tmp_path):
    """crystalbench.serving extends uvicorn's h11 protocol (not public API): the reward
    server's limit tests (silent and trickling clients, timeouts, 503s) run against the
    installed wheel with uvicorn at the extra's floor. The newest uvicorn allowed is the one
    the rest of the suite runs on."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    serve = extras["project"]["optional-dependencies"]["serve"]
    assert f"uvicorn>={UVICORN_FLOOR.rsplit('.', 1)[0]},<1" in serve
    python = make_venv(
        tmp_path / "venv",
        f"{dist['wheel']}[serve]",
        f"uvicorn=={UVICORN_FLOOR}",
        "pytest",
        "pytest-timeout",
        "hypothesis",
    )
    version = subprocess.run(
        [
            str(python),
            "-c",
            "import uvicorn, crystalbench; print(uvicorn.__version__, crystalbench.__file__)",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=clean_env(),
    ).stdout.split()
    assert version[0] == UVICORN_FLOOR
    assert str(tmp_path) in version[1], "crystalbench must come from the installed wheel"
    done = subprocess.run(
        [
            str(python),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not slow",
            "tests/rewards/test_rewards_server_limits.py",
            "tests/serving/test_serving_limits.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
        env=clean_env(),
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-5000:]
    assert " passed" in done.stdout
