"""Folding ranked plans into rows (`recommend._fold`) and the suspect hosted prices of a request's
models (`acceptable_models.rows_of_catalog_models`), each against the rule written plainly: every
plan compared with every earlier row, every price row read."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from wheretorun.engine.catalog import ApiPriceOffer
from wheretorun.engine.costs.candidate import CostedCandidate, PricedCandidate
from wheretorun.engine.planning.acceptable_models import rows_of_catalog_models
from wheretorun.engine.recommend import _fold, _ranked
from wheretorun.engine.recommendation import Setup
from wheretorun.engine.workload import OptionKind

_KINDS = (OptionKind.HOSTED_API, OptionKind.CLOUD, OptionKind.OWNED)
_NAMES = ("a", "b", "c")


def _never_written() -> CostedCandidate:
    raise AssertionError("folding reads totals, labels and setups only")


@st.composite
def ranked_plans(draw: st.DrawFn) -> list[PricedCandidate]:
    """Plans of a few kinds, providers and models whose totals often lie within half a percent
    of each other (a base total times small factors), ranked as the recommender ranks them."""
    base = draw(st.sampled_from([0.0, 0.004, 1.0, 10_000.0, 250_000.0]))
    plans = []
    for index in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(_KINDS))
        total = base * draw(st.sampled_from([1.0, 1.001, 1.004, 1.006, 1.02])) + draw(
            st.sampled_from([0.0, 0.003, 0.01])
        )
        plans.append(
            PricedCandidate(
                option=kind,
                label=f"plan {index}",
                setup=Setup(model_id=draw(st.sampled_from(_NAMES)), provider=draw(st.sampled_from(_NAMES))),
                total_usd=total,
                months=12,
                capex_usd=0.0,
                write=_never_written,
            )
        )
    return list(_ranked(plans))


def _folded_plainly(plans: list[PricedCandidate]) -> list[tuple[str, list[str]]]:
    """The rule: a plan joins the first earlier row of its kind from the same provider (for hosted
    APIs, or serving the same model) whose total is within half a percent of the plan's (at least
    half a cent); otherwise it starts a row."""
    rows: list[tuple[PricedCandidate, list[str]]] = []
    for plan in plans:
        for head, folded in rows:
            same_source = head.setup.provider == plan.setup.provider or (
                plan.option == OptionKind.HOSTED_API and head.setup.model_id == plan.setup.model_id
            )
            near = abs(plan.total_usd - head.total_usd) <= 0.005 * max(abs(head.total_usd), 1.0)
            if head.option == plan.option and same_source and near:
                folded.append(plan.label)
                break
        else:
            rows.append((plan, []))
    return [(head.label, folded) for head, folded in rows]


@given(ranked_plans())
def test_folding_follows_the_rule(plans: list[PricedCandidate]) -> None:
    assert [(head.label, folded) for head, folded in _fold(plans)] == _folded_plainly(plans)


@st.composite
def spread_plans(draw: st.DrawFn) -> list[PricedCandidate]:
    """Many plans of few sources whose totals spread over a wide range (some negative, some tied,
    some within half a percent of others), ranked: most rows are passed long before the last
    plan, which `_fold` drops as it goes."""
    steps = st.sampled_from([0.0, 0.001, 0.004, 0.006, 0.03, 0.5])
    total = draw(st.sampled_from([-500.0, -0.5, 0.0, 0.002, 3.0, 40_000.0]))
    plans = []
    for index in range(draw(st.integers(0, 40))):
        total += draw(steps) * max(abs(total), 1.0)
        plans.append(
            PricedCandidate(
                option=draw(st.sampled_from(_KINDS)),
                label=f"plan {index}",
                setup=Setup(model_id=draw(st.sampled_from(_NAMES)), provider=draw(st.sampled_from(_NAMES))),
                total_usd=total,
                months=12,
                capex_usd=0.0,
                write=_never_written,
            )
        )
    return list(_ranked(plans))


@given(spread_plans())
def test_folding_follows_the_rule_over_a_wide_range_of_totals(plans: list[PricedCandidate]) -> None:
    assert [(head.label, folded) for head, folded in _fold(plans)] == _folded_plainly(plans)


def test_a_hosted_plan_folds_into_the_first_row_of_its_provider_or_its_model() -> None:
    def plan(label: str, provider: str, model: str, total: float) -> PricedCandidate:
        setup = Setup(model_id=model, provider=provider)
        return PricedCandidate(OptionKind.HOSTED_API, label, setup, total, 12, 0.0, _never_written)

    plans = [
        plan("p-model-x", "p", "x", 100.0),
        plan("q-model-y", "q", "y", 100.1),
        plan("q-model-x", "q", "x", 100.2),  # the model of row 0, the provider of row 1: row 0 first
        plan("r-model-z", "r", "z", 100.3),
        plan("q-model-z", "q", "z", 100.7),  # 0.6% above row 1 (its provider): row 2 (its model)
    ]
    assert [(head.label, folded) for head, folded in _fold(plans)] == [
        ("p-model-x", ["q-model-x"]),
        ("q-model-y", []),
        ("r-model-z", ["q-model-z"]),
    ]


def test_half_a_percent_is_of_the_heads_total() -> None:
    """Within half a percent of the head's total folds; a plan whose own total would admit the
    head (0.502 <= 0.5% of 100.502, but > 0.5% of 100.0) starts its own row."""

    def plan(label: str, total: float) -> PricedCandidate:
        setup = Setup(model_id="x", provider="p", accelerator_id="H100")
        return PricedCandidate(OptionKind.CLOUD, label, setup, total, 12, 0.0, _never_written)

    folded = _fold([plan("head", 100.0), plan("near", 100.5), plan("past", 100.502)])
    assert [(head.label, labels) for head, labels in folded] == [("head", ["near"]), ("past", [])]


def _price(position: int, catalog_model: str | None) -> ApiPriceOffer:
    return ApiPriceOffer(
        id=position,
        provider="p",
        model_id=f"hosted-{position}",
        catalog_model_id=catalog_model,
        input_usd_per_million_tokens=Decimal("1"),
        cached_input_usd_per_million_tokens=None,
        output_usd_per_million_tokens=Decimal("2"),
        batch_input_usd_per_million_tokens=None,
        batch_output_usd_per_million_tokens=None,
        context_window_tokens=None,
        source="test",
        suspect_reason="test",
    )


@given(
    st.lists(st.sampled_from([None, *_NAMES]), max_size=30),
    st.sets(st.sampled_from(["a", "b", "c", "d"])),
)
def test_the_rows_of_catalog_models_are_those_a_full_scan_finds_in_table_order(
    models_of_rows: list[str | None], wanted: set[str]
) -> None:
    table = tuple(_price(position, model) for position, model in enumerate(models_of_rows))
    assert rows_of_catalog_models(table, wanted) == [row for row in table if row.catalog_model_id in wanted]


def test_the_rows_are_remembered_per_table_not_across_tables() -> None:
    first = (_price(0, "a"), _price(1, "b"))
    second = (_price(0, "b"), _price(1, "a"), _price(2, "a"))
    assert [row.id for row in rows_of_catalog_models(first, {"a"})] == [0]
    assert [row.id for row in rows_of_catalog_models(second, {"a"})] == [1, 2]
    assert [row.id for row in rows_of_catalog_models(first, {"a", "b"})] == [0, 1]
