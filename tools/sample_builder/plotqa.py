"""PlotQA-style items: matplotlib bar and line charts with values on them.

matplotlib (an optional dependency) is imported only when a chart is drawn.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any

from PIL import Image

from tools.sample_builder.specs import Drawer, SampleSpec, Step, _letter, _mc_forms, _s

__all__ = ["plotqa_specs"]


def _fig_to_image(fig: Any) -> Image.Image:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    canvas.print_png(buffer, metadata={"Software": None})
    buffer.seek(0)
    with Image.open(buffer) as image:
        return image.convert("RGB")


def _bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    title: str,
    axis_label: str,
    fmt: Callable[[float], str],
    horizontal: bool = False,
) -> Drawer:
    def draw() -> Image.Image:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(5.6, 3.8), dpi=100)
        ax = fig.add_subplot()
        colour = "#4c72b0"
        if horizontal:
            bars = ax.barh(list(labels), list(values), color=colour)
            ax.set_xlabel(axis_label)
            ax.set_xlim(0, max(values) * 1.2)
            ax.invert_yaxis()
            for bar, value in zip(bars, values, strict=False):
                ax.text(
                    bar.get_width() + max(values) * 0.01,
                    bar.get_y() + bar.get_height() / 2,
                    fmt(value),
                    va="center",
                    fontsize=9,
                )
        else:
            bars = ax.bar(list(labels), list(values), color=colour)
            ax.set_ylabel(axis_label)
            ax.set_ylim(0, max(values) * 1.18)
            for bar, value in zip(bars, values, strict=False):
                ax.text(
                    bar.get_x() + bar.get_width() / 2,
                    bar.get_height() + max(values) * 0.01,
                    fmt(value),
                    ha="center",
                    va="bottom",
                    fontsize=9,
                )
        ax.set_title(title, fontsize=11)
        fig.tight_layout()
        return _fig_to_image(fig)

    return draw


def _line_chart(
    years: Sequence[int],
    series: dict[str, Sequence[float]],
    title: str,
    axis_label: str,
    fmt: Callable[[float], str],
) -> Drawer:
    def draw() -> Image.Image:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(5.6, 3.8), dpi=100)
        ax = fig.add_subplot()
        for (name, values), colour in zip(series.items(), ("#c44e52", "#4c72b0"), strict=False):
            ax.plot(list(years), list(values), marker="o", color=colour, label=name)
            for x, v in zip(years, values, strict=False):
                ax.annotate(
                    fmt(v),
                    (x, v),
                    textcoords="offset points",
                    xytext=(0, 7),
                    ha="center",
                    fontsize=8,
                )
        ax.set_xticks(list(years))
        low = min(min(v) for v in series.values())
        high = max(max(v) for v in series.values())
        ax.set_ylim(low - (high - low) * 0.3, high + (high - low) * 0.3)
        ax.set_ylabel(axis_label)
        ax.set_title(title, fontsize=11)
        if len(series) > 1:
            ax.legend(loc="upper left", fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        return _fig_to_image(fig)

    return draw


def _thousands(value: float) -> str:
    return f"{value:,.0f}"


def _one_decimal(value: float) -> str:
    return f"{value:.1f}"


def _two_decimals(value: float) -> str:
    return f"{value:.2f}"


def _read_steps(
    pairs: Sequence[tuple[str, str]], noun: str, keys: Sequence[str] = ()
) -> tuple[Step, ...]:
    """One reading step per bar / point: ``(label, formatted value)``."""
    return tuple(
        _s(f"The {noun} for {label} shows a value of {value}.", f"{label}: {value}.", label in keys)
        for label, value in pairs
    )


def _pq_range() -> SampleSpec:
    labels = ["Norway", "Chile", "Kenya", "Peru", "Vietnam"]
    values = [5680, 12450, 3200, 8120, 9760]
    hi, lo = max(values), min(values)
    hi_name, lo_name = labels[values.index(hi)], labels[values.index(lo)]
    diff = hi - lo
    steps = (
        _s(
            "The bar chart shows international tourist arrivals in 2018 for five countries.",
            "The chart gives 2018 tourist arrivals for five countries.",
        ),
        _s(
            "Each bar is labelled with its exact number of arrivals.",
            "Every bar has its value written on top.",
        ),
        *_read_steps([(lab, _thousands(v)) for lab, v in zip(labels, values, strict=False)], "bar"),
        _s(
            f"The highest bar is {hi_name} with {_thousands(hi)} arrivals.",
            f"Max: {hi_name}, {_thousands(hi)}.",
            True,
        ),
        _s(
            f"The lowest bar is {lo_name} with {_thousands(lo)} arrivals.",
            f"Min: {lo_name}, {_thousands(lo)}.",
            True,
        ),
        _s(
            f"The difference is {_thousands(hi)} - {_thousands(lo)} = {_thousands(diff)}.",
            f"{_thousands(hi)} - {_thousands(lo)} = {_thousands(diff)}.",
            True,
        ),
    )
    return SampleSpec(
        item_id="plotqa-01",
        source="plotqa",
        question=(
            "What is the difference between the highest and the lowest number of "
            "tourist arrivals shown in the chart?"
        ),
        steps=steps,
        answer=_thousands(diff),
        draw=_bar_chart(
            labels, values, "International tourist arrivals, 2018", "Arrivals", _thousands
        ),
        difficulty="medium",
        metadata={"chart": "vbar", "template": "range"},
        right=(_thousands(diff), str(diff), f"{_thousands(diff)} arrivals"),
        wrong=(_thousands(hi - 5680), _thousands(hi)),
        ask="the difference between the highest and lowest values",
        topic="the bar chart",
    )


def _pq_argmax() -> SampleSpec:
    labels = ["Ethiopia", "Colombia", "Kenya", "Uganda"]
    values = [472.5, 754.2, 52.8, 301.6]
    best = labels[values.index(max(values))]
    steps = (
        _s(
            "The bar chart shows coffee production in thousand tonnes for four countries.",
            "The chart shows coffee production (thousand tonnes) by country.",
        ),
        *_read_steps(
            [(lab, _one_decimal(v)) for lab, v in zip(labels, values, strict=False)],
            "bar",
            keys=(best,),
        ),
        _s(
            f"Comparing the bars, {best}'s bar at {_one_decimal(max(values))} is the tallest.",
            f"{best} has the tallest bar.",
            True,
        ),
        _s("Kenya's bar, at 52.8, is the shortest.", "Kenya is lowest at 52.8."),
        _s(
            f"So {best} has the highest coffee production.",
            f"The highest producer is {best}.",
            True,
        ),
    )
    return SampleSpec(
        item_id="plotqa-02",
        source="plotqa",
        question="Which country has the highest coffee production in the chart?",
        steps=steps,
        answer=best,
        draw=_bar_chart(labels, values, "Coffee production", "Thousand tonnes", _one_decimal),
        metadata={"chart": "vbar", "template": "argmax"},
        right=(best, best.lower()),
        wrong=("Ethiopia", "Uganda"),
        ask="which country produces the most coffee",
        topic="the bar chart",
    )


def _pq_average() -> SampleSpec:
    years = list(range(2010, 2016))
    values = [3.2, 4.7, 5.1, 2.6, 3.9, 4.4]
    window = values[1:4]
    total = round(sum(window), 1)
    mean = total / 3
    steps = (
        _s(
            "The line chart shows average rainfall in centimetres from 2010 to 2015.",
            "The chart plots yearly rainfall (cm), 2010-2015.",
        ),
        _s("The question needs only the years 2011, 2012 and 2013.", "Only 2011-2013 matter."),
        _s(f"The value for 2011 is {window[0]}.", f"2011: {window[0]} cm.", True),
        _s(f"The value for 2012 is {window[1]}.", f"2012: {window[1]} cm.", True),
        _s(f"The value for 2013 is {window[2]}.", f"2013: {window[2]} cm.", True),
        _s(
            f"The sum of the three values is {window[0]} + {window[1]} + {window[2]} = {total}.",
            f"Their sum is {total}.",
        ),
        _s("There are 3 years in the range 2011 to 2013.", "That is three years."),
        _s(
            "The values for 2010, 2014 and 2015 are outside the range and are ignored.",
            "2010, 2014 and 2015 are not used.",
        ),
        _s(f"The average is {total} / 3 = {mean:.2f}.", f"Average = {total}/3 ≈ {mean:.2f}.", True),
    )
    return SampleSpec(
        item_id="plotqa-03",
        source="plotqa",
        question="What is the average rainfall over the years 2011 to 2013?",
        steps=steps,
        answer=f"{mean:.2f}",
        draw=_line_chart(
            years, {"Rainfall": values}, "Average rainfall", "Rainfall (cm)", _one_decimal
        ),
        difficulty="medium",
        metadata={"chart": "line", "template": "mean"},
        right=(f"{mean:.2f}", f"{mean:.1f}", f"{mean:.2f} cm"),
        wrong=(f"{sum(values) / len(values):.2f}", "5.1"),
        ask="the average rainfall for 2011-2013",
        topic="the line chart",
    )


def _pq_compare_years() -> SampleSpec:
    years = list(range(2011, 2017))
    values = [7.8, 8.4, 8.1, 7.2, 6.5, 6.9]
    v2011, v2014 = values[0], values[3]
    verdict = "Yes" if v2014 > v2011 else "No"
    steps = (
        _s(
            "The line chart shows the unemployment rate in percent from 2011 to 2016.",
            "The chart plots the unemployment rate (%) for 2011-2016.",
        ),
        _s("Each point on the line is labelled with its value.", "The points carry value labels."),
        _s(f"The point for 2011 is labelled {v2011}.", f"2011: {v2011}%.", True),
        _s(f"The point for 2014 is labelled {v2014}.", f"2014: {v2014}%.", True),
        _s(
            "Between 2011 and 2014 the rate first rises to 8.4 in 2012 and then falls.",
            "The rate peaks at 8.4 in 2012, then declines.",
        ),
        _s(f"{v2014} is less than {v2011}.", f"{v2014} < {v2011}.", True),
        _s(
            "So the rate in 2014 is not greater than the rate in 2011.",
            "The 2014 rate is lower than in 2011.",
            True,
        ),
        _s("The answer is no.", "Answer: no."),
    )
    return SampleSpec(
        item_id="plotqa-04",
        source="plotqa",
        question="Is the unemployment rate in 2014 greater than the unemployment rate in 2011?",
        steps=steps,
        answer=verdict,
        draw=_line_chart(
            years, {"Unemployment": values}, "Unemployment rate", "Percent", _one_decimal
        ),
        metadata={"chart": "line", "template": "compare"},
        right=(verdict, verdict.lower()),
        wrong=("Yes",),
        ask="whether 2014 is higher than 2011",
        topic="the line chart",
    )


def _pq_mc_highest() -> SampleSpec:
    labels = ["Coal", "Gas", "Hydro", "Solar"]
    values = [212, 348, 167, 95]
    gold = values.index(max(values))
    right, wrong = _mc_forms(labels, gold)
    steps = (
        _s(
            "The bar chart shows electricity generated in TWh by four energy sources.",
            "Electricity generation (TWh) is shown for four sources.",
        ),
        *_read_steps(
            [(lab, str(v)) for lab, v in zip(labels, values, strict=False)],
            "bar",
            keys=(labels[gold],),
        ),
        _s(
            f"The tallest bar is {labels[gold]} at {max(values)} TWh.",
            f"{labels[gold]} is the highest bar.",
            True,
        ),
        _s("Solar has the shortest bar at 95 TWh.", "Solar is lowest with 95."),
        _s(f"{labels[gold]} is option {_letter(gold)}.", f"That is choice {_letter(gold)}."),
        _s(
            f"Select option {_letter(gold)} from the provided list of choices.",
            f"Answer {_letter(gold)}.",
        ),
    )
    return SampleSpec(
        item_id="plotqa-05",
        source="plotqa",
        question="Which energy source generated the most electricity?",
        steps=steps,
        answer=_letter(gold),
        draw=_bar_chart(
            labels, values, "Electricity generated by source", "TWh", lambda v: f"{v:.0f}"
        ),
        options=tuple(labels),
        metadata={"chart": "vbar", "template": "argmax"},
        right=right,
        wrong=wrong,
        ask="which source generated the most electricity",
        topic="the bar chart",
    )


def _pq_series_gap() -> SampleSpec:
    years = list(range(2012, 2017))
    exports = [4.20, 4.85, 5.10, 5.60, 6.05]
    imports = [3.90, 3.50, 3.75, 4.25, 4.40]
    k = years.index(2014)
    gap = round(exports[k] - imports[k], 2)
    steps = (
        _s(
            "The line chart shows exports and imports in billion US$ from 2012 to 2016.",
            "Two lines show exports and imports (billion US$), 2012-2016.",
        ),
        _s(
            "The red line is exports and the blue line is imports, according to the legend.",
            "Red = exports, blue = imports.",
        ),
        _s(
            "The exports line stays above the imports line in every year.",
            "Exports are higher than imports throughout.",
        ),
        _s("Locate the year 2014 on the horizontal axis.", "Look at 2014 on the x-axis."),
        _s(
            "Each point is labelled with its value to two decimals.",
            "Points show values with two decimals.",
        ),
        _s(
            f"In 2014 the exports point is labelled {exports[k]:.2f}.",
            f"Exports in 2014: {exports[k]:.2f}.",
            True,
        ),
        _s(
            f"In 2014 the imports point is labelled {imports[k]:.2f}.",
            f"Imports in 2014: {imports[k]:.2f}.",
            True,
        ),
        _s(
            f"The difference is {exports[k]:.2f} - {imports[k]:.2f} = {gap:.2f}.",
            f"{exports[k]:.2f} - {imports[k]:.2f} = {gap:.2f}.",
            True,
        ),
        _s(
            f"So exports exceeded imports by {gap:.2f} billion US$ in 2014.",
            f"The gap is {gap:.2f} billion.",
        ),
    )
    return SampleSpec(
        item_id="plotqa-06",
        source="plotqa",
        question="What is the difference between exports and imports in 2014?",
        steps=steps,
        answer=f"{gap:.2f}",
        draw=_line_chart(
            years,
            {"Exports": exports, "Imports": imports},
            "Exports and imports",
            "Billion US$",
            _two_decimals,
        ),
        difficulty="hard",
        metadata={"chart": "line", "template": "difference"},
        right=(f"{gap:.2f}", f"{gap:.2f} billion", f"${gap:.2f} billion"),
        wrong=(f"{exports[k] - imports[k + 1]:.2f}", "0.5"),
        ask="the gap between exports and imports in 2014",
        topic="the line chart",
    )


def _pq_sum() -> SampleSpec:
    labels = ["North", "South", "East", "West"]
    values = [7850, 4300, 6120, 3400]
    total = values[0] + values[2]
    steps = (
        _s(
            "The bar chart shows the number of students enrolled at four schools.",
            "The chart gives student enrolment for four schools.",
        ),
        _s("Each bar is labelled with its number of students.", "Bar labels give the enrolment."),
        *_read_steps(
            [(lab, _thousands(v)) for lab, v in zip(labels, values, strict=False)],
            "bar",
            keys=("North", "East"),
        ),
        _s(
            "The question needs the North and East schools only.", "Only North and East are needed."
        ),
        _s("South (4,300) and West (3,400) are not included.", "South and West are left out."),
        _s(
            f"Adding them: {_thousands(values[0])} + {_thousands(values[2])} = "
            f"{_thousands(total)}.",
            f"{_thousands(values[0])} + {_thousands(values[2])} = {_thousands(total)}.",
            True,
        ),
    )
    return SampleSpec(
        item_id="plotqa-07",
        source="plotqa",
        question="What is the total number of students enrolled in the North and East schools?",
        steps=steps,
        answer=str(total),
        draw=_bar_chart(labels, values, "Students enrolled by school", "Students", _thousands),
        metadata={"chart": "vbar", "template": "sum"},
        right=(_thousands(total), str(total), f"{_thousands(total)} students"),
        wrong=(_thousands(values[0] + values[1]), _thousands(sum(values))),
        ask="the combined enrolment of North and East",
        topic="the bar chart",
    )


def _pq_hbar_compare() -> SampleSpec:
    labels = ["Peru", "Ghana", "Nepal", "Fiji"]
    values = [62.5, 37.5, 41.0, 58.5]
    fiji, nepal = values[3], values[2]
    steps = (
        _s(
            "The horizontal bar chart shows the share of households with internet access, in "
            "percent.",
            "The chart gives household internet access (%) by country.",
        ),
        _s(
            "The four countries are Peru, Ghana, Nepal and Fiji.",
            "Countries: Peru, Ghana, Nepal, Fiji.",
        ),
        _s(f"The bar for Fiji ends at {fiji}%.", f"Fiji: {fiji}%.", True),
        _s(f"The bar for Nepal ends at {nepal}%.", f"Nepal: {nepal}%.", True),
        _s(f"{fiji} is greater than {nepal}.", f"{fiji} > {nepal}.", True),
        _s("Fiji's bar is visibly longer than Nepal's bar.", "Fiji's bar is longer."),
        _s("So Fiji has a higher share than Nepal.", "Fiji's share is higher.", True),
        _s("The answer is yes.", "Yes."),
    )
    return SampleSpec(
        item_id="plotqa-08",
        source="plotqa",
        question="Does Fiji have a higher share of households with internet access than Nepal?",
        steps=steps,
        answer="Yes",
        draw=_bar_chart(
            labels,
            values,
            "Households with internet access",
            "Percent",
            _one_decimal,
            horizontal=True,
        ),
        answer_type="yes_no",
        metadata={"chart": "hbar", "template": "compare"},
        right=("Yes", "yes", "Yes."),
        wrong=("No",),
        ask="whether Fiji's share exceeds Nepal's",
        topic="the bar chart",
    )


def plotqa_specs() -> list[SampleSpec]:
    """The eight PlotQA-style specs, in benchmark order (nothing is drawn yet)."""
    return [
        _pq_range(),
        _pq_argmax(),
        _pq_average(),
        _pq_compare_years(),
        _pq_mc_highest(),
        _pq_series_gap(),
        _pq_sum(),
        _pq_hbar_compare(),
    ]
