"""Rendering of the validation results: Markdown, CSV, LaTeX and self-contained HTML pages.

Rendering only: every number comes from an :class:`~.agreement.AgreementReport`, an
:class:`~.ablation.AblationReport` or a :class:`~.panel.PanelReport`. Charts are inline SVG
(:mod:`.svg`); the pages load nothing from elsewhere.
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Sequence
from pathlib import Path

from crystalbench._internal.io import atomic_write_json, atomic_write_text
from crystalbench.defaults import VALIDATION_BAND_EDGES
from crystalbench.metrics import METRICS, format_value
from crystalbench.metrics import metric as metric_by_key
from crystalbench.statistics.agreement import RaterAgreement
from crystalbench.validation import svg
from crystalbench.validation.ablation import AblationReport
from crystalbench.validation.agreement import AgreementReport, GroupAgreement
from crystalbench.validation.panel import ENSEMBLE, PanelReport

PAPER_TABLE3: tuple[tuple[str, int, float], ...] = (
    ("<0.20", 33, 1.0),
    ("[0.20,0.35)", 14, 1.0),
    ("[0.35,0.50)", 19, 0.684),
    ("[0.50,0.70)", 25, 0.64),
    (">=0.70", 9, 0.889),
)
"""The paper's Table 3 (band, pairs, agreement), shown beside ours with the default bands."""

_CSS = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:64rem;padding:0 1rem;
color:#222;line-height:1.45}
table{border-collapse:collapse;margin:0.8rem 0 1.4rem}
th,td{border-bottom:1px solid #ddd;padding:0.3rem 0.7rem;text-align:right}
th:first-child,td:first-child{text-align:left}
th{background:#f4f6f8}
.note{color:#555;font-size:0.92rem}
figure{margin:1rem 0 1.6rem}
code{background:#f4f6f8;padding:0 0.2rem}
.grid{display:flex;flex-wrap:wrap;gap:0 1.5rem}
"""


def display_band(label: str) -> str:
    """``[0.20,0.35)`` as the paper prints it: ``[0.20, 0.35)``; ``>=0.70`` as ``≥ 0.70``.

    Examples:
        >>> display_band("<0.20"), display_band("[0.20,0.35)"), display_band(">=0.70")
        ('< 0.20', '[0.20, 0.35)', '≥ 0.70')
    """
    if label.startswith(">="):
        return "≥ " + label[2:]
    if label.startswith("<"):
        return "< " + label[1:]
    return label.replace(",", ", ")


def _pct(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{100 * value:.{digits}f}%"


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _alpha_text(h: RaterAgreement) -> str:
    """Alpha with its bootstrap interval, and what the statistics left out as missing."""
    text = _num(h.krippendorff_alpha)
    interval = h.alpha_interval
    if h.krippendorff_alpha is not None and interval is not None:
        text += f" [{_num(interval.low)}, {_num(interval.high)}]"
    return text


def _abstained_text(h: RaterAgreement) -> str:
    return f" ({h.n_abstained} unsure: missing values)" if h.n_abstained else ""


def _range(low: float | None, high: float | None, *, pct: bool) -> str:
    if low is None or high is None:
        return "n/a"
    if pct:
        return f"[{100 * low:.1f}, {100 * high:.1f}]"
    return f"[{low:.3f}, {high:.3f}]"


def _kappa_text(group: GroupAgreement) -> str:
    text = _num(group.cohen_kappa)
    interval = group.kappa_interval
    if group.cohen_kappa is not None and interval is not None:
        text += " " + _range(interval.low, interval.high, pct=False)
    return text


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def clean(cell: str) -> str:
        return cell.replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(clean(c) for c in row) + " |" for row in rows]
    return out


# --------------------------------------------------------------------------- agreement


def _table3_rows(report: AgreementReport) -> tuple[list[str], list[list[str]]]:
    header = [
        "Cosine similarity band",
        "Step pairs",
        "Agreement with human judgment",
        f"{100 * report.confidence:g}% CI (Wilson)",
        "Cohen's kappa",
        "False positives",
        "False negatives",
    ]
    rows = []
    for group in [*report.by_band, report.overall]:
        interval = group.agreement_interval
        rows.append(
            [
                "Overall" if group.band == "all" else display_band(group.band),
                str(group.n),
                _pct(group.agreement),
                _range(interval.low, interval.high, pct=True),
                _kappa_text(group),
                str(group.false_positives),
                str(group.false_negatives),
            ]
        )
    return header, rows


def _matcher_rows(report: AgreementReport) -> tuple[list[str], list[list[str]]]:
    header = [
        "Matcher",
        "Pairs",
        "Agreement",
        "Cohen's kappa [CI]",
        "False positives",
        "False negatives",
        "Undecided",
    ]
    rows = [
        [
            m.matcher,
            str(m.overall.n),
            _pct(m.overall.agreement),
            _kappa_text(m.overall),
            str(m.overall.false_positives),
            str(m.overall.false_negatives),
            str(m.n_undecided),
        ]
        for m in report.matchers
    ]
    return header, rows


def _matcher_band_rows(
    report: AgreementReport, *, code: bool = False
) -> tuple[list[str], list[list[str]]]:
    """Every matcher against the same labels, band by band (one row per band and matcher;
    ``code``: matcher names as Markdown code)."""
    header = ["Cosine band", "Matcher", "Pairs", "Agreement", "Cohen's kappa", "FP", "FN"]
    rows = []
    for index, band in enumerate(report.by_band):
        for m in report.matchers:
            group = m.by_band[index]
            rows.append(
                [
                    display_band(band.band),
                    f"`{m.matcher}`" if code else m.matcher,
                    str(group.n),
                    _pct(group.agreement),
                    _num(group.cohen_kappa),
                    str(group.false_positives),
                    str(group.false_negatives),
                ]
            )
    return header, rows


def agreement_markdown(report: AgreementReport) -> str:
    """The agreement in the paper's Table 3 layout, then every matcher, people and tau."""
    o = report.overall
    lines = [
        "# Evaluator validation: agreement with human judgment",
        "",
        f"Matcher `{report.primary}` against the final human label of {report.n_resolved} "
        f"pairs ({report.n_pairs} in the pairs file, {report.n_labelled} labelled, "
        f"{report.n_unresolved} without a final label, {report.n_unlabelled} not labelled).",
        "",
    ]
    header, rows = _table3_rows(report)
    lines += _md_table(header, rows)
    disagreements = o.false_positives + o.false_negatives
    lines += [
        "",
        f"Disagreements: {disagreements} ({o.false_positives} false positives: the matcher "
        f"says match, people say no; {o.false_negatives} false negatives).",
        "",
        f"{report.kappa_definition} Kappa intervals: percentile bootstrap over pairs "
        f"({report.n_resamples} resamples, seed {report.seed}); n/a where one class only.",
        "",
        "## Every matcher",
        "",
    ]
    header, rows = _matcher_rows(report)
    lines += _md_table(header, rows)
    lines += ["", *[f"- `{m.matcher}`: {m.description}" for m in report.matchers], ""]
    if len(report.matchers) > 1:
        lines += ["### Every matcher by cosine band", ""]
        header, rows = _matcher_band_rows(report, code=True)
        lines += _md_table(header, rows)
        lines.append("")
    h = report.humans
    lines += ["## People with each other (the ceiling)", ""]
    if h.note:
        lines += [h.note + ".", ""]
    lines += [
        f"Annotators: {', '.join(h.annotators) or 'none'}; {h.n_labels} labels"
        f"{_abstained_text(h)}; {h.n_multiply_labelled} pairs labelled by two or more. "
        f"Krippendorff's alpha (nominal): {_alpha_text(h)}; mean pairwise Cohen's kappa: "
        f"{_num(h.mean_pairwise_kappa)}.",
        "",
    ]
    if h.pairwise:
        lines += _md_table(
            ["Annotator", "Annotator", "Pairs", "Agreement", "Cohen's kappa"],
            [[p.a, p.b, str(p.n), _pct(p.agreement), _num(p.cohen_kappa)] for p in h.pairwise],
        )
        lines.append("")
    primary = report.matchers[0]
    if primary.by_annotator:
        lines += ["Each annotator against the matcher:", ""]
        lines += _md_table(
            ["Annotator", "Pairs", "Agreement", "Cohen's kappa"],
            [[p.b, str(p.n), _pct(p.agreement), _num(p.cohen_kappa)] for p in primary.by_annotator],
        )
        lines.append("")
    t = report.threshold_search
    lines += [
        "## The threshold that agrees best with people",
        "",
        f"tau = {_num(t.best_threshold, 2)} gives the highest kappa, {_num(t.best_kappa)} "
        f"({100 * report.confidence:g}% bootstrap interval of that tau: "
        f"{_range(t.low, t.high, pct=False)}, {t.n_resamples} resamples); tau = "
        f"{report.threshold:g} gives {_num(o.cohen_kappa)}.",
        "",
        '## Calibration: share of human "match" by cosine',
        "",
    ]
    lines += _md_table(
        ["Cosine", "Pairs", "Human match", f"{100 * report.confidence:g}% CI (Wilson)"],
        [
            [
                f"[{b.low:.1f}, {b.high:.1f})",
                str(b.n),
                _pct(b.human_match.estimate),
                _range(b.human_match.low, b.human_match.high, pct=True),
            ]
            for b in report.calibration
        ],
    )
    return "\n".join(lines) + "\n"


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{body}</body></html>\n"
    )


def _md_paragraphs_to_html(text: str) -> str:
    return "".join(f"<p class='note'>{html.escape(p)}</p>" for p in text.split("\n\n") if p)


def agreement_charts(report: AgreementReport) -> dict[str, str]:
    """The SVG charts of the agreement page, by name."""
    bands = report.by_band
    paper = None
    if tuple(report.bands) == VALIDATION_BAND_EDGES:
        paper = [row[2] for row in PAPER_TABLE3]
    charts = {
        "agreement_by_band": svg.bars(
            [display_band(b.band) for b in bands],
            [b.agreement for b in bands],
            [(b.agreement_interval.low, b.agreement_interval.high) for b in bands],
            title=f"Agreement with people by cosine band ({report.primary})",
            y_label="agreement",
            reference=paper,
            reference_label="paper, Table 3",
            counts=[b.n for b in bands],
        ),
    }
    points = [((b.low + b.high) / 2, b.human_match.estimate) for b in report.calibration]
    intervals = [
        ((b.low + b.high) / 2, b.human_match.low, b.human_match.high)
        for b in report.calibration
        if b.human_match.low is not None and b.human_match.high is not None
    ]
    charts["calibration"] = svg.line_plot(
        [("share of human match", points, svg.BLUE)],
        title="Calibration: share of pairs people call a match, by cosine",
        x_label="cosine",
        y_label="human match",
        bands=intervals,
        markers=[(report.threshold, f"tau {report.threshold:g}")],
    )
    search = report.threshold_search
    curve = [(p.threshold, p.cohen_kappa) for p in search.curve]
    finite = [k for _, k in curve if k is not None]
    low = min([0.0, *finite])
    markers = [(report.threshold, f"tau {report.threshold:g}")]
    if search.best_threshold is not None:
        markers.append((search.best_threshold, f"best {search.best_threshold:g}"))
    shade = (
        (search.low, search.high) if search.low is not None and search.high is not None else None
    )
    charts["kappa_by_threshold"] = svg.line_plot(
        [
            ("Cohen's kappa", curve, svg.BLUE),
            ("agreement", [(p.threshold, p.agreement) for p in search.curve], svg.GREY),
        ],
        title="Agreement and kappa of the cosine test by threshold",
        x_label="tau",
        y_label="value",
        y_range=(low, 1.0),
        markers=markers,
        shade=shade,
    )
    return charts


def agreement_html(report: AgreementReport) -> str:
    """The agreement page: tables and charts, self-contained."""
    charts = agreement_charts(report)
    header, rows = _table3_rows(report)
    m_header, m_rows = _matcher_rows(report)
    markdown = agreement_markdown(report)
    h = report.humans
    parts = [
        f"<p>Matcher <code>{html.escape(report.primary)}</code> against the final human label "
        f"of {report.n_resolved} pairs ({report.n_pairs} in the pairs file, "
        f"{report.n_unresolved} without a final label, {report.n_unlabelled} not labelled). "
        f"Labels: {html.escape(report.labels.path)} ({html.escape(report.labels.kind)}).</p>",
        "<h2>Agreement by cosine band (the paper's Table 3)</h2>",
        _html_table(header, rows),
        f"<figure>{charts['agreement_by_band']}</figure>",
        _md_paragraphs_to_html(report.kappa_definition),
        "<h2>Every matcher</h2>",
        _html_table(m_header, m_rows),
        "<ul>"
        + "".join(
            f"<li><code>{html.escape(m.matcher)}</code>: {html.escape(m.description)}</li>"
            for m in report.matchers
        )
        + "</ul>",
        *(
            ["<h3>Every matcher by cosine band</h3>", _html_table(*_matcher_band_rows(report))]
            if len(report.matchers) > 1
            else []
        ),
        "<h2>People with each other (the ceiling)</h2>",
        f"<p>{html.escape(h.note or '')} Krippendorff's alpha (nominal): "
        f"{_alpha_text(h)}; mean pairwise Cohen's kappa: "
        f"{_num(h.mean_pairwise_kappa)}; {h.n_multiply_labelled} pairs labelled by two or "
        f"more; {h.n_labels} labels{html.escape(_abstained_text(h))}.</p>",
    ]
    if h.pairwise:
        parts.append(
            _html_table(
                ["Annotator", "Annotator", "Pairs", "Agreement", "Cohen's kappa"],
                [[p.a, p.b, str(p.n), _pct(p.agreement), _num(p.cohen_kappa)] for p in h.pairwise],
            )
        )
    t = report.threshold_search
    parts += [
        "<h2>The threshold that agrees best with people</h2>",
        f"<p>tau = {_num(t.best_threshold, 2)} gives the highest kappa ({_num(t.best_kappa)}); "
        f"{100 * report.confidence:g}% bootstrap interval of that tau: "
        f"{_range(t.low, t.high, pct=False)} (shaded).</p>",
        f"<figure>{charts['kappa_by_threshold']}</figure>",
        "<h2>Calibration</h2>",
        f"<figure>{charts['calibration']}</figure>",
        "<details><summary>Markdown</summary><pre>" + html.escape(markdown) + "</pre></details>",
    ]
    return _page("Evaluator validation: agreement with people", "".join(parts))


def write_agreement(report: AgreementReport, out_dir: str | Path) -> dict[str, Path]:
    """Write ``agreement.json``, ``agreement.md``, ``agreement.html`` and the chart SVGs."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": folder / "agreement.json",
        "md": folder / "agreement.md",
        "html": folder / "agreement.html",
    }
    atomic_write_json(paths["json"], report.model_dump(mode="json"))
    atomic_write_text(paths["md"], agreement_markdown(report))
    atomic_write_text(paths["html"], agreement_html(report))
    for name, chart in agreement_charts(report).items():
        paths[name] = folder / f"{name}.svg"
        atomic_write_text(paths[name], chart + "\n")
    return paths


# --------------------------------------------------------------------------- ablation


def _grid_values(report: AblationReport, value: str) -> list[list[float | None]]:
    cells = {(c.encoder, c.threshold): c for c in report.cells}
    out = []
    for encoder in report.encoders:
        row: list[float | None] = []
        for tau in report.thresholds:
            cell = cells[(encoder.label, tau)]
            row.append(cell.mean_match_f1 if value == "mean_f1" else cell.kendall_tau)
        out.append(row)
    return out


def ablation_charts(report: AblationReport) -> dict[str, str]:
    """Heatmaps: mean Match F1, Kendall's tau-b against the default cell, each model's F1."""
    rows = [e.label for e in report.encoders]
    columns = [f"{t:g}" for t in report.thresholds]
    charts = {
        "ablation_f1": svg.heatmap(
            rows,
            columns,
            _grid_values(report, "mean_f1"),
            title=f"Mean Match F1 over {len(report.models)} models",
            row_title="encoder",
            column_title="threshold tau",
        ),
        "ablation_kendall": svg.heatmap(
            rows,
            columns,
            _grid_values(report, "tau"),
            title=(
                f"Kendall's tau-b of the model ranking vs {report.default_encoder} at "
                f"{report.default_threshold:g}"
            ),
            row_title="encoder",
            column_title="threshold tau",
            digits=2,
            low=-1.0,
            high=1.0,
        ),
    }
    cells = {(c.encoder, c.threshold): c for c in report.cells}
    for index, model in enumerate(report.models):
        values = [
            [cells[(e.label, t)].match_f1[model] for t in report.thresholds]
            for e in report.encoders
        ]
        charts[f"model_{index}"] = svg.heatmap(
            rows,
            columns,
            values,
            title=f"Match F1: {model}",
            row_title="encoder",
            column_title="threshold tau",
            low=0.0,
            high=1.0,
        )
    return charts


def ablation_markdown(report: AblationReport) -> str:
    """The paper's comparison (mean F1 per encoder), ranking stability, every cell."""
    header = ["Encoder", "Mean Match F1", *[f"tau {t:g}" for t in report.thresholds]]
    rows = [
        [
            e.label,
            f"{report.mean_f1_by_encoder[e.label]:.3f}",
            *[f"{report.mean_f1_by_threshold[e.label][f'{t:g}']:.3f}" for t in report.thresholds],
        ]
        for e in report.encoders
    ]
    lines = [
        "# Encoder x threshold ablation",
        "",
        f"{len(report.encoders)} encoders x {len(report.thresholds)} thresholds x "
        f"{len(report.models)} models on {report.benchmark} ({report.n_items} items). "
        f"Default cell: {report.default_encoder} at tau {report.default_threshold:g}."
        + (
            f" Fact guards: {', '.join(report.guards)} (one row per encoder and guard, "
            "ENCODER+GUARD; not in the paper)."
            if len(report.guards) > 1
            else ""
        ),
        "",
        "## Mean Match F1 per encoder (over models and thresholds)",
        "",
        *_md_table(header, rows),
        "",
        "## Ranking stability: Kendall's tau-b against the default cell",
        "",
    ]
    tau_rows = [
        [e.label, *[_num(v, 2) for v in values]]
        for e, values in zip(report.encoders, _grid_values(report, "tau"), strict=True)
    ]
    lines += _md_table(["Encoder", *[f"tau {t:g}" for t in report.thresholds]], tau_rows)
    lines += [
        "",
        f"Lowest tau-b: {_num(report.min_kendall_tau, 2)}; {report.n_cells_same_ranking} of "
        f"{len(report.cells)} cells rank the models exactly as the default cell.",
        "",
        "## Match F1 of every model in every cell",
        "",
    ]
    header = ["Encoder", "tau", *report.models, "Kendall tau-b", "Spearman rho"]
    rows = [
        [
            c.encoder,
            f"{c.threshold:g}",
            *[f"{c.match_f1[m]:.3f}" for m in report.models],
            _num(c.kendall_tau, 2),
            _num(c.spearman_rho, 2),
        ]
        for c in report.cells
    ]
    lines += _md_table(header, rows)
    lines += ["", "## Encoders", ""]
    lines += _md_table(
        ["Encoder", "Name", "Identity", "Encoded", "From cache", "Forward s", "Scoring s"],
        [
            [
                e.label,
                e.name,
                e.identity,
                str(e.encoded),
                str(e.cache_hits),
                f"{e.encode_seconds:.1f}",
                f"{e.score_seconds:.1f}",
            ]
            for e in report.encoders
        ],
    )
    if report.failures:
        lines += ["", "Prediction sets that failed: " + "; ".join(report.failures)]
    return "\n".join(lines) + "\n"


def ablation_csv(report: AblationReport) -> str:
    """One row per (encoder, threshold, model): every metric, the rank and the cell's tau-b."""
    keys = [m.key for m in METRICS]
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["encoder", "threshold", "model", *keys, "rank", "kendall_tau", "spearman_rho"])
    for cell in report.cells:
        for model in report.models:
            values = cell.metrics[model]
            writer.writerow(
                [
                    cell.encoder,
                    f"{cell.threshold:g}",
                    model,
                    *[repr(values[key]) for key in keys],
                    cell.ranking.index(model) + 1,
                    "" if cell.kendall_tau is None else repr(cell.kendall_tau),
                    "" if cell.spearman_rho is None else repr(cell.spearman_rho),
                ]
            )
    return buffer.getvalue()


def ablation_latex(report: AblationReport) -> str:
    """A booktabs table: Match F1 of every model per (encoder, tau), and tau-b."""
    from crystalbench.report.leaderboard import latex_escape

    match_f1 = metric_by_key("match_f1")
    columns = "ll" + "r" * (len(report.models) + 1)
    lines = [
        "% requires \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
        "\\small",
        f"\\begin{{tabular}}{{{columns}}}",
        "\\toprule",
        " & ".join(
            ["Encoder", "$\\tau$", *(latex_escape(m) for m in report.models), "Kendall $\\tau_b$"]
        )
        + " \\\\",
        "\\midrule",
    ]
    previous = None
    for cell in report.cells:
        if previous is not None and cell.encoder != previous:
            lines.append("\\midrule")
        best = max(cell.match_f1.values())
        values = []
        for model in report.models:
            text = format_value(cell.match_f1[model], match_f1.number_format)
            values.append(f"\\textbf{{{text}}}" if cell.match_f1[model] == best else text)
        lines.append(
            " & ".join(
                [
                    latex_escape(cell.encoder) if cell.encoder != previous else "",
                    f"{cell.threshold:g}",
                    *values,
                    _num(cell.kendall_tau, 2),
                ]
            )
            + " \\\\"
        )
        previous = cell.encoder
    lines += [
        "\\bottomrule",
        "\\end{tabular}",
        "\\caption{Match F1 by encoder and threshold; Kendall's $\\tau_b$ of the model ranking "
        f"against {latex_escape(report.default_encoder)} at "
        f"$\\tau = {report.default_threshold:g}$.}}",
        "\\label{tab:crystal-ablation}",
        "\\end{table}",
    ]
    return "\n".join(lines) + "\n"


def ablation_html(report: AblationReport) -> str:
    """The ablation page: heatmaps and tables, self-contained."""
    charts = ablation_charts(report)
    markdown = ablation_markdown(report)
    header = ["Encoder", "Mean Match F1", *[f"tau {t:g}" for t in report.thresholds]]
    rows = [
        [
            e.label,
            f"{report.mean_f1_by_encoder[e.label]:.3f}",
            *[f"{report.mean_f1_by_threshold[e.label][f'{t:g}']:.3f}" for t in report.thresholds],
        ]
        for e in report.encoders
    ]
    per_model = "".join(
        f"<figure>{charts[f'model_{k}']}</figure>" for k in range(len(report.models))
    )
    body = (
        f"<p>{len(report.encoders)} encoders x {len(report.thresholds)} thresholds x "
        f"{len(report.models)} models on {html.escape(report.benchmark)} ({report.n_items} items). "
        f"Default cell: {html.escape(report.default_encoder)} at tau "
        f"{report.default_threshold:g}. Lowest Kendall tau-b: {_num(report.min_kendall_tau, 2)}; "
        f"{report.n_cells_same_ranking} of {len(report.cells)} cells keep the default ranking.</p>"
        "<h2>Mean Match F1 per encoder</h2>"
        + _html_table(header, rows)
        + f"<figure>{charts['ablation_f1']}</figure>"
        + "<h2>Ranking stability</h2>"
        + f"<figure>{charts['ablation_kendall']}</figure>"
        + "<h2>Each model</h2>"
        + f"<div class='grid'>{per_model}</div>"
        + "<details><summary>All tables (Markdown)</summary><pre>"
        + html.escape(markdown)
        + "</pre></details>"
    )
    return _page("Encoder x threshold ablation", body)


def write_ablation(report: AblationReport, out_dir: str | Path) -> dict[str, Path]:
    """Write ``ablation.json``, ``.md``, ``.csv``, ``.tex``, ``.html`` and the heatmap SVGs."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {kind: folder / f"ablation.{kind}" for kind in ("json", "md", "csv", "tex", "html")}
    atomic_write_json(paths["json"], report.model_dump(mode="json"))
    atomic_write_text(paths["md"], ablation_markdown(report))
    atomic_write_text(paths["csv"], ablation_csv(report))
    atomic_write_text(paths["tex"], ablation_latex(report))
    atomic_write_text(paths["html"], ablation_html(report))
    charts = ablation_charts(report)
    for name in ("ablation_f1", "ablation_kendall"):
        paths[name] = folder / f"{name}.svg"
        atomic_write_text(paths[name], charts[name] + "\n")
    return paths


# --------------------------------------------------------------------------- the grader panel


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _p(value: float | None) -> str:
    """A p-value: three decimals, ``<0.001`` below (a bootstrap's floor is 1 / (1 + B))."""
    if value is None:
        return "n/a"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def panel_metric_rows(report: PanelReport) -> tuple[list[str], list[list[str]]]:
    """The panel's main table: one row per model, one column per grader (the ensemble
    last), each cell the model's metric and its rank under that grader."""
    spec = metric_by_key(report.metric)
    labels = [g.label for g in report.graders]
    rows = [
        [
            model,
            *[
                f"{format_value(report.metrics[g][model][report.metric], spec.number_format)} "
                f"({report.rankings[g].index(model) + 1})"
                for g in labels
            ],
        ]
        for model in report.models
    ]
    return ["Model", *labels], rows


def panel_agreement_rows(report: PanelReport) -> tuple[list[str], list[list[str]]]:
    """Kendall's tau-b of every two graders' rankings, with its interval over items."""
    pct = f"{100 * report.confidence:g}"
    rows = [
        [
            a.first,
            a.second,
            _num(a.kendall_tau, 2),
            _range(a.low, a.high, pct=False) if a.kendall_tau is not None else "n/a",
            _p(a.p_value),
        ]
        for a in report.agreement
    ]
    return ["Grader", "Grader", "Kendall tau-b", f"{pct}% interval (items)", "p"], rows


def panel_gain_rows(report: PanelReport) -> tuple[list[str], list[list[str]]]:
    """The treated run's gain over the baseline under every grader (paired runs only)."""
    paired = report.paired
    if paired is None:
        return [], []
    pct = f"{100 * report.confidence:g}"
    rows = [
        [
            g.grader + (" (training)" if g.grader == paired.training_grader else ""),
            f"{g.baseline:.3f}",
            f"{g.treated:.3f}",
            f"{g.gain:+.3f}",
            _range(g.low, g.high, pct=False),
            _p(g.p_value),
            _share(g.confirmed_share),
        ]
        for g in paired.gains
    ]
    header = [
        "Grader",
        paired.baseline,
        paired.treated,
        "Gain",
        f"{pct}% interval (paired)",
        "p",
        "Share of the training gain",
    ]
    return header, rows


def panel_markdown(report: PanelReport) -> str:
    """Every model's metric per grader with ranks, tau-b between the graders, the paired
    gains and what each grader cost."""
    spec = metric_by_key(report.metric)
    n_graders = sum(1 for g in report.graders if g.encoder != ENSEMBLE)
    lines = [
        "# Grader panel",
        "",
        f"{n_graders} graders x {len(report.models)} models on {report.benchmark} "
        f"({report.n_items} items); rankings, tau-b and gains by {spec.header}. Intervals: "
        f"{100 * report.confidence:g}% percentile bootstrap over items, {report.n_resamples} "
        f"resamples, seed {report.seed}."
        + (
            " `min` is the conservative ensemble: per item, the lowest value any grader gives."
            if any(g.encoder == ENSEMBLE for g in report.graders)
            else ""
        ),
        "",
        f"## {spec.header} per grader (rank)",
        "",
        *_md_table(*panel_metric_rows(report)),
        "",
        "## Agreement of the rankings",
        "",
        *_md_table(*panel_agreement_rows(report)),
    ]
    if report.paired is not None:
        paired = report.paired
        held = _share(paired.held_out_share)
        lines += [
            "",
            f"## Gain of {paired.treated} over {paired.baseline}",
            "",
            *_md_table(*panel_gain_rows(report)),
            "",
            f"Training grader: {paired.training_grader}. Every held-out grader confirms at "
            f"least {held} of its gain; {paired.n_held_out_significant} held-out grader(s) "
            "find a gain whose interval lies above 0.",
        ]
    lines += ["", "## Every metric per grader", ""]
    keys = [m.key for m in METRICS]
    formats = {m.key: m.number_format for m in METRICS}
    for grader in report.graders:
        lines += [f"### {grader.label}", ""]
        lines += _md_table(
            ["Model", *[metric_by_key(k).header for k in keys]],
            [
                [
                    model,
                    *[
                        format_value(report.metrics[grader.label][model][k], formats[k])
                        for k in keys
                    ],
                ]
                for model in report.models
            ],
        )
        lines.append("")
    lines += ["## Graders", ""]
    lines += _md_table(
        ["Grader", "Encoder", "Identity", "tau", "Guard", "Matcher", "Encoded", "From cache", "s"],
        [
            [
                g.label,
                g.encoder,
                g.identity,
                "-" if g.threshold is None else f"{g.threshold:g}",
                g.guard,
                g.matcher,
                str(g.encoded),
                str(g.cache_hits),
                f"{g.seconds:.1f}",
            ]
            for g in report.graders
        ],
    )
    if report.failures:
        lines += ["", "Prediction sets that failed: " + "; ".join(report.failures)]
    return "\n".join(lines) + "\n"


def write_panel(report: PanelReport, out_dir: str | Path) -> dict[str, Path]:
    """Write ``panel.json`` and ``panel.md``."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {kind: folder / f"panel.{kind}" for kind in ("json", "md")}
    atomic_write_json(paths["json"], report.model_dump(mode="json"))
    atomic_write_text(paths["md"], panel_markdown(report))
    return paths
