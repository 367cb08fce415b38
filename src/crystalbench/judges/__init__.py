"""LLM judges for free-form answers: the protocol, a scripted fake and an OpenAI client.

- :class:`Judge`: the protocol (``identity`` and ``judge(question, gold, predicted)``);
- :class:`ScriptedJudge`: verdicts from a table or a function, for tests;
- :class:`OpenAIJudge`: any OpenAI-compatible endpoint, temperature 0, cached on disk;
- :mod:`crystalbench.judges.step_judge`: the judge matcher (``crystal score --matcher
  judge``), an LLM that names the predicted steps matching each reference step.

Importing this package does not import ``openai``; the client loads on the first request.
"""

from __future__ import annotations

from crystalbench.judges.base import (
    Judge,
    JudgeIdentity,
    JudgePrompt,
    JudgeRequest,
    JudgeVerdict,
    judge_many,
    load_prompt,
    parse_judge_reply,
)
from crystalbench.judges.openai_judge import JudgeStats, OpenAIJudge, VerdictCache
from crystalbench.judges.scripted import ScriptedJudge

__all__ = [
    "Judge",
    "JudgeIdentity",
    "JudgePrompt",
    "JudgeRequest",
    "JudgeStats",
    "JudgeVerdict",
    "OpenAIJudge",
    "ScriptedJudge",
    "VerdictCache",
    "judge_many",
    "load_prompt",
    "parse_judge_reply",
]
