"""The answer of a recommendation: read once from the engine's values, with the assumptions' reads
shared by the requests that send the same overrides, and the same to the byte as read model by model."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError

from tests.unit.recommend_catalog import snapshot
from wheretorun.engine.recommendation import (
    BindingConstraint,
    CostLine,
    HybridPart,
    PlanOption,
    Recommendation,
    RejectedGroup,
    Setup,
)
from wheretorun.errors import InvalidInput
from wheretorun.services.recommendation_reads import (
    BindingConstraintRead,
    BreakEvenRead,
    CostLineRead,
    HybridPartRead,
    OptionRead,
    RecommendationAnswer,
    RecommendationRead,
    RejectedRead,
    SetupRead,
)
from wheretorun.services.recommendation_schemas import AssumptionsIn, RecommendationCreate
from wheretorun.services.snapshot_recommendations import (
    assumption_reads,
    engine_assumptions,
    engine_inputs,
    recommend_on_snapshot,
    recommendation_answer,
    recommendation_json,
    recommendation_read,
)

_WRITER = TypeAdapter(RecommendationRead)


def _body(constraints: dict[str, Any] | None = None, **assumptions: Any) -> RecommendationCreate:
    return RecommendationCreate.model_validate(
        {
            "workload": {
                "kind": "inference",
                "models": ["llama-3.3-70b"],
                "requests_per_day": 20_000,
                "input_tokens": 800,
                "output_tokens": 200,
            },
            "constraints": constraints or {},
            "assumptions": assumptions,
        }
    )


def _recommendation(body: RecommendationCreate) -> Recommendation:
    inputs = engine_inputs(body.workload, body.constraints, body.assumptions, lambda name: name)
    return recommend_on_snapshot(inputs, snapshot())


def _read_model_by_model(recommendation: Recommendation, limit: int | None) -> RecommendationRead:
    """The answer as it was written before it was read in one validation (2026-12-05)."""
    options = recommendation.options[:limit] if limit else recommendation.options
    return RecommendationRead(
        workload_kind=recommendation.workload_kind,
        options=[OptionRead.model_validate(option) for option in options],
        best_per_option={
            kind.value: OptionRead.model_validate(option)
            for kind, option in recommendation.best_per_option.items()
        },
        rejected=[RejectedRead.model_validate(group) for group in recommendation.rejected],
        break_even=None
        if recommendation.break_even is None
        else BreakEvenRead.model_validate(recommendation.break_even),
        assumptions=assumption_reads(recommendation.assumptions),
        catalog_version=recommendation.catalog_version,
        as_of=recommendation.as_of,
        candidates_evaluated=recommendation.candidates_evaluated,
        notes=list(recommendation.notes),
        binding_constraints=[
            BindingConstraintRead.model_validate(binding) for binding in recommendation.binding_constraints
        ],
    )


@pytest.mark.parametrize("limit", [None, 1, 2])
def test_the_answer_is_the_one_read_model_by_model(limit: int | None) -> None:
    recommendation = _recommendation(_body(horizon_months=12))
    assert len(recommendation.best_per_option) > 1
    assert recommendation.rejected
    assert recommendation.break_even is not None
    read = recommendation_read(recommendation, limit)
    assert _WRITER.dump_json(read, by_alias=True) == _WRITER.dump_json(
        _read_model_by_model(recommendation, limit), by_alias=True
    )
    assert isinstance(read.options[0].breakdown, list)
    assert isinstance(read.notes, list)
    assert all(isinstance(option, OptionRead) for option in read.best_per_option.values())


@pytest.mark.parametrize("limit", [None, 1, 2])
def test_the_api_writes_the_engine_values_as_their_reads_to_the_byte(limit: int | None) -> None:
    recommendation = _recommendation(_body(horizon_months=12))
    assert len(recommendation.best_per_option) > 1
    assert recommendation.rejected
    assert recommendation.break_even is not None
    assert recommendation_json(recommendation, limit) == _WRITER.dump_json(
        recommendation_read(recommendation, limit), by_alias=True
    )


def test_the_api_writes_a_hybrid_plan_as_its_read_to_the_byte() -> None:
    body = RecommendationCreate.model_validate(
        {
            "workload": {
                "kind": "inference",
                "models": ["llama-3.3-70b"],
                "requests_per_day": 2e7,
                "input_tokens": 1000,
                "output_tokens": 250,
                "peak_to_average": 3,
            },
            "assumptions": {"horizon_months": 24},
        }
    )
    recommendation = _recommendation(body)
    assert any(option.hybrid_parts for option in recommendation.options)
    assert recommendation_json(recommendation) == _WRITER.dump_json(
        recommendation_read(recommendation), by_alias=True
    )


def test_the_api_writes_binding_constraints_as_their_reads_to_the_byte() -> None:
    recommendation = _recommendation(_body({"max_usd_per_month": 1.0}))
    assert not recommendation.options
    assert recommendation.binding_constraints
    assert recommendation_json(recommendation) == _WRITER.dump_json(
        recommendation_read(recommendation), by_alias=True
    )


def test_an_engine_value_not_of_its_declared_type_is_an_error_not_written_as_it_comes() -> None:
    recommendation = _recommendation(_body())
    first = dataclasses.replace(recommendation.options[0], total_usd="12.30")  # a str, not a Decimal
    wrong = dataclasses.replace(recommendation, options=(first, *recommendation.options[1:]))
    with pytest.raises(PydanticSerializationError):
        recommendation_json(wrong)


@pytest.mark.parametrize(
    ("engine_value", "read_model"),
    [
        (RecommendationAnswer, RecommendationRead),
        (PlanOption, OptionRead),
        (Setup, SetupRead),
        (CostLine, CostLineRead),
        (HybridPart, HybridPartRead),
        (RejectedGroup, RejectedRead),
        (BindingConstraint, BindingConstraintRead),
    ],
)
def test_what_the_api_writes_has_the_read_models_fields_in_their_order(
    engine_value: type, read_model: type[RecommendationRead]
) -> None:
    """`RecommendationAnswer` writes these engine values in place of their reads: a field added,
    renamed or moved on one side only would change the answer or break its documented shape."""
    assert [item.name for item in dataclasses.fields(engine_value)] == list(read_model.model_fields)


def test_the_best_option_of_a_kind_is_the_read_of_that_ranked_option() -> None:
    recommendation = _recommendation(_body())
    read = recommendation_read(recommendation)
    best = recommendation.best_per_option
    for kind, option in best.items():
        assert read.best_per_option[kind.value] is read.options[recommendation.options.index(option)]


def test_the_same_overrides_give_the_same_assumptions_and_reads() -> None:
    first = engine_assumptions(AssumptionsIn(horizon_months=12, pue=1.3))
    assert engine_assumptions(AssumptionsIn(horizon_months=12, pue=1.3)) is first
    assert engine_assumptions(AssumptionsIn(horizon_months=24, pue=1.3)) is not first
    one = recommendation_read(_recommendation(_body(horizon_months=12)))
    other = recommendation_read(_recommendation(_body(horizon_months=12)))
    assert one.assumptions["horizon_months"] is other.assumptions["horizon_months"]
    with pytest.raises(ValidationError):  # shared between answers, so not to be changed in one
        one.assumptions["horizon_months"].value = 6


def test_a_shared_read_holds_no_list_one_answer_could_change_for_another() -> None:
    discounts = {"reserved_discounts_by_provider": {"aws": {"one_year": 0.2, "three_year": 0.4}}}
    one = recommendation_read(_recommendation(_body(**discounts)))
    value = one.assumptions["reserved_discounts_by_provider"].value
    assert value == (("aws", 0.2, 0.4),)
    with pytest.raises(AttributeError):
        value.append(("evil", 0.9, 0.9))  # type: ignore[attr-defined]
    other = _WRITER.dump_json(recommendation_read(_recommendation(_body(**discounts))))
    assert b'"reserved_discounts_by_provider":{"value":[["aws",0.2,0.4]],' in other


def test_an_answer_changed_by_its_caller_leaves_the_next_answer_as_it_was() -> None:
    """The API's answer holds a dict of assumption reads of its own, not the remembered one."""
    body = _body()
    first = recommendation_answer(_recommendation(body))
    first.assumptions.clear()
    again = recommendation_json(_recommendation(body))
    assert again == recommendation_json(_recommendation(body))
    assert b'"assumptions":{}' not in again
    assert b'"horizon_months":{"value":' in again


def test_overrides_equal_but_written_otherwise_are_not_confused() -> None:
    zero = engine_assumptions(AssumptionsIn(spot_interruption_overhead=0.0))
    negative_zero = engine_assumptions(AssumptionsIn(spot_interruption_overhead=-0.0))
    assert negative_zero is not zero
    answer = _WRITER.dump_json(recommendation_read(_recommendation(_body(spot_interruption_overhead=-0.0))))
    assert b'"spot_interruption_overhead":{"value":-0.0,' in answer


def test_refused_overrides_are_refused_every_time_at_the_prefix_given() -> None:
    # past the request model's bounds (which are the engine's), as only a caller's own model can be
    outside = AssumptionsIn.model_construct(hours_per_month=800.0)
    for prefix in ("body", "body.scenarios.0"):
        with pytest.raises(InvalidInput) as refused:
            engine_assumptions(outside, prefix)
        assert refused.value.field == f"{prefix}.assumptions.hours_per_month"
