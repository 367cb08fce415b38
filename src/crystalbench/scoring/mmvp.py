"""Pair accuracy of paired questions (MMVP): both questions of a pair must be right.

MMVP asks each question twice, once per image of a pair that CLIP-style encoders confuse;
its headline number (and lmms-eval's) is the share of pairs whose questions are both answered
correctly. An item belongs to a pair when its metadata holds a pair id
(:data:`~crystalbench.defaults.PAIR_METADATA_KEY`); items of one source with the same id form
the pair. A pair with a question absent from the run is *incomplete*: it counts as not right
and is reported, never dropped. Pure functions of plain records; no I/O.

Examples:
    >>> summarize_pairs([("mmvp/0", 2, True), ("mmvp/0", 2, True), ("mmvp/1", 2, True)])
    ... # doctest: +NORMALIZE_WHITESPACE
    PairSummary(n_paired_items=3, question_accuracy=1.0, n_pairs=2, n_pairs_right=1,
                n_pairs_incomplete=1, pair_accuracy=0.5)
"""

from __future__ import annotations

from collections.abc import Iterable

from crystalbench.defaults import PAIR_MEMBERS_METADATA_KEY, PAIR_METADATA_KEY, PAIR_SIZE
from crystalbench.types import BenchmarkItem, PairSummary

PairedAnswer = tuple[str | None, int | None, bool]
"""``(pair id or None, expected size, answer right)`` of one item."""


def item_pair(item: BenchmarkItem) -> tuple[str | None, int | None]:
    """The item's pair id (``source/id``) and the pair's expected size, or ``(None, None)``.

    Examples:
        >>> item = BenchmarkItem(id="mmvp/1", source="mmvp", question="?", answer="(a)",
        ...                      reference_steps=[], metadata={"pair": 0})
        >>> item_pair(item)
        ('mmvp/0', 2)
    """
    pair = item.metadata.get(PAIR_METADATA_KEY)
    if pair is None or isinstance(pair, bool):
        return None, None
    members = item.metadata.get(PAIR_MEMBERS_METADATA_KEY)
    size = len(set(map(str, members))) if isinstance(members, list) and members else PAIR_SIZE
    return f"{item.source}/{pair}", size


def summarize_pairs(answers: Iterable[PairedAnswer]) -> PairSummary | None:
    """Question and pair accuracy over the paired items (``None`` when none is paired).

    Args:
        answers: ``(pair id, expected size, right)`` per item; unpaired items (pair id
            ``None``) are skipped.

    Returns:
        The :class:`~crystalbench.types.PairSummary`; a pair with fewer items than its
        expected size is incomplete and not right.
    """
    groups: dict[str, list[bool]] = {}
    sizes: dict[str, int] = {}
    for pair, size, correct in answers:
        if pair is None:
            continue
        groups.setdefault(pair, []).append(bool(correct))
        sizes[pair] = max(sizes.get(pair, 0), size or PAIR_SIZE)
    if not groups:
        return None
    incomplete = sum(1 for pair, rights in groups.items() if len(rights) < sizes[pair])
    n_right = sum(
        1 for pair, rights in groups.items() if len(rights) >= sizes[pair] and all(rights)
    )
    answered = [r for rights in groups.values() for r in rights]
    return PairSummary(
        n_paired_items=len(answered),
        question_accuracy=sum(answered) / len(answered),
        n_pairs=len(groups),
        n_pairs_right=n_right,
        n_pairs_incomplete=incomplete,
        pair_accuracy=n_right / len(groups),
    )
