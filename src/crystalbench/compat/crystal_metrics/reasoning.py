"""crystal-metrics 0.2.0's ``reasoning`` module: Match F1, precision, recall and Ordered
Match F1 of one chain or a whole dataset, on crystalbench's matcher and cached encoders.

The numbers are crystal-metrics' (strict ``S > tau``, its tie order, blank steps kept, its
library defaults ``alpha=0.0`` and ``order_metric="kendall_tau"``). What is faster: the
encoder loads on first use, each distinct text is embedded once (and kept in crystalbench's
embedding cache), and :meth:`MLLMReasoningEvaluator.evaluate_dataset` embeds a whole chunk
of samples in length-sorted batches instead of two encoder calls per sample.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from crystalbench._internal.extras import require
from crystalbench.compat.crystal_metrics._scoring import (
    DEFAULT_MODEL,
    ModelEncoder,
    build_caching_encoder,
    greedy_matches,
    kendall_tau,
    lis,
)
from crystalbench.defaults import ENCODER_THRESHOLDS
from crystalbench.encoders import CachingEncoder, gpu_visible
from crystalbench.encoders.model_files import model_label
from crystalbench.scoring.matching import ordered_f1, precision_recall_f1

__all__ = ["EvaluationMetrics", "MLLMReasoningEvaluator", "load_json_data", "save_results"]

MODEL_THRESHOLDS = dict(ENCODER_THRESHOLDS)
"""crystal-metrics' per-model thresholds; other models get :data:`FALLBACK_THRESHOLD`."""

FALLBACK_THRESHOLD = 0.45
_CHUNK_SAMPLES = 1024  # samples whose texts are embedded (and held in memory) together


@dataclass
class EvaluationMetrics:
    """One sample's metrics, field for field crystal-metrics'."""

    match_f1: float
    precision: float
    recall: float
    num_predicted_steps: int
    num_reference_steps: int
    num_matched_predictions: int
    num_matched_references: int
    avg_similarity: float
    max_similarity: float
    threshold_used: float
    kendall_tau: float = 1.0
    tau_normalized: float = 1.0
    lis_ratio: float = 1.0
    order_score: float = 1.0
    ordered_match_f1: float = 0.0
    alpha_used: float = 0.0
    order_metric_used: str = "none"


class MLLMReasoningEvaluator:
    """crystal-metrics' evaluator: same constructor, methods, attributes and numbers.

    Args:
        model_name: Sentence encoder: a sentence-transformers name or folder,
            ``minilm-offline`` (thresholded as all-MiniLM-L6-v2), ``mpnet-offline`` (as
            all-mpnet-base-v2: 0.38) or ``hash``.
        similarity_threshold: Cosine threshold; ``None``: the model's entry in
            :data:`MODEL_THRESHOLDS`, else 0.45.
        device: ``"auto"``/``None`` (a GPU when one is visible), ``"cuda"``, ``"cpu"``.
        debug_mode: Print each match and per-sample results.
        encoder: Use this instead of loading ``model_name``: a crystalbench ``Encoder`` or an
            object with ``encode`` (a ``SentenceTransformer``).
        cache_dir: Folder of the embedding cache (default ``~/.cache/crystalbench``).
        use_cache: ``False``: keep no embeddings on disk.

    Examples:
        >>> ev = MLLMReasoningEvaluator("hash", similarity_threshold=0.5, use_cache=False)
        >>> m = ev.evaluate_single(["The bar is red.", "x y"], ["the bar is red", "a b", "c d"])
        >>> round(m.precision, 3), round(m.recall, 3), m.order_metric_used
        (0.5, 0.333, 'kendall_tau')
    """

    _encoder_cache: CachingEncoder | None = None
    _model_source: Any = DEFAULT_MODEL
    _device_request: str | None = None
    _cache_dir: str | None = None
    _use_cache: bool = True

    def __init__(
        self,
        model_name: str = DEFAULT_MODEL,
        similarity_threshold: float | None = None,
        device: str | None = None,
        debug_mode: bool = False,
        *,
        encoder: Any = None,
        cache_dir: str | None = None,
        use_cache: bool = True,
    ) -> None:
        self._device_request = device
        if debug_mode:
            print(f"Initializing CRYSTAL reasoning evaluator on device: {self.device}")
        self.model_name = model_name
        self.debug_mode = debug_mode
        self._model_source = encoder if encoder is not None else model_name
        self._cache_dir = cache_dir
        self._use_cache = use_cache
        self.model_thresholds = dict(MODEL_THRESHOLDS)
        if similarity_threshold is not None:
            self.similarity_threshold = similarity_threshold
        else:
            name = model_label(model_name)
            self.similarity_threshold = self.model_thresholds.get(name, FALLBACK_THRESHOLD)
        if debug_mode:
            print(f"Model: {model_name}")
            print(f"Similarity threshold: {self.similarity_threshold}")

    # ------------------------------------------------------------------ encoder
    @property
    def device(self) -> str:
        """The device asked for, else ``cuda`` when a GPU is visible, else ``cpu``."""
        if self._device_request not in (None, "auto"):
            return str(self._device_request)
        return "cuda" if gpu_visible() else "cpu"

    @device.setter
    def device(self, value: str | None) -> None:
        self._device_request = value
        self._encoder_cache = None

    def _embedder(self) -> CachingEncoder:
        if self._encoder_cache is None:
            self._encoder_cache = build_caching_encoder(
                self._model_source,
                device=self._device_request,
                cache_dir=self._cache_dir,
                use_cache=self._use_cache,
            )
        return self._encoder_cache

    @property
    def model(self) -> Any:
        """The encoder: a model object given (a ``SentenceTransformer``) as it was given,
        else a crystalbench ``Encoder`` (built on first access, loaded on first use).
        Assign a ``SentenceTransformer`` or an ``Encoder`` to use another."""
        encoder = self._embedder().encoder
        return encoder.model if isinstance(encoder, ModelEncoder) else encoder

    @model.setter
    def model(self, value: Any) -> None:
        self._model_source = value
        self._encoder_cache = None

    def _compute_embeddings(self, texts: list[str]) -> np.ndarray:
        """Embeddings of ``texts`` (``np.array([])`` for none)."""
        if not texts:
            return np.array([])
        return self._embedder().embed(list(texts))

    def _compute_similarity_matrix(self, embeddings1: np.ndarray, embeddings2: np.ndarray) -> Any:
        """Cosines of the rows, computed at the embeddings' own precision."""
        if embeddings1.size == 0 or embeddings2.size == 0:
            return np.array([[]])
        unit1 = embeddings1 / np.linalg.norm(embeddings1, axis=1, keepdims=True)
        unit2 = embeddings2 / np.linalg.norm(embeddings2, axis=1, keepdims=True)
        return np.dot(unit1, unit2.T)

    def _find_matches(
        self, similarity_matrix: np.ndarray, threshold: float
    ) -> tuple[set[int], set[int], list[tuple[int, int, Any]]]:
        """Greedy 1:1 matching over ``S > threshold``: (matched predictions, matched
        references, ``(pred, ref, similarity)`` pairs in acceptance order)."""
        pairs = greedy_matches(similarity_matrix, threshold)
        if getattr(self, "debug_mode", False):
            for pred_idx, ref_idx, sim in pairs:
                print(f"Match: P{pred_idx} <-> R{ref_idx} (sim: {sim:.3f})")
        return {p[0] for p in pairs}, {p[1] for p in pairs}, pairs

    @staticmethod
    def _compute_kendall_tau(match_pairs: list[tuple[int, int, Any]]) -> float:
        """Kendall's tau in [-1, 1] over the matched pairs; 1.0 below two pairs."""
        return kendall_tau(match_pairs)

    @staticmethod
    def _compute_lis_ratio(match_pairs: list[tuple[int, int, Any]]) -> float:
        """LIS ratio over the matched pairs; 1.0 below two pairs."""
        return lis(match_pairs)

    # ------------------------------------------------------------------ scoring
    def evaluate_single(
        self,
        predicted_steps: list[str],
        reference_steps: list[str],
        verbose: bool | None = None,
        alpha: float = 0.0,
        order_metric: str = "kendall_tau",
    ) -> EvaluationMetrics:
        """One sample's metrics; ``order_metric`` is ``"lis"`` or (anything else)
        ``"kendall_tau"``; Ordered F1 equals F1 unless ``alpha > 0``.

        Raises:
            ValueError: ``reference_steps`` is empty.
        """
        if verbose is None:
            verbose = self.debug_mode
        if not reference_steps:
            raise ValueError("Reference steps cannot be empty")
        if not predicted_steps:
            return EvaluationMetrics(
                match_f1=0.0,
                precision=0.0,
                recall=0.0,
                num_predicted_steps=0,
                num_reference_steps=len(reference_steps),
                num_matched_predictions=0,
                num_matched_references=0,
                avg_similarity=0.0,
                max_similarity=0.0,
                threshold_used=self.similarity_threshold,
                alpha_used=alpha,
                order_metric_used=order_metric,
            )
        similarity = self._compute_similarity_matrix(
            self._compute_embeddings(predicted_steps), self._compute_embeddings(reference_steps)
        )
        matched_preds, matched_refs, pairs = self._find_matches(
            similarity, self.similarity_threshold
        )
        n_pred, n_ref = len(predicted_steps), len(reference_steps)
        precision, recall, match_f1 = precision_recall_f1(len(pairs), n_pred, n_ref)
        tau = self._compute_kendall_tau(pairs)
        tau_norm = (tau + 1.0) / 2.0
        lis_value = self._compute_lis_ratio(pairs)
        order_score = lis_value if order_metric == "lis" else tau_norm
        ordered = ordered_f1(match_f1, order_score, alpha) if alpha > 0 else match_f1
        if verbose:
            print("\nEvaluation Results:")
            print(f"  Precision: {precision:.3f} ({len(matched_preds)}/{n_pred})")
            print(f"  Recall: {recall:.3f} ({len(matched_refs)}/{n_ref})")
            print(f"  Match F1: {match_f1:.3f}")
            if alpha > 0:
                print(f"  Kendall's Tau: {tau:.3f} (normalized: {tau_norm:.3f})")
                print(f"  LIS ratio: {lis_value:.3f}")
                print(f"  Order metric: {order_metric} (score: {order_score:.3f})")
                print(f"  Ordered Match F1 (alpha={alpha}): {ordered:.3f}")
        return EvaluationMetrics(
            match_f1=match_f1,
            precision=precision,
            recall=recall,
            num_predicted_steps=n_pred,
            num_reference_steps=n_ref,
            num_matched_predictions=len(matched_preds),
            num_matched_references=len(matched_refs),
            avg_similarity=np.mean(similarity) if similarity.size > 0 else 0.0,
            max_similarity=np.max(similarity) if similarity.size > 0 else 0.0,
            threshold_used=self.similarity_threshold,
            kendall_tau=tau,
            tau_normalized=tau_norm,
            lis_ratio=lis_value,
            order_score=order_score,
            ordered_match_f1=ordered,
            alpha_used=alpha,
            order_metric_used=order_metric,
        )

    @contextmanager
    def _warm(self, texts: list[str]) -> Iterator[None]:
        """Embed a chunk's texts in one batched lookup and keep them for its samples; a
        ``_compute_embeddings`` replaced on the instance or in a subclass is left alone."""
        own = getattr(self._compute_embeddings, "__func__", None)
        if own is not MLLMReasoningEvaluator._compute_embeddings or not texts:
            yield
            return
        encoder_cache = self._embedder()
        encoder_cache.remember(texts)
        try:
            yield
        finally:
            encoder_cache.forget()

    def evaluate_dataset(
        self,
        predictions: Mapping[Any, Mapping[str, Any]],
        ground_truth: Mapping[Any, Mapping[str, Any]],
        verbose: bool = False,
        alpha: float = 0.0,
        order_metric: str = "kendall_tau",
    ) -> Any:
        """One ``pandas.DataFrame`` row per sample present in both mappings, in
        ground-truth order; a sample that fails (e.g. no reference steps) is printed and
        left out, as crystal-metrics does."""
        pd: Any = require(
            "pandas",
            what="evaluate_dataset (it returns a pandas DataFrame, as crystal-metrics does)",
        )

        pred_ids, gt_ids = set(predictions), set(ground_truth)
        if pred_ids != gt_ids:
            if gt_ids - pred_ids:
                print(f"Warning: Missing predictions for indices: {gt_ids - pred_ids}")
            if pred_ids - gt_ids:
                print(f"Warning: Missing ground truth for indices: {pred_ids - gt_ids}")
        common = [idx for idx in ground_truth if idx in pred_ids]
        print(f"Evaluating {len(common)} samples...")
        rows = []
        for start in range(0, len(common), _CHUNK_SAMPLES):
            chunk = common[start : start + _CHUNK_SAMPLES]
            with self._warm(_chunk_texts(chunk, predictions, ground_truth)):
                for idx in chunk:
                    try:
                        rows.append(
                            self._row(idx, predictions[idx], ground_truth[idx], alpha, order_metric)
                        )
                    except Exception as error:  # crystal-metrics prints and skips the sample
                        print(f"Error evaluating sample {idx}: {error}")
        frame = pd.DataFrame(rows)
        if len(frame) > 0:
            print("\n=== Evaluation Summary ===")
            print(f"Samples evaluated: {len(frame)}")
            print(f"Model: {self.model_name} (threshold: {self.similarity_threshold:.3f})")
            f1 = frame["match_f1"]
            print(f"Average Match F1: {f1.mean():.3f} (+/-{f1.std():.3f})")
            print(f"Average Precision: {frame['precision'].mean():.3f}")
            print(f"Average Recall: {frame['recall'].mean():.3f}")
            if alpha > 0:
                mean = frame["ordered_match_f1"].mean()
                print(f"Average Ordered Match F1 (alpha={alpha}): {mean:.3f}")
        return frame

    def _row(
        self,
        idx: Any,
        prediction: Mapping[str, Any],
        truth: Mapping[str, Any],
        alpha: float,
        order_metric: str,
    ) -> dict[str, Any]:
        pred_steps = prediction["reasoning_steps"]
        ref_steps = truth["reference_steps"]
        answer = prediction.get("answer", "")
        m = self.evaluate_single(
            pred_steps, ref_steps, verbose=False, alpha=alpha, order_metric=order_metric
        )
        return {
            "sample_idx": idx,
            "answer": answer,
            "match_f1": m.match_f1,
            "precision": m.precision,
            "recall": m.recall,
            "ordered_match_f1": m.ordered_match_f1,
            "kendall_tau": m.kendall_tau,
            "lis_ratio": m.lis_ratio,
            "num_predicted_steps": m.num_predicted_steps,
            "num_reference_steps": m.num_reference_steps,
            "num_matched_predictions": m.num_matched_predictions,
            "num_matched_references": m.num_matched_references,
            "avg_similarity": m.avg_similarity,
            "max_similarity": m.max_similarity,
            "threshold_used": m.threshold_used,
        }

    def generate_summary(self, results_df: Any) -> dict[str, Any]:
        """Mean, spread and deciles of an :meth:`evaluate_dataset` frame (``{}`` if empty)."""
        if len(results_df) == 0:
            return {}
        f1 = results_df["match_f1"]
        return {
            "total_samples": len(results_df),
            "model_name": self.model_name,
            "similarity_threshold": self.similarity_threshold,
            "avg_match_f1": f1.mean(),
            "std_match_f1": f1.std(),
            "median_match_f1": f1.median(),
            "avg_precision": results_df["precision"].mean(),
            "avg_recall": results_df["recall"].mean(),
            "top_10_percent_threshold": f1.quantile(0.9),
            "bottom_10_percent_threshold": f1.quantile(0.1),
        }


def _chunk_texts(
    chunk: Sequence[Any],
    predictions: Mapping[Any, Mapping[str, Any]],
    ground_truth: Mapping[Any, Mapping[str, Any]],
) -> list[str]:
    """The texts the chunk's samples will embed (malformed samples add none; they fail
    on their own when scored)."""
    texts: list[str] = []
    for idx in chunk:
        steps = [
            _strings(predictions[idx], "reasoning_steps"),
            _strings(ground_truth[idx], "reference_steps"),
        ]
        if steps[0] and steps[1]:
            texts.extend(steps[0] + steps[1])
    return list(dict.fromkeys(texts))


def _strings(record: Any, key: str) -> list[str]:
    steps = record.get(key) if isinstance(record, Mapping) else None
    if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
        return []
    return steps


def load_json_data(file_path: str) -> Any:
    """The JSON value in a UTF-8 file."""
    with open(file_path, encoding="utf-8") as handle:
        return json.load(handle)


def save_results(results_df: Any, output_path: str) -> None:
    """Write an :meth:`~MLLMReasoningEvaluator.evaluate_dataset` frame as CSV."""
    results_df.to_csv(output_path, index=False)
    print(f"Results saved to: {output_path}")
