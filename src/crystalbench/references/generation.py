"""Generation requests: versioned prompts, per-request seeds, and reading what came back.

- :class:`ReferencePrompt` renders ``{question}``, ``{options}``, ``{answer}``, ``{chain}``
  and ``{source}`` literally (never ``str.format``: the JSON braces a prompt shows stay),
  with the conventions of :mod:`crystalbench.inference.prompts`: options as ``A) ...``
  lines, appended to the question when the template has no ``{options}``; blank-line runs
  collapse. Its hash goes into every record.
- :func:`derive_seed` gives each request its own seed from (base seed, role, item, model,
  round, sample, attempt): rounds and attempts differ, reruns repeat.
- :func:`classify_output` never raises on model output: it says whether a generation is a
  usable chain (``ok``) or ``empty``, ``truncated``, ``wrong_schema`` or ``garbage``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from crystalbench.inference.prompts import PromptTemplate, collapse_blank_lines, render_options
from crystalbench.parsing import parse_response
from crystalbench.types import BenchmarkItem, ParsedResponse

BUILTIN_PROMPTS = ("references_generate_v1", "references_validate_v1")
"""Prompts shipped with the package for reference construction."""

_PLACEHOLDER = re.compile(r"\{(question|options|answer|chain|source)\}")
_SCHEMA = re.compile(r"[\"']reasoning_steps[\"']\s*:\s*\[")
_OK_STATUSES = frozenset({"json", "json_repaired", "thinking_json"})


@dataclass(frozen=True)
class ReferencePrompt(PromptTemplate):
    """A prompt template for generators or the validator, with its name and hash (those of
    :class:`~crystalbench.inference.prompts.PromptTemplate`), rendering more placeholders.

    Examples:
        >>> p = ReferencePrompt("t", "Q: {question}\\n{options}\\nGold: {answer}\\n{chain}")
        >>> item = BenchmarkItem(id="1", source="s", question="Which?", options=["x", "y"],
        ...                      answer="B", reference_steps=[])
        >>> print(p.render(item, chain=["It is y."]), end="")
        Q: Which?
        A) x
        B) y
        Gold: B
        1. It is y.
    """

    def render(self, item: BenchmarkItem, chain: list[str] | None = None) -> str:
        """The prompt for one item (and, for the validator, the chain to judge)."""
        options = render_options(item.options)
        question = item.question.strip()
        if "{options}" not in self.text and options:
            question = f"{question}\n{options}"
        values = {
            "question": question,
            "options": options,
            "answer": item.answer.strip(),
            "chain": "\n".join(f"{n}. {step}" for n, step in enumerate(chain or [], start=1)),
            "source": item.source,
        }
        return collapse_blank_lines(_PLACEHOLDER.sub(lambda m: values[m.group(1)], self.text))


def load_reference_prompt(spec: str | Path) -> ReferencePrompt:
    """A built-in reference prompt by name, or a template file.

    Raises:
        InputError: The file is missing, empty or lacks ``{question}``.
        UnknownNameError: Neither a built-in name nor a file.

    Examples:
        >>> load_reference_prompt("references_generate_v1").name
        'references_generate_v1'
    """
    return ReferencePrompt.load(spec, BUILTIN_PROMPTS)


def derive_seed(
    base: int, role: str, item_id: str, model: str, round_: int, sample: int, attempt: int
) -> int:
    """A request's seed: SHA-256 of its coordinates, as a non-negative 31-bit integer.

    Examples:
        >>> first = derive_seed(0, "gen", "a", "qwen", 1, 0, 0)
        >>> first == derive_seed(0, "gen", "a", "qwen", 1, 0, 0)
        True
        >>> first != derive_seed(0, "gen", "a", "qwen", 2, 0, 0)
        True
        >>> 0 <= derive_seed(5, "val", "x", "m", 3, 0, 2) < 2**31
        True
    """
    text = f"{base}|{role}|{item_id}|{model}|{round_}|{sample}|{attempt}"
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big") >> 1


def classify_output(text: str | None, finish_reason: str | None) -> tuple[str, ParsedResponse]:
    """Whether a generation is a usable chain, and the parse it came from.

    - ``empty``: no text (or only whitespace / chat tokens);
    - ``truncated``: cut at the token limit (``finish_reason`` ``length``) or JSON cut off;
    - ``ok``: a JSON object with a ``reasoning_steps`` list, at least one step;
    - ``wrong_schema``: steps were found, but not in the asked JSON schema (markup, other
      keys, a string instead of a list), or the JSON held no step;
    - ``garbage``: nothing usable.

    Examples:
        >>> classify_output('{"reasoning_steps": ["The bar is red."], "answer": "B"}', "stop")[0]
        'ok'
        >>> [classify_output(t, "stop")[0] for t in ("", "lorem ipsum", '{"steps": ["x"]}')]
        ['empty', 'garbage', 'wrong_schema']
        >>> classify_output('{"reasoning_steps": ["a", "b', "length")[0]
        'truncated'
    """
    parsed = parse_response(text)
    if parsed.status == "empty":
        return "empty", parsed
    if finish_reason == "length" or parsed.status == "json_truncated":
        return "truncated", parsed
    has_schema = _SCHEMA.search(text or "") is not None
    if parsed.status in _OK_STATUSES and has_schema and parsed.steps:
        return "ok", parsed
    if parsed.steps or "{" in (text or ""):
        return "wrong_schema", parsed
    return "garbage", parsed
