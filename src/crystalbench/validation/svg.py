"""Small hand-written SVG charts for the validation pages: no plotting library, no script.

Each function returns one self-contained ``<svg>`` element (inline in the HTML pages, or
written alone as a ``.svg`` file). Text is escaped; sizes are in CSS pixels.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

FONT = "font-family='system-ui, sans-serif' font-size='12'"
BLUE = "#2f6db5"
ORANGE = "#d9822b"
GREY = "#888"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _heat_colour(value: float, low: float, high: float) -> str:
    """White (low) to dark blue (high)."""
    share = 0.0 if high <= low else min(1.0, max(0.0, (value - low) / (high - low)))
    start, end = (247, 251, 255), (8, 69, 148)
    r, g, b = (round(a + (z - a) * share) for a, z in zip(start, end, strict=True))
    return f"rgb({r},{g},{b})"


def heatmap(
    rows: Sequence[str],
    columns: Sequence[str],
    values: Sequence[Sequence[float | None]],
    *,
    title: str,
    row_title: str = "",
    column_title: str = "",
    digits: int = 3,
    low: float | None = None,
    high: float | None = None,
) -> str:
    """A grid of coloured cells with their values written in.

    Examples:
        >>> svg = heatmap(["a"], ["0.3", "0.4"], [[0.5, None]], title="F1")
        >>> svg.startswith("<svg") and "0.500" in svg and "n/a" in svg
        True
    """
    finite = [v for row in values for v in row if v is not None]
    low = min(finite) if low is None and finite else (low if low is not None else 0.0)
    high = max(finite) if high is None and finite else (high if high is not None else 1.0)
    cell_w, cell_h = 72, 30
    left = 12 + 7 * max([len(r) for r in rows] + [len(row_title)])
    top = 56
    width = left + cell_w * len(columns) + 16
    height = top + cell_h * len(rows) + 20
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' {FONT}>",
        f"<title>{_e(title)}</title>",
        f"<text x='{left}' y='18' font-weight='bold'>{_e(title)}</text>",
        f"<text x='{left}' y='36' fill='{GREY}'>{_e(column_title)}</text>",
        f"<text x='6' y='{top - 6}' fill='{GREY}'>{_e(row_title)}</text>",
    ]
    for c, name in enumerate(columns):
        x = left + c * cell_w + cell_w / 2
        parts.append(f"<text x='{x}' y='{top - 6}' text-anchor='middle'>{_e(name)}</text>")
    for r, name in enumerate(rows):
        y = top + r * cell_h
        parts.append(f"<text x='6' y='{y + cell_h / 2 + 4}'>{_e(name)}</text>")
        for c, value in enumerate(values[r]):
            x = left + c * cell_w
            fill = "#eee" if value is None else _heat_colour(value, low, high)
            share = 0.0 if value is None or high <= low else (value - low) / (high - low)
            ink = "white" if share > 0.55 else "black"
            text = "n/a" if value is None else f"{value:.{digits}f}"
            parts.append(
                f"<rect x='{x}' y='{y}' width='{cell_w - 2}' height='{cell_h - 2}' "
                f"fill='{fill}'><title>{_e(name)} / {_e(columns[c])}: {_e(text)}</title></rect>"
            )
            parts.append(
                f"<text x='{x + cell_w / 2 - 1}' y='{y + cell_h / 2 + 3}' "
                f"text-anchor='middle' fill='{ink}'>{_e(text)}</text>"
            )
    parts.append("</svg>")
    return "".join(parts)


class _Axes:
    """Linear x and y scales of one plot area."""

    def __init__(
        self, x: tuple[float, float], y: tuple[float, float], size: tuple[int, int] = (680, 330)
    ) -> None:
        self.x0, self.x1 = x
        self.y0, self.y1 = y
        self.width, self.height = size
        self.left, self.right, self.top, self.bottom = 52, 16, 50, 48

    def px(self, value: float) -> float:
        span = (self.x1 - self.x0) or 1.0
        return self.left + (value - self.x0) / span * (self.width - self.left - self.right)

    def py(self, value: float) -> float:
        span = (self.y1 - self.y0) or 1.0
        inner = self.height - self.top - self.bottom
        return self.top + (1.0 - (value - self.y0) / span) * inner

    def frame(self, title: str, x_label: str, y_label: str, x_ticks: Sequence[float]) -> list[str]:
        out = [
            f"<svg xmlns='http://www.w3.org/2000/svg' width='{self.width}' "
            f"height='{self.height}' viewBox='0 0 {self.width} {self.height}' role='img' {FONT}>",
            f"<title>{_e(title)}</title>",
            f"<text x='{self.left}' y='18' font-weight='bold'>{_e(title)}</text>",
        ]
        base = self.height - self.bottom
        out.append(
            f"<line x1='{self.left}' y1='{base}' x2='{self.width - self.right}' y2='{base}' "
            f"stroke='{GREY}'/>"
        )
        out.append(
            f"<line x1='{self.left}' y1='{self.top}' x2='{self.left}' y2='{base}' stroke='{GREY}'/>"
        )
        for k in range(6):
            value = self.y0 + (self.y1 - self.y0) * k / 5
            y = self.py(value)
            out.append(
                f"<line x1='{self.left - 4}' y1='{y}' x2='{self.width - self.right}' y2='{y}' "
                "stroke='#ddd'/>"
            )
            out.append(
                f"<text x='{self.left - 6}' y='{y + 4}' text-anchor='end'>{value:.1f}</text>"
            )
        for tick in x_ticks:
            x = self.px(tick)
            out.append(f"<text x='{x}' y='{base + 16}' text-anchor='middle'>{tick:g}</text>")
        out.append(
            f"<text x='{(self.left + self.width - self.right) / 2}' y='{self.height - 6}' "
            f"text-anchor='middle' fill='{GREY}'>{_e(x_label)}</text>"
        )
        out.append(
            f"<text x='12' y='{(self.top + base) / 2}' fill='{GREY}' text-anchor='middle' "
            f"transform='rotate(-90 12 {(self.top + base) / 2})'>{_e(y_label)}</text>"
        )
        return out


def bars(
    labels: Sequence[str],
    values: Sequence[float | None],
    intervals: Sequence[tuple[float | None, float | None]],
    *,
    title: str,
    y_label: str,
    reference: Sequence[float | None] | None = None,
    reference_label: str = "",
    counts: Sequence[int] | None = None,
) -> str:
    """Bars in [0, 1] with interval whiskers, optional reference dots and counts under them.

    Examples:
        >>> "<rect" in bars(["a"], [0.5], [(0.4, 0.6)], title="t", y_label="share")
        True
    """
    axes = _Axes((0.0, float(len(labels))), (0.0, 1.0))
    out = axes.frame(title, "", y_label, [])
    slot = (axes.px(1) - axes.px(0)) if labels else 1.0
    base = axes.py(0.0)
    for k, label in enumerate(labels):
        centre = axes.px(k + 0.5)
        value = values[k]
        if value is not None:
            y = axes.py(value)
            out.append(
                f"<rect x='{centre - slot * 0.3}' y='{y}' width='{slot * 0.6}' "
                f"height='{base - y}' fill='{BLUE}'><title>{_e(label)}: {value:.3f}</title></rect>"
            )
        low, high = intervals[k]
        if low is not None and high is not None:
            out.append(
                f"<line x1='{centre}' y1='{axes.py(low)}' x2='{centre}' y2='{axes.py(high)}' "
                "stroke='black' stroke-width='1.5'/>"
            )
        if reference is not None and reference[k] is not None:
            out.append(
                f"<circle cx='{centre + slot * 0.38}' cy='{axes.py(reference[k])}' r='4' "  # type: ignore[arg-type]
                f"fill='{ORANGE}'><title>{_e(reference_label)}: {reference[k]:.3f}</title></circle>"
            )
        out.append(f"<text x='{centre}' y='{base + 16}' text-anchor='middle'>{_e(label)}</text>")
        if counts is not None:
            out.append(
                f"<text x='{centre}' y='{base + 30}' text-anchor='middle' fill='{GREY}'>"
                f"n={counts[k]}</text>"
            )
    if reference is not None:
        out.append(
            f"<circle cx='{axes.left + 4}' cy='34' r='4' fill='{ORANGE}'/>"
            f"<text x='{axes.left + 12}' y='38'>{_e(reference_label)}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def line_plot(
    series: Sequence[tuple[str, Sequence[tuple[float, float | None]], str]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    x_range: tuple[float, float] = (0.0, 1.0),
    y_range: tuple[float, float] = (0.0, 1.0),
    bands: Sequence[tuple[float, float, float]] = (),
    markers: Sequence[tuple[float, str]] = (),
    shade: tuple[float, float] | None = None,
) -> str:
    """Lines (``(name, points, colour)``), optional vertical interval ``bands`` per point
    (``(x, low, high)``), vertical ``markers`` (``(x, label)``) and a shaded x range.

    Examples:
        >>> points = [(0.1, 0.2), (0.15, 0.3), (0.2, None), (0.3, 0.4), (0.35, 0.5)]
        >>> svg = line_plot([("k", points, "#000")],
        ...                 title="t", x_label="x", y_label="y", markers=[(0.35, "tau")])
        >>> svg.count("<polyline"), "tau" in svg
        (2, True)
    """
    axes = _Axes(x_range, y_range)
    ticks = [x_range[0] + (x_range[1] - x_range[0]) * k / 10 for k in range(11)]
    out = axes.frame(title, x_label, y_label, ticks)
    if shade is not None:
        x0, x1 = axes.px(shade[0]), axes.px(shade[1])
        out.append(
            f"<rect x='{x0}' y='{axes.top}' width='{max(x1 - x0, 2)}' "
            f"height='{axes.py(y_range[0]) - axes.top}' fill='{ORANGE}' opacity='0.18'/>"
        )
    for index, (x, label) in enumerate(markers):
        px = axes.px(x)
        dy = 12 + 14 * (index % 2)
        out.append(
            f"<line x1='{px}' y1='{axes.top}' x2='{px}' y2='{axes.py(y_range[0])}' "
            f"stroke='{GREY}' stroke-dasharray='4 3'/>"
            f"<text x='{px + 3}' y='{axes.top + dy}' fill='{GREY}'>{_e(label)}</text>"
        )
    for x, low, high in bands:
        px = axes.px(x)
        out.append(
            f"<line x1='{px}' y1='{axes.py(low)}' x2='{px}' y2='{axes.py(high)}' "
            "stroke='black' stroke-width='1.2'/>"
        )
    legend_x = axes.left
    for name, points, colour in series:
        run: list[str] = []
        for x, y in [*points, (0.0, None)]:
            if y is None:
                if len(run) > 1:
                    out.append(
                        f"<polyline points='{' '.join(run)}' fill='none' stroke='{colour}' "
                        "stroke-width='2'/>"
                    )
                elif run:
                    cx, cy = run[0].split(",")
                    out.append(f"<circle cx='{cx}' cy='{cy}' r='3' fill='{colour}'/>")
                run = []
                continue
            run.append(f"{axes.px(x):.1f},{axes.py(y):.1f}")
        for x, y in points:
            if y is not None and len(points) <= 20:
                out.append(
                    f"<circle cx='{axes.px(x):.1f}' cy='{axes.py(y):.1f}' r='3' fill='{colour}'>"
                    f"<title>{_e(name)} at {x:g}: {y:.3f}</title></circle>"
                )
        out.append(
            f"<rect x='{legend_x}' y='28' width='10' height='10' fill='{colour}'/>"
            f"<text x='{legend_x + 14}' y='37'>{_e(name)}</text>"
        )
        legend_x += 24 + 7 * len(name)
    out.append("</svg>")
    return "".join(out)
