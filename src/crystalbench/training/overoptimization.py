"""The over-optimization report of a run: proxy reward vs held-out graders along sqrt(KL).

Gao et al. (2022, "Scaling laws for reward model overoptimization") showed that as a policy
moves away from its start (distance ``d = sqrt(KL)``), the reward it is trained on (the
*proxy*) keeps rising while a held-out (*gold*) grader rises, peaks and falls, following

- ``R(d) = d (alpha - beta log d)`` for best-of-n sampling, and
- ``R(d) = d (alpha - beta d)`` for RL,

with ``R`` the gold score's gain over the initial policy. Only a held-out grader shows the
turn; the proxy never does. For each phase folder this module reads ``validation.jsonl``
(written at each validation by the trainer: ``proxy``, ``heldout/NAME``, ``sqrt_kl``) and
writes

- ``overoptimization.json``: one row per validated step (checkpoint, proxy, every held-out
  grader, sqrt(KL)), the fitted curves (``scipy.optimize.curve_fit``) and the peaks;
- ``overoptimization.md``: the same as tables;
- ``overoptimization.svg``: gains over the start against sqrt(KL), measured points and fitted
  curves, and the step where the held-out graders peak (a plain SVG, no plotting library).

Without held-out graders, validation ``accuracy`` stands in (and the report says so); without
``evaluation.kl`` the x axis is the step and no curve is fitted. Torch-free; scipy (the
``stats`` extra) only for the fit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from crystalbench._internal.extras import install_command
from crystalbench._internal.io import atomic_write_text, read_jsonl
from crystalbench.types import Record

__all__ = [
    "CurveFit",
    "OveroptimizationReport",
    "OveroptimizationRow",
    "build_overoptimization",
    "fit_gao_curve",
    "render_overoptimization",
    "render_svg",
    "write_overoptimization_report",
]

REPORT_STEM = "overoptimization"


class OveroptimizationRow(Record):
    """One validated step."""

    step: int
    checkpoint: str | None
    """The ``checkpoint-N`` folder saved at that step, if any."""
    proxy: float | None
    """The phase's own weighted reward on the validation completions."""
    graders: dict[str, float]
    """Every held-out grader (``heldout/NAME``) on the validation completions."""
    sqrt_kl: float | None
    """sqrt(KL) from the phase's initial policy (``None`` without ``evaluation.kl``)."""


class CurveFit(Record):
    """A Gao-style curve fitted to one grader's gain over the initial policy."""

    grader: str
    form: Literal["rl", "bon"]
    """``rl``: ``d (alpha - beta d)``; ``bon``: ``d (alpha - beta log d)``."""
    alpha: float | None
    beta: float | None
    peak_sqrt_kl: float | None
    """Where the fitted curve peaks (``None``: it does not turn within the fit)."""
    n_points: int
    rmse: float | None
    note: str = ""
    """Why there is no fit, when there is none."""


class OveroptimizationReport(Record):
    """The whole report of one phase folder."""

    run_dir: str
    x_axis: Literal["sqrt_kl", "step"]
    graders: list[str]
    rows: list[OveroptimizationRow]
    fits: list[CurveFit]
    peak_step: dict[str, int]
    """Per grader (and ``mean`` over graders), the validated step where it is highest."""
    notes: list[str]


def _gao(form: str) -> Any:
    import numpy as np

    if form == "rl":
        return lambda d, alpha, beta: d * (alpha - beta * d)
    return lambda d, alpha, beta: d * (alpha - beta * np.log(np.maximum(d, 1e-12)))


def fit_gao_curve(
    distances: Sequence[float], gains: Sequence[float], *, grader: str, form: str = "rl"
) -> CurveFit:
    """Fit ``R(d)`` of Gao et al. to gains over the initial policy.

    Examples:
        >>> d = [0.0, 0.5, 1.0, 1.5, 2.0]
        >>> fit = fit_gao_curve(d, [x * (0.4 - 0.1 * x) for x in d], grader="g")
        >>> round(fit.alpha, 3), round(fit.beta, 3), round(fit.peak_sqrt_kl, 3)
        (0.4, 0.1, 2.0)
    """
    points = [(float(x), float(y)) for x, y in zip(distances, gains, strict=True)]
    points = [(x, y) for x, y in points if math.isfinite(x) and math.isfinite(y)]
    usable = len({x for x, _ in points})
    if usable < 3:
        return CurveFit(
            grader=grader,
            form="rl" if form == "rl" else "bon",
            alpha=None,
            beta=None,
            peak_sqrt_kl=None,
            n_points=len(points),
            rmse=None,
            note=f"{usable} distinct sqrt(KL) value(s): at least 3 are needed",
        )
    try:
        import numpy as np
        from scipy.optimize import curve_fit
    except ImportError:
        return CurveFit(
            grader=grader,
            form="rl" if form == "rl" else "bon",
            alpha=None,
            beta=None,
            peak_sqrt_kl=None,
            n_points=len(points),
            rmse=None,
            note=f"scipy is not installed ({install_command('stats')})",
        )
    xs = np.array([x for x, _ in points])
    ys = np.array([y for _, y in points])
    curve = _gao(form)
    try:
        (alpha, beta), _ = curve_fit(curve, xs, ys, p0=(1.0, 0.1), maxfev=20000)
    except (RuntimeError, ValueError) as exc:
        return CurveFit(
            grader=grader,
            form="rl" if form == "rl" else "bon",
            alpha=None,
            beta=None,
            peak_sqrt_kl=None,
            n_points=len(points),
            rmse=None,
            note=f"the fit did not converge ({exc})",
        )
    rmse = float(np.sqrt(np.mean((curve(xs, alpha, beta) - ys) ** 2)))
    peak: float | None = None
    if beta > 0:
        peak = float(alpha / (2 * beta)) if form == "rl" else float(math.exp(alpha / beta - 1))
        if peak <= 0:
            peak = None
    return CurveFit(
        grader=grader,
        form="rl" if form == "rl" else "bon",
        alpha=float(alpha),
        beta=float(beta),
        peak_sqrt_kl=peak,
        n_points=len(points),
        rmse=rmse,
    )


def build_overoptimization(run_dir: str | Path, *, form: str = "rl") -> OveroptimizationReport:
    """The report of one phase folder, from its ``validation.jsonl``.

    Raises:
        TrainingError: No ``validation.jsonl`` in ``run_dir``.
    """
    from crystalbench.training.config import TrainingError

    run_dir = Path(run_dir)
    log = run_dir / "validation.jsonl"
    if not log.is_file():
        raise TrainingError(f"no validation.jsonl in {run_dir}: nothing to report")
    records = {int(row["step"]): row["metrics"] for _, row in read_jsonl(log)}
    steps = sorted(records)
    notes: list[str] = []
    graders = sorted({k for m in records.values() for k in m if k.startswith("heldout/")})
    if not graders:
        graders = ["accuracy"]
        notes.append(
            "no held-out graders configured (heldout: in the config): validation accuracy "
            "stands in; it is not independent of an answer reward"
        )
    with_kl = all("sqrt_kl" in records[s] for s in steps)
    if not with_kl:
        notes.append("no sqrt(KL) recorded (evaluation.kl: true): the x axis is the step")
    rows = []
    for step in steps:
        metrics = records[step]
        folder = run_dir / f"checkpoint-{step}"
        rows.append(
            OveroptimizationRow(
                step=step,
                checkpoint=str(folder) if folder.is_dir() else None,
                proxy=_number(metrics.get("proxy")),
                graders={g: v for g in graders if (v := _number(metrics.get(g))) is not None},
                sqrt_kl=_number(metrics.get("sqrt_kl")),
            )
        )
    fits = []
    if with_kl and rows:
        start = rows[0]
        if start.sqrt_kl is not None and start.sqrt_kl > 1e-3:
            notes.append(
                "the first validation is not the initial policy (evaluation.at_start: true "
                "adds it): gains are measured from the first validated step"
            )
        for grader in ["proxy", *graders]:
            base = start.proxy if grader == "proxy" else start.graders.get(grader)
            pairs = [
                (row.sqrt_kl, value - base)
                for row in rows
                if base is not None
                and row.sqrt_kl is not None
                and (value := row.proxy if grader == "proxy" else row.graders.get(grader))
                is not None
            ]
            fits.append(
                fit_gao_curve(
                    [p[0] for p in pairs], [p[1] for p in pairs], grader=grader, form=form
                )
            )
    peak_step: dict[str, int] = {}
    for grader in graders:
        scored = [(row.graders[grader], -row.step) for row in rows if grader in row.graders]
        if scored:
            peak_step[grader] = -max(scored)[1]
    means = [
        (sum(row.graders.values()) / len(row.graders), -row.step) for row in rows if row.graders
    ]
    if means:
        peak_step["mean"] = -max(means)[1]
    return OveroptimizationReport(
        run_dir=str(run_dir),
        x_axis="sqrt_kl" if with_kl else "step",
        graders=graders,
        rows=rows,
        fits=fits,
        peak_step=peak_step,
        notes=notes,
    )


def _number(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def render_overoptimization(report: OveroptimizationReport) -> str:
    """The report as Markdown tables.

    Examples:
        >>> row = OveroptimizationRow(step=0, checkpoint=None, proxy=0.1,
        ...                           graders={"heldout/f1": 0.2}, sqrt_kl=0.0)
        >>> report = OveroptimizationReport(run_dir="r", x_axis="sqrt_kl",
        ...     graders=["heldout/f1"], rows=[row], fits=[], peak_step={"heldout/f1": 0},
        ...     notes=[])
        >>> print(render_overoptimization(report).splitlines()[4])
        | 0 | - | 0.0000 | 0.1000 | 0.2000 |
    """
    lines = [
        f"# Over-optimization: {report.run_dir}",
        "",
        "| step | checkpoint | sqrt(KL) | proxy | " + " | ".join(report.graders) + " |",
        "|" + "---|" * (4 + len(report.graders)),
    ]
    for row in report.rows:
        checkpoint = Path(row.checkpoint).name if row.checkpoint else "-"
        cells = " | ".join(_cell(row.graders.get(g)) for g in report.graders)
        lines.append(
            f"| {row.step} | {checkpoint} | {_cell(row.sqrt_kl)} | {_cell(row.proxy)} | {cells} |"
        )
    if report.fits:
        lines += [
            "",
            "Fitted gain over the start, R(d) = d (alpha - beta d) (Gao et al., RL form):",
            "",
            "| grader | alpha | beta | peak sqrt(KL) | points | rmse | note |",
            "|---|---|---|---|---|---|---|",
        ]
        for fit in report.fits:
            lines.append(
                f"| {fit.grader} | {_cell(fit.alpha)} | {_cell(fit.beta)} | "
                f"{_cell(fit.peak_sqrt_kl)} | {fit.n_points} | {_cell(fit.rmse)} | {fit.note} |"
            )
    if report.peak_step:
        lines += ["", "Held-out graders peak at:", ""]
        lines += [f"- {name}: step {step}" for name, step in report.peak_step.items()]
    if report.notes:
        lines += ["", *[f"Note: {note}." for note in report.notes]]
    return "\n".join(lines) + "\n"


_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")


def render_svg(report: OveroptimizationReport, *, width: int = 640, height: int = 400) -> str:
    """Gains over the start against sqrt(KL) (or the step): points, fitted curves, the peak."""
    left, right, top, bottom = 60, 170, 30, 50
    series: dict[str, list[tuple[float, float]]] = {}
    for name in ["proxy", *report.graders]:
        points = []
        base = None
        for row in report.rows:
            x = row.sqrt_kl if report.x_axis == "sqrt_kl" else float(row.step)
            value = row.proxy if name == "proxy" else row.graders.get(name)
            if x is None or value is None:
                continue
            base = value if base is None else base
            points.append((x, value - base))
        series[name] = points
    xs = [x for points in series.values() for x, _ in points] or [0.0, 1.0]
    ys = [y for points in series.values() for _, y in points] or [0.0, 1.0]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1.0
    y0, y1 = min([*ys, 0.0]), max([*ys, 0.0])
    if y1 - y0 < 1e-9:
        y0, y1 = y0 - 0.5, y1 + 0.5

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * (width - left - right)

    def py(y: float) -> float:
        return top + (y1 - y) / (y1 - y0) * (height - top - bottom)

    label = "sqrt(KL) to the initial policy" if report.x_axis == "sqrt_kl" else "step"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<line x1="{left}" y1="{py(0):.1f}" x2="{width - right}" y2="{py(0):.1f}" stroke="#bbb"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" '
        f'y2="{height - bottom}" stroke="black"/>',
        f'<text x="{(left + width - right) / 2:.0f}" y="{height - 15}" '
        f'text-anchor="middle">{label}</text>',
        f'<text x="15" y="{(top + height - bottom) / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 15 {(top + height - bottom) / 2:.0f})">gain over the start</text>',
        f'<text x="{left}" y="{height - bottom + 15}">{x0:.3g}</text>',
        f'<text x="{width - right}" y="{height - bottom + 15}" text-anchor="end">{x1:.3g}</text>',
        f'<text x="{left - 5}" y="{py(y1) + 4:.1f}" text-anchor="end">{y1:.3g}</text>',
        f'<text x="{left - 5}" y="{py(y0) + 4:.1f}" text-anchor="end">{y0:.3g}</text>',
    ]
    fits = {fit.grader: fit for fit in report.fits}
    for index, (name, points) in enumerate(series.items()):
        colour = _COLOURS[index % len(_COLOURS)]
        if points:
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}"/>')
            out += [
                f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>'
                for x, y in points
            ]
        fit = fits.get(name)
        if fit is not None and fit.alpha is not None and fit.beta is not None:
            curve = _gao(fit.form)
            grid = [x0 + (x1 - x0) * i / 50 for i in range(51)]
            fitted = [(x, float(curve(x, fit.alpha, fit.beta))) for x in grid]
            fitted = [(x, min(max(y, y0), y1)) for x, y in fitted]
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in fitted)
            out.append(
                f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-dasharray="4 3"/>'
            )
        out.append(
            f'<text x="{width - right + 10}" y="{top + 15 * index + 10}" fill="{colour}">'
            f"{_escape(name)}{' (fitted: dashed)' if name in fits else ''}</text>"
        )
    peak = report.peak_step.get("mean")
    if peak is not None:
        row = next(r for r in report.rows if r.step == peak)
        x = row.sqrt_kl if report.x_axis == "sqrt_kl" else float(row.step)
        if x is not None:
            out.append(
                f'<line x1="{px(x):.1f}" y1="{top}" x2="{px(x):.1f}" y2="{height - bottom}" '
                'stroke="#444" stroke-dasharray="2 2"/>'
            )
            out.append(
                f'<text x="{px(x) + 3:.1f}" y="{top + 10}">held-out peak: step {peak}</text>'
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write_overoptimization_report(
    run_dir: str | Path, *, form: str = "rl"
) -> OveroptimizationReport | None:
    """Write ``overoptimization.json``, ``.md`` and ``.svg`` into ``run_dir``.

    Returns ``None`` (and writes nothing) when the folder has no ``validation.jsonl``.
    """
    run_dir = Path(run_dir)
    if not (run_dir / "validation.jsonl").is_file():
        return None
    report = build_overoptimization(run_dir, form=form)
    atomic_write_text(
        run_dir / f"{REPORT_STEM}.json", json.dumps(report.model_dump(mode="json"), indent=2)
    )
    atomic_write_text(run_dir / f"{REPORT_STEM}.md", render_overoptimization(report))
    atomic_write_text(run_dir / f"{REPORT_STEM}.svg", render_svg(report))
    return report
