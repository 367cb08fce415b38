"""The self-contained diagnostic HTML report: rendering only.

:func:`build_report` reads results folders, takes the leaderboard rows
(:mod:`crystalbench.report.leaderboard`), the paired comparisons
(:mod:`crystalbench.report.comparison`) and the breakdowns, failure lists and plot numbers
(:mod:`crystalbench.report.analysis`), and writes ONE HTML file; this module computes no
statistic of its own. Styles, scripts and the chart code are inlined from
``report/assets/``; the data travel as JSON in a ``<script type="application/json">``
block; per-item images (only with a benchmark) travel as base64 thumbnails in
``<script type="text/plain">`` blocks that the page decodes only when an item is opened.
Nothing is fetched from the network when the page is viewed.

The leaderboard and provenance tables are rendered here as plain HTML (readable with
scripts off); the page's script makes them sortable and draws everything else on demand.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
import re
import warnings
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from crystalbench._internal.io import atomic_write_text
from crystalbench._version import __version__
from crystalbench.defaults import ENCODER
from crystalbench.errors import InputError, UnknownNameError
from crystalbench.metrics import (
    COUNTS,
    LEADERBOARD,
    LEADERBOARD_KEYS,
    METRICS,
    PAIR_METRICS,
    TABLE_COUNTS,
    missing_warning,
)
from crystalbench.metrics import format_value as format_number
from crystalbench.precedence import Precedence
from crystalbench.report.analysis import (
    LIS_EDGES,
    SOUND_REASONING_F1,
    STEP_LABELS,
    WEAK_REASONING_F1,
    GroupStats,
    distributions,
    failure_lists,
    group_breakdown,
    quadrants,
    reference_length_bins,
    reference_steps_histogram,
)
from crystalbench.report.comparison import (
    COMPARED_METRICS,
    RunComparison,
    compare_runs,
    config_value,
)
from crystalbench.report.leaderboard import (
    VERIFIER_COLUMNS,
    LeaderboardRow,
    leaderboard_rows,
    verified,
    verifier_cells,
)
from crystalbench.report.loading import ReportWarning, RunData, load_runs, warn
from crystalbench.statistics.intervals import (
    DEFAULT_CONFIDENCE,
    DEFAULT_PERMUTATIONS,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
)
from crystalbench.types import VETO_REASONS, ItemResult, Veto

IMAGE_MAX_SIDE = 384
"""Longest side of embedded thumbnails, in pixels."""

PALETTE: tuple[str, ...] = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#000000",
    "#8C564B",
)
"""Okabe-Ito colours (readable with colour-vision deficiencies), cycled over runs."""

_ASSETS = ("report.css", "charts.js", "report.js")


def _asset(name: str) -> str:
    return (
        resources.files("crystalbench.report").joinpath("assets").joinpath(name).read_text("utf-8")
    )


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


def _interval_json(interval: Any) -> list[float | None]:
    return [_round(interval.estimate, 6), _round(interval.low, 6), _round(interval.high, 6)]


# --------------------------------------------------------------------------- per-run data


def _group_json(groups: dict[str, GroupStats]) -> dict[str, Any]:
    return {
        group: {
            "n": stats.n,
            "n_missing": stats.n_missing,
            "n_parse_failed": stats.n_parse_failed,
            "n_no_steps": stats.n_no_steps,
            "metrics": {key: _interval_json(iv) for key, iv in stats.metrics.items()},
        }
        for group, stats in groups.items()
    }


_ITEM_COLUMNS: tuple[str, ...] = (
    "status",
    "kind",
    "rule",
    "atype",
    "pa",
    "miss",
    "blank",
    "steps",
    "matches",
    "ooo",
    "rc",
    "nrc",
    "ext",
    "trunc",
)
"""Per-item columns of the page's data besides the metrics (``pos`` comes first)."""


def _run_items(
    run: RunData, global_index: dict[str, int], canonical_refs: list[list[str] | None]
) -> dict[str, Any]:
    """The run's per-item values as columns (compact JSON), metrics named by
    :attr:`crystalbench.metrics.Metric.report_column`."""
    metric_columns = [(m.report_column, m.item_field, m.average == "share_true") for m in METRICS]
    columns: dict[str, list[Any]] = {"pos": []}
    columns.update({column: [] for column, _, _ in metric_columns})
    columns.update({column: [] for column in _ITEM_COLUMNS})
    ref_override: dict[str, list[str]] = {}
    order: dict[str, dict[str, Any]] = {}  # only items scored against a partial order
    vetoes: dict[str, list[list[Any]]] = {}  # only items with a pair the fact guard vetoed
    verdicts: dict[str, list[list[Any]]] = {}  # only items with step verifier verdicts
    for k, it in enumerate(run.items):
        g = global_index[it.id]
        columns["pos"].append(g)
        for column, field, share_true in metric_columns:
            value = getattr(it, field)
            if share_true:  # the answer: 1, 0, or None when unscored
                columns[column].append(None if value is None else int(value))
            else:  # rates rounded, step counts as they are
                columns[column].append(_round(value) if isinstance(value, float) else value)
        columns["status"].append(it.parse_status)
        # Which of the four counts the item is in (the page filters by it; the rule that
        # decides lives in ItemResult, not in the page's script).
        columns["kind"].append(
            "missing"
            if it.missing
            else "failed"
            if it.parse_failed
            else "nosteps"
            if it.no_steps
            else "scored"
        )
        columns["rule"].append(it.answer_rule)
        columns["ext"].append(_extraction_text(it))  # which rule (or model) took the answer
        columns["trunc"].append(int(it.truncated))
        columns["atype"].append(it.answer_type)
        columns["pa"].append(it.pred_answer)
        columns["miss"].append(int(it.missing))
        columns["blank"].append(it.n_blank_dropped)
        columns["steps"].append(list(it.pred_steps))
        columns["matches"].append([[i, j, _round(c, 3)] for i, j, c in it.matches])
        columns["ooo"].append([[i, j] for i, j in it.out_of_order])
        columns["rc"].append(it.ref_chain)  # which reference chain was scored (0: primary)
        columns["nrc"].append(it.n_ref_chains)
        if it.vetoed:
            vetoes[str(k)] = [_veto_json(veto) for veto in it.vetoed]
        if it.verdicts:
            verdicts[str(k)] = [
                [v.pred, v.label, None if v.p_correct is None else _round(v.p_correct, 3),
                 v.judge, v.reason or v.error or ""]
                for v in it.verdicts
            ]  # fmt: skip
        canonical = canonical_refs[g]
        if canonical is None:
            canonical_refs[g] = list(it.ref_steps)
        elif canonical != list(it.ref_steps):
            ref_override[str(k)] = list(it.ref_steps)
        if it.ref_precedence is not None:
            order[str(k)] = _partial_order(it.ref_precedence, it.n_ref)
    return {
        **columns,
        "ref": ref_override,
        **({"prec": order} if order else {}),
        **({"veto": vetoes} if vetoes else {}),
        **({"verd": verdicts} if verdicts else {}),
    }


def _veto_json(veto: Veto) -> list[Any]:
    """What the item view shows of one veto: ``[pred, ref, cosine, reason, scope,
    [start, end] in the predicted step, [start, end] in the reference step]``.

    Examples:
        >>> from crystalbench.types import ConflictSpans, TextSpan
        >>> span = TextSpan(start=4, end=6, text="40")
        >>> _veto_json(Veto(pred=1, ref=0, cosine=0.8912, reason="number",
        ...                 spans=ConflictSpans(pred=span, ref=span)))
        [1, 0, 0.891, 'number', 'pair', [4, 6], [4, 6]]
    """
    spans = veto.spans
    return [
        veto.pred,
        veto.ref,
        _round(veto.cosine, 3),
        veto.reason,
        veto.scope,
        [spans.pred.start, spans.pred.end],
        [spans.ref.start, spans.ref.end],
    ]


def _partial_order(pairs: Sequence[tuple[int, int]], n_ref: int) -> dict[str, Any]:
    """What the item view shows of a partial-order reference: the reference steps (indices
    into ``ref_steps``) that may come in either order, and how many pairs there are.

    Examples:
        >>> _partial_order([(0, 2), (1, 2)], 3)
        {'free': [[0, 1]], 'n_pairs': 3}
    """
    free = Precedence.from_pairs(pairs, n_ref).interchangeable()
    return {"free": [list(pair) for pair in free], "n_pairs": n_ref * (n_ref - 1) // 2}


# --------------------------------------------------------------------------- charts


def _charts(
    runs: Sequence[RunData], rows: Sequence[LeaderboardRow], breakdowns: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    by_length = []
    lis_hist = []
    steps_hist = []
    for run in runs:
        shown = distributions(run)
        by_length.append(
            [{"n": b.n, "mean": _round(b.mean), "sem": _round(b.sem)} for b in shown.f1_by_length]
        )
        lis_hist.append({"n": shown.lis.n, "shares": [_round(x) for x in shown.lis.shares]})
        steps_hist.append(
            {
                "n": shown.steps.n,
                "mean": _round(shown.steps.mean),
                "shares": [_round(x) for x in shown.steps.shares],
            }
        )
    refs = reference_steps_histogram(runs)
    return {
        "points": [
            {key: _interval_json(row.metrics[key]) for key in LEADERBOARD_KEYS} for row in rows
        ],
        "source_points": [
            {
                group: {
                    "n": data["n"],
                    "precision": data["metrics"]["precision"][0],
                    "recall": data["metrics"]["recall"][0],
                    "match_f1": data["metrics"]["match_f1"][0],
                    "accuracy": data["metrics"]["accuracy"][0],
                }
                for group, data in breakdown["by_source"].items()
            }
            for breakdown in breakdowns
        ],
        "length_labels": [label for _, _, label in reference_length_bins()],
        "f1_by_length": by_length,
        "lis_edges": list(LIS_EDGES),
        "lis_hist": lis_hist,
        "step_labels": list(STEP_LABELS),
        "steps_hist": steps_hist,
        "ref_steps_hist": {
            "n": refs.n,
            "mean": _round(refs.mean),
            "shares": [_round(x) for x in refs.shares],
        },
    }


# --------------------------------------------------------------------------- benchmark


def _load_benchmark(benchmark: Any) -> Any:
    if benchmark is None:
        return None
    if hasattr(benchmark, "items") and hasattr(benchmark, "fingerprint"):
        return benchmark
    from crystalbench.data import load_benchmark

    return load_benchmark(benchmark)


def _check_fingerprints(bench: Any, runs: Sequence[RunData]) -> None:
    for run in runs:
        recorded = run.config.get("benchmark_fingerprint")
        known = [i for i in run.ids if bench.get(i) is not None]
        unknown = len(run.ids) - len(known)
        if unknown:
            warn(
                f"{run.name}: {unknown} of {len(run.ids)} item ids are not in benchmark "
                f"{bench.name}; their question and image are not shown"
            )
        if recorded is None:
            continue
        candidates = {bench.fingerprint}
        if known and not unknown:
            candidates.add(bench.subset(ids=known).fingerprint)
        if recorded not in candidates:
            warn(
                f"{run.name} was scored on benchmark fingerprint {recorded}, but {bench.name} "
                f"has {bench.fingerprint}: questions, options and images shown may not be the "
                "ones that were scored"
            )


def thumbnail(data: bytes, max_side: int = IMAGE_MAX_SIDE) -> tuple[str, str]:
    """Downscale an encoded image to at most ``max_side`` pixels; return ``(mime, base64)``.

    The smaller of a PNG (lossless: diagrams, plots) and a JPEG (quality 82: photographs)
    is kept; transparency is flattened on white for the JPEG.

    Raises:
        OSError: The bytes are not an image Pillow can read.
    """
    from PIL import Image

    with Image.open(io.BytesIO(data)) as source:
        source.load()
        alpha = source.mode in ("RGBA", "LA", "P")
        image = source.convert("RGBA" if alpha else "RGB")
    image.thumbnail((max_side, max_side))
    candidates: list[tuple[str, bytes]] = []
    png = io.BytesIO()
    image.save(png, format="PNG", optimize=True)
    candidates.append(("image/png", png.getvalue()))
    flat = image
    if image.mode == "RGBA":
        flat = Image.new("RGB", image.size, (255, 255, 255))
        flat.paste(image, mask=image.getchannel("A"))
    jpeg = io.BytesIO()
    flat.save(jpeg, format="JPEG", quality=82, optimize=True)
    candidates.append(("image/jpeg", jpeg.getvalue()))
    mime, payload = min(candidates, key=lambda c: len(c[1]))
    return mime, base64.b64encode(payload).decode("ascii")


ImageBlocks = dict[int, tuple[str, str]]
"""Global item index -> (mime type, base64 thumbnail)."""


def _benchmark_items(
    bench: Any, ids: Sequence[str], *, embed_images: bool, image_max_side: int
) -> tuple[dict[str, list[Any]], ImageBlocks, str]:
    """Question, options, every reference chain (items with alternatives only) and
    (thumbnail) image per global item, and a note on images."""
    questions: list[str | None] = []
    options: list[list[str] | None] = []
    chains: list[list[list[str]] | None] = []
    images: dict[int, tuple[str, str]] = {}
    failed = 0
    with_image = 0
    for g, item_id in enumerate(ids):
        item = bench.get(item_id) if bench is not None else None
        questions.append(item.question if item is not None else None)
        options.append(list(item.options) if item is not None else None)
        chains.append(item.all_reference_chains if item and item.reference_chains else None)
        if item is None or not embed_images or item.image is None:
            continue
        with_image += 1
        try:
            data = bench.image_bytes(item)
            if data:
                images[g] = thumbnail(data, image_max_side)
        except Exception as exc:  # one unreadable image must not sink the report
            failed += 1
            if failed == 1:
                warn(
                    f"image of item {item_id} could not be embedded ({type(exc).__name__}: "
                    f"{exc}); further failures are only counted"
                )
    if bench is None:
        note = (
            "Images and questions are absent: the report was built without a benchmark "
            "(pass --benchmark to embed them)."
        )
    elif not embed_images:
        note = "Images were not embedded (--no-images); questions come from the benchmark."
    else:
        note = (
            f"{len(images)} item images embedded as thumbnails (longest side "
            f"{image_max_side}px)." + (f" {failed} could not be read." if failed else "")
        )
        if with_image == 0:
            note = "The benchmark holds no images for these items."
    return {"question": questions, "options": options, "chains": chains}, images, note


# --------------------------------------------------------------------------- HTML


def _leaderboard_html(rows: Sequence[LeaderboardRow], colors: Sequence[str]) -> str:
    head = ['<th scope="col" data-key="name" data-type="text">Model</th>']
    guarded = any(row.guard != "none" for row in rows)  # the fact guard's column, only then
    if guarded:
        head.append(
            '<th scope="col" data-key="guard" data-type="text" class="guard" title="The fact '
            "guard the run was scored with (not in the paper); runs with different guards are "
            'not comparable">Guard</th>'
        )
    for column in LEADERBOARD:
        hint = "higher is better" if column.higher_is_better else column.description
        head.append(
            f'<th scope="col" data-key="{column.key}" data-type="num" title="{html.escape(hint)}">'
            f"{html.escape(column.header)}</th>"
        )
    checked = verified(rows)  # the step verifier's columns, only when a run was verified
    if checked:
        head.append(
            '<th scope="col" data-key="verifier" data-type="text" class="verifier" title="The '
            "step verifier of the run (not in the paper); runs with different verifiers are "
            'not comparable on its columns">Verifier</th>'
        )
        for key, header in VERIFIER_COLUMNS:
            head.append(
                f'<th scope="col" data-key="{key}" data-type="num" class="verifier">'
                f"{html.escape(header)}</th>"
            )
    for count in TABLE_COUNTS:
        head.append(
            f'<th scope="col" data-key="{count.key}" data-type="num" '
            f'title="{html.escape(count.description)}">{html.escape(count.header)}</th>'
        )
    paired = any(row.pairs is not None for row in rows)  # MMVP pair columns, only then
    for pair_column in PAIR_METRICS if paired else ():
        head.append(
            f'<th scope="col" data-key="{pair_column.key}" data-type="num" '
            f'title="{html.escape(pair_column.description)}">'
            f"{html.escape(pair_column.header)}</th>"
        )
    body = []
    for index, row in enumerate(rows):
        cells = [
            f'<th scope="row" data-value="{html.escape(row.name)}">'
            f'<span class="swatch" style="background:{colors[index]}"></span>'
            f"{html.escape(row.name)}</th>"
        ]
        if guarded:
            cells.append(
                f'<td class="guard" data-value="{html.escape(row.guard)}">'
                f"<code>{html.escape(row.guard)}</code></td>"
            )
        for column in LEADERBOARD:
            interval = row.metrics[column.key]
            kind = column.number_format
            ci = f"{format_number(interval.low, kind)}–{format_number(interval.high, kind)}"
            cells.append(
                f'<td data-value="{interval.estimate!r}">'
                f'<span class="v">{format_number(interval.estimate, kind)}</span>'
                f'<span class="ci">{ci}</span></td>'
            )
        if checked:
            cells.append(
                f'<td class="verifier" data-value="{html.escape(row.verifier)}">'
                f"<code>{html.escape(row.verifier)}</code></td>"
            )
            for (key, _), text in zip(VERIFIER_COLUMNS, verifier_cells(row), strict=True):
                value = getattr(row, key) if row.verifier != "none" else None
                data = "" if value is None else repr(value)
                cells.append(f'<td data-value="{data}">{html.escape(text)}</td>')
        for count in TABLE_COUNTS:
            value = getattr(row, count.key)
            cells.append(f'<td data-value="{value}">{value}</td>')
        for pair_column in PAIR_METRICS if paired else ():
            if row.pairs is None:
                cells.append('<td data-value="">-</td>')
                continue
            number = getattr(row.pairs, pair_column.key)
            cells.append(
                f'<td data-value="{number!r}">'
                f"{format_number(number, pair_column.number_format)}</td>"
            )
        body.append(f'<tr data-run="{index}">' + "".join(cells) + "</tr>")
    return (
        '<table id="leaderboard" class="data sortable">'
        f"<thead><tr>{''.join(head)}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


_PROVENANCE_FIELDS: tuple[tuple[str, str], ...] = (
    ("encoder", "Encoder"),
    ("encoder_identity", "Encoder identity"),
    ("tau", "τ (match threshold)"),
    ("alpha", "α (order weight)"),
    ("order_metric", "Order metric"),
    ("compat", "Compat mode"),
    ("answer_rules", "Answer rules"),
    ("guard", "Fact guard"),
    ("verifier", "Step verifier"),
    ("judge", "Answer judge"),
    ("package_version", "crystalbench version"),
    ("prompt_hash", "Prompt hash"),
    ("benchmark", "Benchmark"),
    ("benchmark_fingerprint", "Benchmark fingerprint"),
    ("sources", "Sources scored"),
    ("scored_at", "Scored at"),
    ("results_dir", "Results folder"),
)


def _provenance_html(runs: Sequence[RunData]) -> str:
    provenance = [run.provenance() for run in runs]
    head = "".join(f'<th scope="col">{html.escape(run.name)}</th>' for run in runs)
    rows = []
    for key, label in _PROVENANCE_FIELDS:
        values = [p.get(key) for p in provenance]
        differs = len({json.dumps(v, sort_keys=True, default=str) for v in values}) > 1
        cells = []
        for value in values:
            text = (
                "—"
                if value is None
                else (", ".join(map(str, value)) if isinstance(value, list) else str(value))
            )
            cls = ' class="differs"' if differs and key not in ("results_dir", "scored_at") else ""
            cells.append(f"<td{cls}><code>{html.escape(text)}</code></td>")
        rows.append(f'<tr><th scope="row">{html.escape(label)}</th>{"".join(cells)}</tr>')
    return (
        f'<table id="provenance" class="data"><thead><tr><th scope="col">Setting</th>{head}'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _extraction_text(item: ItemResult) -> str | None:
    """The item view's Extraction: the rule, or the model that read the answer (or failed).

    Examples:
        >>> base = dict(id="1", source="s", difficulty="easy", missing=False,
        ...             parse_status="sentences", n_pred=1, n_ref=1, matches=[],
        ...             out_of_order=[], precision=0.0, recall=0.0, f1=0.0, lis=1.0,
        ...             kendall=1.0, ordered_f1=0.0, answer_correct=False, answer_rule="none",
        ...             answer_type="numeric", gold_answer="6")
        >>> _extraction_text(ItemResult(**base, answer_extraction="boxed"))
        'boxed'
        >>> _extraction_text(ItemResult(**base, answer_extraction="model",
        ...                             answer_extractor="model:reader"))
        'model (model:reader)'
        >>> _extraction_text(ItemResult(**base, answer_extractor="model:reader",
        ...                             extraction_error="APIConnectionError: refused"))
        'model:reader failed: APIConnectionError: refused'
    """
    if item.answer_extractor is None:
        return item.answer_extraction
    if item.extraction_error is not None:
        return f"{item.answer_extractor} failed: {item.extraction_error}"
    if item.answer_extraction is None:
        return f"{item.answer_extractor}: no answer stated"
    return f"{item.answer_extraction} ({item.answer_extractor})"


def _json_for_script(value: Any) -> str:
    """JSON that is safe inside ``<script>``: every ``<`` is escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _settings_warnings(runs: Sequence[RunData]) -> list[str]:
    out = []
    for run in runs:  # from the counts, so that results written before the warning get it too
        missing = missing_warning(run.summary.n_missing, run.summary.n_items)
        if missing is not None:
            out.append(f"{run.name}: {missing}.")
    for key, label in (
        ("encoder", "encoders"),
        ("threshold", "thresholds (tau)"),
        ("alpha", "alphas"),
        ("order_metric", "order metrics"),
        ("compat", "compat modes"),
        ("answer_rules", "answer rules"),
        ("guard", "fact guards"),
        ("benchmark_fingerprint", "benchmark fingerprints"),
    ):
        values = {json.dumps(config_value(run, key), default=str) for run in runs}
        if len(values) > 1:
            out.append(
                f"The runs were scored with different {label} "
                f"({', '.join(sorted(values))}); their numbers are not directly comparable."
            )
    encoder = runs[0].config.get("encoder") if runs else None
    if encoder and encoder != ENCODER:
        out.append(
            f"Encoder {encoder!r} differs from the paper's {ENCODER}: numbers "
            "are not comparable with the paper's tables."
        )
    verifiers = {run.verifier for run in runs}
    if verifiers != {"none"}:
        text = (
            "Step verifier (an extension, not in the paper): "
            + "; ".join(f"{run.name}: {run.verifier}" for run in runs)
            + "."
        )
        if len(verifiers) > 1:
            text += (
                " Runs with different verifiers are not comparable on verified precision and "
                "hallucination rate."
            )
        out.append(text)
    guarded = [run.name for run in runs if run.guard != "none"]
    if guarded:
        out.append(
            f"{', '.join(guarded)} scored with a fact guard (an extension, not in the paper: "
            "pairs that state incompatible facts do not match): not comparable with the "
            "paper's tables."
        )
    return out


def build_report(
    result_dirs: Sequence[str | Path | RunData],
    out_path: str | Path,
    *,
    benchmark: Any = None,
    names: Sequence[str] | None = None,
    baseline: int | str | None = None,
    title: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    n_permutations: int = DEFAULT_PERMUTATIONS,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    weak_f1: float = WEAK_REASONING_F1,
    sound_f1: float = SOUND_REASONING_F1,
    embed_images: bool = True,
    image_max_side: int = IMAGE_MAX_SIDE,
    on_warning: Callable[[str], None] | None = None,
) -> Path:
    """Write the self-contained diagnostic report of one or more results folders.

    Args:
        result_dirs: Folders holding ``examples.jsonl`` and ``summary.json`` (or runs
            already loaded with :func:`~crystalbench.report.load_runs`).
        out_path: The HTML file to write (parent folders are created).
        benchmark: ``None``, a spec for :func:`crystalbench.data.load_benchmark` or a loaded
            ``Benchmark``: gives questions, options and images (thumbnails) per item. The
            runs' recorded fingerprints are checked against it.
        names: Display names, one per folder (default: model from the config, else folder).
        baseline: Run (index or name) the others are compared against; default: the first.
        title: Page title.
        n_resamples: Bootstrap resamples for every interval and paired test.
        n_permutations: Random sign patterns of the permutation tests (exact when few
            items differ).
        confidence: Confidence level of every interval.
        seed: Seed of every resampling.
        weak_f1: "Right answer, weak reasoning" lists correct answers with F1 below this.
        sound_f1: "Sound reasoning, wrong answer" lists wrong answers with F1 at or above this.
        embed_images: Embed item images (only with a benchmark).
        image_max_side: Longest side of the embedded thumbnails.
        on_warning: Called with each warning as well (the warnings are also listed in the
            report and emitted as :class:`~crystalbench.report.loading.ReportWarning`).

    Returns:
        ``out_path``.

    Raises:
        InputError: A folder is malformed, or ``baseline`` names no run.
    """
    collected: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReportWarning)
        if all(isinstance(entry, RunData) for entry in result_dirs):
            runs = [entry for entry in result_dirs if isinstance(entry, RunData)]
            if names is not None:
                if len(names) != len(runs):
                    raise InputError(f"{len(names)} names for {len(runs)} runs", field="name")
                for run, run_name in zip(runs, names, strict=True):
                    run.name = run_name
        else:
            runs = load_runs([Path(str(entry)) for entry in result_dirs], names=names)
        base = _baseline_index(runs, baseline)
        bench = _load_benchmark(benchmark)
        if bench is not None:
            _check_fingerprints(bench, runs)
        payload = _payload(
            runs,
            bench,
            base=base,
            baseline_given=baseline is not None,
            title=title,
            n_resamples=n_resamples,
            n_permutations=n_permutations,
            confidence=confidence,
            seed=seed,
            weak_f1=weak_f1,
            sound_f1=sound_f1,
            embed_images=embed_images,
            image_max_side=image_max_side,
        )
    for record in caught:
        if issubclass(record.category, ReportWarning):
            collected.append(str(record.message))
        else:  # not ours: let it through
            warnings.warn_explicit(record.message, record.category, record.filename, record.lineno)
    data, images, rows = payload
    data["meta"]["warnings"] = [*collected, *data["meta"]["warnings"]]
    for message in collected:
        warnings.warn(message, ReportWarning, stacklevel=2)
        if on_warning is not None:
            on_warning(message)
    page = _render_page(data, images, rows, runs)
    out = Path(out_path)
    atomic_write_text(out, page)  # with the user's umask, as any file they create
    return out


def _baseline_index(runs: Sequence[RunData], baseline: int | str | None) -> int:
    if baseline is None:
        return 0
    if isinstance(baseline, int) or (isinstance(baseline, str) and baseline.isdigit()):
        index = int(baseline)
        if not 0 <= index < len(runs):
            raise InputError(
                f"baseline index {index} out of range (0-{len(runs) - 1})", field="baseline"
            )
        return index
    for index, run in enumerate(runs):
        if baseline in (run.name, str(run.path), run.path.name):
            return index
    raise UnknownNameError("baseline run", str(baseline), [run.name for run in runs])


def _payload(
    runs: Sequence[RunData],
    bench: Any,
    *,
    base: int,
    baseline_given: bool = False,
    title: str | None,
    n_resamples: int,
    n_permutations: int,
    confidence: float,
    seed: int,
    weak_f1: float,
    sound_f1: float,
    embed_images: bool,
    image_max_side: int,
) -> tuple[dict[str, Any], dict[int, tuple[str, str]], list[LeaderboardRow]]:
    rows = leaderboard_rows(runs, n_resamples=n_resamples, confidence=confidence, seed=seed)
    global_ids: list[str] = []
    global_index: dict[str, int] = {}
    source: list[str] = []
    difficulty: list[str] = []
    gold: list[str] = []
    n_ref: list[int] = []
    for run in runs:
        for it in run.items:
            if it.id not in global_index:
                global_index[it.id] = len(global_ids)
                global_ids.append(it.id)
                source.append(it.source)
                difficulty.append(it.difficulty)
                gold.append(it.gold_answer)
                n_ref.append(it.n_ref)
    canonical: list[list[str] | None] = [None] * len(global_ids)
    colors = [PALETTE[i % len(PALETTE)] for i in range(len(runs))]
    breakdowns = []
    run_payloads = []
    for index, (run, row) in enumerate(zip(runs, rows, strict=True)):
        breakdown = {
            "by_source": _group_json(
                group_breakdown(
                    run, "source", n_resamples=n_resamples, confidence=confidence, seed=seed
                )
            ),
            "by_difficulty": _group_json(
                group_breakdown(
                    run, "difficulty", n_resamples=n_resamples, confidence=confidence, seed=seed
                )
            ),
        }
        breakdowns.append(breakdown)
        run_payloads.append(
            {
                "name": run.name,
                "color": colors[index],
                "provenance": run.provenance(),
                "leaderboard": {key: _interval_json(row.metrics[key]) for key in LEADERBOARD_KEYS},
                "counts": {
                    **{count.key: getattr(row, count.key) for count in COUNTS},
                    "n_unknown_ids": run.summary.n_unknown_ids,
                    "n_invalid_records": run.summary.n_invalid_records,
                },
                "pairs": row.pairs.model_dump() if row.pairs is not None else None,
                "guard": run.guard,
                "vetoed_by_reason": _vetoes_by_reason(run),
                "problems": run.summary.problems[:20],
                **breakdown,
                "quadrants": quadrants(run, weak_f1, sound_f1),
                "failures": failure_lists(run, weak_f1, sound_f1),
                "items": _run_items(run, global_index, canonical),
            }
        )
    comparisons: list[dict[str, Any]] = []
    for index, run in enumerate(runs):
        if index == base:
            continue
        comparison: RunComparison = compare_runs(
            runs[base],
            run,
            metrics=COMPARED_METRICS,
            n_resamples=n_resamples,
            n_permutations=n_permutations,
            confidence=confidence,
            seed=seed,
        )
        comparisons.append({"a": base, "b": index, **comparison.model_dump(mode="json")})
    bench_columns, images, image_note = _benchmark_items(
        bench, global_ids, embed_images=embed_images, image_max_side=image_max_side
    )
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    data = {
        "meta": {
            "title": title or _default_title(runs),
            "generated_at": now,
            "package_version": __version__,
            "n_resamples": n_resamples,
            "n_permutations": n_permutations,
            "confidence": confidence,
            "seed": seed,
            "weak_f1": weak_f1,
            "sound_f1": sound_f1,
            "baseline": base,
            "baseline_given": baseline_given,
            "benchmark": getattr(bench, "name", None),
            "benchmark_fingerprint": getattr(bench, "fingerprint", None),
            "has_benchmark": bench is not None,
            "image_note": image_note,
            "warnings": _settings_warnings(runs),
        },
        "metrics": [_metric_json(m) for m in LEADERBOARD],
        "other_metrics": [_metric_json(m) for m in METRICS if not m.leaderboard],
        "compared_metrics": list(COMPARED_METRICS),
        "runs": run_payloads,
        "items": {
            "id": global_ids,
            "source": source,
            "difficulty": difficulty,
            "gold": gold,
            "n_ref": n_ref,
            "ref": canonical,
            "image": [g in images for g in range(len(global_ids))],
            **bench_columns,
        },
        "charts": _charts(runs, rows, breakdowns),
        "comparisons": comparisons,
    }
    return data, images, rows


def _vetoes_by_reason(run: RunData) -> dict[str, int]:
    """The run's vetoed pairs by reason, counted from its records (empty without a guard)."""
    if run.guard == "none":
        return {}
    counts = dict.fromkeys(VETO_REASONS, 0)
    for item in run.items:
        for veto in item.vetoed or ():
            counts[veto.reason] = counts.get(veto.reason, 0) + 1
    return counts


def _metric_json(column: Any) -> list[Any]:
    """``[key, header, format, higher-is-better]`` as the page's script reads a metric."""
    return [column.key, column.header, column.number_format, bool(column.higher_is_better)]


def _default_title(runs: Sequence[RunData]) -> str:
    if len(runs) == 1:
        return f"CRYSTAL report: {runs[0].name}"
    return f"CRYSTAL report: {len(runs)} runs"


def _render_page(
    data: dict[str, Any],
    images: dict[int, tuple[str, str]],
    rows: Sequence[LeaderboardRow],
    runs: Sequence[RunData],
) -> str:
    template = _asset("report.html")
    colors = [run["color"] for run in data["runs"]]
    image_blocks = "".join(
        f'<script type="text/plain" id="img-{g}" data-mime="{mime}">{b64}</script>'
        for g, (mime, b64) in sorted(images.items())
    )
    meta = data["meta"]
    first = rows[0].metrics[LEADERBOARD_KEYS[0]] if rows else None
    ci_note = (
        f"{100 * meta['confidence']:g}% percentile bootstrap intervals over items, "
        f"{first.n_resamples if first else 0} resamples, seed {meta['seed']}."
    )
    replacements = {
        "{{TITLE}}": html.escape(meta["title"]),
        "{{GENERATED}}": html.escape(meta["generated_at"]),
        "{{VERSION}}": html.escape(__version__),
        "{{CI_NOTE}}": html.escape(ci_note),
        "{{LEADERBOARD}}": _leaderboard_html(rows, colors),
        "{{PROVENANCE}}": _provenance_html(runs),
        "{{CSS}}": _asset("report.css"),
        "{{CHARTS_JS}}": _asset("charts.js"),
        "{{REPORT_JS}}": _asset("report.js"),
        "{{DATA}}": _json_for_script(data),
        "{{IMAGES}}": image_blocks,
    }
    # Substitute in one pass so that no inserted text is ever scanned for placeholders.
    pattern = re.compile("|".join(re.escape(key) for key in replacements))
    return pattern.sub(lambda match: replacements[match.group(0)], template)
