"""The guard's decisions, remembered: a pair read once is never read again.

Reading a step's facts takes about 0.1 ms and checking a pair about 20 us
(``benchmarks/RESULTS.md``, "Fact guard"); a re-score of the same predictions (another tau,
another alpha) asks about nearly the same pairs again. :class:`DecisionMemo` keeps each
decision (conflict or not) under a digest of the item's options and the two steps, in
memory and, with a store, in the embedding cache's SQLite file (its ``memo`` table, the one
math-verify's readings use: :func:`crystalbench.normalize.symbolic.remembered_values`),
under a namespace that names the guard's rule version (:func:`guard_namespace`: a digest of
the guard's and the number readers' source). A new rule version makes new decisions; old
ones are never read.

Only the verdict is kept (1.0: the steps conflict, 0.0: they do not). The rare conflict is
read again to find its reason and spans (:meth:`crystalbench.guards.FactGuard.check`), so
the file holds one small row per pair.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from pathlib import Path
from typing import Any

__all__ = ["DecisionMemo", "guard_namespace", "pair_key"]

_LOCK = threading.Lock()
_LOADED: dict[tuple[str, str], dict[str, bool]] = {}
"""Decisions read from each store file (by path and namespace), shared by every memo of
this process that uses the file: five prediction sets scored in one run read it once."""

_MAX_FRESH = 1 << 18
"""Decisions a memo without a store keeps in memory (a long reward run sees new completions
forever); beyond this the memory is cleared and filled again."""


_NOT_RULES = frozenset({"memo.py", "candidates.py", "__init__.py"})
"""Modules of :mod:`crystalbench.guards` that decide nothing about a pair (this one, the
engine's filter, the exports): editing them keeps the remembered decisions."""


@functools.lru_cache(maxsize=1)
def guard_namespace() -> str:
    """The rule version that remembered decisions depend on: a digest of the source of the
    guard's rules (:mod:`crystalbench.guards` but for :data:`_NOT_RULES`) and of
    :mod:`crystalbench.normalize` (whose number readers the rules use).

    Examples:
        >>> guard_namespace().startswith("guard:")
        True
    """
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for folder in (package, package.parent / "normalize"):
        for path in sorted(folder.glob("*.py")):
            if path.name in _NOT_RULES:
                continue
            digest.update(path.name.encode())
            try:
                digest.update(path.read_bytes())
            except OSError:  # pragma: no cover - installed without sources
                from crystalbench._version import __version__

                digest.update(__version__.encode())
    return f"guard:{digest.hexdigest()[:16]}"


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
        >>> memo.put("k", True)
        >>> memo.get("k"), memo.hits
        (True, 1)
    """

    def __init__(self, store: Any = None) -> None:
        self.store = store
        self.namespace = guard_namespace()
        self._known: dict[str, bool] = {}
        self._fresh: dict[str, bool] = {}
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
            known = {key: bool(value) for key, value in values.items()}
            with _LOCK:
                known = _LOADED.setdefault(where, known)
        self._known = known
        self.loaded = len(known)

    def get(self, key: str) -> bool | None:
        """The remembered decision (True: the steps conflict), or None."""
        found = self._known.get(key)
        if found is None:
            found = self._fresh.get(key)
        if found is not None:
            self.hits += 1
        return found

    def put(self, key: str, conflict: bool) -> None:
        """Remember a decision (written to the store by :meth:`flush`)."""
        if self.store is None and len(self._fresh) >= _MAX_FRESH:
            self._fresh.clear()
        self._fresh[key] = conflict

    def flush(self) -> None:
        """Write the decisions made since the last flush to the store (and share them with
        the other memos of this process that use it)."""
        if self.store is None or not self._fresh:
            return
        fresh, self._fresh = self._fresh, {}
        self.store.put_values(self.namespace, {k: 1.0 if v else 0.0 for k, v in fresh.items()})
        with _LOCK:
            shared = _LOADED.setdefault((str(self.store.path), self.namespace), {})
            shared.update(fresh)
        self._known = shared
