"""Speed of crystalbench.statistics.intervals at CRYSTAL's size, against scipy's and the former
code.

Why it exists: ``crystalbench.statistics.intervals`` computes its bootstrap intervals with
``scipy.stats.bootstrap`` but keeps its own sign-flip permutation test instead of
``scipy.stats.permutation_test``; this script is the measurement behind that choice.
Workload: 6,372 items (CRYSTAL's size) in five sources of CRYSTAL's proportions, six Table 2
metrics per item, 1,000 bootstrap resamples and 10,000 permutations (the defaults).

- intervals: ``bootstrap_cis`` of six metrics (one leaderboard row), through scipy, and the
  former hand-written bootstrap (counts times values, one matrix product);
- one permutation test of one metric: ours against ``scipy.stats.permutation_test(
  permutation_type="samples")`` on the same differences (same p-value up to Monte Carlo
  noise);
- one comparison as ``crystal compare`` and the report run it: ``compare_paired`` of six
  metrics overall plus Match F1 and accuracy per source, and the same permutation tests
  through scipy.

Times are the best of ``--repeats`` runs (the machine is shared), in seconds.

Usage::

    .venv/bin/python benchmarks/bench_stats.py [--items 6372] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np

SOURCES = (
    ("mathvision", 3039),
    ("scienceqa", 2017),
    ("realworldqa", 765),
    ("mmvp", 299),
    ("plotqa", 252),
)
METRICS = ("match_f1", "accuracy", "precision", "recall", "lis", "ordered_f1")
GROUP_METRICS = ("match_f1", "accuracy")


def best(repeats: int, work: Callable[[], Any]) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return min(times), result


def hand_written_bootstrap(matrix: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """crystalbench's bootstrap before scipy: the percentile bounds of resampled means."""
    rng = np.random.default_rng(seed)
    n, k = matrix.shape
    out = np.empty((n_resamples, k))
    chunk = max(1, 4_000_000 // n)
    for start in range(0, n_resamples, chunk):
        size = min(n_resamples, start + chunk) - start
        rows = rng.integers(0, n, size=(size, n)) + np.arange(size)[:, None] * n
        counts = np.bincount(rows.ravel(), minlength=size * n).reshape(size, n)
        out[start : start + size] = (counts @ matrix) / n
    return np.quantile(out, [0.025, 0.975], axis=0)


def scipy_permutation_p(a: np.ndarray, b: np.ndarray, n_resamples: int, seed: int) -> float:
    from scipy import stats

    d = (b - a)[b != a]
    if d.size == 0:
        return 1.0
    return float(
        stats.permutation_test(
            (d,),
            lambda x, axis: np.abs(np.sum(x, axis=axis)),
            permutation_type="samples",
            vectorized=True,
            n_resamples=n_resamples,
            batch=max(1, 4_000_000 // d.size),
            alternative="greater",
            rng=np.random.default_rng(seed),
        ).pvalue
    )


def run_data(n_items: int, rng: np.random.Generator, shift: float) -> dict[str, np.ndarray]:
    f1 = np.clip(rng.beta(2, 2, n_items) + shift, 0, 1)
    return {
        "match_f1": f1,
        "accuracy": (rng.random(n_items) < 0.55 + shift).astype(float),
        "precision": np.clip(f1 + rng.normal(0, 0.05, n_items), 0, 1),
        "recall": np.clip(f1 + rng.normal(0, 0.05, n_items), 0, 1),
        "lis": np.clip(f1 + rng.normal(0, 0.1, n_items), 0, 1),
        "ordered_f1": np.clip(f1 - 0.05, 0, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=6372)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import scipy

    from crystalbench.statistics.intervals import bootstrap_cis, compare_paired, paired_permutation

    rng = np.random.default_rng(0)
    scale = args.items / sum(n for _, n in SOURCES)
    groups = [name for name, n in SOURCES for _ in range(round(n * scale))][: args.items]
    groups += ["plotqa"] * (args.items - len(groups))
    a = run_data(args.items, rng, 0.0)
    b = run_data(args.items, rng, 0.01)
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, scipy "
        f"{scipy.__version__}, {os.cpu_count()} CPUs; {args.items} items, "
        f"best of {args.repeats}"
    )

    ours_ci, cis = best(args.repeats, lambda: bootstrap_cis(a, n_resamples=1000, seed=0))
    matrix = np.stack([a[m] for m in METRICS], axis=1)
    former_ci, bounds = best(args.repeats, lambda: hand_written_bootstrap(matrix, 1000, 0))
    drift = max(
        max(abs(cis[m].low - bounds[0, j]), abs(cis[m].high - bounds[1, j]))
        for j, m in enumerate(METRICS)
    )
    print(
        f"intervals, 6 metrics x 1,000 resamples: scipy.stats.bootstrap {ours_ci:.3f} s, "
        f"former hand-written {former_ci:.3f} s (largest difference of a bound: {drift:.1e})"
    )

    x, y = a["match_f1"], b["match_f1"]
    ours_perm, ours_result = best(
        args.repeats, lambda: paired_permutation(x, y, n_permutations=10_000, seed=0)
    )
    scipy_perm, scipy_p = best(1, lambda: scipy_permutation_p(x, y, 10_000, 0))
    print(
        f"one permutation test, 10,000 sign patterns: ours {ours_perm:.3f} s, "
        f"scipy.stats.permutation_test {scipy_perm:.3f} s ({scipy_perm / ours_perm:.1f}x); "
        f"p = {ours_result[1]:.4f} and {scipy_p:.4f}"
    )

    compare_time, _ = best(
        args.repeats,
        lambda: compare_paired(a, b, groups=groups, group_metrics=list(GROUP_METRICS)),
    )
    labels = np.asarray(groups, dtype=object)

    def scipy_tests() -> None:
        for metric in METRICS:
            scipy_permutation_p(a[metric], b[metric], 10_000, 0)
        for group, _ in SOURCES:
            mask = labels == group
            for metric in GROUP_METRICS:
                scipy_permutation_p(a[metric][mask], b[metric][mask], 10_000, 0)

    scipy_compare, _ = best(1, scipy_tests)
    print(
        f"one comparison (6 metrics + 2 per source x 5 sources): compare_paired "
        f"{compare_time:.2f} s in all; its permutation tests through scipy alone "
        f"{scipy_compare:.2f} s"
    )
    print(
        f"a report of 20 runs (19 comparisons with the baseline): "
        f"{19 * compare_time:.0f} s with ours, over {19 * scipy_compare:.0f} s through scipy"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
