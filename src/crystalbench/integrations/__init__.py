"""crystalbench with other harnesses: reading their outputs, and a CRYSTAL task for lmms-eval.

- :mod:`crystalbench.data.harnesses`: lmms-eval ``--log_samples`` JSONL and VLMEvalKit
  prediction files as :class:`~crystalbench.data.predictions.PredictionSet` objects.
"""

from __future__ import annotations

from crystalbench.data.harnesses import (
    PREDICTION_FORMATS,
    detect_format,
    load_predictions_as,
    read_lmms_eval_samples,
    read_vlmevalkit,
)

__all__ = [
    "PREDICTION_FORMATS",
    "detect_format",
    "load_predictions_as",
    "read_lmms_eval_samples",
    "read_vlmevalkit",
]
