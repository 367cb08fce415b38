"""crystalbench with other harnesses: reading their outputs, and a CRYSTAL task for lmms-eval.

- :mod:`crystalbench.integrations.outputs`: lmms-eval ``--log_samples`` JSONL and VLMEvalKit
  prediction files as :class:`~crystalbench.predictions.PredictionSet` objects.
"""

from __future__ import annotations

from crystalbench.integrations.outputs import (
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
