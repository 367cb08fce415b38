"""An item's image, prepared once: MIME type, size, base64 data URL, downscaled variants.

The runner builds one :class:`PreparedImage` per item and keeps it across retries, so the
image is base64-encoded once per item (and once more per downscaled size, if a server
rejects it as too large), never once per attempt.
"""

from __future__ import annotations

import base64
import io
from typing import Any

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


class PreparedImage:
    """Encoded image bytes with memoised data URLs, one per maximum side.

    Args:
        data: The image file's bytes (PNG, JPEG, GIF, WebP; anything Pillow opens is
            converted to PNG once).

    Raises:
        ValueError: The bytes are not an image Pillow can open (only checked when a
            conversion or a size is needed).

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
    """

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.mime = sniff_mime(data)
        self._size: tuple[int, int] | None = None
        self._urls: dict[int | None, bytes] = {}
        self._texts: dict[int | None, str] = {}
        self._variants: dict[int, tuple[bytes, str]] = {}
        self.encodes = 0
        """Number of base64 encodings done (one per distinct maximum side)."""

    def _open(self, *, load: bool = True) -> Any:
        from PIL import Image

        try:
            image = Image.open(io.BytesIO(self.data))
            if load:
                image.load()
        except Exception as exc:  # Pillow raises many types for bad bytes
            raise ValueError(f"cannot decode image ({type(exc).__name__}: {exc})") from None
        return image

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` in pixels (read from the header, without decoding)."""
        if self._size is None:
            with self._open(load=False) as image:
                self._size = image.size
        return self._size

    def variant_size(self, max_side: int | None) -> tuple[int, int]:
        """Size of the variant whose longer side is at most ``max_side``."""
        width, height = self.size
        if max_side is None or max(width, height) <= max_side:
            return width, height
        scale = max_side / max(width, height)
        return max(1, round(width * scale)), max(1, round(height * scale))

    def _key(self, max_side: int | None) -> int | None:
        """Which variant serves ``max_side``: ``None`` is the original bytes."""
        served = self.mime in SERVED_MIME_TYPES
        if max_side is None or max(self.size) <= max_side:
            return None if served else max(self.size)  # unusual formats become PNG once
        return max_side

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
        """A loaded RGB ``PIL.Image`` (for local backends), downscaled to ``max_side``."""
        from PIL import Image

        with self._open() as image:
            rgb = image.convert("RGB")
        target = self.variant_size(max_side)
        return rgb if target == rgb.size else rgb.resize(target, Image.Resampling.LANCZOS)
