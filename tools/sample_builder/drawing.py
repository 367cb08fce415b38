"""Drawing helpers shared by the item families (Pillow): colours, the font, text, arrows, ticks.

The helpers keep their leading underscore: they belong to this package, not to its API.
"""

from __future__ import annotations

import math
from functools import cache

from PIL import Image, ImageDraw, ImageFont

RGB = tuple[int, int, int]

WHITE: RGB = (255, 255, 255)
BLACK: RGB = (20, 20, 20)
GREY: RGB = (120, 120, 120)
COLOURS: dict[str, RGB] = {
    "red": (214, 39, 40),
    "blue": (31, 90, 200),
    "white": (245, 245, 245),
    "yellow": (240, 200, 30),
    "green": (44, 160, 44),
    "grey": (140, 140, 150),
    "black": (35, 35, 35),
    "orange": (245, 130, 20),
    "purple": (128, 60, 170),
    "brown": (140, 90, 50),
}


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled font at ``size`` (FreeType when available)."""
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):  # Pillow < 10.1 or no FreeType: the bitmap font
        return ImageFont.load_default()


def _canvas(width: int, height: int, fill: RGB = WHITE) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("RGB", (width, height), fill)
    return image, ImageDraw.Draw(image)


def _text(
    draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: int = 18, fill: RGB = BLACK
) -> None:
    """Draw ``text`` centred on ``xy``."""
    font = _font(size)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    x = xy[0] - (right - left) / 2 - left
    y = xy[1] - (bottom - top) / 2 - top
    draw.text((x, y), text, font=font, fill=fill)


def _arrow(
    draw: ImageDraw.ImageDraw,
    start: tuple[float, float],
    end: tuple[float, float],
    fill: RGB = BLACK,
    width: int = 3,
    shorten: float = 0.0,
) -> None:
    """A straight arrow from ``start`` to ``end`` (both ends pulled in by ``shorten``)."""
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    x0, y0 = x0 + ux * shorten, y0 + uy * shorten
    x1, y1 = x1 - ux * shorten, y1 - uy * shorten
    draw.line([(x0, y0), (x1, y1)], fill=fill, width=width)
    head, half = 14.0, 7.0
    bx, by = x1 - ux * head, y1 - uy * head
    draw.polygon(
        [(x1, y1), (bx - uy * half, by + ux * half), (bx + uy * half, by - ux * half)], fill=fill
    )


def _dashed(
    draw: ImageDraw.ImageDraw,
    start: tuple[float, float],
    end: tuple[float, float],
    fill: RGB = BLACK,
    width: int = 2,
    dash: float = 10.0,
) -> None:
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0)
    pieces = max(1, int(length // dash))
    for k in range(0, pieces, 2):
        a, b = k / pieces, min(1.0, (k + 1) / pieces)
        draw.line(
            [(x0 + (x1 - x0) * a, y0 + (y1 - y0) * a), (x0 + (x1 - x0) * b, y0 + (y1 - y0) * b)],
            fill=fill,
            width=width,
        )


def _tick(
    draw: ImageDraw.ImageDraw, p: tuple[float, float], q: tuple[float, float], n: int = 1
) -> None:
    """Equal-length tick marks across the middle of segment ``pq``."""
    mx, my = (p[0] + q[0]) / 2, (p[1] + q[1]) / 2
    length = math.hypot(q[0] - p[0], q[1] - p[1])
    ux, uy = (q[0] - p[0]) / length, (q[1] - p[1]) / length
    for k in range(n):
        off = (k - (n - 1) / 2) * 6
        cx, cy = mx + ux * off, my + uy * off
        draw.line([(cx - uy * 8, cy + ux * 8), (cx + uy * 8, cy - ux * 8)], fill=BLACK, width=2)
