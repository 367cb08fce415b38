"""The CRYSTAL task run by the real lmms-eval, end to end, in an environment of its own.

lmms-eval is not installed into the test environment: it pins packages crystalbench needs
newer (lmms-eval 0.7.3 resolves ``math-verify`` 0.1.0; crystalbench needs >= 0.7) and pulls
some sixty more (torchvision, opencv, wandb...). This script therefore

1. creates a virtual environment (``--venv``, default ``/tmp/crystalbench-lmms-eval``) that
   sees the current interpreter's packages through a ``.pth`` file (torch and crystalbench's
   own dependencies are not downloaded again; this checkout's ``src`` comes first), and
   installs ``lmms-eval`` there with ``pip -c constraints.txt`` (with ``filelock<4``, and
   without PyPI's torchvision when it does not load beside a CPU torch);
2. re-runs itself inside it (``--inner``): installs the task with
   :func:`crystalbench.integrations.lmms_eval.task.install_task` (the bundled sample, the
   hash encoder), runs ``lmms_eval.evaluator.simple_evaluate`` on ``--tasks crystal`` with a
   scripted model that answers each doc with the sample's ``messy-raw`` output, and checks
   that lmms-eval's ``crystal_*`` numbers equal ``crystal score``'s for the same outputs, and
   that ``crystal score`` reads the samples lmms-eval logged back to the same numbers.

Usage::

    python benchmarks/lmms_eval_task_e2e.py [--venv DIR] [--constraints constraints.txt]

Prints one line per metric and ``OK`` (exit 0), or what differs (exit 1). Recorded run
(lmms-eval 0.7.3, torch 2.13.0+cpu, 40 sample docs, hash encoder)::

    crystal_match_f1: lmms-eval 0.516854705581419  crystal score 0.516854705581419  same
    crystal_ordered_f1: lmms-eval 0.5070849813908024  crystal score 0.5070849813908024  same
    crystal_precision: lmms-eval 0.6296527777777777  crystal score 0.6296527777777777  same
    crystal_recall: lmms-eval 0.44577380952380957  crystal score 0.44577380952380957  same
    crystal_accuracy: lmms-eval 0.575  crystal score 0.575  same
    logged samples read back by crystal score: match_f1 0.516854705581419 same
    OK
"""

from __future__ import annotations

import argparse
import json
import site
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METRICS = ("match_f1", "ordered_f1", "precision", "recall", "accuracy")


def outer(venv: Path, constraints: Path | None) -> int:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    inner_site = subprocess.run(
        [str(python), "-c", "import site; print(site.getsitepackages()[0])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    shared = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (Path(inner_site) / "zz_crystalbench_e2e.pth").write_text(
        "\n".join([str(ROOT / "src"), *shared]) + "\n", encoding="utf-8"
    )
    probe = subprocess.run([str(python), "-c", "import lmms_eval"], capture_output=True)
    if probe.returncode != 0:
        # lmms-eval 0.7.3 imports filelock._api, which filelock 4 no longer has.
        pip = [str(python), "-m", "pip", "install", "-q", "lmms-eval", "filelock<4"]
        if constraints is not None:
            pip[4:4] = ["-c", str(constraints)]
        subprocess.run(pip, check=True)
    present_and_broken = (
        "import importlib.util\nif importlib.util.find_spec('torchvision'):\n    import torchvision"
    )
    vision = subprocess.run([str(python), "-c", present_and_broken], capture_output=True)
    if vision.returncode != 0:
        # PyPI's torchvision is built for PyPI's (CUDA) torch; beside a CPU torch its
        # operators fail to register and transformers fails to import. Nothing the task or
        # the scripted model does needs it.
        print("torchvision does not load with this torch: uninstalled from", venv)
        subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "torchvision"])
    return subprocess.run([str(python), __file__, "--inner"], check=False).returncode


def inner() -> int:
    from lmms_eval import evaluator
    from lmms_eval.api.model import lmms
    from lmms_eval.tasks import TaskManager

    from crystalbench.config.scoring import ScoreConfig
    from crystalbench.data import SAMPLE_DIR, load_benchmark
    from crystalbench.data.predictions import load_predictions
    from crystalbench.integrations import read_lmms_eval_samples
    from crystalbench.integrations.lmms_eval.task import install_task
    from crystalbench.scoring.evaluation import evaluate

    bench = load_benchmark("sample")
    outputs = load_predictions(SAMPLE_DIR / "predictions" / "messy-raw.jsonl")
    work = Path(tempfile.mkdtemp(prefix="crystal-lmms-eval-"))
    task_dir = install_task(work / "tasks", "sample", encoder="hash")
    docs = [json.loads(line) for line in (task_dir / "crystal_docs.jsonl").read_text().splitlines()]

    class ScriptedModel(lmms):
        """Answers doc ``k`` with the saved output of item ``docs[k]["id"]``."""

        def generate_until(self, requests):
            answers = []
            for request in requests:
                doc_id = request.args[3]
                pred = outputs.by_id.get(docs[doc_id]["id"])
                answers.append(pred.response if pred is not None and pred.response else "")
            return answers

        def loglikelihood(self, requests):
            raise NotImplementedError

        def generate_until_multi_round(self, requests):
            raise NotImplementedError

    results = evaluator.simple_evaluate(
        model=ScriptedModel(),
        tasks=["crystal"],
        task_manager=TaskManager(include_path=str(work / "tasks")),
        log_samples=True,
        bootstrap_iters=0,
    )
    got = results["results"]["crystal"]
    want = evaluate(bench, outputs, ScoreConfig(encoder="hash")).summary
    failed = False
    for key in METRICS:
        value = next(v for k, v in got.items() if k.startswith(f"crystal_{key},"))
        ok = value == getattr(want, key)
        failed |= not ok
        print(
            f"crystal_{key}: lmms-eval {value!r}  crystal score {getattr(want, key)!r}  "
            f"{'same' if ok else 'DIFFERENT'}"
        )
    samples = work / "samples_crystal.jsonl"
    with samples.open("w", encoding="utf-8") as handle:
        for record in results["samples"]["crystal"]:
            handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    reread = evaluate(bench, read_lmms_eval_samples(samples, bench), ScoreConfig(encoder="hash"))
    ok = reread.summary.match_f1 == want.match_f1
    failed |= not ok
    print(
        f"logged samples read back by crystal score: match_f1 {reread.summary.match_f1!r} "
        f"{'same' if ok else 'DIFFERENT'}"
    )
    print("FAILED" if failed else "OK")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=Path("/tmp/crystalbench-lmms-eval"))
    parser.add_argument("--constraints", type=Path, default=None)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        return inner()
    return outer(args.venv, args.constraints)


if __name__ == "__main__":
    sys.exit(main())
