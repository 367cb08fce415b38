"""Cosine bands: the strata of the paper's Table 3 (< 0.20, [0.20, 0.35), ..., >= 0.70)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from crystalbench.defaults import VALIDATION_BAND_EDGES
from crystalbench.errors import InputError


def band_labels(edges: Sequence[float] = VALIDATION_BAND_EDGES) -> list[str]:
    """The label of every band, lowest first: ``len(edges) + 1`` of them.

    Examples:
        >>> band_labels((0.2, 0.35))
        ['<0.20', '[0.20,0.35)', '>=0.35']
    """
    edges = list(edges)
    if not edges:
        return ["all"]
    labels = [f"<{edges[0]:.2f}"]
    labels += [f"[{low:.2f},{high:.2f})" for low, high in itertools.pairwise(edges)]
    labels.append(f">={edges[-1]:.2f}")
    return labels


def band_bounds(edges: Sequence[float] = VALIDATION_BAND_EDGES) -> list[tuple[float, float]]:
    """``(low, high)`` of every band (``-inf`` and ``inf`` at the ends); low is inclusive.

    Examples:
        >>> band_bounds((0.2,))
        [(-inf, 0.2), (0.2, inf)]
    """
    points = [float("-inf"), *map(float, edges), float("inf")]
    return list(itertools.pairwise(points))


def band_index(cosines: Sequence[float] | np.ndarray, edges: Sequence[float]) -> np.ndarray:
    """The band of each cosine: a cosine equal to an edge belongs to the band above it.

    Examples:
        >>> band_index([0.1, 0.2, 0.349, 0.35, 0.9], (0.2, 0.35, 0.5, 0.7)).tolist()
        [0, 1, 1, 2, 4]
    """
    return np.searchsorted(np.asarray(edges, dtype=np.float64), np.asarray(cosines), side="right")


def parse_bands(text: str, *, field: str = "--bands") -> tuple[float, ...]:
    """Band edges from ``"0.2,0.35,0.5,0.7"``: increasing numbers within [-1, 1].

    Raises:
        InputError: Not numbers, not increasing, or out of range (``field`` is named).

    Examples:
        >>> parse_bands("0.2, 0.35,0.5")
        (0.2, 0.35, 0.5)
    """
    return parse_increasing(text, field=field, low=-1.0, high=1.0)


def parse_increasing(
    text: str, *, field: str, low: float = -1.0, high: float = 1.0
) -> tuple[float, ...]:
    """Comma-separated, strictly increasing numbers within ``[low, high]``.

    Raises:
        InputError: Empty, not numbers, not increasing, or out of range.
    """
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise InputError("expected comma-separated numbers, e.g. 0.2,0.35,0.5", field=field)
    values: list[float] = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            raise InputError(f"{part!r} is not a number", field=field) from None
        if not np.isfinite(value) or not low <= value <= high:
            raise InputError(f"{part} is outside [{low:g}, {high:g}]", field=field)
        values.append(value)
    if any(b <= a for a, b in itertools.pairwise(values)):
        raise InputError(f"values must increase: {text}", field=field)
    return tuple(values)
