"""Benchmark loading and the bundled sample."""

from __future__ import annotations

from crystalbench.data.loading import SAMPLE_DIR, Benchmark, load_benchmark

__all__ = ["SAMPLE_DIR", "Benchmark", "load_benchmark"]
