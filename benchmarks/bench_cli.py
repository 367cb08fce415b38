"""Scoring speed as users meet it: ``crystal score`` processes against ``crystal-metrics``.

Issue 18, point 4. Every measured run is a separate process, started the way a user starts
it (the real ``crystal`` app and ``crystal-metrics`` CLI, through ``timed_run.py``, which
records the process's timeline without changing what it does). Each scenario reports two
timing views:

- **included**: the wall time of the whole process, as a user pays it (interpreter start,
  imports, model loading, reading files, encoding, scoring, writing);
- **excluded**: the same minus start-up (imports) and model loading, as the in-process
  figures of ``bench_scoring.py`` count.

Scenarios (MiniLM, ``minilm-offline``, unless ``--encoder`` names a folder)::

    # start-up to the first encoded batch (fresh embedding cache, ONNX export cached),
    # default path and --backend torch, MiniLM and a random-weight all-distilroberta-v1
    python benchmarks/bench_cli.py startup --rounds 5

    # K models by K separate `crystal score` processes against K `crystal-metrics evaluate`
    # processes, interleaved set by set; then the same K in one `crystal score`
    # (--predictions NAME=FILE ..., skipped when the CLI lacks it)
    python benchmarks/bench_cli.py five --items 300 --sets 5

    # a 20-model leaderboard at 6,372 items in one command (crystal-metrics timed on
    # --cm-sets of the 20 sets, the rest extrapolated from their mean)
    python benchmarks/bench_cli.py leaderboard --items 6372 --sets 20 --cm-sets 3

    # warm re-score of one set (another tau and alpha) in one process, after a cold run
    python benchmarks/bench_cli.py warm --items 6372 --rounds 3

crystalbench runs in compat mode (``--compat crystal-metrics-0.2``: strict ``>``, its tie
order) so that every per-item number can be compared with crystal-metrics'; items that
differ are listed (near-ties: the two tools batch their forward passes differently, and the
default crystalbench path runs ONNX Runtime, whose cosines differ from torch's by ~1e-7).
Records go to ``benchmarks/results/raw/cli-*.json`` (``--save DIR`` elsewhere).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "encoders"))

import workload  # noqa: E402
from bench_scoring import QUIET, flag, timed  # noqa: E402

TAU, ALPHA = 0.35, 0.3
RESCORE_TAU, RESCORE_ALPHA = 0.40, 0.5
WORKDIR = HERE / "workdir" / "cli"
RESULTS = HERE / "results" / "raw"
TOLERANCE = 1e-9
COLUMNS = (  # (crystalbench examples.jsonl field, crystal-metrics CSV column)
    ("precision", "precision"),
    ("recall", "recall"),
    ("f1", "match_f1"),
    ("lis", "lis_ratio"),
    ("ordered_f1", "ordered_match_f1"),
)
RANDOM_DISTILROBERTA = "random-distilroberta"
"""``--encoder`` value that builds (once) a random-weight all-distilroberta-v1 folder."""


# --------------------------------------------------------------------------- set-up
def python() -> str:
    """The interpreter that runs the measured processes (this one)."""
    return sys.executable


def encoder_folder(name: str) -> str:
    """The model folder crystal-metrics is given for ``name``."""
    if name == "minilm-offline":
        from crystalbench.encoders.sentence import offline_model_path

        return str(offline_model_path())
    if name == RANDOM_DISTILROBERTA:
        return str(random_distilroberta())
    return name


def random_distilroberta() -> Path:
    """A random-weight RoBERTa folder shaped like all-distilroberta-v1 (built once)."""
    folder = WORKDIR / "models" / "distilroberta-random"
    if not (folder / "modules.json").is_file():
        from random_st_models import build_random_roberta

        texts = [s for item in workload.iter_items(2000) for s in item.reference_steps]
        print(f"building {folder} (random weights, all-distilroberta-v1's shape) ...")
        build_random_roberta(folder, texts, size="distilroberta")
    return folder


def cb_encoder(name: str) -> str:
    """The ``--encoder`` value crystalbench is given for ``name``."""
    return str(random_distilroberta()) if name == RANDOM_DISTILROBERTA else name


def prepare_export(encoder: str, exports: Path) -> dict[str, Any]:
    """Make (once, untimed) the ONNX export the default path runs, in a child process."""
    code = (
        "import sys, time\n"
        "from crystalbench.encoders import load_encoder\n"
        "started = time.perf_counter()\n"
        f"e = load_encoder({cb_encoder(encoder)!r}, device='cpu', cache_dir={str(exports)!r})\n"
        "e.load()\n"
        "print(e.identity, round(time.perf_counter() - started, 1))\n"
    )
    out = subprocess.run(
        [python(), "-c", code], capture_output=True, text=True, env=child_env(None), check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"could not prepare the encoder {encoder}: {out.stderr[-2000:]}")
    identity, seconds = out.stdout.split()[-2:]
    return {"identity": identity, "prepare_s": float(seconds)}


def fresh_cache(folder: Path, exports: Path) -> Path:
    """An empty embedding cache whose ``onnx/`` is the shared, already made export."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "onnx").symlink_to((exports / "onnx").resolve(), target_is_directory=True)
    return folder


def compile_sources() -> None:
    """Byte-compile crystalbench once, as ``pip install`` does for an installed package.

    The timed children then read ``.pyc`` files instead of compiling every module from
    source in every run (``PYTHONDONTWRITEBYTECODE`` in a developer's shell, or a fresh
    checkout, would otherwise add about 0.3 s to each start-up that no installed copy pays;
    crystal-metrics, installed with pip, is byte-compiled already).
    """
    import compileall

    compileall.compile_dir(str(ROOT / "src" / "crystalbench"), quiet=1)


def child_env(cache: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # read the .pyc files compile_sources() wrote
    env.setdefault("HF_HUB_OFFLINE", "1")
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if cache is not None:
        env["CRYSTALBENCH_CACHE_DIR"] = str(cache)
    return env


def workload_files(items: int, sets: int) -> workload.WorkloadFiles:
    root = WORKDIR / f"w{items}x{sets}-{workload.WORKLOAD_VERSION}"
    return workload.write_workload(root, items, sets)


# --------------------------------------------------------------------------- one process
def run_process(
    tool: str,
    argv: list[str],
    cache: Path | None,
    log: Path,
    label: str,
    *,
    lazy_imports: bool = False,
) -> dict[str, Any]:
    """Run one timed ``crystal`` / ``crystal-metrics`` process; both timing views.

    ``lazy_imports``: the command imports its modules itself, as the console script does
    (the start-up scenario); otherwise they are imported before the command's clock starts.
    """
    record_path = log.with_suffix(".timeline.json")
    command = [python(), str(HERE / "timed_run.py"), "--record", str(record_path)]
    command += ["--lazy-imports"] if lazy_imports else []
    command += ["--", tool]
    command += argv
    log.parent.mkdir(parents=True, exist_ok=True)
    with timed() as clock, log.open("w") as output:
        spawned = time.time()
        code = subprocess.run(
            command, stdout=output, stderr=subprocess.STDOUT, env=child_env(cache), check=False
        ).returncode
        ended = time.time()
    if code != 0 or not record_path.is_file():
        tail = log.read_text(errors="replace")[-3000:]
        raise SystemExit(f"{label}: {tool} exited with {code}:\n{tail}")
    rec = json.loads(record_path.read_text())
    interpreter = rec["started_at"] - spawned
    first = rec["first_forward_done"]
    out = {
        "label": label,
        "tool": tool,
        "included_s": round(ended - spawned, 3),
        "excluded_s": round(rec["excluded_s"], 3),
        "startup_s": round(interpreter + rec["imports_done"], 3),
        "model_load_s": round(rec["model_load_s"], 3),
        "model_wait_s": round(rec["model_wait_s"], 3),
        "exports": len(rec["exports"]),
        "model_ready_s": round(interpreter + rec["model_loads"][0][1], 3)
        if rec["model_loads"]
        else None,
        "first_batch_s": round(interpreter + first, 3) if first is not None else None,
        "first_forward_s": round(first - rec["first_forward_started"], 3)
        if first is not None
        else None,
        "forward_s": round(rec["forward_s"], 3),
        "forward_calls": rec["forward_calls"],
        "outside_forward_share": round(1 - rec["forward_s"] / max(1e-9, ended - spawned), 4),
        "cpu": {k: round(v, 3) for k, v in rec["cpu"].items()},
        "load_average": [clock.load_before, clock.load_after],
        "others_cpu_share": round(clock.others_share, 3),
        "disturbed": bool(flag(clock)),
    }
    print(
        f"  {label:<44} {out['included_s']:8.2f} s incl | {out['excluded_s']:8.2f} s excl | "
        f"start-up {out['startup_s']:.2f} s, model {out['model_load_s']:.2f} s, "
        f"first batch at {out['first_batch_s']} s{flag(clock)}"
    )
    return out


def cb_score_argv(
    bench: Path, preds: Sequence[tuple[str, Path]], out: Path, encoder: str, extra: Sequence[str]
) -> list[str]:
    """``crystal score`` arguments; several prediction files use ``-p NAME=FILE``."""
    argv = ["score", "-b", str(bench), "-o", str(out), "--encoder", cb_encoder(encoder)]
    if len(preds) == 1:
        argv += ["-p", str(preds[0][1])]
    else:
        for name, path in preds:
            argv += ["-p", f"{name}={path}"]
    return [*argv, "--compat", "crystal-metrics-0.2", "--no-progress", *extra]


def cm_argv(files: workload.WorkloadFiles, k: int, encoder: str, out: Path) -> list[str]:
    """``crystal-metrics evaluate`` arguments (threshold 0.35, alpha 0.3, LIS)."""
    assert files.cm_references is not None
    out.parent.mkdir(parents=True, exist_ok=True)
    return [
        "evaluate",
        str(files.cm_predictions[k]),
        str(files.cm_references),
        "--model",
        encoder_folder(encoder),
        "--threshold",
        str(TAU),
        "--alpha",
        str(ALPHA),
        "--order-metric",
        "lis",
        "--output",
        str(out),
    ]


def supports_multi_file(scratch: Path) -> bool:
    """Whether this ``crystal score`` takes several ``--predictions NAME=FILE``."""
    files = workload.write_workload(scratch / "probe-workload", 3, 2, crystal_metrics_format=False)
    out = scratch / "probe-out"
    shutil.rmtree(out, ignore_errors=True)
    argv = ["-m", "crystalbench.cli.main", "score", "-b", str(files.benchmark), "-o", str(out)]
    for path in files.predictions:
        argv += ["-p", f"{path.stem}={path}"]
    argv += ["--encoder", "hash", "--no-cache", "--no-progress"]
    code = subprocess.run(
        [python(), *argv], capture_output=True, env=child_env(None), check=False
    ).returncode
    return code == 0 and all((out / p.stem / "summary.json").is_file() for p in files.predictions)


# --------------------------------------------------------------------------- agreement
def cb_items(folder: Path) -> dict[str, dict[str, float]]:
    rows = {}
    for line in (folder / "examples.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        rows[str(record["id"])] = {c: float(record[f]) for f, c in COLUMNS}
    return rows


def cm_items(csv_path: Path) -> dict[str, dict[str, float]]:
    import csv

    with csv_path.open(newline="", encoding="utf-8") as handle:
        return {
            str(row["sample_idx"]): {c: float(row[c]) for _, c in COLUMNS}
            for row in csv.DictReader(handle)
        }


def agreement(cb_folder: Path, cm_csv: Path) -> dict[str, Any]:
    """Per-item agreement; differing items are listed with the metrics that differ."""
    ours, theirs = cb_items(cb_folder), cm_items(cm_csv)
    common = sorted(set(ours) & set(theirs))
    differing = {}
    for item in common:
        gaps = {c: abs(ours[item][c] - theirs[item][c]) for _, c in COLUMNS}
        bad = {c: round(g, 6) for c, g in gaps.items() if g > TOLERANCE}
        if bad:
            differing[item] = bad
    return {
        "items": len(common),
        "identical": len(common) - len(differing),
        "differing": differing,
        "f1_differs": sorted(i for i, bad in differing.items() if "match_f1" in bad),
    }


# --------------------------------------------------------------------------- scenarios
def startup(args: argparse.Namespace) -> dict[str, Any]:
    """Start-up to the first encoded batch: fresh embedding cache, export cached."""
    files = workload.write_workload(
        WORKDIR / f"startup{args.items}", args.items, 1, crystal_metrics_format=False
    )
    runs: dict[str, Any] = {}
    for encoder in args.encoders.split(","):
        exports = WORKDIR / "exports" / encoder.replace("/", "_")
        prepared = prepare_export(encoder, exports)
        print(f"{encoder}: {prepared['identity']} (prepared in {prepared['prepare_s']} s)")
        for variant in args.variants.split(","):
            extra = [] if variant == "default" else ["--backend", variant]
            rounds = []
            for r in range(args.rounds):
                cache = fresh_cache(WORKDIR / "startup-cache", exports)
                out = WORKDIR / "startup-out"
                argv = cb_score_argv(
                    files.benchmark, [("m", files.predictions[0])], out, encoder, extra
                )
                label = f"{encoder} {variant} round {r + 1}"
                log = WORKDIR / "logs" / "s.log"
                rounds.append(run_process("crystal", argv, cache, log, label, lazy_imports=True))
                summary = json.loads((out / "summary.json").read_text())
                rounds[-1]["identity"] = summary["config"]["encoder_identity"]
            keys = ("first_batch_s", "model_ready_s", "startup_s", "model_load_s", "included_s")
            med = {k: round(statistics.median(r[k] for r in rounds), 3) for k in keys}
            med["first_forward_s"] = round(
                statistics.median(r["first_forward_s"] for r in rounds), 3
            )
            runs[f"{encoder}/{variant}"] = {"median": med, "rounds": rounds, **prepared}
            print(f"  -> median first batch at {med['first_batch_s']} s ({encoder}, {variant})")
    return {"scenario": "startup", "items": args.items, "runs": runs}


def five(args: argparse.Namespace) -> dict[str, Any]:
    """K separate processes per tool, interleaved set by set; then K in one process."""
    files = workload_files(args.items, args.sets)
    exports = WORKDIR / "exports" / args.encoder.replace("/", "_")
    prepared = prepare_export(args.encoder, exports)
    base = WORKDIR / f"five-{args.items}x{args.sets}"
    cache = fresh_cache(base / "cache", exports)
    names = [p.stem for p in files.predictions]
    cm_runs, cb_runs, agree = [], [], []
    print(f"separate processes, {args.items} items x {args.sets} sets, {prepared['identity']}")
    for k, name in enumerate(names):
        order = ("cm", "cb") if k % 2 == 0 else ("cb", "cm")
        for tool in order:
            if tool == "cm":
                argv = cm_argv(files, k, args.encoder, base / "cm" / f"{name}.csv")
                cm_runs.append(
                    run_process(
                        "crystal-metrics",
                        argv,
                        None,
                        base / "logs" / f"cm-{k}.log",
                        f"crystal-metrics  {name}",
                    )
                )
            else:
                argv = cb_score_argv(
                    files.benchmark,
                    [(name, files.predictions[k])],
                    base / "cb" / name,
                    args.encoder,
                    args.cb_args.split() if args.cb_args else [],
                )
                cb_runs.append(
                    run_process(
                        "crystal",
                        argv,
                        cache,
                        base / "logs" / f"cb-{k}.log",
                        f"crystal score    {name}",
                    )
                )
        agree.append({"set": name, **agreement(base / "cb" / name, base / "cm" / f"{name}.csv")})
    record: dict[str, Any] = {
        "scenario": "five",
        "items": args.items,
        "sets": args.sets,
        "workload": workload.WORKLOAD_VERSION,
        "workload_stats": workload.describe(args.items, args.sets),
        **prepared,
        "crystal_metrics": cm_runs,
        "separate": cb_runs,
        "agreement": agree,
    }
    record["separate_ratio"] = ratios(cm_runs, cb_runs)
    print(f"separate: {record['separate_ratio']}")
    if supports_multi_file(base):
        cache = fresh_cache(base / "cache-one", exports)
        argv = cb_score_argv(
            files.benchmark,
            list(zip(names, files.predictions, strict=True)),
            base / "one",
            args.encoder,
            args.cb_args.split() if args.cb_args else [],
        )
        one = run_process(
            "crystal",
            argv,
            cache,
            base / "logs" / "one.log",
            f"crystal score    {args.sets} sets, one process",
        )
        record["one_process"] = one
        record["one_process_ratio"] = ratios(cm_runs, [one])
        record["one_process_agreement"] = [
            {"set": n, **agreement(base / "one" / n, base / "cm" / f"{n}.csv")} for n in names
        ]
        print(f"one process: {record['one_process_ratio']}")
    else:
        record["one_process"] = "skipped: crystal score takes one --predictions file"
        print("one process: skipped (this crystal score takes one --predictions file)")
    return record


def ratios(cm_runs: Sequence[dict[str, Any]], cb_runs: Sequence[dict[str, Any]]) -> dict:
    """crystal-metrics' total over crystalbench's, in both timing views."""
    out = {}
    for view in ("included_s", "excluded_s"):
        cm = sum(r[view] for r in cm_runs)
        cb = sum(r[view] for r in cb_runs)
        out[view.removesuffix("_s")] = {
            "crystal_metrics_s": round(cm, 2),
            "crystalbench_s": round(cb, 2),
            "ratio": round(cm / cb, 2) if cb else None,
        }
    return out


def leaderboard(args: argparse.Namespace) -> dict[str, Any]:
    """20 models in one ``crystal score``; crystal-metrics on ``--cm-sets`` of them."""
    files = workload_files(args.items, args.sets)
    exports = WORKDIR / "exports" / args.encoder.replace("/", "_")
    prepared = prepare_export(args.encoder, exports)
    base = WORKDIR / f"leaderboard-{args.items}x{args.sets}"
    names = [p.stem for p in files.predictions]
    record: dict[str, Any] = {
        "scenario": "leaderboard",
        "items": args.items,
        "sets": args.sets,
        "workload": workload.WORKLOAD_VERSION,
        **prepared,
    }
    if not supports_multi_file(base):
        record["skipped"] = "crystal score takes one --predictions file"
        print("leaderboard: skipped (this crystal score takes one --predictions file)")
        return record
    step = max(1, args.sets // max(1, args.cm_sets))
    chosen = list(range(0, args.sets, step))[: args.cm_sets]
    cm_runs = []
    for k in chosen:
        argv = cm_argv(files, k, args.encoder, base / "cm" / f"{names[k]}.csv")
        cm_runs.append(
            run_process(
                "crystal-metrics",
                argv,
                None,
                base / "logs" / f"cm-{k}.log",
                f"crystal-metrics  {names[k]}",
            )
        )
    cache = fresh_cache(base / "cache", exports)
    argv = cb_score_argv(
        files.benchmark,
        list(zip(names, files.predictions, strict=True)),
        base / "cb",
        args.encoder,
        args.cb_args.split() if args.cb_args else [],
    )
    one = run_process(
        "crystal",
        argv,
        cache,
        base / "logs" / "cb.log",
        f"crystal score    {args.sets} sets, one process",
    )
    scale = args.sets / len(cm_runs)
    record.update(
        crystal_metrics=cm_runs,
        crystal_metrics_sets_timed=[names[k] for k in chosen],
        crystalbench=one,
        agreement=[
            {"set": names[k], **agreement(base / "cb" / names[k], base / "cm" / f"{names[k]}.csv")}
            for k in chosen
        ],
    )
    for view in ("included_s", "excluded_s"):
        cm = sum(r[view] for r in cm_runs) * scale
        record[f"ratio_{view.removesuffix('_s')}"] = {
            "crystal_metrics_s_extrapolated": round(cm, 1),
            "crystalbench_s": one[view],
            "ratio": round(cm / one[view], 2),
        }
    print(
        f"leaderboard: {record['ratio_included']} | outside forward passes "
        f"{100 * one['outside_forward_share']:.1f} %"
    )
    return record


def warm(args: argparse.Namespace) -> dict[str, Any]:
    """A cold ``crystal score`` fills the cache; then warm re-scores at another tau/alpha."""
    files = workload_files(args.items, 1)
    exports = WORKDIR / "exports" / args.encoder.replace("/", "_")
    prepared = prepare_export(args.encoder, exports)
    base = WORKDIR / f"warm-{args.items}"
    preds = [(files.predictions[0].stem, files.predictions[0])]
    reused = args.reuse_cache and (base / "cache" / "embeddings.sqlite").is_file()
    # With --reuse-cache, the cache a cold run of this workload filled before (its vectors
    # are the same): the first run then only primes what a cold run of this version also
    # stores (math-verify's readings of the golds); it is recorded, not in the median.
    cache = base / "cache" if reused else fresh_cache(base / "cache", exports)
    cold = run_process(
        "crystal",
        cb_score_argv(files.benchmark, preds, base / "cold", args.encoder, []),
        cache,
        base / "logs" / "cold.log",
        "crystal score    " + ("priming (cache reused)" if reused else "cold cache"),
    )
    cold["reused_cache"] = reused
    extra = ["--tau", str(RESCORE_TAU), "--alpha", str(RESCORE_ALPHA)]
    rounds = [
        run_process(
            "crystal",
            cb_score_argv(files.benchmark, preds, base / "warm", args.encoder, extra),
            cache,
            base / "logs" / "warm.log",
            f"crystal score    warm re-score {r + 1}",
        )
        for r in range(args.rounds)
    ]
    stdout = (base / "logs" / "warm.log").read_text(errors="replace")
    med = {
        view: round(statistics.median(r[view] for r in rounds), 3)
        for view in ("included_s", "excluded_s", "startup_s")
    }
    print(f"warm re-score: median {med}")
    return {
        "scenario": "warm",
        "items": args.items,
        "workload": workload.WORKLOAD_VERSION,
        **prepared,
        "cold": cold,
        "warm": rounds,
        "median": med,
        "encoded_in_warm_runs": [line for line in stdout.splitlines() if "encoded" in line][-1:],
        "model_loaded_in_warm_runs": any(r["model_load_s"] > 0 for r in rounds),
        "model_waited_for_in_warm_runs": any(r["model_wait_s"] > 0.001 for r in rounds),
    }


# --------------------------------------------------------------------------- main
def cpu_model() -> str | None:
    """The processor's model name (``/proc/cpuinfo``): absolute timings depend on it."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return None
    names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    return names[0] if names else None


def save(name: str, record: dict[str, Any], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    record = {
        "command": " ".join(["python", "benchmarks/bench_cli.py", *sys.argv[1:]]),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "cpus": os.cpu_count(),
        "cpu_model": cpu_model(),
        **record,
    }
    path.write_text(json.dumps(record, indent=2))
    print(f"wrote {path}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    st = sub.add_parser("startup", help="start-up to the first encoded batch")
    st.add_argument("--items", type=int, default=40)
    st.add_argument("--rounds", type=int, default=5)
    st.add_argument("--encoders", default=f"minilm-offline,{RANDOM_DISTILROBERTA}")
    st.add_argument("--variants", default="default,torch", help="default and/or --backend values")
    fv = sub.add_parser("five", help="K separate processes per tool, then K in one process")
    fv.add_argument("--items", type=int, default=300)
    fv.add_argument("--sets", type=int, default=5)
    lb = sub.add_parser("leaderboard", help="20 models in one crystal score")
    lb.add_argument("--items", type=int, default=workload.CRYSTAL_ITEMS)
    lb.add_argument("--sets", type=int, default=20)
    lb.add_argument("--cm-sets", type=int, default=3, help="sets crystal-metrics is timed on")
    wm = sub.add_parser("warm", help="warm re-score in one process")
    wm.add_argument("--items", type=int, default=workload.CRYSTAL_ITEMS)
    wm.add_argument("--rounds", type=int, default=3)
    wm.add_argument(
        "--reuse-cache",
        action="store_true",
        help="keep the cache an earlier cold run of this workload filled (a priming re-score "
        "runs instead of the cold run)",
    )
    for command in (fv, lb, wm):
        command.add_argument("--encoder", default="minilm-offline")
    for command in (fv, lb):
        command.add_argument("--cb-args", default="", help="extra crystal score arguments")
    for command in (st, fv, lb, wm):
        command.add_argument("--save", type=Path, default=RESULTS, help="folder for the record")
        command.add_argument("--wait-quiet", type=float, default=0.0, metavar="SHARE")
    args = parser.parse_args(argv)
    QUIET["max_share"] = args.wait_quiet
    compile_sources()
    scenario = {"startup": startup, "five": five, "leaderboard": leaderboard, "warm": warm}
    record = scenario[args.command](args)
    size = {
        "startup": f"{args.items}",
        "five": f"{args.items}x{getattr(args, 'sets', 1)}",
        "leaderboard": f"{args.items}x{getattr(args, 'sets', 1)}",
        "warm": f"{args.items}",
    }[args.command]
    save(f"cli-{args.command}-{size}", record, args.save)
    return 0


if __name__ == "__main__":
    sys.exit(main())
