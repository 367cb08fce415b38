"""Item images: where they may live, and decoding them safely.

- **Where.** An image path from a benchmark file is resolved (symlinks included) and must
  lie under the benchmark file's folder or under an ``image_root`` the user names; any other
  path is refused before the file is opened (:func:`resolve_image_path`).
- **Decoding.** :func:`decode_image` refuses an image over the pixel cap from its header
  alone (a decompression bomb is never decoded), then decodes it fully, so a truncated file
  is an error and never a partial image. Pillow's ``ImageFile.LOAD_TRUNCATED_IMAGES`` is
  left ``False``.

The limits (:class:`ImageLimits`) are ``IMAGE_MAX_PIXELS`` and ``IMAGE_MAX_SIDE`` in
:mod:`crystalbench.defaults`, overridden by ``CRYSTALBENCH_IMAGE_MAX_PIXELS`` and
``CRYSTALBENCH_IMAGE_MAX_SIDE``.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crystalbench._internal.io import positive_ints_from_env
from crystalbench.config.settings import (
    IMAGE_MAX_PIXELS,
    IMAGE_MAX_PIXELS_ENV,
    IMAGE_MAX_SIDE,
    IMAGE_MAX_SIDE_ENV,
)
from crystalbench.errors import ImageError


@dataclass(frozen=True)
class ImageLimits:
    """How large an item image may be, and the longest side sent to a model.

    Examples:
        >>> ImageLimits().max_side
        2048
        >>> ImageLimits.from_env({"CRYSTALBENCH_IMAGE_MAX_SIDE": "1024"}).max_side
        1024
    """

    max_pixels: int = IMAGE_MAX_PIXELS
    """Most pixels (width x height) an image may have; larger ones are refused undecoded."""
    max_side: int = IMAGE_MAX_SIDE
    """Longest side sent to a model; larger images are downscaled first."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ImageLimits:
        """Limits from ``CRYSTALBENCH_IMAGE_MAX_PIXELS`` / ``..._MAX_SIDE``, else the defaults.

        Raises:
            InputError: A variable is set to something other than a positive integer.
        """
        variables = {"max_pixels": IMAGE_MAX_PIXELS_ENV, "max_side": IMAGE_MAX_SIDE_ENV}
        return cls(**positive_ints_from_env(variables, environ))


def image_roots(base: Path, image_root: str | Path | None) -> tuple[Path, ...]:
    """The folders images may live under: ``base`` and ``image_root``, resolved.

    Raises:
        InputError: ``image_root`` is not an existing folder.
    """
    roots = [base.resolve()]
    if image_root is not None:
        root = Path(image_root).expanduser()
        if not root.is_dir():
            raise ImageError("image root is not a folder", path=root, field="image_root")
        roots.append(root.resolve())
    return tuple(dict.fromkeys(roots))


def resolve_image_path(
    raw: str,
    *,
    base: Path,
    roots: Sequence[Path],
    path: str | Path | None = None,
    line: int | None = None,
) -> Path:
    """The real location of image ``raw`` (relative to ``base``), if it lies under a root.

    Symlinks are followed before the check, so a link out of the benchmark folder is
    refused as an absolute path or a ``../`` would be. The file itself is not opened.

    Args:
        raw: The path written in the benchmark file.
        base: The folder relative paths start from (the benchmark file's folder).
        roots: Allowed folders, resolved (see :func:`image_roots`).
        path: The benchmark file, for messages.
        line: The item's line, for messages.

    Raises:
        ImageError: The path is invalid or resolves outside every root; names the file,
            the line and the field ``image``.

    Examples:
        >>> import tempfile
        >>> base = Path(tempfile.mkdtemp()).resolve()
        >>> resolve_image_path("img/a.png", base=base, roots=[base]) == base / "img" / "a.png"
        True
        >>> resolve_image_path("/etc/passwd", base=base, roots=[base])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        crystalbench.errors.ImageError: field image: ... outside the benchmark folder ...
    """
    try:
        candidate = Path(raw)
        if not candidate.is_absolute():
            candidate = base / candidate
        resolved = candidate.resolve()
    except (OSError, ValueError, RuntimeError) as exc:  # NUL byte, symlink loop, name too long
        raise ImageError(
            f"invalid image path {raw!r} ({exc})", path=path, line=line, field="image"
        ) from None
    if any(resolved.is_relative_to(root) for root in roots):
        return resolved
    allowed = " or ".join(str(root) for root in roots)
    raise ImageError(
        f"image {raw!r} resolves to {resolved}, outside the benchmark folder ({allowed}); "
        "move it there or name its folder with --image-root",
        path=path,
        line=line,
        field="image",
    )


def read_image_file(resolved: Path, *, roots: Sequence[Path], what: str) -> bytes:
    """Read an image already checked by :func:`resolve_image_path`, checking it again (a
    symlink may have been swapped in since the benchmark was loaded).

    Raises:
        ImageError: The file is missing, unreadable, or now resolves outside the roots.
    """
    try:
        real = resolved.resolve()
    except (OSError, RuntimeError) as exc:
        raise ImageError(f"cannot resolve image ({exc})", path=resolved, field="image") from None
    if not any(real.is_relative_to(root) for root in roots):
        raise ImageError(
            f"image of {what} now resolves to {real}, outside the allowed folders",
            path=resolved,
            field="image",
        )
    if not real.is_file():
        raise ImageError("image file not found", path=resolved, field="image")
    try:
        return real.read_bytes()
    except OSError as exc:
        raise ImageError(f"cannot read image ({exc})", path=resolved, field="image") from None


def decode_image(
    data: bytes,
    *,
    max_pixels: int | None = None,
    what: str = "image",
    path: str | Path | None = None,
    line: int | None = None,
) -> Any:
    """Open encoded image bytes and decode them fully; returns the loaded ``PIL.Image``.

    The pixel cap is checked on the header's size before any pixel is decoded. Pillow's
    own decompression-bomb guard (its ``DecompressionBombError``, and its warning when our
    cap is at or below Pillow's limit) becomes an :class:`ImageError` as well.

    Args:
        data: PNG, JPEG, GIF, WebP or anything else Pillow reads.
        max_pixels: Pixel cap (default :meth:`ImageLimits.from_env`).
        what: Names the image in messages (``image of item q7``).
        path: The image file or benchmark file, for messages.
        line: The item's line, for messages.

    Raises:
        ImageError: Not decodable, truncated, or over the pixel cap; a ``ValueError`` too.

    Examples:
        >>> from PIL import Image
        >>> buffer = io.BytesIO(); Image.new("RGB", (40, 20)).save(buffer, "PNG")
        >>> decode_image(buffer.getvalue()).size
        (40, 20)
        >>> decode_image(buffer.getvalue(), max_pixels=100)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        crystalbench.errors.ImageError: image has 40 x 20 = 800 pixels, over the cap of 100 ...
    """
    from PIL import Image

    def refuse(message: str) -> ImageError:
        return ImageError(message, path=path, line=line, field="image" if path else None)

    cap = max_pixels if max_pixels is not None else ImageLimits.from_env().max_pixels
    pillow_cap = Image.MAX_IMAGE_PIXELS
    escalate = pillow_cap is None or cap <= pillow_cap
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error" if escalate else "ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
            width, height = image.size
            if width * height > cap:
                image.close()
                raise refuse(
                    f"{what} has {width} x {height} = {width * height:,} pixels, over the cap "
                    f"of {cap:,} (a possible decompression bomb; raise the cap with "
                    f"${IMAGE_MAX_PIXELS_ENV})"
                )
            image.load()
    except ImageError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise refuse(
            f"{what} refused as a possible decompression bomb ({exc}); raise the cap with "
            f"${IMAGE_MAX_PIXELS_ENV}"
        ) from None
    except Exception as exc:  # Pillow raises many types for bad bytes
        raise refuse(f"cannot decode {what} ({type(exc).__name__}: {exc})") from None
    return image


def check_image(
    data: bytes,
    *,
    max_pixels: int | None = None,
    what: str = "image",
    path: str | Path | None = None,
    line: int | None = None,
) -> tuple[int, int]:
    """Decode ``data`` fully (see :func:`decode_image`) and return its ``(width, height)``.

    Raises:
        ImageError: Not decodable, truncated, or over the pixel cap.
    """
    image = decode_image(data, max_pixels=max_pixels, what=what, path=path, line=line)
    size: tuple[int, int] = image.size
    image.close()
    return size
