"""Build the bundled sample benchmark and its prediction files, deterministically.

The sample is 40 items written for crystalbench (nothing is copied from a real dataset),
8 in the style of each CRYSTAL source: ``mathvision``, ``scienceqa``, ``realworldqa``,
``mmvp`` and ``plotqa``. Every image is drawn by code from the same parameters that
write its reference chain, so each fact a reference step states is visible in the image.

Five prediction files imitate contrasting model styles from the paper
(:mod:`~tools.sample_builder.styles`): ``terse-precise`` (P >> R),
``verbose-recall`` (R > P), ``scrambled-order`` (LIS and Ordered F1 drop), ``messy-raw`` (raw
text as models emit it, two items missing) and ``right-answer-weak-reasoning``.

Run ``python -m tools.sample_builder`` from the repository root to regenerate
``src/crystalbench/data/sample`` (``--out DIR`` writes elsewhere); the output is the same byte
for byte, which ``tests/tools/test_sample_builder.py`` checks. Pillow draws the scenes;
matplotlib (imported only when a chart is drawn) draws the PlotQA-style charts.

This is a build tool, kept out of the installed package: ``crystalbench`` ships the sample,
not the code that draws it, and no module of ``crystalbench`` imports this one.

The modules, each importing only the ones above it:

- :mod:`~tools.sample_builder.specs`: :class:`Step`, :class:`SampleSpec`, the
  sources and style names;
- :mod:`~tools.sample_builder.drawing`: Pillow helpers shared by the families;
- one module per item family: :mod:`~tools.sample_builder.mathvision`,
  :mod:`~tools.sample_builder.scienceqa`,
  :mod:`~tools.sample_builder.realworldqa`,
  :mod:`~tools.sample_builder.mmvp`,
  :mod:`~tools.sample_builder.plotqa`;
- :mod:`~tools.sample_builder.styles`: the five prediction styles;
- :mod:`~tools.sample_builder.writer`: :func:`sample_specs`,
  :func:`build_sample` and the command line.
"""

from __future__ import annotations

from tools.sample_builder.specs import (
    MISSING_IN_MESSY,
    PREDICTION_STYLES,
    RWQA_SUFFIX,
    SOURCES,
    SampleSpec,
    Step,
)
from tools.sample_builder.styles import build_predictions
from tools.sample_builder.writer import (
    RENDERED_WITH,
    SAMPLE_DIR,
    build_sample,
    main,
    rendering_stack,
    sample_specs,
    save_png,
)

__all__ = [
    "MISSING_IN_MESSY",
    "PREDICTION_STYLES",
    "RENDERED_WITH",
    "RWQA_SUFFIX",
    "SAMPLE_DIR",
    "SOURCES",
    "SampleSpec",
    "Step",
    "build_predictions",
    "build_sample",
    "main",
    "rendering_stack",
    "sample_specs",
    "save_png",
]
