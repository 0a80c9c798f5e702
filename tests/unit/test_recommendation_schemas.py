"""The request of a recommendation: constraints left out share one immutable default."""

from __future__ import annotations

from wheretorun.services.recommendation_schemas import ConstraintsIn, RecommendationCreate

_WORKLOAD = {
    "kind": "inference",
    "models": ["llama-3.1-8b"],
    "requests_per_day": 300,
    "input_tokens": 800,
    "output_tokens": 200,
}


def test_constraints_left_out_are_one_shared_immutable_default() -> None:
    """pydantic deep-copies an unhashable default for every request (~0.1M instructions); a
    hashable one, immutable throughout, is shared."""
    first = RecommendationCreate.model_validate({"workload": _WORKLOAD})
    second = RecommendationCreate.model_validate({"workload": _WORKLOAD})
    assert first.constraints is second.constraints
    assert hash(first.constraints) == hash(ConstraintsIn())
    assert first.constraints.allowed_providers == ()


def test_constraint_lists_keep_their_first_occurrences_in_order() -> None:
    constraints = ConstraintsIn.model_validate(
        {"allowed_providers": ["aws", "gcp", "aws"], "allowed_options": ["cloud", "owned", "cloud"]}
    )
    assert constraints.allowed_providers == ("aws", "gcp")
    assert constraints.allowed_options == ("cloud", "owned")
    assert constraints.model_dump(mode="json")["allowed_providers"] == ["aws", "gcp"]
