"""Model-based answer extraction as a cascade step of the scoring engine (``--extractor-url``).

The answer rules (:mod:`crystalbench.parsing.answer_rules`) read an answer wherever the text
says where it is; an answer stated only in a sentence is left without one
(``ParsedResponse.extraction is None``). With an extractor configured
(:class:`~crystalbench.config.judging.ExtractorConfig`), after parsing and before the answers
are judged:

1. **the rules first**: an item whose answer a rule (or the predictions file) gave is not
   asked; neither is a missing prediction, an empty reply, or a structured record (its
   steps and answer came as data, not as text);
2. **the model** (:class:`~crystalbench.judges.extractor.AnswerExtractor`) for every other
   item with a response: it sees the question and the response, never the gold answer, and
   replies the final answer or ``none``. All of a set's questions go out together
   (concurrently, each from the reply cache when asked before).

The item's record gets ``answer_extractor`` (``model:<name>``) when the model was asked, and
``answer_extraction = "model"`` when it read an answer; a failed call leaves the item with no
answer and its message in ``extraction_error``. The set's ``summary.json`` gets
``extraction`` (:class:`~crystalbench.types.ExtractionSummary`: asked, extracted, none,
failed, requests, cache hits, tokens), and ``config["answer_extraction"]`` says
``rules+model``. Without an extractor (the default) nothing here runs: records and summaries
are those of the rules alone, and ``config["answer_extraction"]`` says ``rules``.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from crystalbench.config.judging import ExtractorConfig
from crystalbench.judges.client import CHARS_PER_TOKEN
from crystalbench.judges.extractor import AnswerExtractor, AnswerQuery, ModelExtraction
from crystalbench.scoring.items import PreparedItem
from crystalbench.scoring.verify import item_question
from crystalbench.types import ExtractionSummary, ParsedResponse

__all__ = [
    "MODEL_EXTRACTION",
    "RULES_ONLY",
    "RULES_THEN_MODEL",
    "Extraction",
    "SetExtraction",
    "needs_model",
]

MODEL_EXTRACTION = "model"
"""``answer_extraction`` of an answer the model read (beside the rules of
:data:`crystalbench.parsing.ANSWER_RULES`)."""
RULES_ONLY = "rules"
"""``config["answer_extraction"]`` of a run without an extractor (the default)."""
RULES_THEN_MODEL = "rules+model"
"""``config["answer_extraction"]`` of a run with one."""

_NOT_ASKED = frozenset({"structured", "empty"})


def needs_model(parsed: ParsedResponse | None) -> bool:
    """Whether the model is asked about this prediction: it has a response with text, it
    is not a structured record, and no rule committed on it.

    Examples:
        >>> from crystalbench.parsing import parse_response
        >>> needs_model(parse_response("The taller bar is the second one, so that one wins."))
        True
        >>> needs_model(parse_response("The bar is tall.\\nAnswer: B"))
        False
        >>> needs_model(None), needs_model(parse_response("  "))
        (False, False)
    """
    if parsed is None or parsed.answer is not None or parsed.status in _NOT_ASKED:
        return False
    return bool(parsed.raw.strip())


class SetExtraction:
    """The extraction step of one prediction set: asks about its items and counts."""

    def __init__(self, extractor: AnswerExtractor, *, dry_run: bool = False) -> None:
        self.extractor = extractor
        self.dry_run = dry_run
        self.n_rules = 0
        self.n_asked = 0
        self.n_extracted = 0
        self.n_none = 0
        self.n_failed = 0
        self.requests = 0
        self.cache_hits = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.first_error: str | None = None

    def apply(self, prepared: Sequence[PreparedItem]) -> list[PreparedItem]:
        """``prepared`` (one set's items, in order) with the model's answers where no rule
        committed; every question goes out together."""
        asked = [k for k, ready in enumerate(prepared) if needs_model(ready.parsed)]
        self.n_rules += sum(
            1 for ready in prepared if ready.parsed is not None and ready.parsed.answer is not None
        )
        queries = []
        for k in asked:
            parsed = prepared[k].parsed
            assert parsed is not None  # needs_model checked it
            queries.append(AnswerQuery(item_question(prepared[k].item), parsed.raw))
        readings = self.extractor.extract_many(queries) if queries else []
        updated = list(prepared)
        for k, reading in zip(asked, readings, strict=True):
            updated[k] = self._with_reading(prepared[k], reading)
        return updated

    def _with_reading(self, ready: PreparedItem, reading: ModelExtraction) -> PreparedItem:
        self.n_asked += 1
        if reading.cached:
            self.cache_hits += 1
        elif not self.dry_run:
            self.requests += 1
        self.prompt_tokens += reading.prompt_tokens
        self.completion_tokens += reading.completion_tokens
        parsed = ready.parsed
        assert parsed is not None
        if reading.error is not None:
            self.n_failed += 1
            self.first_error = self.first_error or reading.error
            return dataclasses.replace(
                ready, extractor=self.extractor.name, extraction_error=reading.error
            )
        if reading.answer is None:
            self.n_none += 1
            return dataclasses.replace(ready, extractor=self.extractor.name)
        self.n_extracted += 1
        read = parsed.model_copy(update={"answer": reading.answer, "extraction": MODEL_EXTRACTION})
        return dataclasses.replace(ready, parsed=read, extractor=self.extractor.name)

    def summary(self) -> ExtractionSummary:
        """The set's ``extraction`` block."""
        return ExtractionSummary(
            mode=RULES_THEN_MODEL,
            extractor=dict(self.extractor.identity()),
            n_rules=self.n_rules,
            n_asked=self.n_asked,
            n_extracted=self.n_extracted,
            n_none=self.n_none,
            n_failed=self.n_failed,
            requests=self.requests,
            cache_hits=self.cache_hits,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            dry_run=self.dry_run,
            first_error=self.first_error,
        )


class Extraction:
    """The engine's extractor: one model shared by the sets, one :class:`SetExtraction` each.

    Args:
        extractor: The model.
        config: Its config (the estimate's token limit, prices and dry run); ``None`` for an
            extractor passed in without one (a scripted one in tests).
        announce: Where the estimate and the dry run's requests are printed (default:
            standard error).
    """

    def __init__(
        self,
        extractor: AnswerExtractor,
        config: ExtractorConfig | None = None,
        announce: Callable[[str], None] | None = None,
    ) -> None:
        self.extractor = extractor
        self.config = config
        self.announce = announce or (lambda line: print(line, file=sys.stderr, flush=True))
        self._sets: dict[int, SetExtraction] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_config(
        cls, config: Any, extractor: AnswerExtractor | None = None
    ) -> Extraction | None:
        """The extraction step of a :class:`~crystalbench.config.scoring.ScoreConfig`
        (``None`` without an extractor, unless one is passed in); ``extractor`` instead of
        building :class:`~crystalbench.judges.extractor.OpenAIExtractor` from
        ``config.extractor``."""
        if extractor is None:
            if config.extractor is None:
                return None
            from crystalbench.judges.extractor import OpenAIExtractor

            extractor = OpenAIExtractor(
                config.extractor, cache_dir=config.cache_dir, use_cache=config.use_cache
            )
        return cls(extractor, config.extractor)

    @property
    def dry_run(self) -> bool:
        """Nothing is sent."""
        return self.config is not None and self.config.dry_run

    def for_set(self, scorer: object) -> SetExtraction:
        """The extraction step of the set ``scorer`` scores (one per item scorer)."""
        with self._lock:
            found = self._sets.get(id(scorer))
            if found is None:
                found = self._sets[id(scorer)] = SetExtraction(self.extractor, dry_run=self.dry_run)
            return found

    def plan(self, prepared: Sequence[Sequence[PreparedItem]]) -> dict[str, float]:
        """Before the run: the requests, tokens and cost the extractor may take (every item
        no rule committed on asked once, the whole token limit), printed.

        ``prepared`` holds, per set, its :class:`~crystalbench.scoring.items.PreparedItem`
        records.
        """
        config = self.config
        asked = prompt_tokens = completion_tokens = 0
        overhead = 0
        max_tokens = config.max_tokens if config is not None else 0
        limit = config.max_response_chars if config is not None else None
        if config is not None:
            from crystalbench.judges.extractor import load_extract_prompt

            prompt = load_extract_prompt(config.prompt)
            overhead = len(prompt.system) + len(prompt.user_template)
        for batch in prepared:
            for ready in batch:
                if not needs_model(ready.parsed):
                    continue
                assert ready.parsed is not None
                response = len(ready.parsed.raw)
                if limit is not None:
                    response = min(response, limit)
                text = overhead + len(item_question(ready.item)) + response
                asked += 1
                prompt_tokens += max(1, text // CHARS_PER_TOKEN)
                completion_tokens += max_tokens
        model = config.model if config is not None else self.extractor.name
        price = config.prices.get(config.model) if config is not None else None
        cost = price.cost(prompt_tokens, completion_tokens) if price is not None else None
        self.announce(
            f"answer extractor {model}: {asked} items no rule committed on, at most {asked} "
            f"requests, ~{prompt_tokens} prompt + {completion_tokens} completion tokens"
            + (f", estimated cost {cost:.4f}" if cost is not None else " (no price for it)")
            + (" [dry run: nothing is sent]" if self.dry_run else "")
        )
        return {
            "items": asked,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "cost": cost if cost is not None else float("nan"),
        }

    def report_dry_run(self) -> None:
        """With ``dry_run``: print each request that would have been sent."""
        client = getattr(self.extractor, "client", None)
        if client is None or not client.dry_run:
            return
        from crystalbench.judges.client import estimate_tokens

        for request in client.stats.planned:
            prompt, _ = estimate_tokens(request)
            self.announce(
                f"dry run: POST {client.base_url}/chat/completions model={client.model} "
                f"json answer max_tokens={request.max_tokens} ~{prompt} prompt tokens"
            )
        self.announce(f"dry run: {len(client.stats.planned)} extractor requests not sent")
