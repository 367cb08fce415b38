"""crystalbench: the open toolkit for the CRYSTAL benchmark.

Public API (imported lazily so ``import crystalbench`` stays light and never imports torch)::

    from crystalbench import load_benchmark, load_predictions, evaluate, ScoreConfig
    from crystalbench import parse_response, score_answer
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from crystalbench._version import __version__

if TYPE_CHECKING:
    from crystalbench.answers import infer_answer_type, score_answer
    from crystalbench.config import JudgeConfig, ScoreConfig
    from crystalbench.data.loading import Benchmark, load_benchmark
    from crystalbench.encoders import load_encoder
    from crystalbench.parsing import parse_prediction, parse_response
    from crystalbench.predictions import PredictionSet, load_predictions
    from crystalbench.scoring import RunResult, Scorer, evaluate
    from crystalbench.types import (
        AnswerVerdict,
        BenchmarkItem,
        ChainScore,
        ItemResult,
        ParsedResponse,
        Prediction,
        RunSummary,
        StepMatch,
    )

_EXPORTS = {
    "infer_answer_type": "crystalbench.answers",
    "score_answer": "crystalbench.answers",
    "JudgeConfig": "crystalbench.config",
    "ScoreConfig": "crystalbench.config",
    "Benchmark": "crystalbench.data.loading",
    "load_benchmark": "crystalbench.data.loading",
    "load_encoder": "crystalbench.encoders",
    "parse_prediction": "crystalbench.parsing",
    "parse_response": "crystalbench.parsing",
    "PredictionSet": "crystalbench.predictions",
    "load_predictions": "crystalbench.predictions",
    "RunResult": "crystalbench.scoring",
    "Scorer": "crystalbench.scoring",
    "evaluate": "crystalbench.scoring",
    "AnswerVerdict": "crystalbench.types",
    "BenchmarkItem": "crystalbench.types",
    "ChainScore": "crystalbench.types",
    "ItemResult": "crystalbench.types",
    "ParsedResponse": "crystalbench.types",
    "Prediction": "crystalbench.types",
    "RunSummary": "crystalbench.types",
    "StepMatch": "crystalbench.types",
}

__all__ = [
    "AnswerVerdict",
    "Benchmark",
    "BenchmarkItem",
    "ChainScore",
    "ItemResult",
    "JudgeConfig",
    "ParsedResponse",
    "Prediction",
    "PredictionSet",
    "RunResult",
    "RunSummary",
    "ScoreConfig",
    "Scorer",
    "StepMatch",
    "__version__",
    "evaluate",
    "infer_answer_type",
    "load_benchmark",
    "load_encoder",
    "load_predictions",
    "parse_prediction",
    "parse_response",
    "score_answer",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'crystalbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
