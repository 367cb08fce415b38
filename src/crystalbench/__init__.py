"""crystalbench: the open toolkit for the CRYSTAL benchmark.

Public API (imported lazily so ``import crystalbench`` stays light and never imports torch)::

    from crystalbench import load_benchmark, load_predictions, evaluate, ScoreConfig
    from crystalbench import parse_response, score_answer
    from crystalbench import HashEncoder, ScriptedJudge, InputError

Each public name is listed in ``_EXPORTS`` (name -> module, what the lazy loader imports),
in ``__all__`` (a literal, as linters and ``from crystalbench import *`` need) and in the
``TYPE_CHECKING`` imports (for type checkers and IDEs); ``tests/test_public_api.py`` checks
that the three name the same things.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from crystalbench._version import __version__

if TYPE_CHECKING:
    from crystalbench.answers import infer_answer_type, score_answer
    from crystalbench.config.scoring import JudgeConfig, ScoreConfig
    from crystalbench.data.loading import Benchmark, load_benchmark
    from crystalbench.data.predictions import PredictionSet, load_predictions
    from crystalbench.encoders import load_encoder
    from crystalbench.encoders.base import Encoder
    from crystalbench.encoders.hashing import HashEncoder
    from crystalbench.errors import (
        BenchmarkUnavailableError,
        CrystalbenchError,
        EncoderUnavailableError,
        ImageError,
        InputError,
        UnknownNameError,
    )
    from crystalbench.inference.config import InferenceConfig
    from crystalbench.judges.base import Judge
    from crystalbench.judges.scripted import ScriptedJudge
    from crystalbench.parsing import parse_prediction, parse_response
    from crystalbench.scoring.engine import ScoringEngine
    from crystalbench.scoring.evaluation import RunResult, evaluate
    from crystalbench.scoring.evaluation_many import MultiRunResult, evaluate_many
    from crystalbench.types import (
        AnswerVerdict,
        BenchmarkItem,
        ChainScore,
        ItemResult,
        MetricSummary,
        ParsedResponse,
        Prediction,
        RunSummary,
    )

_EXPORTS = {
    # answers
    "infer_answer_type": "crystalbench.answers",
    "score_answer": "crystalbench.answers",
    # configuration
    "JudgeConfig": "crystalbench.config.scoring",
    "ScoreConfig": "crystalbench.config.scoring",
    "InferenceConfig": "crystalbench.inference.config",
    # data
    "Benchmark": "crystalbench.data.loading",
    "load_benchmark": "crystalbench.data.loading",
    "PredictionSet": "crystalbench.data.predictions",
    "load_predictions": "crystalbench.data.predictions",
    # encoders and judges: the protocols, the real ones and the deterministic fakes
    "Encoder": "crystalbench.encoders.base",
    "HashEncoder": "crystalbench.encoders.hashing",
    "load_encoder": "crystalbench.encoders",
    "Judge": "crystalbench.judges.base",
    "ScriptedJudge": "crystalbench.judges.scripted",
    # errors a caller catches
    "BenchmarkUnavailableError": "crystalbench.errors",
    "CrystalbenchError": "crystalbench.errors",
    "EncoderUnavailableError": "crystalbench.errors",
    "ImageError": "crystalbench.errors",
    "InputError": "crystalbench.errors",
    "UnknownNameError": "crystalbench.errors",
    # parsing
    "parse_prediction": "crystalbench.parsing",
    "parse_response": "crystalbench.parsing",
    # scoring
    "RunResult": "crystalbench.scoring.evaluation",
    "ScoringEngine": "crystalbench.scoring.engine",
    "evaluate": "crystalbench.scoring.evaluation",
    "MultiRunResult": "crystalbench.scoring.evaluation_many",
    "evaluate_many": "crystalbench.scoring.evaluation_many",
    # records
    "AnswerVerdict": "crystalbench.types",
    "BenchmarkItem": "crystalbench.types",
    "ChainScore": "crystalbench.types",
    "ItemResult": "crystalbench.types",
    "MetricSummary": "crystalbench.types",
    "ParsedResponse": "crystalbench.types",
    "Prediction": "crystalbench.types",
    "RunSummary": "crystalbench.types",
}

__all__ = [
    "AnswerVerdict",
    "Benchmark",
    "BenchmarkItem",
    "BenchmarkUnavailableError",
    "ChainScore",
    "CrystalbenchError",
    "Encoder",
    "EncoderUnavailableError",
    "HashEncoder",
    "ImageError",
    "InferenceConfig",
    "InputError",
    "ItemResult",
    "Judge",
    "JudgeConfig",
    "MetricSummary",
    "MultiRunResult",
    "ParsedResponse",
    "Prediction",
    "PredictionSet",
    "RunResult",
    "RunSummary",
    "ScoreConfig",
    "ScoringEngine",
    "ScriptedJudge",
    "UnknownNameError",
    "__version__",
    "evaluate",
    "evaluate_many",
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
