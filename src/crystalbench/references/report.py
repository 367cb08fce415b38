"""The construction report: one self-contained HTML page from a build's summary.

Rendering only (the numbers come from :func:`crystalbench.references.output.summarise`):
items per gate and round, the share that needed another round (the paper: under 5%),
steps per item (the paper: mean 11.6, range 3-42) with a histogram, the support histogram,
each generator's contribution, the validator's counts, the rejected items, and a per-item
view from candidates to clusters to the chain. Styles are inlined from
``references/assets/references.css``; charts are inline SVG drawn here; there is no
script and nothing is fetched when the page is viewed.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from crystalbench._internal.io import atomic_write_text
from crystalbench._version import __version__

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _css() -> str:
    return (
        resources.files("crystalbench.references")
        .joinpath("assets")
        .joinpath("references.css")
        .read_text("utf-8")
    )


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def bar_chart(
    counts: Mapping[str, int],
    *,
    x_label: str,
    marks: Sequence[tuple[float, str]] = (),
    width: int = 520,
    height: int = 200,
) -> str:
    """An inline SVG bar chart of ``{label: count}`` (labels numeric where possible), with
    optional dashed vertical marks at label values ``(x, text)``.

    Examples:
        >>> svg = bar_chart({"1": 3, "2": 5}, x_label="support")
        >>> svg.startswith("<svg") and svg.count('class="bar"') == 2
        True
    """
    if not counts:
        return '<p class="hint">Nothing to show.</p>'
    keys = list(counts)
    try:
        numeric = [float(k) for k in keys]
        span = range(int(min(numeric)), int(max(numeric)) + 1)
        keys = [str(v) for v in span] if len(span) <= 120 else keys
    except ValueError:
        numeric = []
    left, bottom, top = 36, 34, 10
    inner_w, inner_h = width - left - 10, height - bottom - top
    peak = max(counts.values()) or 1
    step = inner_w / len(keys)
    parts = [
        f'<svg class="bars" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{_e(x_label)} histogram">'
    ]
    parts.append(
        f'<line x1="{left}" y1="{top + inner_h}" x2="{left + inner_w}" y2="{top + inner_h}"/>'
    )
    label_every = max(1, len(keys) // 20)
    for index, key in enumerate(keys):
        value = counts.get(key, 0)
        h = inner_h * value / peak
        x = left + index * step
        parts.append(
            f'<rect class="bar" x="{x + 1:.1f}" y="{top + inner_h - h:.1f}" '
            f'width="{max(step - 2, 1):.1f}" height="{h:.1f}">'
            f"<title>{_e(key)}: {value}</title></rect>"
        )
        if index % label_every == 0:
            parts.append(
                f'<text x="{x + step / 2:.1f}" y="{top + inner_h + 13}" '
                f'text-anchor="middle">{_e(key)}</text>'
            )
    parts.append(f'<text x="{left}" y="{top + 8}">{peak}</text>')
    parts.append(
        f'<text x="{left + inner_w / 2:.1f}" y="{height - 4}" text-anchor="middle">'
        f"{_e(x_label)}</text>"
    )
    if numeric and keys:
        first = float(keys[0])
        for x_value, text in marks:
            x = left + (x_value - first + 0.5) * step
            if left <= x <= left + inner_w:
                parts.append(
                    f'<line class="paper" x1="{x:.1f}" y1="{top}" x2="{x:.1f}" '
                    f'y2="{top + inner_h}"><title>{_e(text)}</title></line>'
                )
    parts.append("</svg>")
    return "".join(parts)


def _card(value: Any, label: str, paper: str | None = None) -> str:
    extra = f'<div class="p">{_e(paper)}</div>' if paper else ""
    return (
        f'<div class="card"><div class="v">{_e(value)}</div>'
        f'<div class="l">{_e(label)}</div>{extra}</div>'
    )


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], text_cols: int = 1) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            css = ' class="text"' if i < text_cols else ""
            cells.append(f"<td{css}>{_e(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="scroll"><table class="data"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _overview(summary: Mapping[str, Any]) -> str:
    steps = summary.get("steps_per_item", {})
    paper = summary.get("paper", {})
    cards = [
        _card(summary["n_items"], "items"),
        _card(summary["n_accepted"], "accepted"),
        _card(summary["n_rejected"], "rejected after all rounds"),
        _card(
            _pct(summary.get("share_another_round")),
            "needed another round",
            f"paper: under {_pct(paper.get('share_another_round'))}",
        ),
        _card(
            "–" if steps.get("mean") is None else f"{steps['mean']:.1f}",
            f"steps per item (range {steps.get('min', '–')}-{steps.get('max', '–')})",
            f"paper: mean {paper.get('steps_mean')}, range "
            f"{paper.get('steps_min')}-{paper.get('steps_max')}",
        ),
        _card(_pct(summary.get("share_full_support")), "steps supported by every chain"),
    ]
    rounds = summary.get("rounds", {})
    accepted = summary.get("accepted_by_round", {})
    round_rows = [[f"round {r}", n, accepted.get(r, 0)] for r, n in rounds.items()]
    gates = summary.get("gates", {})
    gate_rows = [[name.replace("_", " "), count] for name, count in gates.items()]
    return (
        f'<div class="cards">{"".join(cards)}</div>'
        '<div class="grid"><div><h3>Items per round</h3>'
        + _table(["round", "items generated", "accepted in it"], round_rows)
        + '</div><div><h3>Round outcomes per gate</h3><p class="hint">One count per item and '
        "round: consensus failures (too few valid chains, every cluster under the minimum "
        "support), validator rejections and errors, acceptances.</p>"
        + _table(["outcome", "rounds"], gate_rows)
        + "</div></div>"
    )


def _charts(summary: Mapping[str, Any]) -> str:
    paper = summary.get("paper", {})
    steps = summary.get("steps_per_item", {})
    marks = [(float(paper.get("steps_mean", 0)), f"paper mean {paper.get('steps_mean')}")]
    if steps.get("mean") is not None:
        marks.append((float(steps["mean"]), f"this build's mean {steps['mean']}"))
    return (
        '<div class="grid">'
        '<figure class="chart"><figcaption>Steps per accepted item <span class="sub">dashed: '
        "the paper's mean (11.6) and this build's</span></figcaption>"
        + bar_chart(summary.get("steps_histogram", {}), x_label="steps", marks=marks)
        + "</figure>"
        '<figure class="chart"><figcaption>Support per step <span class="sub">candidate chains '
        "with a member in the step's cluster</span></figcaption>"
        + bar_chart(summary.get("support_histogram", {}), x_label="support (chains)")
        + "</figure></div>"
    )


def _generators(summary: Mapping[str, Any]) -> str:
    statuses = ["ok", "empty", "garbage", "truncated", "wrong_schema", "error"]
    rows = []
    for name, g in summary.get("generators", {}).items():
        by = g.get("by_status", {})
        rows.append(
            [
                name,
                g["model"],
                g["requests"],
                *[by.get(s, 0) for s in statuses],
                g["chains_in_consensus"],
                g["medoid_steps"],
                _pct(g.get("medoid_share")),
                g["member_steps"],
                "–" if g.get("mean_latency_s") is None else f"{g['mean_latency_s']:.2f}",
            ]
        )
    table = _table(
        [
            "generator",
            "model",
            "requests",
            *statuses,
            "chains used",
            "medoid steps",
            "medoid share",
            "member steps",
            "mean latency (s)",
        ],
        rows,
        text_cols=2,
    )
    validator = summary.get("validator")
    if validator:
        by = validator.get("by_status", {})
        failed = validator.get("criteria_failed", {})
        table += "<h3>Validator</h3>" + _table(
            ["validator", "requests", "verdicts", "unparsed", "errors", "accepted", "rejected"]
            + [f"failed: {k.replace('_', ' ')}" for k in failed],
            [
                [
                    validator["name"],
                    validator["requests"],
                    by.get("ok", 0),
                    by.get("unparsed", 0),
                    by.get("error", 0),
                    validator["accepted"],
                    validator["rejected"],
                    *failed.values(),
                ]
            ],
        )
    else:
        table += '<p class="banner info">No validator ran: every consensus chain was accepted.</p>'
    return table


def _rejected(summary: Mapping[str, Any]) -> str:
    rejected = summary.get("rejected", [])
    if not rejected:
        return '<p class="hint">No item is rejected.</p>'
    rows = [[r["id"], r["round"], r["status"], "; ".join(r["reasons"])] for r in rejected]
    return (
        '<p class="hint">Send them back with <code>crystal references regenerate --ids FILE '
        "--out DIR</code>, or fix them in the review app.</p>"
        + _table(["item", "last round", "outcome", "reasons"], rows, text_cols=4)
    )


def _order_html(precedence: Mapping[str, Any] | None, index: int) -> str:
    """The inferred order around consensus step ``index`` (0-based): which steps must come
    right before it (with the chains' votes) and which it may swap with."""
    if precedence is None:
        return ""
    before = precedence["before"][index]
    either = precedence["either"][index]
    parts = []
    if before:
        parts.append(
            "after "
            + ", ".join(f"step {e['step'] + 1} ({e['agree']}/{e['both']} chains)" for e in before)
        )
    if either:
        parts.append(
            '<span class="tag either">either order</span> with '
            + ", ".join(f"step {s + 1}" for s in either)
        )
    if not parts:
        parts.append("first: no step must come before it")
    return f'<div class="hint order">{"; ".join(parts)}</div>'


def _cluster_html(
    step: Mapping[str, Any],
    number: int | None,
    dropped: bool = False,
    precedence: Mapping[str, Any] | None = None,
) -> str:
    css = "cluster dropped" if dropped else "cluster"
    label = "dropped" if number is None else f"step {number}"
    order = "" if number is None else _order_html(precedence, number - 1)
    members = "".join(
        f"<li>{_e(m['model'])} #{m['index'] + 1}: {_e(m['text'])}</li>" for m in step["members"]
    )
    medoid = step["medoid"]
    return (
        f'<div class="{css}"><strong>{label}</strong> · support {step["support"]}/'
        f"{step['n_chains']} ({_e(', '.join(step['models']))}) · mean position "
        f"{step['mean_position']:.2f} · cohesion {step['cohesion']:.2f}"
        f"<div>{_e(medoid['text'])} "
        f'<span class="hint">(medoid from {_e(medoid["model"])})</span></div>'
        f'{order}<ul class="members">{members}</ul></div>'
    )


def _item_html(view: Mapping[str, Any]) -> str:
    stage = view["stage"]
    history = "; ".join(
        f"round {h['round']}: {h['status']}"
        + (f" ({'; '.join(h['reasons'])})" if h["reasons"] else "")
        for h in view["history"]
    )
    candidates = []
    for c in view["candidates"]:
        tag = "" if c["status"] == "ok" else f' <span class="tag bad">{_e(c["status"])}</span>'
        steps = "".join(f"<li>{_e(s)}</li>" for s in c["steps"])
        error = f'<p class="hint">{_e(c["error"])}</p>' if c.get("error") else ""
        candidates.append(
            f'<div><strong>{_e(c["model"])}</strong> <span class="hint">sample {c["sample"]}, '
            f"attempt {c['attempt']}, seed {c['seed']}</span>{tag}{error}<ol>{steps}</ol></div>"
        )
    chain = view.get("chain")
    precedence = view.get("precedence")
    clusters = ""
    if chain:
        clusters = "".join(
            _cluster_html(step, n, precedence=precedence)
            for n, step in enumerate(chain["provenance"], start=1)
        ) + "".join(_cluster_html(step, None, dropped=True) for step in chain.get("dropped", []))
        order = f"order: {chain['order_rule']}"
        if chain.get("edit_distance") is not None:
            order += f", edit distance {chain['edit_distance']} to the previous round"
        if precedence is not None:
            n_free = sum(len(e) for e in precedence["either"]) // 2
            order += (
                f"; precedence inferred from {precedence['n_chains']} chains (share "
                f"{precedence['share']:g}): {len(precedence['pairs'])} edges, {n_free} "
                f"pair{'' if n_free == 1 else 's'} of steps in either order"
            )
        clusters = f'<p class="hint">{_e(order)}; θ = {chain["theta"]}</p>' + clusters
    verdict = view.get("verdict")
    verdict_html = ""
    if verdict:
        verdict_html = (
            f"<p><strong>Verdict</strong>: {_e(verdict['status'])}, accept "
            f"{_e(verdict.get('accept'))}; {_e('; '.join(verdict.get('reasons', [])))}</p>"
        )
    options = "".join(f"<li>{_e(o)}</li>" for o in view.get("options", []))
    return (
        f'<details class="item"><summary>{_e(view["id"])} <span class="tag {stage}">{_e(stage)}'
        f'</span> <span class="status">round {view["round"]}</span></summary>'
        f"<p>{_e(view['question'])}</p>"
        + (f'<ol type="A">{options}</ol>' if options else "")
        + f"<p>Answer: <code>{_e(view['answer'])}</code></p>"
        f'<p class="hint">{_e(history)}</p>'
        f'<h3>Candidates (round {view["round"]})</h3><div class="cols">{"".join(candidates)}</div>'
        f"<h3>Clusters, in chain order</h3>{clusters or '<p class=hint>No consensus.</p>'}"
        f"{verdict_html}</details>"
    )


def render_report(summary: Mapping[str, Any], views: Sequence[Mapping[str, Any]]) -> str:
    """The construction report's HTML."""
    title = (
        f"Reference construction: {summary['n_accepted']} of {summary['n_items']} items accepted"
    )
    warnings = "".join(f'<p class="banner warn">{_e(w)}</p>' for w in summary.get("warnings", []))
    config = summary.get("config", {})
    settings_rows = [
        ["encoder", summary.get("encoder")],
        ["theta (link at cosine ≥)", config.get("theta")],
        ["minimum support", config.get("min_support")],
        ["minimum valid chains", config.get("min_chains")],
        ["rounds", config.get("max_rounds")],
        ["samples per generator", config.get("samples")],
        ["base seed", config.get("seed")],
        ["engine", summary.get("engine")],
        ["crystalbench", summary.get("crystalbench_version")],
        ["written", summary.get("created_at")],
    ]
    shown = len(views)
    items_note = (
        f"{shown} of {summary['n_items']} items shown (rejected and regenerated first)."
        if shown < summary["n_items"]
        else "Every item is shown."
    )
    body = (
        f'<header class="top"><div class="top-inner"><h1>{_e(title)}</h1><nav>'
        '<a href="#sec-overview">Overview</a><a href="#sec-charts">Steps and support</a>'
        '<a href="#sec-models">Models</a><a href="#sec-rejected">Rejected</a>'
        '<a href="#sec-items">Items</a><a href="#sec-settings">Settings</a></nav></div></header>'
        f"<main>{warnings}"
        f'<section id="sec-overview"><h2>Overview</h2>{_overview(summary)}</section>'
        f'<section id="sec-charts"><h2>Steps and support</h2>{_charts(summary)}</section>'
        '<section id="sec-models"><h2>Generators and validator</h2>'
        f"{_generators(summary)}</section>"
        f'<section id="sec-rejected"><h2>Rejected items</h2>{_rejected(summary)}</section>'
        f'<section id="sec-items"><h2>Items: candidates → clusters → chain</h2>'
        f'<p class="hint">{_e(items_note)}</p>{"".join(_item_html(v) for v in views)}</section>'
        '<section id="sec-settings"><h2>Settings</h2>'
        f"{_table(['setting', 'value'], settings_rows, 2)}"
        "</section></main>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="crystalbench {_e(__version__)}">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        f"<title>{_e(title)}</title><style>{_css()}</style></head><body>{body}</body></html>\n"
    )


def write_report(
    path: str | Path, summary: Mapping[str, Any], views: Sequence[Mapping[str, Any]]
) -> Path:
    """Write the construction report atomically; returns its path."""
    target = Path(path)
    atomic_write_text(target, render_report(summary, views))
    return target
