#!/usr/bin/env bash
# Build the benchmark's own environment: benchmarks/.venv-bench with crystalbench[embed,onnx]
# (editable, from this checkout) plus crystal-metrics 0.2.0, pinned by constraints.txt.
#
#   benchmarks/setup_env.sh                 # create or update benchmarks/.venv-bench
#   BENCH_VENV=/tmp/venv benchmarks/setup_env.sh
#
# Then run the benchmarks with that interpreter, e.g.
#   benchmarks/.venv-bench/bin/python benchmarks/bench_scoring.py leaderboard
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV="${BENCH_VENV:-benchmarks/.venv-bench}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip
fi
"$VENV/bin/python" -m pip install --disable-pip-version-check -q -c constraints.txt \
  -e ".[embed,onnx]" -r benchmarks/requirements-bench.txt
"$VENV/bin/python" - <<'PY'
from importlib.metadata import version
import crystal_metrics, crystalbench, onnxruntime, sentence_transformers  # noqa: F401
print("benchmark environment ready:",
      "crystalbench", crystalbench.__version__,
      "| crystal-metrics", version("crystal-metrics"),
      "| sentence-transformers", sentence_transformers.__version__,
      "| onnxruntime", onnxruntime.__version__)
PY
