"""Write the sample: the 40 specs in benchmark order, their images, the prediction files and
the README, and the command line (``python -m tools.sample_builder``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from crystalbench.data.loading import SAMPLE_DIR
from crystalbench.types import BenchmarkItem
from tools.sample_builder.mathvision import mathvision_specs
from tools.sample_builder.mmvp import mmvp_specs
from tools.sample_builder.plotqa import plotqa_specs
from tools.sample_builder.realworldqa import realworldqa_specs
from tools.sample_builder.scienceqa import scienceqa_specs
from tools.sample_builder.specs import PREDICTION_STYLES, SampleSpec
from tools.sample_builder.styles import build_predictions

__all__ = [
    "RENDERED_WITH",
    "SAMPLE_DIR",
    "build_sample",
    "main",
    "rendering_stack",
    "sample_specs",
    "save_png",
]


RENDERED_WITH: dict[str, str] = {
    "Pillow": "13.0.0",
    "FreeType": "2.14.3",
    "zlib": "1.2.13",
    "matplotlib": "3.11.2",
}
"""The libraries that decide the committed images' bytes, at the versions that rewrite them
byte for byte: Pillow (drawing and its PNG encoder), the zlib it compresses with, the FreeType
that renders its text, and matplotlib (the charts). The text files do not depend on them."""


def rendering_stack() -> dict[str, str]:
    """The versions of the :data:`RENDERED_WITH` libraries installed here (``"missing"`` if not).

    Examples:
        >>> sorted(rendering_stack()) == sorted(RENDERED_WITH)
        True
    """
    from importlib import metadata

    from PIL import __version__ as pillow
    from PIL import features

    try:
        matplotlib = metadata.version("matplotlib")
    except metadata.PackageNotFoundError:
        matplotlib = "missing"
    return {
        "Pillow": pillow,
        "FreeType": features.version("freetype2") or "missing",
        "zlib": features.version("zlib") or "missing",
        "matplotlib": matplotlib,
    }


DESCRIPTION = "Build the bundled sample benchmark and its prediction files, deterministically."
"""The command line's description."""


def sample_specs() -> list[SampleSpec]:
    """All 40 sample specs, in benchmark order (8 per source); nothing is drawn yet.

    Examples:
        >>> specs = sample_specs()
        >>> len(specs), specs[0].item_id, specs[0].item().image
        (40, 'mathvision-01', 'images/mathvision-01.png')
    """
    return [
        *mathvision_specs(),
        *scienceqa_specs(),
        *realworldqa_specs(),
        *mmvp_specs(),
        *plotqa_specs(),
    ]


def _jsonl(records: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def save_png(image: Image.Image, path: Path) -> None:
    """Save ``image`` as an RGB PNG whose bytes depend only on its pixels.

    Pillow writes no timestamp or software chunk, so equal pixels give equal bytes.
    """
    image.convert("RGB").save(path, format="PNG", optimize=True)


README = """\
# The crystalbench sample benchmark

40 visual questions written for crystalbench, 8 in the style of each CRYSTAL source
(`mathvision`, `scienceqa`, `realworldqa`, `mmvp`, `plotqa`). Nothing is copied from the real
datasets: every image is drawn by `tools/sample_builder/` of the crystalbench repository
(Pillow; matplotlib for the charts; the builder is not part of the installed package) from the
same parameters that write the item's reference chain, so the facts the steps state are visible
in the image.

- `benchmark.jsonl`: one `BenchmarkItem` per line; `image` is relative to this file.
  All four answer types appear (multiple choice with a letter, option-text or MMVP `(a)` gold,
  RealWorldQA-style options embedded in the question; numbers incl. decimals, thousands and
  LaTeX such as `\\frac{3}{2}`, `2\\sqrt{3}`, `9\\pi`; yes/no; short free text).
  `difficulty` is set on some items only, so the derived tiers are exercised too.
- `images/`: the drawn PNGs.
- `predictions/`: five contrasting model styles, generated from templates with a seeded RNG:
  - `terse-precise`: 2-4 paraphrased key steps (precision far above recall);
  - `verbose-recall`: nearly every step plus restatements and filler (recall above precision);
  - `scrambled-order`: most steps in shuffled order (LIS and Ordered F1 drop, Match F1 holds);
  - `messy-raw`: raw `response` text (JSON in fences or prose, `<think>` blocks, markdown
    steps with `\\boxed{}`, trailing commas, two truncated outputs, garbage), two items missing;
  - `right-answer-weak-reasoning`: right answers behind one or two vague steps.

What `crystal demo` measured when the sample was generated (encoder `minilm-offline`,
tau 0.35, macro averages over all 40 items; not comparable with the paper's numbers):

| style | Acc (%) | Match F1 | P | R | Steps | LIS | Ordered F1 | missing | parse failed |
|---|---|---|---|---|---|---|---|---|---|
| `terse-precise` | 85.0 | 0.498 | 0.945 | 0.346 | 3.02 | 0.992 | 0.497 | 0 | 0 |
| `verbose-recall` | 75.0 | 0.671 | 0.525 | 0.934 | 14.90 | 0.882 | 0.647 | 0 | 0 |
| `scrambled-order` | 70.0 | 0.922 | 0.987 | 0.865 | 7.35 | 0.444 | 0.768 | 0 | 0 |
| `messy-raw` | 57.5 | 0.725 | 0.875 | 0.630 | 5.35 | 0.973 | 0.719 | 2 | 2 |
| `right-answer-weak-reasoning` | 95.0 | 0.093 | 0.275 | 0.057 | 1.70 | 0.988 | 0.092 | 0 | 0 |

Regenerate with `python -m tools.sample_builder` from the root of a clone of the repository
(needs matplotlib); the output is deterministic, byte for byte (`tests/tools/` checks it). Run
`crystal demo` to score the five styles.
"""


def build_sample(out_dir: str | Path = SAMPLE_DIR) -> list[BenchmarkItem]:
    """Write the sample benchmark, its images, prediction files and README under ``out_dir``.

    Args:
        out_dir: Target folder (created if needed); defaults to the bundled sample.

    Returns:
        The benchmark items as written (image paths relative to ``out_dir``).

    Examples:
        >>> import tempfile
        >>> items = build_sample(tempfile.mkdtemp())
        >>> len(items), items[0].id, items[0].reference_steps[0]
        (40, 'mathvision-01', 'The figure shows triangle ABC with a right-angle mark at vertex C.')
    """
    out = Path(out_dir)
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "predictions").mkdir(parents=True, exist_ok=True)
    specs = sample_specs()
    items = [spec.item() for spec in specs]
    for spec in specs:
        save_png(spec.draw(), out / "images" / f"{spec.item_id}.png")
    (out / "benchmark.jsonl").write_text(
        _jsonl([item.model_dump(mode="json") for item in items]), encoding="utf-8"
    )
    for style, records in build_predictions(specs).items():
        (out / "predictions" / f"{style}.jsonl").write_text(_jsonl(records), encoding="utf-8")
    (out / "README.md").write_text(README, encoding="utf-8")
    return items


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point: ``python -m tools.sample_builder [--out DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m tools.sample_builder", description=DESCRIPTION)
    parser.add_argument("--out", type=Path, default=SAMPLE_DIR, help="output folder")
    args = parser.parse_args(argv)
    items = build_sample(args.out)
    print(
        f"wrote {len(items)} items, images and {len(PREDICTION_STYLES)} prediction files to "
        f"{args.out}"
    )
