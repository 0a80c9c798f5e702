"""Charts: SVGs parse as XML and carry their title, axis labels and legend; PNGs decode."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest
from PIL import Image

from wheretorun.engine.finance import (
    BreakEvenVariable,
    CostCategory,
    Distribution,
    DistributionKind,
    FinanceAssumptions,
    OpexLine,
    OwnedCapacity,
    Plan,
    Scenario,
    SensitivityRange,
    Traffic,
    UnitOpexLine,
    UsageLine,
    break_even,
    evaluate,
    monte_carlo,
    sensitivity,
)
from wheretorun.reports import (
    ChartFormat,
    break_even_chart,
    cost_stack_chart,
    monte_carlo_chart,
    tornado_chart,
)

SVG = "{http://www.w3.org/2000/svg}"
SCENARIO = Scenario(
    plans=(
        Plan("hosted API", usage=(UsageLine("tokens", 1.0),)),
        Plan(
            "owned 8xH100",
            opex=(OpexLine("staff", 6_000.0, CostCategory.STAFF),),
            capacity=OwnedCapacity(
                tokens_per_month_per_unit=3e10,
                capex_usd_per_unit=300_000.0,
                burst_usd_per_million_tokens=1.0,
                lead_time_months=2,
                initial_units=1,
                utilisation=0.6,
                unit_opex=(UnitOpexLine("power", 900.0, CostCategory.POWER),),
            ),
        ),
    ),
    traffic=Traffic(tokens_per_month=2e10, growth_per_month=0.04),
    assumptions=FinanceAssumptions(horizon_months=24),
)

CHARTS: dict[str, tuple[Callable[[ChartFormat], bytes], list[str]]] = {
    "break-even": (
        lambda fmt: break_even_chart(break_even(SCENARIO, "hosted API", "owned 8xH100"), fmt),
        ["Break-even: hosted API vs owned 8xH100", "Traffic in month 1 (tokens per month)", "break-even at"],
    ),
    "cost stack": (
        lambda fmt: cost_stack_chart(evaluate(SCENARIO), fmt),
        [
            "Cumulative cost by category",
            "Cumulative cost (USD)",
            "Month",
            "hardware",
            "net of residual value",
        ],
    ),
    "tornado": (
        lambda fmt: tornado_chart(
            sensitivity(
                SCENARIO,
                [SensitivityRange("traffic", 0.5, 1.5), SensitivityRange("electricity", 0.5, 2.0)],
            ),
            "owned 8xH100",
            fmt,
        ),
        [
            "Sensitivity: owned 8xH100",
            "Total cost over the horizon (USD)",
            "input at its low value",
            "traffic",
        ],
    ),
    "monte carlo": (
        lambda fmt: monte_carlo_chart(
            monte_carlo(
                SCENARIO,
                (Distribution("traffic", DistributionKind.LOGNORMAL, 0.5, 2.0),),
                samples=2000,
                seed=1,
            ),
            fmt,
        ),
        ["Monte Carlo: 2,000 samples (seed 1)", "Samples per bin", "P50 (solid line)", "cheapest in"],
    ),
}


def svg_texts(data: bytes) -> str:
    root = ET.fromstring(data)
    assert root.tag == f"{SVG}svg"
    return "\n".join("".join(element.itertext()) for element in root.iter(f"{SVG}text"))


@pytest.mark.parametrize("name", list(CHARTS))
def test_svg_parses_and_says_what_it_shows(name: str) -> None:
    render, expected = CHARTS[name]
    texts = svg_texts(render(ChartFormat.SVG))
    for text in expected:
        assert text in texts, f"{text!r} missing from the {name} chart"


@pytest.mark.parametrize("name", list(CHARTS))
def test_png_decodes(name: str) -> None:
    render, _ = CHARTS[name]
    data = render(ChartFormat.PNG)
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG"
        assert image.width >= 600
        assert image.height >= 300


def test_svg_is_reproducible() -> None:
    render, _ = CHARTS["cost stack"]
    assert render(ChartFormat.SVG) == render(ChartFormat.SVG)


def test_break_even_chart_says_never() -> None:
    result = break_even(SCENARIO, "hosted API", "owned 8xH100", low=1e6, high=1e8)
    assert result.never
    assert "no break-even in this range" in svg_texts(break_even_chart(result))


def test_horizon_and_utilisation_break_even_charts_label_their_axis() -> None:
    horizon = break_even(SCENARIO, "hosted API", "owned 8xH100", BreakEvenVariable.HORIZON)
    assert "Horizon (months)" in svg_texts(break_even_chart(horizon))
    utilisation = break_even(SCENARIO, "hosted API", "owned 8xH100", BreakEvenVariable.UTILISATION)
    assert "Planned utilisation (fraction of rated capacity)" in svg_texts(break_even_chart(utilisation))


def test_tornado_of_an_unknown_plan_is_an_error() -> None:
    result = sensitivity(SCENARIO, [SensitivityRange("traffic", 0.5, 1.5)])
    with pytest.raises(KeyError):
        tornado_chart(result, "nope")


def test_the_format_may_be_a_string() -> None:
    assert cost_stack_chart(evaluate(SCENARIO), "png").startswith(b"\x89PNG")  # type: ignore[arg-type]
    assert b"<svg" in cost_stack_chart(evaluate(SCENARIO), "svg")  # type: ignore[arg-type]


STRANGE_NAMES = (
    "hosted\x9aAPI\x01",
    "owned 漢字 🚀",
)  # a C1 and a C0 control; a script and a symbol DejaVu lacks


@pytest.mark.parametrize("fmt", [ChartFormat.SVG, ChartFormat.PNG])
def test_plan_names_any_client_may_send_are_drawn(fmt: ChartFormat) -> None:
    """A plan name is the client's text: control characters are left out, characters the font
    lacks are drawn as boxes; every chart renders (warnings are errors in this suite, as a
    missing glyph's warning was a 500 before)."""
    hosted, owned = STRANGE_NAMES
    plans = (
        Plan(hosted, usage=SCENARIO.plans[0].usage),
        Plan(owned, opex=SCENARIO.plans[1].opex, capacity=SCENARIO.plans[1].capacity),
    )
    scenario = Scenario(plans=plans, traffic=SCENARIO.traffic, assumptions=SCENARIO.assumptions)
    charts = [
        break_even_chart(break_even(scenario, hosted, owned), fmt),
        cost_stack_chart(evaluate(scenario), fmt),
        tornado_chart(sensitivity(scenario, [SensitivityRange("traffic", 0.5, 1.5)]), owned, fmt),
        monte_carlo_chart(
            monte_carlo(scenario, (Distribution("traffic", DistributionKind.LOGNORMAL, 0.5, 2.0),), 200, 1),
            fmt,
        ),
    ]
    if fmt is ChartFormat.SVG:
        texts = [svg_texts(chart) for chart in charts]  # well-formed XML: no C0 control left
        assert "Break-even: hostedAPI vs owned 漢字 🚀" in texts[0]
        assert "Sensitivity: owned 漢字 🚀" in texts[2]
        assert not any(char in text for text in texts for char in "\x9a\x01")
    else:
        assert all(chart.startswith(b"\x89PNG\r\n\x1a\n") for chart in charts)
