"""The answer reads right: shares of the right base, folded rows, binding constraints."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.recommend_catalog import TOGETHER_8B, api_price, snapshot
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.costs.candidate import CostedCandidate, Line
from wheretorun.engine.explain import rationale
from wheretorun.engine.recommend import recommend
from wheretorun.engine.recommendation import Setup
from wheretorun.engine.workload import Constraints, InferenceWorkload, OptionKind


def _plan(label: str, lines: tuple[Line, ...]) -> CostedCandidate:
    return CostedCandidate(OptionKind.OWNED, label, Setup(model_id="m"), lines, months=12)


def test_the_largest_cost_is_a_share_of_the_costs_paid_not_of_a_total_lowered_by_resale() -> None:
    # paid: 100 + 20 = 120; resale -80 makes the total 40. Purchase is 100 / 120 = 83% of the costs
    # paid (as a share of the 40 total it would read 250%).
    plan = _plan(
        "owned", (Line("hardware purchase", 100.0), Line("power", 20.0), Line("resale value", -80.0))
    )
    text = rationale(plan, 0, plan, None)
    assert "hardware purchase (83% of the costs paid)" in text
    assert "250%" not in text


def test_a_cheap_cost_per_token_is_not_written_as_zero() -> None:
    """The nightly batch's $16.20 job over 2.2e9 tokens is $0.0074 per million all-in and
    $0.0032 without the staff minimum: the text says so, not "$0.01" and "$0.00"."""
    lines = (Line("instance hours", 7.04), Line("operations staff", 9.16))
    plan = dataclasses.replace(_plan("job", lines), months=None, tokens=2.2e9)
    text = rationale(plan, 0, plan, None)
    assert "or $0.0074 per million tokens all-in ($0.0032 without the fixed staff minimum)" in text
    dear = dataclasses.replace(plan, lines=(Line("instance hours", 7_040.0), Line("operations staff", 9.16)))
    assert "or $3.20 per million tokens all-in" in rationale(dear, 0, dear, None)


def test_a_much_dearer_option_reads_as_a_multiple_not_a_huge_percentage() -> None:
    cheap = _plan("cheap", (Line("tokens", 2.95),))
    dear = _plan("dear", (Line("servers", 44_500.0 + 2.95),))
    text = rationale(dear, 1, cheap, None)
    # 44,502.95 / 2.95 = 15,085.74 times
    assert "15,085.7 times the cheapest" in text
    assert "%" not in text.split("more than the cheapest")[1].split(".")[0]
    near = _plan("near", (Line("tokens", 3.54),))
    assert "(20% more)" in rationale(near, 1, cheap, None)  # 0.59 / 2.95


def test_resellers_of_one_model_at_one_price_are_one_row() -> None:
    twin = api_price(
        99, "fireworks_ai", "fireworks_ai/llama-v3p1-8b-instruct", "llama-3.1-8b", "0.18", "0.18"
    )
    workload = InferenceWorkload(
        models=("llama-3.1-8b",), requests_per_day=300, input_tokens=800, output_tokens=200
    )
    catalog = snapshot()
    catalog = dataclasses.replace(catalog, api_prices=(*catalog.api_prices, twin))
    result = recommend(
        workload, Constraints(allowed_options=(OptionKind.HOSTED_API,)), Assumptions(), catalog
    )
    labels = [option.label for option in result.options]
    assert len(result.options) == 1, labels
    assert len(result.options[0].same_total) == 1
    assert {result.options[0].label, result.options[0].same_total[0]} == {
        "together_ai together_ai/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo",
        "fireworks_ai fireworks_ai/llama-v3p1-8b-instruct",
    }


def test_different_prices_stay_separate_rows() -> None:
    dearer = dataclasses.replace(TOGETHER_8B, id=98, provider="other", model_id="other/llama-8b")
    dearer = dataclasses.replace(dearer, input_usd_per_million_tokens=dearer.input_usd_per_million_tokens * 3)
    workload = InferenceWorkload(
        models=("llama-3.1-8b",), requests_per_day=300_000, input_tokens=800, output_tokens=200
    )
    catalog = dataclasses.replace(snapshot(), api_prices=(TOGETHER_8B, dearer))
    result = recommend(
        workload, Constraints(allowed_options=(OptionKind.HOSTED_API,)), Assumptions(), catalog
    )
    assert len(result.options) == 2
    assert all(not option.same_total for option in result.options)


def test_an_infeasible_request_names_each_binding_constraint_and_what_lifting_it_admits() -> None:
    workload = InferenceWorkload(
        models=("llama-3.1-8b",), requests_per_day=300, input_tokens=800, output_tokens=200
    )
    # $100 a month is below every option (the hosted staff minimum alone is $900 a month)
    constraints = Constraints(max_usd_per_month=100.0, allowed_options=(OptionKind.HOSTED_API,))
    result = recommend(workload, constraints, Assumptions(horizon_months=12), snapshot())
    assert result.options == ()
    by_field = {binding.constraint: binding for binding in result.binding_constraints}
    budget = by_field["constraints.max_usd_per_month"]
    assert budget.cheapest_label == "together_ai together_ai/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo"
    # 12 months x ($900 staff + 300 x 30.4 days x 1,000 tokens x $0.18 / 1e6)
    assert float(budget.cheapest_total_usd) == pytest.approx(
        12 * 900 + 300 / 24 * 8760 * 1000 * 0.18 / 1e6, rel=1e-3
    )
    assert "per million tokens" in budget.cheapest_figure
    # lifting only the option filter still leaves everything above $100 a month
    assert by_field["constraints.allowed_options"].cheapest_label is None


def test_a_feasible_request_has_no_binding_constraints() -> None:
    workload = InferenceWorkload(
        models=("llama-3.1-8b",), requests_per_day=300, input_tokens=800, output_tokens=200
    )
    result = recommend(workload, Constraints(), Assumptions(horizon_months=12), snapshot())
    assert result.options
    assert result.binding_constraints == ()


_WORKLOAD = InferenceWorkload(
    models=("llama-3.1-8b", "llama-3.3-70b"), requests_per_day=20_000, input_tokens=1000, output_tokens=250
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    excluded=st.sets(st.sampled_from(["aws", "gcp", "together_ai", "deepinfra", "openai"]), max_size=3),
    options=st.sets(st.sampled_from(list(OptionKind)), min_size=1, max_size=4),
    budget=st.one_of(st.none(), st.floats(500, 50_000)),
)
def test_adding_a_constraint_never_lowers_the_best_total(
    excluded: set[str], options: set[OptionKind], budget: float | None
) -> None:
    assumptions = Assumptions(horizon_months=12)
    free = recommend(_WORKLOAD, Constraints(), assumptions, snapshot(), explain_infeasible=False)
    bound = recommend(
        _WORKLOAD,
        Constraints(
            excluded_providers=tuple(sorted(excluded)),
            allowed_options=tuple(sorted(options)),
            max_usd_per_month=budget,
        ),
        assumptions,
        snapshot(),
        explain_infeasible=False,
    )
    assert free.options
    if bound.options:
        assert bound.options[0].total_usd >= free.options[0].total_usd


def test_an_option_s_money_is_each_figure_rounded_once_to_the_cent() -> None:
    """`_option` rounds no zero capex and no opex equal to the monthly cost again: the figures are
    those rounded one by one, to the digit and the exponent."""
    from wheretorun.engine.recommend import _option

    lines = (Line("instance hours", 1200.004), Line("operations staff", 0.0), Line("egress", -0.001))
    plan = dataclasses.replace(_plan("cloud", lines), opex_usd_per_month=1200.003 / 12, tokens=3e9)
    option = _option(plan, 0, [plan], None)
    assert str(option.capex_usd) == "0.00"  # the digit and the exponent
    assert str(option.opex_usd_per_month) == str(option.usd_per_month) == "100.00"
    assert [str(line.usd) for line in option.breakdown] == ["1200.00", "0.00", "0.00"]
    assert option.rationale == rationale(plan, 0, plan, None)


def test_an_option_with_an_infinite_line_is_refused() -> None:
    from wheretorun.engine.recommend import _option

    plan = _plan("owned", (Line("hardware purchase", float("inf")), Line("power", 1.0)))
    with pytest.raises(ValueError, match="must be finite"):
        _option(plan, 0, [plan], None)
