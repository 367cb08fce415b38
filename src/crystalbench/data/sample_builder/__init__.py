"""Build the bundled sample benchmark and its prediction files, deterministically.

The sample is 40 items written for crystalbench (nothing is copied from a real dataset),
8 in the style of each CRYSTAL source: ``mathvision``, ``scienceqa``, ``realworldqa``,
``mmvp`` and ``plotqa``. Every image is drawn by code from the same parameters that
write its reference chain, so each fact a reference step states is visible in the image.

Five prediction files imitate contrasting model styles from the paper
(:mod:`~crystalbench.data.sample_builder.styles`): ``terse-precise`` (P >> R),
``verbose-recall`` (R > P), ``scrambled-order`` (LIS and Ordered F1 drop), ``messy-raw`` (raw
text as models emit it, two items missing) and ``right-answer-weak-reasoning``.

Run ``python -m crystalbench.data.sample_builder`` to regenerate
``crystalbench/data/sample``. Pillow draws the scenes; matplotlib (an optional dependency,
imported only when a chart is drawn) draws the PlotQA-style charts.

The modules, each importing only the ones above it:

- :mod:`~crystalbench.data.sample_builder.specs`: :class:`Step`, :class:`SampleSpec`, the
  sources and style names;
- :mod:`~crystalbench.data.sample_builder.drawing`: Pillow helpers shared by the families;
- one module per item family: :mod:`~crystalbench.data.sample_builder.mathvision`,
  :mod:`~crystalbench.data.sample_builder.scienceqa`,
  :mod:`~crystalbench.data.sample_builder.realworldqa`,
  :mod:`~crystalbench.data.sample_builder.mmvp`,
  :mod:`~crystalbench.data.sample_builder.plotqa`;
- :mod:`~crystalbench.data.sample_builder.styles`: the five prediction styles;
- :mod:`~crystalbench.data.sample_builder.writer`: :func:`sample_specs`,
  :func:`build_sample` and the command line.
"""

from __future__ import annotations

from crystalbench.data.sample_builder.specs import (
    MISSING_IN_MESSY,
    PREDICTION_STYLES,
    RWQA_SUFFIX,
    SOURCES,
    SampleSpec,
    Step,
)
from crystalbench.data.sample_builder.styles import build_predictions
from crystalbench.data.sample_builder.writer import (
    SAMPLE_DIR,
    build_sample,
    main,
    sample_specs,
    save_png,
)

__all__ = [
    "MISSING_IN_MESSY",
    "PREDICTION_STYLES",
    "RWQA_SUFFIX",
    "SAMPLE_DIR",
    "SOURCES",
    "SampleSpec",
    "Step",
    "build_predictions",
    "build_sample",
    "main",
    "sample_specs",
    "save_png",
]
