"""Leakage check: no training item may be a benchmark item.

A training item *leaks* when some benchmark item has the same normalised question
(:func:`crystalbench.normalize.normalize_text`: case, punctuation, articles, whitespace) and

- both have an image, and the images are the same: equal pixels (SHA-256 of the decoded RGB
  pixels, so re-encoding or metadata do not hide a copy) or 64-bit difference hashes within
  ``max_hamming`` bits (resized or recompressed copies); or
- neither has an image (text-only items).

Items that share only an image (a different question about the same picture) or only a
question (a generic question about another picture) are counted and listed, not flagged:
MMVP-style pairs reuse images and "How many objects are there?" recurs across datasets.

``crystal data check-leakage TRAIN -b BENCHMARK`` prints the report and exits with 1 when a
training item leaks; ``crystal train`` runs the same check before it starts and refuses to
train on a leak unless the config says otherwise (``data.leakage.on_leak``).
"""

from __future__ import annotations

import hashlib
import io
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple

from pydantic import Field

from crystalbench.data import Benchmark
from crystalbench.errors import InputError
from crystalbench.normalize import normalize_text
from crystalbench.types import BenchmarkItem, Record

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

__all__ = [
    "ImageFingerprint",
    "LeakMatch",
    "LeakageReport",
    "check_leakage",
    "difference_hash",
    "hamming",
    "image_fingerprint",
    "normalised_question",
]

ProgressHook = Callable[[str, int, int | None], None]

MAX_LISTED = 50
"""Image-only and question-only overlaps listed in the report (all are counted)."""


class ImageFingerprint(NamedTuple):
    """Two hashes of one decoded image."""

    pixels: str
    """SHA-256 of the size and the RGB pixel bytes."""
    dhash: int
    """64-bit difference hash of the 9x8 grey thumbnail."""


def difference_hash(image: PILImage) -> int:
    """64-bit difference hash (dHash) of a PIL image.

    The image is reduced to a 9x8 grey thumbnail; bit ``8*row + col`` is set when a pixel is
    brighter than its right neighbour. Resizing and recompression change few bits.

    Examples:
        >>> from PIL import Image
        >>> ramp = Image.linear_gradient("L").rotate(-90)  # brightness falls left to right
        >>> difference_hash(ramp) == 2**64 - 1
        True
        >>> difference_hash(Image.new("RGB", (10, 10)))
        0
    """
    from PIL import Image

    grey = image.convert("L").resize((9, 8), Image.Resampling.LANCZOS)
    pixels = list(grey.tobytes())
    value = 0
    for row in range(8):
        for col in range(8):
            left = pixels[row * 9 + col]
            right = pixels[row * 9 + col + 1]
            value = (value << 1) | int(left > right)
    return value


def hamming(a: int, b: int) -> int:
    """Number of differing bits.

    Examples:
        >>> hamming(0b1011, 0b0001)
        2
    """
    return bin(a ^ b).count("1")


def image_fingerprint(data: bytes, *, where: str = "image") -> ImageFingerprint:
    """Pixel hash and difference hash of encoded image bytes.

    Raises:
        InputError: The bytes are not a readable image (our own bad data).

    Examples:
        >>> from PIL import Image
        >>> buffer = io.BytesIO(); Image.new("RGB", (4, 4), "red").save(buffer, "PNG")
        >>> png = image_fingerprint(buffer.getvalue())
        >>> buffer = io.BytesIO(); Image.new("RGB", (4, 4), "red").save(buffer, "BMP")
        >>> image_fingerprint(buffer.getvalue()) == png  # same pixels, other container
        True
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as opened:
            rgb = opened.convert("RGB")
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise InputError(f"unreadable image ({exc})", path=where, field="image") from None
    digest = hashlib.sha256(f"{rgb.width}x{rgb.height}:".encode())
    digest.update(rgb.tobytes())
    return ImageFingerprint(digest.hexdigest(), difference_hash(rgb))


def normalised_question(item: BenchmarkItem) -> str:
    """The question as compared for leakage.

    Examples:
        >>> normalised_question(BenchmarkItem(id="1", source="x", answer="a",
        ...     question="  What is the   colour of the Car? ", reference_steps=["s"]))
        'what is colour of car'
    """
    return normalize_text(item.question)


class LeakMatch(Record):
    """One training item found in the benchmark."""

    train_id: str
    """Id of the leaked training item."""
    benchmark_id: str
    """Id of the benchmark item it duplicates."""
    reason: Literal["same_pixels", "similar_image", "no_image"]
    """``same_pixels`` / ``similar_image`` (dHash within ``max_hamming``), with the same
    question; ``no_image``: both text-only with the same question."""
    image_distance: int | None = None
    """Hamming distance of the difference hashes (``None`` without images)."""


class LeakageReport(Record):
    """What :func:`check_leakage` found; written as JSON by ``--out``."""

    train: str
    """Training pool (as given)."""
    benchmark: str
    """Benchmark (as given)."""
    benchmark_fingerprint: str
    """Fingerprint of the benchmark items checked against."""
    n_train: int
    n_benchmark: int
    max_hamming: int
    """dHash distance that counted as the same image."""
    leaks: list[LeakMatch] = Field(default_factory=list)
    """Every leaked training item (with the benchmark item it duplicates)."""
    n_image_only: int = 0
    """Training items sharing an image (same pixels or dHash) but not the question."""
    n_question_only: int = 0
    """Training items sharing the normalised question but not the image."""
    image_only: list[tuple[str, str]] = Field(default_factory=list)
    """First image-only overlaps as ``[train_id, benchmark_id]``."""
    question_only: list[tuple[str, str]] = Field(default_factory=list)
    """First question-only overlaps as ``[train_id, benchmark_id]``."""

    @property
    def clean(self) -> bool:
        """No training item leaks."""
        return not self.leaks

    @property
    def leaked_ids(self) -> set[str]:
        """Ids of the leaked training items."""
        return {match.train_id for match in self.leaks}


def _fingerprints(
    bench: Benchmark, progress: ProgressHook | None, stage: str
) -> list[ImageFingerprint | None]:
    found: list[ImageFingerprint | None] = []
    for item in bench.items:
        data = bench.image_bytes(item) if item.image is not None else None
        found.append(
            image_fingerprint(data, where=f"{bench.name}:{item.id}") if data is not None else None
        )
        if progress is not None:
            progress(stage, 1, len(bench.items))
    return found


def check_leakage(
    train: Benchmark,
    benchmark: Benchmark,
    *,
    max_hamming: int = 4,
    progress: ProgressHook | None = None,
) -> LeakageReport:
    """Find training items that duplicate benchmark items (see the module docstring).

    Args:
        train: The training pool.
        benchmark: The benchmark it must not contain.
        max_hamming: Largest dHash distance counted as the same image.
        progress: ``hook(stage, advance, total)`` while images are hashed.

    Returns:
        A :class:`LeakageReport`; ``report.clean`` is True when nothing leaks.

    Raises:
        InputError: An image cannot be read.

    Examples:
        >>> from crystalbench.data import load_benchmark
        >>> sample = load_benchmark("sample")
        >>> report = check_leakage(sample.subset(limit=3), sample)
        >>> report.clean, sorted(report.leaked_ids)
        (False, ['mathvision-01', 'mathvision-02', 'mathvision-03'])
    """
    bench_prints = _fingerprints(benchmark, progress, "hashing benchmark images")
    by_question: dict[str, list[int]] = defaultdict(list)
    by_pixels: dict[str, int] = {}
    by_dhash: dict[int, int] = {}
    for index, (item, fp) in enumerate(zip(benchmark.items, bench_prints, strict=True)):
        by_question[normalised_question(item)].append(index)
        if fp is not None:
            by_pixels.setdefault(fp.pixels, index)
            by_dhash.setdefault(fp.dhash, index)

    train_prints = _fingerprints(train, progress, "hashing training images")
    leaks: list[LeakMatch] = []
    image_only: list[tuple[str, str]] = []
    question_only: list[tuple[str, str]] = []
    n_image_only = n_question_only = 0
    for item, fp in zip(train.items, train_prints, strict=True):
        match = _leak(item, fp, benchmark.items, bench_prints, by_question, max_hamming)
        if match is not None:
            leaks.append(match)
            continue
        same_image = None
        if fp is not None:
            same_image = by_pixels.get(fp.pixels, by_dhash.get(fp.dhash))
        if same_image is not None:
            n_image_only += 1
            if len(image_only) < MAX_LISTED:
                image_only.append((item.id, benchmark.items[same_image].id))
        candidates = by_question.get(normalised_question(item))
        if candidates:
            n_question_only += 1
            if len(question_only) < MAX_LISTED:
                question_only.append((item.id, benchmark.items[candidates[0]].id))
    return LeakageReport(
        train=train.name,
        benchmark=benchmark.name,
        benchmark_fingerprint=benchmark.fingerprint,
        n_train=len(train.items),
        n_benchmark=len(benchmark.items),
        max_hamming=max_hamming,
        leaks=leaks,
        n_image_only=n_image_only,
        n_question_only=n_question_only,
        image_only=image_only,
        question_only=question_only,
    )


def _leak(
    item: BenchmarkItem,
    fp: ImageFingerprint | None,
    bench_items: Sequence[BenchmarkItem],
    bench_prints: Sequence[ImageFingerprint | None],
    by_question: dict[str, list[int]],
    max_hamming: int,
) -> LeakMatch | None:
    best: LeakMatch | None = None
    for index in by_question.get(normalised_question(item), ()):
        other = bench_prints[index]
        bench_id = bench_items[index].id
        if fp is None and other is None:
            return LeakMatch(train_id=item.id, benchmark_id=bench_id, reason="no_image")
        if fp is None or other is None:
            continue
        if fp.pixels == other.pixels:
            return LeakMatch(
                train_id=item.id, benchmark_id=bench_id, reason="same_pixels", image_distance=0
            )
        distance = hamming(fp.dhash, other.dhash)
        if distance > max_hamming:
            continue
        if best is None or best.image_distance is None or distance < best.image_distance:
            best = LeakMatch(
                train_id=item.id,
                benchmark_id=bench_id,
                reason="similar_image",
                image_distance=distance,
            )
    return best
