"""A deterministic backend answering from a script: the fake for tests and examples."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from crystalbench.inference.backends.base import BackendError, Completion, GenerationRequest


class ScriptedBackend:
    """Answers each item id from ``answers`` (``"*"`` for any other id), no model involved.

    ``failures`` maps an id to errors raised on its first requests, one per request,
    before the answer is given; an id missing from both maps fails with ``not_scripted``.

    Examples:
        >>> import asyncio
        >>> from crystalbench.inference.records import GenerationSettings
        >>> backend = ScriptedBackend({"1": "Answer: B"})
        >>> request = GenerationRequest("1", "prompt", None, GenerationSettings())
        >>> asyncio.run(backend.complete(request)).text
        'Answer: B'
        >>> backend.calls
        ['1']
    """

    name = "scripted"

    def __init__(
        self,
        answers: Mapping[str, str],
        *,
        failures: Mapping[str, Sequence[BackendError]] | None = None,
        model: str = "scripted",
        max_in_flight: int = 4,
    ) -> None:
        self.answers = dict(answers)
        self.failures = {k: list(v) for k, v in (failures or {}).items()}
        self.model = model
        self._max_in_flight = max_in_flight
        self.calls: list[str] = []
        self.requests: list[GenerationRequest] = []

    @property
    def max_in_flight(self) -> int:
        return self._max_in_flight

    async def complete(self, request: GenerationRequest) -> Completion:
        self.calls.append(request.item_id)
        self.requests.append(request)
        queue = self.failures.get(request.item_id)
        if queue:
            raise queue.pop(0)
        text = self.answers.get(request.item_id, self.answers.get("*"))
        if text is None:
            raise BackendError("not_scripted", f"no answer scripted for {request.item_id!r}")
        return Completion(
            text=text,
            prompt_tokens=len(request.prompt.split()),
            completion_tokens=len(text.split()),
            finish_reason="stop",
            endpoint="scripted",
            latency_s=0.0,
        )

    async def aclose(self) -> None:
        return None
