"""crystal-metrics 0.2.0's optional LLM grader, on crystalbench's OpenAI judge.

The question goes out through :class:`crystalbench.judges.OpenAIJudge` (any
OpenAI-compatible endpoint, temperature 0, crystalbench's versioned judge prompt, verdicts
cached on disk); when no verdict comes back the answer falls back to crystal-metrics' string
matching, as there.
"""

from __future__ import annotations

from crystalbench._internal.extras import require
from crystalbench._internal.openai_client import api_key_from_env
from crystalbench.answers.compat import cm_normalize_text
from crystalbench.judges import OpenAIJudge

__all__ = ["LLMGrader"]


class LLMGrader:
    """Asks an LLM whether a free-form answer means the gold answer.

    Args:
        model: Model name the endpoint serves.
        base_url: OpenAI-compatible endpoint (Ollama's by default).

    Raises:
        ImportError: The ``openai`` package is not installed.

    Examples:
        >>> grader = LLMGrader("qwen2.5:7b")  # nothing is contacted yet
        >>> grader.judge.identity.model, grader.judge.identity.prompt_name
        ('qwen2.5:7b', 'judge_v1')
    """

    def __init__(self, model: str = "llama3.2", base_url: str = "http://localhost:11434/v1"):
        require("openai", what="The LLM judge", extra="openai", load=False)
        self.model = model
        self.base_url = base_url
        # crystal-metrics sends the key "ollama"; a key in the environment is used first.
        key = api_key_from_env() or "ollama"
        self.judge = OpenAIJudge(base_url, model, api_key=key)

    def verify_answer(self, question: str, predicted: str, ground_truth: str) -> tuple[bool, float]:
        """``(is_correct, confidence)``: the judge's verdict (confidence 1.0), or string
        matching when it gives none (exact 1.0, substring 0.8, else wrong at 0.3)."""
        verdict = self.judge.judge(question, ground_truth, predicted)
        if verdict.correct is not None:
            return verdict.correct, 1.0
        print(f"LLM grading error: {verdict.error}")
        answer, gold = cm_normalize_text(predicted), cm_normalize_text(ground_truth)
        if answer == gold:
            return True, 1.0
        if answer in gold or gold in answer:
            return True, 0.8
        return False, 0.3
