"""Step pairs for human labelling: drawn from scored runs, stratified by cosine band.

``crystal validate sample-pairs`` reads results folders (``examples.jsonl`` + ``summary.json``)
and draws pairs of (predicted step, reference step) for people to judge:

1. **Candidates.** For every item, the pairs the run's matcher accepted (``matches``) and, for
   every predicted and every reference step, its most similar *unmatched* partner
   (:func:`~crystalbench.validation.best_unmatched`): the near misses, across the whole
   cosine range. The cosines of unmatched pairs are not in ``examples.jsonl``; they are
   recomputed from the run's own step texts with the encoder the run recorded, **read from
   the embedding cache** scoring filled (the encoder is loaded only for texts the cache
   lacks). Every matched pair's recomputed cosine must equal the one scoring recorded
   (within :data:`~crystalbench.config.settings.VALIDATION_COSINE_TOLERANCE`), so the pairs are
   exactly those the run saw. Scoring itself exports nothing more: ``examples.jsonl`` is
   unchanged (``benchmarks/results/validation.md`` measures why).
2. **Strata.** Each candidate falls in one cosine band (Table 3's by default). In each band
   ``per_band`` pairs are drawn at random, round-robin over (model, source) so that every
   model and source is represented, at most one pair per (model, item) until the band runs
   out of fresh items, and never the same two texts twice. A band with fewer candidates
   gives all it has, and says so.
3. **Output.** ``pairs.jsonl`` (every field, plus each item's two chains for the judge
   matcher), ``pairs.csv`` (the same flat fields: both import into the review app, which
   hides model, cosine and band from annotators) and ``pairs.blind.csv`` (``pair_id``,
   ``item_id``, the two steps and empty ``annotator`` / ``label`` columns: fill it in
   offline and pass it to ``crystal validate agreement --labels``). Pairs come in random
   order, bands mixed; ``pair_id`` is a hash of model, item and the two texts, stable
   across draws.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import Counter, defaultdict, deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, ValidationError

from crystalbench._internal.io import atomic_write_json, atomic_write_text, read_csv, read_jsonl
from crystalbench.config.settings import (
    SCORE_CHUNK_ITEMS,
    VALIDATION_COSINE_TOLERANCE,
    VALIDATION_PAIRS_PER_BAND,
    VALIDATION_SEED,
)
from crystalbench.defaults import TAU, VALIDATION_BAND_EDGES
from crystalbench.encoders import CachingEncoder, EmbeddingStore, Encoder
from crystalbench.errors import InputError
from crystalbench.scoring.compat import match_rules
from crystalbench.scoring.matching import cosine_matrix
from crystalbench.types import Record
from crystalbench.validation.bands import band_index, band_labels
from crystalbench.validation.candidates import best_unmatched

__all__ = [
    "BandDraw",
    "PairSample",
    "StepPair",
    "read_pairs",
    "recorded_encoder",
    "sample_pairs",
    "write_pairs",
]

PAIR_CSV_COLUMNS = (
    "pair_id",
    "item_id",
    "model",
    "source",
    "kind",
    "cosine",
    "band",
    "pred_index",
    "ref_index",
    "pred_step",
    "ref_step",
    "threshold",
    "encoder",
)
"""Columns of ``pairs.csv`` (the flat fields of :class:`StepPair`)."""

BLIND_CSV_COLUMNS = ("pair_id", "item_id", "pred_step", "ref_step", "annotator", "label")
"""Columns of ``pairs.blind.csv``: what an annotator sees, and the two to fill in."""


class StepPair(Record):
    """One (predicted step, reference step) pair to be judged by people."""

    pair_id: str
    """Stable id: a hash of model, item and the two texts."""
    item_id: str
    """The benchmark item."""
    model: str
    """The run (prediction set) the predicted step comes from."""
    pred_step: str
    """The predicted step's text."""
    ref_step: str
    """The reference step's text."""
    cosine: float
    """Their cosine similarity under the run's encoder."""
    band: str
    """The cosine band, e.g. ``[0.35,0.50)``."""
    source: str | None = None
    """The item's source dataset."""
    kind: Literal["matched", "unmatched"] | None = None
    """``matched``: the run's matcher accepted the pair (one-to-one); ``unmatched``: a best
    unmatched candidate of one of its steps."""
    pred_index: int | None = None
    """0-based index of the predicted step in the run's scored steps."""
    ref_index: int | None = None
    """0-based index of the reference step."""
    threshold: float | None = None
    """tau the run was scored with."""
    encoder: str | None = None
    """Encoder name the run was scored with."""
    encoder_identity: str | None = None
    """Exact encoder identity (cache key) of the cosine."""
    results: str | None = None
    """The results folder the pair was drawn from."""
    pred_steps: list[str] | None = None
    """The item's whole predicted chain (JSONL only), for the judge matcher."""
    ref_steps: list[str] | None = None
    """The item's whole reference chain (JSONL only)."""


class BandDraw(Record):
    """How one band was drawn."""

    band: str
    available: int
    """Candidates in the band (all runs)."""
    drawn: int
    """Pairs drawn."""
    by_model: dict[str, int] = Field(default_factory=dict)
    """Pairs drawn per model."""


class PairSample(Record):
    """What :func:`sample_pairs` returns: the pairs and how every band was drawn."""

    pairs: list[StepPair]
    bands: list[BandDraw]
    edges: list[float]
    per_band: int
    seed: int
    runs: list[str]
    """The results folders drawn from."""
    n_items: int
    """Items (over all runs) that gave candidates."""
    n_candidates: int
    """Candidate pairs in all bands."""

    @property
    def short_bands(self) -> list[BandDraw]:
        """Bands that had fewer candidates than ``per_band``."""
        return [band for band in self.bands if band.drawn < self.per_band]


# --------------------------------------------------------------------------- encoders


class _RecordedEncoder:
    """The encoder a run recorded, cache first: loaded only if a text is not cached.

    Its identity is the recorded one, so that the cache returns exactly the vectors the run
    was scored with. Loading the named encoder must give that identity again.
    """

    def __init__(
        self,
        name: str,
        identity: str,
        *,
        device: str | None = None,
        cache_dir: str | Path | None = None,
    ) -> None:
        self.name = name
        self._identity = identity
        self.device = device
        self.cache_dir = cache_dir
        self._encoder: Encoder | None = None

    @property
    def identity(self) -> str:
        return self._identity

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if self._encoder is None:
            from crystalbench.encoders import load_encoder

            backend = "torch"
            if self._identity.startswith("onnx-fp32:"):
                backend = "onnx"
            elif self._identity.startswith("onnx-int8:"):
                backend = "onnx-int8"
            encoder = load_encoder(
                self.name, device=self.device, backend=backend, cache_dir=self.cache_dir
            )
            if encoder.identity != self._identity:
                raise InputError(
                    f"{len(texts)} step texts are not in the embedding cache for encoder "
                    f"{self._identity}, and {self.name!r} now loads as {encoder.identity}: the "
                    "cosines would not be the run's. Sample with the cache the run was scored "
                    "with (--cache-dir), or score the run again",
                    field="encoder",
                )
            self._encoder = encoder
        return self._encoder.encode(texts)


def recorded_encoder(
    config: Mapping[str, Any],
    *,
    device: str | None = None,
    cache_dir: str | Path | None = None,
) -> Encoder:
    """A cache-first encoder with the identity a run's ``summary.json`` recorded
    (``cache_dir``: where an ONNX export is cached if the encoder has to be loaded).

    Raises:
        InputError: The config records no encoder.
    """
    name = config.get("encoder")
    identity = config.get("encoder_identity") or name
    if not isinstance(name, str) or not isinstance(identity, str):
        raise InputError("summary.json records no encoder", field="config.encoder")
    return _RecordedEncoder(name, identity, device=device, cache_dir=cache_dir)


# --------------------------------------------------------------------------- candidates


def _pair_id(model: str, item_id: str, pred: str, ref: str) -> str:
    blob = json.dumps([model, item_id, pred, ref], ensure_ascii=False)
    return "p" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def _run_candidates(
    run: Any, encoder_cache: CachingEncoder, tolerance: float
) -> tuple[list[tuple[int, int, int, float, bool]], int]:
    """``(item position, pred index, ref index, cosine, matched)`` of one run, and the
    number of items that gave candidates.

    Raises:
        InputError: A matched pair's cosine differs from the recorded one.
    """
    out: list[tuple[int, int, int, float, bool]] = []
    used = 0
    items = run.items
    # The run's own product precision (float32 in crystal-metrics mode), so that the
    # recomputed cosines are bit for bit those it was scored with.
    rules = match_rules(run.config.get("compat"), tau=run.config.get("threshold", TAU))
    where = run.path / "examples.jsonl"
    for start in range(0, len(items), SCORE_CHUNK_ITEMS):
        chunk = [
            (start + k, item)
            for k, item in enumerate(items[start : start + SCORE_CHUNK_ITEMS])
            if item.pred_steps and item.ref_steps
        ]
        texts = list(
            dict.fromkeys(t for _, item in chunk for t in (*item.pred_steps, *item.ref_steps))
        )
        vectors = encoder_cache.lookup(texts)
        for position, item in chunk:
            pred = np.stack([vectors[t] for t in item.pred_steps])
            ref = np.stack([vectors[t] for t in item.ref_steps])
            similarity = cosine_matrix(pred, ref, rules)
            if similarity.shape != (item.n_pred, item.n_ref):
                raise InputError(
                    f"item {item.id!r} records {item.n_pred} x {item.n_ref} steps but holds "
                    f"{len(item.pred_steps)} predicted and {len(item.ref_steps)} reference texts",
                    path=where,
                    field="pred_steps",
                )
            for i, j, cosine in item.matches:
                again = float(similarity[i, j])
                if abs(again - cosine) > tolerance:
                    raise InputError(
                        f"item {item.id!r}: pair ({i}, {j}) was scored with cosine {cosine:.6f} "
                        f"but the embeddings found give {again:.6f}: they are not those the run "
                        "was scored with (another encoder version or cache); sample with the "
                        "cache the run was scored with, or score it again",
                        path=where,
                        field="matches",
                    )
                out.append((position, i, j, cosine, True))
            for i, j, cosine in best_unmatched(similarity, item.matches):
                out.append((position, i, j, cosine, False))
            used += 1
        del vectors
    return out, used


# --------------------------------------------------------------------------- drawing


def _draw_band(
    members: Sequence[int],
    strata: Sequence[Any],
    items: Sequence[Any],
    texts: Sequence[tuple[str, str]],
    per_band: int,
    rng: np.random.Generator,
    used_texts: set[tuple[str, str]],
) -> list[int]:
    """Indices of the candidates drawn from one band (see the module docstring)."""
    shuffled = [members[k] for k in rng.permutation(len(members))]
    groups: dict[Any, list[int]] = defaultdict(list)
    for candidate in shuffled:
        groups[strata[candidate]].append(candidate)
    # Round-robin over models first, then over each model's sources: every model gets its
    # share of the band, and within a model every source.
    by_model: dict[Any, list[Any]] = defaultdict(list)
    for key in groups:
        by_model[key[0]].append(key)
    models = list(by_model)
    models = [models[k] for k in rng.permutation(len(models))]
    cycles = [[by_model[m][k] for k in rng.permutation(len(by_model[m]))] for m in models]
    order = [
        cycle[r]
        for r in range(max(map(len, cycles), default=0))
        for cycle in cycles
        if r < len(cycle)
    ]
    chosen: list[int] = []
    used_items: set[Any] = set()
    for fresh_only in (True, False):
        queues = {key: deque(groups[key]) for key in order}
        later: dict[Any, list[int]] = defaultdict(list)
        while len(chosen) < per_band:
            progressed = False
            for key in order:
                queue = queues[key]
                while queue:
                    candidate = queue.popleft()
                    if texts[candidate] in used_texts:
                        continue
                    if fresh_only and items[candidate] in used_items:
                        later[key].append(candidate)
                        continue
                    chosen.append(candidate)
                    used_texts.add(texts[candidate])
                    used_items.add(items[candidate])
                    progressed = True
                    break
                if len(chosen) == per_band:
                    break
            if not progressed:
                break
        groups = {key: later[key] + list(queues[key]) for key in order}
        if len(chosen) == per_band:
            break
    return chosen


def sample_pairs(
    runs: Sequence[Any],
    *,
    per_band: int = VALIDATION_PAIRS_PER_BAND,
    edges: Sequence[float] = VALIDATION_BAND_EDGES,
    seed: int = VALIDATION_SEED,
    store: EmbeddingStore | None = None,
    encoders: Mapping[str, Encoder] | None = None,
    tolerance: float = VALIDATION_COSINE_TOLERANCE,
    device: str | None = None,
    cache_dir: str | Path | None = None,
) -> PairSample:
    """Draw step pairs from scored runs, ``per_band`` per cosine band.

    Args:
        runs: :class:`~crystalbench.report.RunData` (``load_run``) of the results folders.
        per_band: Pairs per band.
        edges: Band edges (``<e0``, ``[e0,e1)``, ..., ``>=ek``).
        seed: Seed of the draw (the same runs and seed give the same pairs).
        store: The embedding cache holding the runs' vectors (default: the default store).
        encoders: Encoders to use instead, by the identity the runs recorded (tests).
        tolerance: Largest accepted difference between recorded and recomputed cosines.
        device: Device of an encoder that has to be loaded.
        cache_dir: Where the ONNX export of an encoder that has to be loaded is cached.

    Returns:
        The :class:`PairSample`: pairs in random order and how each band was drawn.

    Raises:
        InputError: No run has items with steps, a run records no encoder, or the
            embeddings found do not reproduce a run's recorded cosines.

    Examples:
        >>> sample_pairs([], per_band=3)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        crystalbench.errors.InputError: no results folder given
    """
    if not runs:
        raise InputError("no results folder given")
    if per_band < 1:
        raise InputError("must be at least 1", field="--per-band")
    caches: dict[str, CachingEncoder] = {}
    rows: list[tuple[int, int, int, int, float, bool]] = []
    n_items = 0
    for run_index, run in enumerate(runs):
        recorded = recorded_encoder(run.config, device=device, cache_dir=cache_dir)
        identity = recorded.identity
        if identity not in caches:
            encoder = (encoders or {}).get(identity, recorded)
            caches[identity] = CachingEncoder(encoder, store)
        found, used = _run_candidates(run, caches[identity], tolerance)
        n_items += used
        rows.extend((run_index, *row) for row in found)
    if not rows:
        raise InputError(
            "the results hold no item with both predicted and reference steps to pair",
            path=runs[0].path,
        )
    labels = band_labels(edges)
    bands = band_index([row[4] for row in rows], edges)
    step_texts: list[tuple[str, str]] = []
    strata: list[tuple[int, str]] = []
    item_keys: list[tuple[int, int]] = []
    for run_index, position, i, j, _, _ in rows:
        item = runs[run_index].items[position]
        step_texts.append((item.pred_steps[i], item.ref_steps[j]))
        strata.append((run_index, item.source))
        item_keys.append((run_index, position))
    rng = np.random.default_rng(seed)
    used_texts: set[tuple[str, str]] = set()
    draws: list[BandDraw] = []
    chosen: list[int] = []
    labelable = np.array([bool(pred.strip()) for pred, _ in step_texts], dtype=bool)
    for band, label in enumerate(labels):
        members = np.flatnonzero((bands == band) & labelable).tolist()
        picked = _draw_band(members, strata, item_keys, step_texts, per_band, rng, used_texts)
        counts = Counter(runs[rows[k][0]].name for k in picked)
        draws.append(
            BandDraw(band=label, available=len(members), drawn=len(picked), by_model=dict(counts))
        )
        chosen.extend(picked)
    pairs = [_pair(runs, rows[k], labels[int(bands[k])]) for k in chosen]
    pairs = [pairs[k] for k in rng.permutation(len(pairs))]
    return PairSample(
        pairs=pairs,
        bands=draws,
        edges=[float(e) for e in edges],
        per_band=per_band,
        seed=seed,
        runs=[str(run.path) for run in runs],
        n_items=n_items,
        n_candidates=len(rows),
    )


def _pair(runs: Sequence[Any], row: tuple[int, int, int, int, float, bool], band: str) -> StepPair:
    run_index, position, i, j, cosine, matched = row
    run = runs[run_index]
    item = run.items[position]
    config = run.config
    threshold = config.get("threshold")
    return StepPair(
        pair_id=_pair_id(run.name, item.id, item.pred_steps[i], item.ref_steps[j]),
        item_id=item.id,
        model=run.name,
        pred_step=item.pred_steps[i],
        ref_step=item.ref_steps[j],
        cosine=cosine,
        band=band,
        source=item.source,
        kind="matched" if matched else "unmatched",
        pred_index=i,
        ref_index=j,
        threshold=float(threshold) if isinstance(threshold, (int, float)) else None,
        encoder=config.get("encoder"),
        encoder_identity=config.get("encoder_identity"),
        results=str(run.path),
        pred_steps=list(item.pred_steps),
        ref_steps=list(item.ref_steps),
    )


# --------------------------------------------------------------------------- files


def _csv_text(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({name: "" if row.get(name) is None else row.get(name) for name in columns})
    return buffer.getvalue()


def pairs_paths(out: str | Path) -> dict[str, Path]:
    """The files :func:`write_pairs` writes for ``out``, by kind (``jsonl``, ``csv``,
    ``blind_csv``, ``sampling``).

    Raises:
        InputError: ``out`` names a CSV file (it names the JSONL; the CSVs go beside it).
    """
    path = Path(out)
    if path.suffix.lower() == ".csv":
        raise InputError(
            "--out names the JSONL file (the CSV files are written beside it)", field="out"
        )
    stem = path.with_suffix("") if path.suffix else path
    return {
        "jsonl": path,
        "csv": stem.with_name(stem.name + ".csv"),
        "blind_csv": stem.with_name(stem.name + ".blind.csv"),
        "sampling": stem.with_name(stem.name + ".sampling.json"),
    }


def check_pairs_out(out: str | Path, *, overwrite: bool = False) -> None:
    """Refuse to draw over an earlier draw: labels may already refer to its pair ids.

    Raises:
        InputError: One of the files for ``out`` exists and ``overwrite`` is off.
    """
    there = [p for p in pairs_paths(out).values() if p.exists()]
    if there and not overwrite:
        raise InputError(
            f"{there[0]} holds an earlier draw of pairs (labels may refer to its pair ids); "
            "choose another --out, or pass --overwrite to replace it and the files beside it",
            field="out",
        )


def write_pairs(sample: PairSample, out: str | Path) -> dict[str, Path]:
    """Write ``out`` (JSONL), ``.csv`` and ``.blind.csv`` beside it, and ``.sampling.json``.

    Returns:
        The paths written, by kind (``jsonl``, ``csv``, ``blind_csv``, ``sampling``).
    """
    path = Path(out)
    paths = pairs_paths(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [pair.model_dump_json(exclude_none=True) for pair in sample.pairs]
    atomic_write_text(paths["jsonl"], "".join(line + "\n" for line in lines))
    records = [pair.model_dump() for pair in sample.pairs]
    atomic_write_text(paths["csv"], _csv_text(PAIR_CSV_COLUMNS, records))
    atomic_write_text(paths["blind_csv"], _csv_text(BLIND_CSV_COLUMNS, records))
    manifest = sample.model_dump(mode="json", exclude={"pairs"})
    manifest["n_pairs"] = len(sample.pairs)
    atomic_write_json(paths["sampling"], manifest)
    return paths


def _validation_error(exc: ValidationError, path: Path, line: int) -> InputError:
    first = exc.errors()[0]
    loc = ".".join(str(part) for part in first.get("loc", ())) or None
    message = first.get("msg", "invalid value")
    if first.get("type") == "extra_forbidden":
        message = "unknown field"
    return InputError(message, path=path, line=line, field=loc)


_PAIR_REQUIRED = ("pair_id", "item_id", "model", "pred_step", "ref_step", "cosine", "band")


def read_pairs(path: str | Path) -> list[StepPair]:
    """Read a pairs file: the JSONL or the ``.csv`` that ``sample-pairs`` wrote.

    Raises:
        InputError: A malformed record or a repeated ``pair_id`` (file, line, field).
    """
    path = Path(path)
    records: list[tuple[int, dict[str, Any]]]
    if path.suffix.lower() == ".csv":
        rows = read_csv(path, _PAIR_REQUIRED)
        records = [
            (line, {k: v for k, v in row.items() if v != "" and k in StepPair.model_fields})
            for line, row in rows
        ]
    else:
        records = list(read_jsonl(path))
    pairs: list[StepPair] = []
    seen: dict[str, int] = {}
    for line, record in records:
        try:
            pair = StepPair.model_validate(record)
        except ValidationError as exc:
            raise _validation_error(exc, path, line) from None
        if not np.isfinite(pair.cosine):
            raise InputError("must be a finite number", path=path, line=line, field="cosine")
        if pair.pair_id in seen:
            raise InputError(
                f"duplicate pair_id {pair.pair_id!r} (first on line {seen[pair.pair_id]})",
                path=path,
                line=line,
                field="pair_id",
            )
        seen[pair.pair_id] = line
        pairs.append(pair)
    return pairs
