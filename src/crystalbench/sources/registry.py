"""The source registry: every built-in adapter, looked up by name, and its example copy."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from crystalbench.errors import UnknownNameError

# Importing the adapter modules runs their @register decorators.
from crystalbench.sources import (  # noqa: F401
    mathvision,
    mmvp,
    plotqa,
    realworldqa,
    scienceqa_img,
    textvqa,
)
from crystalbench.sources.base import REGISTRY, AdapterOptions, SourceAdapter

SOURCE_ORDER: Final = ("mathvision", "scienceqa-img", "realworldqa", "mmvp", "plotqa", "textvqa")
"""The built-in sources: CRYSTAL's five benchmarks, then the training pool's TextVQA."""

EXAMPLES_DIR: Final = Path(__file__).resolve().parent / "examples"
"""A tiny copy of every built-in source in its published layout, shipped with the package: the
bundled sample's items (TextVQA: three questions of its own), so ``crystal data build SOURCE
--from EXAMPLES_DIR/SOURCE`` runs offline (its ``README.md`` lists the commands). Written by
``python -m tools.source_examples`` in the repository."""


def source_adapters() -> dict[str, type[SourceAdapter]]:
    """Every registered adapter class by name: the built-in ones first, in ``SOURCE_ORDER``.

    Examples:
        >>> list(source_adapters())
        ['mathvision', 'scienceqa-img', 'realworldqa', 'mmvp', 'plotqa', 'textvqa']
    """
    rank = {name: position for position, name in enumerate(SOURCE_ORDER)}
    return dict(sorted(REGISTRY.items(), key=lambda entry: rank.get(entry[0], len(rank))))


def get_adapter(name: str, options: AdapterOptions | None = None) -> SourceAdapter:
    """A fresh adapter for ``name``; unknown names raise with the closest valid ones.

    Examples:
        >>> get_adapter("mmvp").source
        'mmvp'
    """
    adapters = source_adapters()
    if name not in adapters:
        raise UnknownNameError("source", name, adapters)
    return adapters[name](options)


def example_copy(name: str) -> Path:
    """The folder of source ``name``'s example copy (pass it to ``--from``).

    Raises:
        UnknownNameError: Not a built-in source.

    Examples:
        >>> example_copy("mmvp").name, (example_copy("mmvp") / "Questions.csv").is_file()
        ('mmvp', True)
    """
    if name not in SOURCE_ORDER:
        raise UnknownNameError("source with an example copy", name, SOURCE_ORDER)
    return EXAMPLES_DIR / name
