"""Charts of finance results as SVG or PNG bytes, drawn with matplotlib's Agg renderer.

Figures are built with `matplotlib.figure.Figure` (never pyplot): no GUI, no global figure
state, safe in a server thread. SVG text stays text (`svg.fonttype = none`), so titles and
labels are searchable and the file is small; the SVG carries no date, so the same result gives
the same bytes.

    break_even_chart(break_even_result)        plan A and plan B cost against the variable
    cost_stack_chart(evaluation)               cumulative cost by category, one panel per plan
    tornado_chart(sensitivity_result, plan)    swing of one plan's cost per input, largest on top
    monte_carlo_chart(monte_carlo_result)      distribution of each plan's cost, P10/P50/P90
"""

from __future__ import annotations

import io
import threading
import unicodedata
import warnings
from enum import StrEnum

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter

from wheretorun.engine.finance import (
    BreakEven,
    BreakEvenVariable,
    CostCategory,
    CrossingKind,
    Evaluation,
    Metric,
    MonteCarloResult,
    Sensitivity,
)

__all__ = ["ChartFormat", "break_even_chart", "cost_stack_chart", "monte_carlo_chart", "tornado_chart"]


class ChartFormat(StrEnum):
    SVG = "svg"
    PNG = "png"


_PNG_DPI = 110
_PLAN_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f")
_CATEGORY_COLOURS = dict(
    zip(
        CostCategory,
        (
            "#4e79a7",  # hardware
            "#f28e2b",  # compute
            "#e15759",  # tokens
            "#edc948",  # power
            "#76b7b2",  # colocation
            "#59a14f",  # staff
            "#b07aa1",  # maintenance
            "#ff9da7",  # network
            "#9c755f",  # storage
            "#bab0ac",  # software
            "#7f7f7f",  # other
        ),
        strict=True,
    )
)
_METRIC_AXIS = {
    Metric.TOTAL: "Total cost over the horizon (USD)",
    Metric.NPV: "Present value of costs (USD)",
}
_VARIABLE_AXIS = {
    BreakEvenVariable.VOLUME: "Traffic in month 1 (tokens per month)",
    BreakEvenVariable.UTILISATION: "Planned utilisation (fraction of rated capacity)",
    BreakEvenVariable.HORIZON: "Horizon (months)",
}


# --- number formats ---------------------------------------------------------------------------


def _usd(value: float, _position: object = None) -> str:
    magnitude = abs(value)
    sign = "-" if value < 0 else ""
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if magnitude >= size:
            return f"{sign}${magnitude / size:.3g}{suffix}"
    return f"{sign}${magnitude:.3g}"


def _count(value: float, _position: object = None) -> str:
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"


_USD_FORMATTER = FuncFormatter(_usd)
_COUNT_FORMATTER = FuncFormatter(_count)


# --- rendering ------------------------------------------------------------------------------


def _figure(width: float, height: float) -> Figure:
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


_DRAWING = threading.Lock()


def _render(figure: Figure, title: str, fmt: ChartFormat) -> bytes:
    """The figure as bytes in `fmt`; the SVG keeps its text as text and carries no date.

    Plan names are the user's text: control characters, which no font draws, are left out, and
    a character the font lacks (a script DejaVu Sans does not cover) is drawn as a box without
    the warning matplotlib gives for it. The warnings filter is process-wide state, so charts
    are drawn one at a time (CPU-bound under the GIL, they would take turns anyway)."""
    for text in figure.findobj(Text):
        text.set_text(_drawable(text.get_text()))
    title = _drawable(title)
    buffer = io.BytesIO()
    with _DRAWING, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from font", category=UserWarning)
        if ChartFormat(fmt) is ChartFormat.SVG:
            with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "wheretorun"}):
                figure.savefig(buffer, format="svg", metadata={"Title": title, "Date": None})
        else:
            figure.savefig(buffer, format="png", dpi=_PNG_DPI, metadata={"Title": title})
    return buffer.getvalue()


def _drawable(text: str) -> str:
    """`text` without control characters (a line break stays: titles use it)."""
    return "".join(char for char in text if char == "\n" or unicodedata.category(char) != "Cc")


def _style(axes: Axes) -> None:
    axes.grid(True, alpha=0.3)
    axes.spines[["top", "right"]].set_visible(False)


# --- break-even -----------------------------------------------------------------------------


def break_even_chart(result: BreakEven, fmt: ChartFormat = ChartFormat.SVG) -> bytes:
    """The two plans' costs against the break-even variable, with each crossing marked."""
    title = f"Break-even: {result.plan_a} vs {result.plan_b}"
    figure = _figure(8, 5)
    axes = figure.add_subplot()
    xs = np.array([point.x for point in result.curve])
    for index, (name, costs) in enumerate(
        (
            (result.plan_a, [point.plan_a_usd for point in result.curve]),
            (result.plan_b, [point.plan_b_usd for point in result.curve]),
        )
    ):
        axes.plot(xs, costs, color=_PLAN_COLOURS[index], linewidth=2, label=name)
    for crossing in result.crossings:
        how = "costs equal" if crossing.kind is CrossingKind.EQUAL else "costs jump past each other"
        label = f"break-even at {_variable_value(result, crossing.x)} ({how})"
        axes.axvline(crossing.x, color="black", linestyle="--", linewidth=1, label=label)
        axes.plot([crossing.x], [crossing.plan_a_usd], "ko")
    if result.never:
        axes.text(
            0.5,
            0.95,
            "no break-even in this range",
            transform=axes.transAxes,
            ha="center",
            va="top",
            fontsize=11,
        )
    if result.variable is BreakEvenVariable.VOLUME:
        if result.low > 0:
            axes.set_xscale("log")
        axes.xaxis.set_major_formatter(_COUNT_FORMATTER)
    axes.yaxis.set_major_formatter(_USD_FORMATTER)
    axes.set_title(title)
    axes.set_xlabel(_VARIABLE_AXIS[result.variable])
    axes.set_ylabel(_METRIC_AXIS[result.metric])
    axes.set_ylim(bottom=0)
    _style(axes)
    axes.legend(loc="best")
    return _render(figure, title, fmt)


def _variable_value(result: BreakEven, x: float) -> str:
    if result.variable is BreakEvenVariable.VOLUME:
        return f"{_count(x)} tokens/month"
    if result.variable is BreakEvenVariable.UTILISATION:
        return f"{x:.0%} utilisation"
    return f"{x:.1f} months"


# --- cost stack -----------------------------------------------------------------------------


def cost_stack_chart(evaluation: Evaluation, fmt: ChartFormat = ChartFormat.SVG) -> bytes:
    """Cumulative spending by cost category over the months, one panel per plan (shared axes),
    and the cumulative net cost (after the residual value credit of the last month)."""
    title = "Cumulative cost by category"
    plans = evaluation.plans
    figure = _figure(min(4.2 * len(plans) + 1.5, 18), 5.2)
    panels = figure.subplots(1, len(plans), sharey=True, squeeze=False)[0]
    used = [c for c in CostCategory if any(line.category is c for plan in plans for line in plan.lines)]
    for axes, plan in zip(panels, plans, strict=True):
        months = np.array([month.month for month in plan.months])
        stacks = [
            np.cumsum(np.sum([line.monthly_usd for line in plan.lines if line.category is c], axis=0))
            if any(line.category is c for line in plan.lines)
            else np.zeros(len(months))
            for c in used
        ]
        axes.stackplot(
            months,
            stacks,
            labels=[c.value for c in used],
            colors=[_CATEGORY_COLOURS[c] for c in used],
            alpha=0.9,
        )
        net = [month.cumulative_usd for month in plan.months]
        axes.plot(months, net, color="black", linewidth=1.6, label="net of residual value")
        axes.set_title(f"{plan.name}\ntotal {_usd(plan.total_usd)}", fontsize=10)
        axes.set_xlabel("Month")
        axes.set_xlim(months[0], months[-1])
        axes.yaxis.set_major_formatter(_USD_FORMATTER)
        _style(axes)
    panels[0].set_ylabel("Cumulative cost (USD)")
    handles, labels = panels[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside right center", title="Cost category")
    figure.suptitle(title)
    return _render(figure, title, fmt)


# --- tornado --------------------------------------------------------------------------------


def tornado_chart(result: Sensitivity, plan: str, fmt: ChartFormat = ChartFormat.SVG, top: int = 12) -> bytes:
    """How far each input moves `plan`'s cost, from the base case: the `top` largest swings,
    largest on top; inputs that do not move it are left out."""
    tornado = result.plan(plan)
    bars = [bar for bar in tornado.bars if bar.swing_usd > 0][:top]
    title = f"Sensitivity: {plan}"
    figure = _figure(9, 1.6 + 0.45 * max(len(bars), 3))
    axes = figure.add_subplot()
    base = tornado.base_usd
    positions = np.arange(len(bars))
    lows = [bar.low_usd - base for bar in bars]
    highs = [bar.high_usd - base for bar in bars]
    axes.barh(positions, lows, left=base, color="#4e79a7", label="input at its low value")
    axes.barh(positions, highs, left=base, color="#f28e2b", label="input at its high value")
    axes.set_yticks(positions, [f"{bar.input}  [{bar.low:g} – {bar.high:g}]" for bar in bars])
    axes.invert_yaxis()
    axes.axvline(base, color="black", linewidth=1, label=f"base case {_usd(base)}")
    if not bars:
        axes.text(0.5, 0.5, "no input moves this plan's cost", transform=axes.transAxes, ha="center")
    axes.xaxis.set_major_formatter(_USD_FORMATTER)
    axes.set_xlabel(_METRIC_AXIS[result.metric])
    axes.set_title(title)
    _style(axes)
    axes.legend(loc="lower right", fontsize=8)
    return _render(figure, title, fmt)


# --- Monte Carlo ----------------------------------------------------------------------------


def monte_carlo_chart(result: MonteCarloResult, fmt: ChartFormat = ChartFormat.SVG) -> bytes:
    """Histogram of each plan's cost over the samples, with its P10 and P90 (dotted) and P50
    (solid). The axis stops at the 99.5th percentile of all samples (and says so) so that a
    long tail does not squash the picture."""
    title = f"Monte Carlo: {result.samples:,} samples (seed {result.seed})"
    outcomes = result.outcomes_usd
    figure = _figure(9, 5)
    axes = figure.add_subplot()
    low, high = np.percentile(outcomes, [0.0, 99.5])
    if high <= low:
        low, high = low - 0.5 * max(abs(low), 1.0), high + 0.5 * max(abs(high), 1.0)
    bins = [float(edge) for edge in np.linspace(low, high, 60)]
    for index, outcome in enumerate(result.plans):
        colour = _PLAN_COLOURS[index % len(_PLAN_COLOURS)]
        label = f"{outcome.plan}: P50 {_usd(outcome.p50_usd)}, cheapest in {outcome.probability_cheapest:.0%}"
        values = outcomes[:, index]
        axes.hist(values, bins=bins, histtype="stepfilled", alpha=0.25, color=colour)
        axes.hist(values, bins=bins, histtype="step", linewidth=1.5, color=colour, label=label)
        axes.axvline(outcome.p50_usd, color=colour, linewidth=2)
        for percentile in (outcome.p10_usd, outcome.p90_usd):
            axes.axvline(percentile, color=colour, linewidth=1.2, linestyle=":")
    axes.plot([], [], color="black", linewidth=2, label="P50 (solid line)")
    axes.plot([], [], color="black", linewidth=1.2, linestyle=":", label="P10 and P90 (dotted lines)")
    axes.set_xlim(low, high)
    axes.xaxis.set_major_formatter(_USD_FORMATTER)
    axes.set_xlabel(_METRIC_AXIS[result.metric] + ", cut at the 99.5th percentile of all samples")
    axes.set_ylabel("Samples per bin")
    axes.set_title(title)
    _style(axes)
    axes.legend(loc="upper right", fontsize=9)
    return _render(figure, title, fmt)
