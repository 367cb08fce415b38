"""ONNX Runtime backend for sentence-transformers models: the CPU fast path.

The whole sentence-transformers pipeline after tokenisation (transformer, the model's own
pooling module as configured in its ``1_Pooling/config.json``, ``Dense`` and ``Normalize``
modules when present) is traced once with ``torch.onnx`` into one graph whose output is
the sentence embedding. Tokenisation uses the model's own fast tokenizer (the
``tokenizers`` library, no torch). The export is cached under
``<cache dir>/onnx/<model>-<fingerprint>-v<recipe>/`` so torch is needed only the first time;
int8 dynamic quantisation (``onnxruntime.quantization``) is cached next to it.

Each precision has its own encoder identity (``onnx-fp32:<model>:<fingerprint>``,
``onnx-int8:...``), distinct from the torch one (``st:...``), so the embedding cache never
mixes vectors of different backends.

fp32 ONNX matches torch to about 1e-6 in cosine (matches are identical unless a cosine
lies within that distance of tau); int8 moves cosines by about 1e-2, which changes Match F1
by far less than 0.005 on CRYSTAL-like data (see ``benchmarks/results/scoring.md``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from crystalbench._internal.extras import require
from crystalbench.config.settings import ENCODE_BATCH_SIZE
from crystalbench.encoders.base import l2_normalise
from crystalbench.encoders.model_files import (
    find_model_folder,
    hub_model_source,
    hub_repo,
    local_model_folder,
    model_label,
    quiet_weight_loading,
)
from crystalbench.errors import EncoderUnavailableError

EXPORT_RECIPE = 1
"""Version of the export recipe; bump it when the exported graph changes."""

PRECISIONS = ("fp32", "int8")
OPSET = 17
_META = "crystalbench-onnx.json"
_OUTPUT = "sentence_embedding"


@dataclass(frozen=True)
class OnnxExport:
    """An exported model folder and what is needed to run it without torch."""

    folder: Path
    input_names: tuple[str, ...]
    """Graph inputs, in the order the tokenizer features are fed."""
    max_seq_length: int
    do_lower_case: bool
    dim: int
    pad_id: int
    pad_token: str

    @property
    def fp32_path(self) -> Path:
        """The fp32 graph."""
        return self.folder / "model.onnx"

    @property
    def int8_path(self) -> Path:
        """The int8 dynamically quantised graph (made on first use)."""
        return self.folder / "model-int8.onnx"

    @classmethod
    def read(cls, folder: Path) -> OnnxExport:
        """Load the description written by :func:`export_sentence_transformer`."""
        meta = json.loads((folder / _META).read_text(encoding="utf-8"))
        return cls(
            folder=folder,
            input_names=tuple(meta["input_names"]),
            max_seq_length=int(meta["max_seq_length"]),
            do_lower_case=bool(meta["do_lower_case"]),
            dim=int(meta["dim"]),
            pad_id=int(meta["pad_id"]),
            pad_token=str(meta["pad_token"]),
        )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "model"


def resolve_model_folder(name_or_path: str, cache_dir: str | Path | None = None) -> Path:
    """Local folder holding a sentence-transformers model given by name, path or hub id.

    Hub names are looked up in the local hub cache first (read directly, so the fast
    path imports neither ``huggingface_hub`` nor torch); when absent the model is loaded
    once with sentence-transformers (which downloads it).

    Raises:
        EncoderUnavailableError: The model cannot be found or downloaded.
    """
    found = find_model_folder(name_or_path, cache_dir)
    if found is not None:
        return found
    repo = hub_repo(name_or_path)
    hub_model_source(name_or_path)  # fails at once when the hub cannot be reached
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:  # pragma: no cover - huggingface_hub comes with transformers
        raise EncoderUnavailableError("the ONNX backend needs huggingface_hub") from exc
    try:
        return Path(snapshot_download(repo, local_files_only=True))
    except Exception:
        pass
    from crystalbench.encoders.sentence import SentenceTransformerEncoder

    _ = SentenceTransformerEncoder(name_or_path, device="cpu").model  # downloads or raises
    try:
        return Path(snapshot_download(repo, local_files_only=True))
    except Exception as exc:
        raise EncoderUnavailableError(
            f"cannot locate the files of {name_or_path!r} for ONNX export; pass a local folder"
        ) from exc


def export_sentence_transformer(model_folder: Path, target: Path) -> OnnxExport:
    """Trace a sentence-transformers model (all modules after tokenisation) into ONNX.

    The export is written to a temporary folder and renamed into place, so two processes
    exporting at once never leave a half-written model behind.

    Args:
        model_folder: Local sentence-transformers model folder.
        target: Folder to create (``model.onnx``, tokenizer files, description).

    Returns:
        The export's description.
    """
    torch: Any = require(
        "torch",
        "sentence_transformers",
        what="exporting to ONNX (once per model)",
        extra="embed,onnx",
        kind=EncoderUnavailableError,
    )
    from sentence_transformers import SentenceTransformer

    with quiet_weight_loading():
        model = SentenceTransformer(str(model_folder), device="cpu")
    model.eval()
    tokenizer = model.tokenizer
    sample = model.preprocess(["A short sentence.", "A second, slightly longer sentence here."])
    input_names = tuple(k for k in ("input_ids", "attention_mask", "token_type_ids") if k in sample)

    class _Pipeline(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: Any) -> Any:
            features = dict(zip(input_names, tensors, strict=True))
            return self.model(features)[_OUTPUT]

    pipeline = _Pipeline().eval()
    args = tuple(sample[k] for k in input_names)
    dynamic: dict[str, dict[int, str]] = {k: {0: "batch", 1: "sequence"} for k in input_names}
    dynamic[_OUTPUT] = {0: "batch"}
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=target.name + ".tmp-", dir=target.parent))
    try:
        import warnings

        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                pipeline,
                args,
                str(scratch / "model.onnx"),
                input_names=list(input_names),
                output_names=[_OUTPUT],
                dynamic_axes=dynamic,
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,
            )
        tokenizer.save_pretrained(str(scratch))
        first = model[0]
        meta = {
            "recipe": EXPORT_RECIPE,
            "source": str(model_folder),
            "input_names": list(input_names),
            "max_seq_length": int(model.max_seq_length or tokenizer.model_max_length),
            "do_lower_case": bool(getattr(first, "do_lower_case", False)),
            "dim": int(_embedding_dimension(model)),
            "pad_id": int(tokenizer.pad_token_id or 0),
            "pad_token": str(tokenizer.pad_token or "[PAD]"),
            "modules": [type(m).__name__ for m in model],
        }
        (scratch / _META).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        try:
            os.rename(scratch, target)
        except OSError:
            if not (target / _META).is_file():
                raise
            # Another process finished first; its export is identical.
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
    return OnnxExport.read(target)


def _embedding_dimension(model: Any) -> int:
    getter = getattr(model, "get_embedding_dimension", None)
    if getter is None:
        getter = model.get_sentence_embedding_dimension
    return int(getter() or 0)


def quantize_int8(export: OnnxExport) -> Path:
    """Write (once) the int8 dynamically quantised graph next to the fp32 one.

    Weights of MatMul/Gemm nodes become per-channel int8; activations are quantised
    dynamically at run time. Returns the int8 graph's path.
    """
    target = export.int8_path
    if target.is_file():
        return target
    require(
        "onnxruntime.quantization",
        what="int8 quantisation",
        extra="onnx",
        kind=EncoderUnavailableError,
    )
    from onnxruntime.quantization import QuantType, quantize_dynamic

    handle, scratch = tempfile.mkstemp(
        prefix="model-int8.", suffix=".onnx.tmp", dir=str(export.folder)
    )
    os.close(handle)
    try:
        quantize_dynamic(
            str(export.fp32_path),
            scratch,
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul", "Gemm"],
        )
        os.replace(scratch, target)
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)
    return target


class OnnxEncoder:
    """A sentence-transformers model run by ONNX Runtime (fp32 or int8), CPU by default.

    Nothing is exported or loaded until the first :meth:`encode`. The identity is known
    without loading anything, so cached vectors are found without torch or ORT.

    Args:
        name_or_path: ``minilm-offline``, ``mpnet-offline``, a local model folder or a hub
            name.
        precision: ``fp32`` or ``int8`` (dynamic quantisation of the fp32 export).
        batch_size: Sentences per ``session.run`` (texts are length-sorted first).
        cache_dir: Where exports live (``<cache_dir>/onnx``); the embedding-cache folder
            by default.
        threads: ONNX Runtime intra-op threads (``None``: one per core).
        providers: ONNX Runtime execution providers (default CPU).

    Examples:
        >>> OnnxEncoder("minilm-offline", precision="int8").identity.startswith("onnx-int8:")
        True
    """

    def __init__(
        self,
        name_or_path: str,
        *,
        precision: str = "fp32",
        batch_size: int = ENCODE_BATCH_SIZE,
        cache_dir: str | Path | None = None,
        threads: int | None = None,
        providers: Sequence[str] | None = None,
    ) -> None:
        if precision not in PRECISIONS:
            from crystalbench.errors import UnknownNameError

            raise UnknownNameError("ONNX precision", precision, PRECISIONS)
        self.name = name_or_path
        self.precision = precision
        self.batch_size = batch_size
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.threads = threads
        self.providers = list(providers) if providers else ["CPUExecutionProvider"]
        self._folder: Path | None = None
        self._fingerprint: str | None = None
        self._session: Any = None
        self._tokenizer: Any = None
        self._export: OnnxExport | None = None
        self._lock = threading.Lock()
        self._preload: threading.Thread | None = None
        self._preload_lock = threading.Lock()
        self._preload_error: BaseException | None = None

    # ------------------------------------------------------------------ identity
    def _model_folder(self) -> Path:
        if self._folder is None:
            self._folder = resolve_model_folder(self.name, self.cache_dir)
        return self._folder

    @property
    def label(self) -> str:
        """Human-readable model name used in the identity."""
        return model_label(self.name)

    @property
    def fingerprint(self) -> str:
        """Content fingerprint of the model folder (same as the torch encoder's)."""
        if self._fingerprint is None:
            from crystalbench.encoders.sentence import _fingerprint_folder

            self._fingerprint = _fingerprint_folder(self._model_folder())
        return self._fingerprint

    @property
    def identity(self) -> str:
        """``onnx-<precision>:<model>:<weights fingerprint>``."""
        return f"onnx-{self.precision}:{self.label}:{self.fingerprint}"

    @property
    def export_folder(self) -> Path:
        """Where this model's export is cached."""
        from crystalbench._internal.paths import default_cache_dir

        base = self.cache_dir if self.cache_dir is not None else default_cache_dir()
        name = f"{_slug(self.label)}-{self.fingerprint}-v{EXPORT_RECIPE}"
        return base / "onnx" / name

    # ------------------------------------------------------------------ loading
    def export_ready(self) -> bool:
        """True when this model's export is already cached (nothing is made or loaded)."""
        return self._export is not None or (self.export_folder / _META).is_file()

    def export(self) -> OnnxExport:
        """The cached export, made now (with torch) when missing."""
        if self._export is None:
            folder = self.export_folder
            if not (folder / _META).is_file():
                export_sentence_transformer(self._model_folder(), folder)
            self._export = OnnxExport.read(folder)
        return self._export

    def _load(self) -> None:
        ort: Any = require(
            "onnxruntime",
            "tokenizers",
            what="the ONNX backend",
            extra="embed,onnx",
            kind=EncoderUnavailableError,
        )
        from tokenizers import Tokenizer

        export = self.export()
        graph = export.fp32_path if self.precision == "fp32" else quantize_int8(export)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if self.threads:
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(graph), sess_options=options, providers=self.providers
        )
        tokenizer = Tokenizer.from_file(str(export.folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=export.max_seq_length)
        tokenizer.enable_padding(pad_id=export.pad_id, pad_token=export.pad_token)
        self._tokenizer = tokenizer

    def load(self) -> None:
        """Load the graph and the tokenizer now (exporting first if needed).

        After :meth:`preload` this waits for the background load; an error it met is
        raised here, on the caller's thread.
        """
        with self._lock:
            if self._preload_error is not None:
                error, self._preload_error = self._preload_error, None
                raise error
            if self._session is None:
                self._load()

    def preload(self) -> bool:
        """Start loading the graph and tokenizer on a background thread; returns whether
        a load was started.

        ONNX Runtime builds the session without holding the GIL, so the load (0.3-1.5 s)
        runs beside whatever the caller does next (imports, reading the benchmark and the
        predictions). The first :meth:`encode` waits for it. Nothing starts when the session
        is loaded, a load is already under way, or the export is not cached yet (making
        one needs torch, on the caller's thread). A failed load is raised by the next
        :meth:`load` or :meth:`encode`, never dropped.
        """
        with self._preload_lock:  # not self._lock: never wait for a load under way
            if self._session is not None or self._preload is not None:
                return False
            if self._folder is None:  # found without imports, downloads or torch, or no load
                self._folder = local_model_folder(self.name, self.cache_dir)
                if self._folder is None:
                    return False
            if not self.export_ready():
                return False
            thread = threading.Thread(target=self._preload_body, name="onnx-preload", daemon=True)
            self._preload = thread
            thread.start()
        return True

    def _preload_body(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            try:
                self._load()
            except BaseException as error:  # raised again by load() on the caller's thread
                self._preload_error = error

    def close(self) -> None:
        """Wait for a background load still under way (nothing else holds resources)."""
        thread = self._preload
        if thread is not None:
            thread.join()

    def features(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Tokenizer features of ``texts`` as the graph expects them (int64, padded)."""
        self.load()
        export = self._export
        assert export is not None
        if export.do_lower_case:
            texts = [t.lower() for t in texts]
        encodings = self._tokenizer.encode_batch(list(texts))
        arrays = {
            "input_ids": np.asarray([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.asarray([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.asarray([e.type_ids for e in encodings], dtype=np.int64),
        }
        return {name: arrays[name] for name in export.input_names}

    # ------------------------------------------------------------------ encoding
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` as unit-length float32 rows (length-sorted batches inside, the
        shortest first, so the first batch of a run comes back quickly)."""
        if not texts:
            self.load()
            dim = self._export.dim if self._export is not None else 0
            return np.zeros((0, dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda k: len(texts[k]))
        out: np.ndarray | None = None
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            feed = self.features([texts[k] for k in rows])
            vectors = self._session.run([_OUTPUT], feed)[0]
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        assert out is not None
        return l2_normalise(out)
