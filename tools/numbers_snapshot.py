"""The numbers that must not move: the bundled sample scored under fixed configurations.

Runs the installed ``crystal`` command (so it outlives any reorganisation of the package) on
the sample's five prediction sets under five scoring configurations, plus the demo's
leaderboard, the encoder x threshold ablation and the reward scorer on the same
predictions, and writes every per-item record and summary with the fields that change from
run to run (timestamps, run ids, timings, absolute paths, the package version) removed.

    python -m tools.numbers_snapshot OUT_DIR            # take a snapshot
    python -m tools.numbers_snapshot OUT_DIR --compare BEFORE_DIR

``--compare`` exits 1 and lists the differing files when any number moved.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "src" / "crystalbench" / "data" / "sample"
SETS = sorted(p.stem for p in (SAMPLE / "predictions").glob("*.jsonl"))

CONFIGS: dict[str, list[str]] = {
    "paper-minilm": ["--encoder", "minilm-offline"],
    "paper-hash": ["--encoder", "hash"],
    "compat-minilm": ["--encoder", "minilm-offline", "--compat", "crystal-metrics-0.2"],
    "guard-facts-minilm": ["--encoder", "minilm-offline", "--guard", "facts"],
    "kendall-hash": ["--encoder", "hash", "--order", "kendall", "--alpha", "0.5", "--tau", "0.5"],
}

# Fields whose values change between two runs of the same inputs.
VOLATILE = {
    "created_at",
    "run_id",
    "timings",
    "package_version",
    "examples_sha256",
    "seconds",
    "cache_dir",
    "elapsed_s",
    # A digest of the fact guard's source (its decision cache's namespace): any edit to that
    # source changes it, a moved file included; what the rules decide shows in the numbers.
    "guard_rules",
}

REWARDS_SNIPPET = r"""
import json, sys
from pathlib import Path
from crystalbench import load_benchmark
from crystalbench.encoders import load_encoder
try:
    from crystalbench.rewards import RewardScorer
except ImportError:
    from crystalbench.rewards.scorer import RewardScorer
bench = load_benchmark("sample")
encoder = load_encoder("hash")
out = {}
for guard in ("none", "facts"):
    scorer = RewardScorer(encoder, guard=guard, best_reference_chain=True)
    for path in sorted(Path(sys.argv[1]).glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        texts, items = [], []
        for row in rows:
            item = bench.get(row["id"])
            if item is None:
                continue
            if row.get("reasoning_steps") is not None:
                texts.append(json.dumps({"reasoning_steps": row["reasoning_steps"],
                                         "answer": row.get("answer")}))
            else:
                texts.append(row.get("response") or "")
            items.append(item)
        for kind in ("cpr", "composite", "step_f1", "answer", "format", "curriculum_phase1"):
            try:
                values = scorer.rewards(texts, items, kind=kind)
            except Exception as error:  # a kind this version lacks
                values = repr(error)
            out[f"{guard}/{path.stem}/{kind}"] = values
print(json.dumps(out, indent=1, sort_keys=True))
"""


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _clean(v)
            for k, v in sorted(value.items())
            if k not in VOLATILE and not k.endswith("_seconds")
        }
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, str) and value.startswith(("/tmp", str(ROOT))):
        return Path(value).name
    return value


def _clean_file(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.suffix == ".jsonl":
        rows = [json.loads(x) for x in source.read_text().splitlines() if x.strip()]
        target.write_text("".join(json.dumps(_clean(r), sort_keys=True) + "\n" for r in rows))
    elif source.suffix == ".json":
        data = json.loads(source.read_text())
        target.write_text(json.dumps(_clean(data), indent=1, sort_keys=True) + "\n")


def _crystal() -> str:
    found = shutil.which("crystal", path=str(Path(sys.executable).parent))
    return found or "crystal"


def _run(args: list[str], cwd: Path) -> str:
    env = dict(os.environ, HF_HUB_OFFLINE="1", COLUMNS="200", NO_COLOR="1")
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def take(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        preds = [f"{name}={SAMPLE / 'predictions' / (name + '.jsonl')}" for name in SETS]
        for config, flags in CONFIGS.items():
            target = work / config
            args = [_crystal(), "score", "-b", "sample", "-o", str(target), "--no-cache"]
            for pred in preds:
                args += ["-p", pred]
            _run(args + flags + ["--quiet"], work)
            for path in sorted(target.rglob("*.json*")):
                _clean_file(path, out / config / path.relative_to(target))
        demo = _run([_crystal(), "demo"], work)
        lines = [line.rstrip() for line in demo.splitlines() if "│" in line or "|" in line]
        (out / "demo-leaderboard.txt").write_text("\n".join(lines) + "\n")
        ablation = work / "ablation"
        args = [_crystal(), "validate", "ablate", "-b", "sample", "-o", str(ablation)]
        args += [
            "--encoders",
            "hash,minilm-offline",
            "--thresholds",
            "0.3,0.35",
            "--guards",
            "none,facts",
            "--no-cache",
            "--quiet",
        ]
        for pred in preds:
            args += ["-p", pred]
        _run(args, work)
        for path in sorted(ablation.rglob("*.json")):
            _clean_file(path, out / "ablation" / path.relative_to(ablation))
        rewards = _run([sys.executable, "-c", REWARDS_SNIPPET, str(SAMPLE / "predictions")], work)
        (out / "rewards.json").write_text(rewards)


def _reread(path: Path) -> Any:
    """A snapshot file cleaned again: a snapshot written before a field joined VOLATILE still
    compares."""
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".jsonl":
            return [_clean(json.loads(line)) for line in text.splitlines() if line.strip()]
        if path.suffix == ".json":
            return _clean(json.loads(text))
    except json.JSONDecodeError:
        pass
    return text


def compare(new: Path, old: Path) -> int:
    differing: list[str] = []
    for path in sorted(old.rglob("*")):
        if path.is_dir():
            continue
        rel = path.relative_to(old)
        other = new / rel
        if not other.exists():
            differing.append(f"missing: {rel}")
        elif not filecmp.cmp(path, other, shallow=False) and _reread(path) != _reread(other):
            differing.append(f"differs: {rel}")
    for path in sorted(new.rglob("*")):
        if path.is_file() and not (old / path.relative_to(new)).exists():
            differing.append(f"new: {path.relative_to(new)}")
    for line in differing:
        print(line)
    print("identical" if not differing else f"{len(differing)} files differ")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--compare", type=Path, help="an earlier snapshot to compare with")
    args = parser.parse_args()
    take(args.out)
    if args.compare is not None:
        return compare(args.out, args.compare)
    return 0


if __name__ == "__main__":
    sys.exit(main())
