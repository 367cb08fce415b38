"""The guard's decisions, remembered: a pair read once is never read again.

Reading a step's facts takes about 0.1-0.4 ms and checking a pair about 20 us
(``benchmarks/RESULTS.md``, "Fact guard"); a re-score of the same predictions (another tau,
another alpha) asks about nearly the same pairs again. :class:`DecisionMemo` keeps each
decision under a digest of the item's options and the two steps, in memory and, with a store,
in the embedding cache's SQLite file (its ``memo`` table, the one math-verify's readings use:
:func:`crystalbench.normalize.symbolic.remembered_values`), under a namespace that names the
guard's rule version (:func:`guard_namespace`: a digest of the rules' and the number readers'
source, and of the format below). A new rule version makes new decisions; old ones are never
read.

The ``memo`` table holds one number per pair: 0.0 when the steps are compatible, else the
conflict packed into an integer (:func:`pack_conflict`: the reason and the four span offsets),
so that a re-score rebuilds every veto, with its reason and spans, without reading a step.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from pathlib import Path
from typing import Any

from crystalbench.types import VETO_REASONS, ConflictSpans, TextSpan

__all__ = ["DecisionMemo", "guard_namespace", "pack_conflict", "pair_key", "unpack_conflict"]

MEMO_FORMAT = "2"
"""Version of what a remembered value means (:func:`pack_conflict`); part of the namespace."""

_LOCK = threading.Lock()
_LOADED: dict[tuple[str, str], dict[str, float]] = {}
"""Decisions read from each store file (by path and namespace), shared by every memo of
this process that uses the file: five prediction sets scored in one run read it once."""

_MAX_FRESH = 1 << 18
"""Decisions a memo without a store keeps in memory (a long reward run sees new completions
forever); beyond this the memory is cleared and filled again."""

_NOT_RULES = frozenset({"memo.py", "candidates.py", "__init__.py"})
"""Modules of :mod:`crystalbench.scoring.filters.guard` that decide nothing about a pair (this one,
the
engine's filter, the exports): editing them keeps the remembered decisions."""

_OFFSET_BITS = 12
_OFFSET_LIMIT = 1 << _OFFSET_BITS
_REASON_BITS = 3
UNPACKED = -1.0
"""A remembered conflict whose spans did not fit the packing (a step over 4,095
characters): the pair is read again for its spans."""


@functools.lru_cache(maxsize=1)
def guard_namespace() -> str:
    """The rule version that remembered decisions depend on: a digest of the source of the
    guard's rules (:mod:`crystalbench.scoring.filters.guard` but for :data:`_NOT_RULES`) and of
    :mod:`crystalbench.normalize` (whose number readers the rules use), with
    :data:`MEMO_FORMAT`.

    Examples:
        >>> guard_namespace().startswith("guard:2:")
        True
    """
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for folder in (package, package.parents[2] / "normalize"):
        for path in sorted(folder.glob("*.py")):
            if path.name in _NOT_RULES:
                continue
            digest.update(path.name.encode())
            try:
                digest.update(path.read_bytes())
            except OSError:  # pragma: no cover - installed without sources
                from crystalbench._version import __version__

                digest.update(__version__.encode())
    return f"guard:{MEMO_FORMAT}:{digest.hexdigest()[:16]}"


def pair_key(options_key: str, pred_step: str, ref_step: str) -> str:
    """The memo key of one pair of an item whose options read ``options_key``.

    Examples:
        >>> len(pair_key("", "The door is open.", "The door is closed."))
        32
        >>> pair_key("", "a", "b") == pair_key("", "b", "a")
        False
    """
    text = f"{len(options_key)}:{options_key}{len(pred_step)}:{pred_step}{ref_step}"
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def pack_conflict(reason: str, spans: ConflictSpans) -> float:
    """A conflict as one number of the ``memo`` table: the reason's index and the four span
    offsets in one integer (exact in a float: 51 bits), plus one so that 0.0 stays
    "compatible"; :data:`UNPACKED` when an offset does not fit in 12 bits.

    Examples:
        >>> spans = ConflictSpans(pred=TextSpan(start=17, end=27, text="50 degrees"),
        ...                       ref=TextSpan(start=17, end=27, text="40 degrees"))
        >>> value = pack_conflict("number", spans)
        >>> value > 0, unpack_conflict(value, "The angle ABC is 50 degrees.",
        ...                            "The angle ABC is 40 degrees.")[0]
        (True, 'number')
    """
    offsets = (spans.pred.start, spans.pred.end, spans.ref.start, spans.ref.end)
    if any(not 0 <= offset < _OFFSET_LIMIT for offset in offsets):
        return UNPACKED
    code = VETO_REASONS.index(reason)
    for position, offset in enumerate(offsets):
        code |= offset << (_REASON_BITS + _OFFSET_BITS * position)
    return float(code + 1)


def unpack_conflict(value: float, pred_step: str, ref_step: str) -> tuple[str, ConflictSpans]:
    """The reason and spans :func:`pack_conflict` packed (span texts cut from the steps)."""
    code = int(value) - 1
    reason = VETO_REASONS[code & ((1 << _REASON_BITS) - 1)]
    mask = _OFFSET_LIMIT - 1
    ps, pe, rs, re_ = (
        (code >> (_REASON_BITS + _OFFSET_BITS * position)) & mask for position in range(4)
    )
    return reason, ConflictSpans(
        pred=TextSpan(start=ps, end=pe, text=pred_step[ps:pe]),
        ref=TextSpan(start=rs, end=re_, text=ref_step[rs:re_]),
    )


class DecisionMemo:
    """Remembered guard decisions (see the module docstring).

    Args:
        store: Where decisions are kept between runs (an
            :class:`~crystalbench.encoders.EmbeddingStore`: ``get_values`` / ``put_values``
            of its ``memo`` table); ``None`` keeps them in memory only.

    Examples:
        >>> memo = DecisionMemo()
        >>> memo.get("k") is None
        True
        >>> memo.put("k", 0.0)
        >>> memo.get("k"), memo.hits
        (0.0, 1)
    """

    def __init__(self, store: Any = None) -> None:
        self.store = store
        self.namespace = guard_namespace()
        self._known: dict[str, float] = {}
        self._fresh: dict[str, float] = {}
        self._attached = False
        self.hits = 0
        """Decisions answered from the memo."""
        self.loaded = 0
        """Decisions read from the store (this process reads a file once)."""

    def load(self) -> None:
        """Read the store's decisions (once per store file and process)."""
        if self.store is None or self._attached:
            return
        self._attached = True
        where = (str(self.store.path), self.namespace)
        with _LOCK:
            known = _LOADED.get(where)
        if known is None:
            values = self.store.get_values(self.namespace)
            known = {key: value for key, value in values.items() if value is not None}
            with _LOCK:
                known = _LOADED.setdefault(where, known)
        self._known = known
        self.loaded = len(known)

    def get(self, key: str) -> float | None:
        """The remembered value (0.0: compatible; else a packed conflict), or None."""
        found = self._known.get(key)
        if found is None:
            found = self._fresh.get(key)
        if found is not None:
            self.hits += 1
        return found

    def put(self, key: str, value: float) -> None:
        """Remember a decision (written to the store by :meth:`flush`)."""
        if self.store is None and len(self._fresh) >= _MAX_FRESH:
            self._fresh.clear()
        self._fresh[key] = value

    def flush(self) -> None:
        """Write the decisions made since the last flush to the store (and share them with
        the other memos of this process that use it)."""
        if self.store is None or not self._fresh:
            return
        fresh, self._fresh = self._fresh, {}
        self.store.put_values(self.namespace, dict(fresh))
        with _LOCK:
            shared = _LOADED.setdefault((str(self.store.path), self.namespace), {})
            shared.update(fresh)
        self._known = shared
