"""A deterministic judge for tests and dry runs: verdicts come from a table or a function."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping

from crystalbench.judges.base import JudgeIdentity, JudgeRequest, JudgeVerdict

ScriptValue = bool | None | JudgeVerdict
"""What a script gives for one triple: a verdict, or a bare ``correct`` value."""

Script = (
    Mapping[tuple[str, str], ScriptValue]
    | Mapping[tuple[str, str, str], ScriptValue]
    | Callable[[str, str, str], ScriptValue]
)


class ScriptedJudge:
    """Judge whose answers are written down in advance.

    Args:
        script: Either a mapping keyed by ``(question, gold, predicted)`` or by
            ``(gold, predicted)`` (the triple is looked up first), or a function
            ``(question, gold, predicted) -> bool | None | JudgeVerdict``.
        name: Shown as the model in :attr:`identity`.

    A triple the table does not hold, a ``None`` value, or an exception raised by the
    function becomes a verdict with ``correct=None`` and ``error`` set: the same failure
    path a real judge takes. Every call is recorded in :attr:`calls`.

    Examples:
        >>> judge = ScriptedJudge({("Paris", "the capital of France"): True})
        >>> judge.judge("Capital?", "Paris", "the capital of France").correct
        True
        >>> judge.judge("Capital?", "Paris", "Lyon").error
        'no scripted verdict'
        >>> len(judge.calls)
        2
    """

    def __init__(self, script: Script, *, name: str = "scripted") -> None:
        self._script = script
        self._lock = threading.Lock()
        self.calls: list[JudgeRequest] = []
        """Every triple judged, in call order."""
        fingerprint = (
            repr(sorted(script.items(), key=repr)) if isinstance(script, Mapping) else None
        )
        self._identity = JudgeIdentity(
            kind="scripted",
            model=name,
            prompt_hash=hashlib.sha256(fingerprint.encode()).hexdigest() if fingerprint else None,
        )

    @property
    def identity(self) -> JudgeIdentity:
        """``kind="scripted"``; the prompt hash fingerprints a table script."""
        return self._identity

    def info(self) -> dict[str, object]:
        """The identity as a plain dict, for results files."""
        return self._identity.model_dump()

    def judge(self, question: str, gold: str, predicted: str) -> JudgeVerdict:
        """Look up (or compute) the scripted verdict; never raises."""
        with self._lock:
            self.calls.append(JudgeRequest(question, gold, predicted))
        try:
            value = self._lookup(question, gold, predicted)
        except KeyError:
            return JudgeVerdict(correct=None, error="no scripted verdict")
        except Exception as error:  # the script stands in for a remote judge that may fail
            return JudgeVerdict(correct=None, error=f"{type(error).__name__}: {error}")
        if isinstance(value, JudgeVerdict):
            return value
        if value is None:
            return JudgeVerdict(correct=None, error="scripted failure")
        return JudgeVerdict(correct=bool(value), reason="scripted", raw=str(value).lower())

    def _lookup(self, question: str, gold: str, predicted: str) -> ScriptValue:
        if not isinstance(self._script, Mapping):
            return self._script(question, gold, predicted)
        table: Mapping[tuple[str, ...], ScriptValue] = self._script  # type: ignore[assignment]
        if (question, gold, predicted) in table:
            return table[(question, gold, predicted)]
        return table[(gold, predicted)]
