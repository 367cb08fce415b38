"""An item's image, prepared once: MIME type, size, base64 data URL, downscaled variants.

The runner builds one :class:`PreparedImage` per item and keeps it across retries, so the
image is base64-encoded once per item (and once more per downscaled size, if a server
rejects it as too large), never once per attempt.

Before anything is sent the image is decoded fully (a truncated file is an error, never a
partial image) and checked against the pixel cap (a decompression bomb is refused from its
header, undecoded); an image whose longer side exceeds ``max_side``
(:data:`~crystalbench.config.settings.IMAGE_MAX_SIDE`, or ``CRYSTALBENCH_IMAGE_MAX_SIDE``) is
downscaled before the first request.
"""

from __future__ import annotations

import base64
import io
from typing import Any

from crystalbench.data.images import ImageLimits, check_image, decode_image

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)

SERVED_MIME_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Formats every OpenAI-compatible server accepts; others are converted to PNG once."""


def sniff_mime(data: bytes) -> str | None:
    """The MIME type of encoded image bytes from their magic number, or ``None``.

    Examples:
        >>> sniff_mime(b"\\x89PNG\\r\\n\\x1a\\n....")
        'image/png'
        >>> sniff_mime(b"\\xff\\xd8\\xff\\xe0.."), sniff_mime(b"??")
        ('image/jpeg', None)
    """
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def b64encode(data: bytes) -> bytes:
    """Base64 of ``data``: the one place images are encoded (tests count calls here)."""
    return base64.b64encode(data)


def prepare_image(data: bytes | None, max_side: int | None) -> PreparedImage | None:
    """An item's image ready to send (``None`` without bytes), its header decoded now so a
    broken or over-cap image fails here, as that item's error, before any request.

    Raises:
        ImageError: The bytes are not an image, or it is over the pixel cap.
    """
    if not data:
        return None
    image = PreparedImage(data, max_side=max_side)
    image.size  # noqa: B018 - decode the header now: a broken image fails here
    return image


class PreparedImage:
    """Encoded image bytes with memoised data URLs, one per maximum side.

    Args:
        data: The image file's bytes (PNG, JPEG, GIF, WebP; anything Pillow opens is
            converted to PNG once).
        max_side: Longest side ever sent: larger images are downscaled (aspect kept) even
            when no smaller side is asked for. ``None``: ``CRYSTALBENCH_IMAGE_MAX_SIDE``,
            else :data:`~crystalbench.config.settings.IMAGE_MAX_SIDE` (2048).
        max_pixels: Pixel cap; a larger image is refused undecoded. ``None``:
            ``CRYSTALBENCH_IMAGE_MAX_PIXELS``, else
            :data:`~crystalbench.config.settings.IMAGE_MAX_PIXELS`.

    Raises:
        ImageError: (a ``ValueError``) The bytes are not an image Pillow can decode in
            full, or the image is over the pixel cap. Checked on first use of
            :attr:`size`, a variant or a data URL; the runner reads :attr:`size` at once,
            so a bad image becomes that item's error record.

    Examples:
        >>> from PIL import Image
        >>> buffer = io.BytesIO(); Image.new("RGB", (40, 20)).save(buffer, "PNG")
        >>> image = PreparedImage(buffer.getvalue())
        >>> image.data_url().startswith("data:image/png;base64,"), image.size
        (True, (40, 20))
        >>> image.data_url() is image.data_url(), image.encodes
        (True, 1)
        >>> image.variant_size(10)
        (10, 5)
        >>> PreparedImage(buffer.getvalue(), max_side=8).variant_size(None)
        (8, 4)
    """

    def __init__(
        self, data: bytes, *, max_side: int | None = None, max_pixels: int | None = None
    ) -> None:
        self.data = data
        self.mime = sniff_mime(data)
        if max_side is None or max_pixels is None:
            limits = ImageLimits.from_env()
            max_side = limits.max_side if max_side is None else max_side
            max_pixels = limits.max_pixels if max_pixels is None else max_pixels
        self.max_side: int = max_side
        """Longest side ever sent (larger images are downscaled first)."""
        self.max_pixels: int = max_pixels
        """Pixel cap (larger images are refused)."""
        self._size: tuple[int, int] | None = None
        self._urls: dict[int | None, bytes] = {}
        self._texts: dict[int | None, str] = {}
        self._variants: dict[int, tuple[bytes, str]] = {}
        self.encodes = 0
        """Number of base64 encodings done (one per distinct maximum side)."""

    def _open(self) -> Any:
        """The image, decoded in full (bombs and truncated files refused)."""
        return decode_image(self.data, max_pixels=self.max_pixels)

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` of the original image in pixels.

        The first access decodes the whole image once (then drops the pixels), so a
        truncated, undecodable or over-cap image fails here, before anything is sent.
        """
        if self._size is None:
            self._size = check_image(self.data, max_pixels=self.max_pixels)
        return self._size

    def _side(self, max_side: int | None) -> int:
        """The longer-side limit in force: ``max_side`` within :attr:`max_side`."""
        return self.max_side if max_side is None else min(max_side, self.max_side)

    def variant_size(self, max_side: int | None) -> tuple[int, int]:
        """Size of the variant whose longer side is at most ``max_side`` (and
        :attr:`max_side`); ``variant_size(None)`` is what a first request sends."""
        width, height = self.size
        side = self._side(max_side)
        if max(width, height) <= side:
            return width, height
        scale = side / max(width, height)
        return max(1, round(width * scale)), max(1, round(height * scale))

    def _key(self, max_side: int | None) -> int | None:
        """Which variant serves ``max_side``: ``None`` is the original bytes."""
        served = self.mime in SERVED_MIME_TYPES
        side = self._side(max_side)
        if max(self.size) <= side:
            return None if served else max(self.size)  # unusual formats become PNG once
        return side

    def variant(self, max_side: int | None = None) -> tuple[bytes, str]:
        """``(bytes, mime)`` of the image with its longer side at most ``max_side``."""
        key = self._key(max_side)
        if key is None:
            return self.data, self.mime  # type: ignore[return-value]
        cached = self._variants.get(key)
        if cached is None:
            cached = self._resize(key)
            self._variants[key] = cached
        return cached

    def _resize(self, max_side: int) -> tuple[bytes, str]:
        from PIL import Image

        with self._open() as image:
            target = self.variant_size(max_side)
            resized = (
                image if target == image.size else image.resize(target, Image.Resampling.LANCZOS)
            )
            buffer = io.BytesIO()
            if self.mime == "image/jpeg":
                resized.convert("RGB").save(buffer, format="JPEG", quality=92)
                return buffer.getvalue(), "image/jpeg"
            if resized.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
                resized = resized.convert("RGBA")
            resized.save(buffer, format="PNG")
            return buffer.getvalue(), "image/png"

    def data_url_bytes(self, max_side: int | None = None) -> bytes:
        """``data:<mime>;base64,...`` as ASCII bytes, for the variant with longer side at
        most ``max_side``.

        Encoded on first use and memoised; an image already small enough shares the
        original's URL. Bytes go straight into a request body without another copy.
        """
        key = self._key(max_side)
        url = self._urls.get(key)
        if url is None:
            data, mime = self.data, self.mime
            if key is not None:
                data, mime = self.variant(key)
            url = b"".join((b"data:", str(mime).encode("ascii"), b";base64,", b64encode(data)))
            self.encodes += 1
            self._urls[key] = url
        return url

    def data_url(self, max_side: int | None = None) -> str:
        """:meth:`data_url_bytes` as text (memoised too)."""
        key = self._key(max_side)
        text = self._texts.get(key)
        if text is None:
            text = self.data_url_bytes(max_side).decode("ascii")
            self._texts[key] = text
        return text

    def pil(self, max_side: int | None = None) -> Any:
        """A loaded RGB ``PIL.Image`` (for local backends), downscaled to ``max_side``
        (and :attr:`max_side`)."""
        from PIL import Image

        self.size  # noqa: B018 - the pixel cap and the full decode come first
        with self._open() as image:
            rgb = image.convert("RGB")
        target = self.variant_size(max_side)
        return rgb if target == rgb.size else rgb.resize(target, Image.Resampling.LANCZOS)
