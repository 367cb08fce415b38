"""Shared fakes and builders for the test suite: import them, don't write them again.

``tests/`` is on ``sys.path`` (``pythonpath`` in ``pyproject.toml``), so any test can do
``from fakes import CountingEncoder, make_item, make_benchmark``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from crystalbench.config.scoring import ScoreConfig
from crystalbench.data.loading import Benchmark
from crystalbench.encoders.base import Encoder
from crystalbench.encoders.hashing import HashEncoder
from crystalbench.types import BenchmarkItem

HASH_CONFIG = ScoreConfig(encoder="hash", use_cache=False)
"""Paper defaults with the deterministic hash encoder and no on-disk cache."""


class CountingEncoder:
    """Wraps an encoder (a 64-dim hash encoder by default) and records what it encodes.

    Attributes:
        calls: One list of texts per ``encode`` call, in call order.
    """

    def __init__(self, inner: Encoder | None = None, *, identity: str | None = None) -> None:
        self.inner: Encoder = inner or HashEncoder(dim=64)
        self._identity = identity
        self.calls: list[list[str]] = []

    @property
    def identity(self) -> str:
        """The wrapped encoder's identity unless another one was given."""
        return self._identity or self.inner.identity

    @property
    def seen(self) -> list[str]:
        """Every text encoded, in order, across all calls."""
        return [text for call in self.calls for text in call]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Record ``texts`` and encode them with the wrapped encoder."""
        self.calls.append(list(texts))
        return self.inner.encode(texts)


def make_item(
    item_id: str | int = "1",
    steps: Sequence[str] = ("A step.",),
    *,
    answer: str = "3",
    source: str = "plotqa",
    question: str | None = None,
    options: Sequence[str] = (),
    **extra: Any,
) -> BenchmarkItem:
    """A valid :class:`BenchmarkItem` with overridable fields (any other field via ``extra``)."""
    return BenchmarkItem(
        id=str(item_id),
        source=source,
        question=question if question is not None else f"How many bars are in chart {item_id}?",
        options=list(options),
        answer=answer,
        reference_steps=list(steps),
        **extra,
    )


def make_benchmark(items: Iterable[BenchmarkItem], name: str = "t") -> Benchmark:
    """A :class:`Benchmark` over ``items`` with no image loader."""
    return Benchmark(name=name, items=list(items))


def write_jsonl(path: Path, records: Iterable[dict[str, Any] | str]) -> Path:
    """Write records (dicts as JSON, strings verbatim) one per line; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
