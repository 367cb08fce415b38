"""Training pools: any set of items with reference steps, split, prompted and handed to TRL.

A training pool is anything :func:`crystalbench.data.load_benchmark` reads (a JSONL file of
:class:`~crystalbench.types.BenchmarkItem` records with image paths, a ``save_to_disk``
folder, a Parquet file, a hub id) whose items carry reference steps. This module

- holds out a validation split (15% by default, stratified by source, seeded);
- writes the CRYSTAL answer prompt for each item (:func:`prompt_text`, versioned and hashed);
- converts items to the conversational rows ``GRPOTrainer`` expects: a ``prompt`` column of
  messages, an ``image`` column, and the columns the reward functions read (``answer``,
  ``reference_steps``, ``options``, ``answer_type``, ``question``, ``id``, ``source``).

Rows are written to an Arrow cache on disk (``datasets.Dataset.from_generator``), so a pool of
30k images never sits in memory at once.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crystalbench.answers import infer_answer_type
from crystalbench.data import Benchmark, load_benchmark
from crystalbench.errors import InputError
from crystalbench.types import BenchmarkItem

__all__ = [
    "PROMPT_VERSION",
    "TrainingSplit",
    "item_messages",
    "load_pool",
    "prompt_digest",
    "prompt_text",
    "reference_step_count",
    "split_validation",
    "to_trl_dataset",
]

PROMPT_VERSION = "crystal-train-v1"
"""Version of :func:`prompt_text`; bump it whenever the wording changes."""

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

_ANSWER_HINTS = {
    "multiple_choice": "the letter of the correct option",
    "numeric": "the number only (no units)",
    "yes_no": '"yes" or "no"',
    "free_form": "a short phrase",
}

_INSTRUCTION = (
    "Reason step by step about the image and the question. Reply with only a JSON object "
    'of the form {{"reasoning_steps": ["...", "..."], "answer": "..."}}: "reasoning_steps" '
    "lists your reasoning in order as short, self-contained sentences (what you see, then "
    'what follows from it), and "answer" is {hint}.'
)


def prompt_text(item: BenchmarkItem) -> str:
    """The user message of an item: question, options, and the CRYSTAL JSON instruction.

    Examples:
        >>> item = BenchmarkItem(id="1", source="x", question="Which is taller?",
        ...                      options=["the tree", "the house"], answer="A",
        ...                      reference_steps=["Compare heights."])
        >>> print(prompt_text(item))  # doctest: +ELLIPSIS
        Which is taller?
        Options:
        A. the tree
        B. the house
        <BLANKLINE>
        Reason step by step ... "answer" is the letter of the correct option.
    """
    lines = [item.question.strip()]
    if item.options:
        lines.append("Options:")
        lines.extend(f"{_LETTERS[i]}. {option}" for i, option in enumerate(item.options[:26]))
    hint = _ANSWER_HINTS[infer_answer_type(item)]
    return "\n".join(lines) + "\n\n" + _INSTRUCTION.format(hint=hint)


def prompt_digest() -> str:
    """SHA-256 (16 hex digits) of the prompt version and wording, written into every run.

    Examples:
        >>> len(prompt_digest())
        16
    """
    text = PROMPT_VERSION + "\n" + _INSTRUCTION + "\n" + repr(sorted(_ANSWER_HINTS.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def item_messages(item: BenchmarkItem, system_prompt: str | None = None) -> list[dict[str, str]]:
    """Conversational prompt of an item (TRL inserts the image block before the user text).

    Examples:
        >>> item = BenchmarkItem(id="1", source="x", question="2+2?", answer="4",
        ...                      reference_steps=["Add."])
        >>> [m["role"] for m in item_messages(item, "Be careful.")]
        ['system', 'user']
    """
    messages = []
    if system_prompt:
        messages.append({"role": "system", "content": system_prompt})
    messages.append({"role": "user", "content": prompt_text(item)})
    return messages


def reference_step_count(item: BenchmarkItem) -> int:
    """Non-blank reference steps: the difficulty the curriculum orders by.

    Examples:
        >>> reference_step_count(BenchmarkItem(id="1", source="x", question="?", answer="a",
        ...                                    reference_steps=["a", " ", "b"]))
        2
    """
    return sum(1 for step in item.reference_steps if step.strip())


def load_pool(
    spec: str,
    *,
    split: str = "train",
    sources: Sequence[str] | None = None,
    limit: int | None = None,
) -> Benchmark:
    """Load a training pool (any ``load_benchmark`` spec) and check it can train.

    Raises:
        InputError: The pool is empty or an item has no reference steps.
    """
    pool = load_benchmark(spec, split=split)
    if sources or limit is not None:
        pool = pool.subset(sources=list(sources) if sources else None, limit=limit)
    if not pool.items:
        raise InputError("the training pool has no items", path=spec)
    for item in pool.items:
        if reference_step_count(item) == 0:
            raise InputError(
                f"item {item.id!r} has no reference steps: step rewards cannot score it",
                path=spec,
                field="reference_steps",
            )
    return pool


@dataclass(frozen=True)
class TrainingSplit:
    """A pool split into training and validation items (both in pool order)."""

    train: list[BenchmarkItem]
    validation: list[BenchmarkItem]


def _rank_key(seed: int, item_id: str) -> str:
    return hashlib.sha256(f"{seed}:{item_id}".encode()).hexdigest()


def split_validation(
    items: Sequence[BenchmarkItem], fraction: float = 0.15, seed: int = 42
) -> TrainingSplit:
    """Hold out ``fraction`` of the items for validation, stratified by source.

    The validation size is ``round(fraction * n)`` (at least 1 when there are 2 or more
    items); it is shared among sources by the largest-remainder rule, and within a source
    the items with the smallest seeded hash of their id are held out. The split depends only
    on the ids, the fraction and the seed, not on the order of the pool.

    Raises:
        InputError: Fewer than 2 items.

    Examples:
        >>> items = [BenchmarkItem(id=f"{s}{i}", source=s, question="?", answer="a",
        ...                        reference_steps=["x"]) for s in "ab" for i in range(10)]
        >>> split = split_validation(items, 0.15, seed=1)
        >>> len(split.train), len(split.validation)
        (17, 3)
        >>> sorted({item.source for item in split.validation})
        ['a', 'b']
    """
    if len(items) < 2:
        raise InputError(f"cannot split {len(items)} item(s) into training and validation")
    target = max(1, round(fraction * len(items)))
    target = min(target, len(items) - 1)
    by_source: dict[str, list[BenchmarkItem]] = defaultdict(list)
    for item in items:
        by_source[item.source].append(item)
    quotas = {s: fraction * len(group) for s, group in by_source.items()}
    counts = {s: math.floor(q) for s, q in quotas.items()}
    remaining = target - sum(counts.values())
    for source in sorted(quotas, key=lambda s: (-(quotas[s] - counts[s]), s)):
        if remaining <= 0:
            break
        if counts[source] < len(by_source[source]):
            counts[source] += 1
            remaining -= 1
    held: set[str] = set()
    for source, group in by_source.items():
        ranked = sorted(group, key=lambda item: _rank_key(seed, item.id))
        held.update(item.id for item in ranked[: counts[source]])
    return TrainingSplit(
        train=[item for item in items if item.id not in held],
        validation=[item for item in items if item.id in held],
    )


_COLUMNS = (
    "id",
    "source",
    "question",
    "options",
    "answer",
    "answer_type",
    "reference_steps",
    "n_reference_steps",
)


def _rows(
    items: Sequence[BenchmarkItem],
    image_bytes: Callable[[BenchmarkItem], bytes | None],
    system_prompt: str | None,
    with_images: bool,
) -> Iterator[dict[str, Any]]:
    for item in items:
        row: dict[str, Any] = {
            "prompt": item_messages(item, system_prompt),
            "id": item.id,
            "source": item.source,
            "question": item.question,
            "options": list(item.options),
            "answer": item.answer,
            "answer_type": infer_answer_type(item),
            "reference_steps": [s for s in item.reference_steps if s.strip()],
            "n_reference_steps": reference_step_count(item),
        }
        if with_images:
            data = image_bytes(item)
            row["image"] = {"bytes": data, "path": None} if data is not None else None
        yield row


def _generate_rows(
    items: Sequence[BenchmarkItem],
    image_bytes: Callable[[BenchmarkItem], bytes | None],
    system_prompt: str | None,
    with_images: bool,
) -> Iterator[dict[str, Any]]:
    # A module-level generator: datasets pickles it to write shards.
    yield from _rows(items, image_bytes, system_prompt, with_images)


def to_trl_dataset(
    items: Sequence[BenchmarkItem],
    image_bytes: Callable[[BenchmarkItem], bytes | None],
    *,
    system_prompt: str | None = None,
    cache_dir: str | Path | None = None,
    fingerprint: str | None = None,
) -> Any:
    """Rows for ``GRPOTrainer``: conversational prompts, images and the reward columns.

    Args:
        items: Items in the order the rows should have.
        image_bytes: Encoded image of an item (``Benchmark.image_bytes``), or ``None``.
        system_prompt: Optional system message.
        cache_dir: Arrow cache folder (``datasets``' default when ``None``).
        fingerprint: Identity of the rows (pool fingerprint, ids, prompt digest); rows with
            the same fingerprint are read back from the cache. Derived from the items when
            ``None``.

    Returns:
        A ``datasets.Dataset`` with columns ``prompt``, ``image`` (only when some item has
        an image), ``id``, ``source``, ``question``, ``options``, ``answer``,
        ``answer_type``, ``reference_steps``, ``n_reference_steps``.
    """
    import datasets

    with_images = any(item.image is not None for item in items)
    features = datasets.Features(
        {
            "prompt": datasets.List(
                {"role": datasets.Value("string"), "content": datasets.Value("string")}
            ),
            "id": datasets.Value("string"),
            "source": datasets.Value("string"),
            "question": datasets.Value("string"),
            "options": datasets.List(datasets.Value("string")),
            "answer": datasets.Value("string"),
            "answer_type": datasets.Value("string"),
            "reference_steps": datasets.List(datasets.Value("string")),
            "n_reference_steps": datasets.Value("int32"),
            **({"image": datasets.Image()} if with_images else {}),
        }
    )
    if fingerprint is None:
        digest = hashlib.sha256()
        for item in items:
            digest.update(item.model_dump_json().encode())
        digest.update(f"{system_prompt!r}|{prompt_digest()}|{with_images}".encode())
        fingerprint = digest.hexdigest()[:32]
    return datasets.Dataset.from_generator(
        _generate_rows,
        features=features,
        cache_dir=str(cache_dir) if cache_dir is not None else None,
        gen_kwargs={
            "items": list(items),
            "image_bytes": image_bytes,
            "system_prompt": system_prompt,
            "with_images": with_images,
        },
        fingerprint=fingerprint,
    )
