"""Recommendation requests: request model -> engine values -> `engine.recommend` -> read model.

The request and read models are this service's own (`recommendation_schemas.py`,
`recommendation_reads.py`); the HTTP API and the CLI both speak them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable
from typing import Any

from sqlalchemy.orm import Session

from wheretorun import engine
from wheretorun.bounds import check_total_growth
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.recommend import recommend
from wheretorun.engine.recommendation import Recommendation
from wheretorun.engine.workload import (
    BatchWorkload,
    Constraints,
    InferenceWorkload,
    OptionKind,
    TrainingWorkload,
    Workload,
)
from wheretorun.errors import InvalidInput
from wheretorun.pricing.repositories import read_point, resolve_accelerator_id
from wheretorun.pricing.snapshot import SnapshotCache
from wheretorun.services.engine_call import engine_call
from wheretorun.services.recommendation_reads import (
    AssumptionRead,
    BindingConstraintRead,
    BreakEvenRead,
    OptionRead,
    RecommendationRead,
    RejectedRead,
)
from wheretorun.services.recommendation_schemas import (
    AssumptionsIn,
    BatchWorkloadIn,
    ConstraintsIn,
    InferenceWorkloadIn,
    RecommendationCreate,
    TrainingWorkloadIn,
    WorkloadIn,
)

__all__ = [
    "assumption_defaults",
    "assumption_reads",
    "engine_assumptions",
    "engine_constraints",
    "engine_workload",
    "recommend_for",
    "recommendation_read",
    "run_recommendation",
]


def engine_workload(workload: WorkloadIn) -> Workload:
    if isinstance(workload, InferenceWorkloadIn):
        return engine_call(
            "body",
            lambda: InferenceWorkload(
                models=workload.model_ids,
                requests_per_day=workload.daily_requests,
                input_tokens=workload.input_tokens,
                output_tokens=workload.output_tokens,
                cached_input_tokens=workload.cached_input_tokens,
                peak_to_average=workload.peak_to_average,
                hourly_profile=tuple(workload.hourly_profile) if workload.hourly_profile else None,
                growth_per_month=workload.growth_per_month,
                ttft_ms=workload.ttft_ms,
                tpot_ms=workload.tpot_target_ms,
                redundancy=workload.redundancy,
            ),
        )
    if isinstance(workload, BatchWorkloadIn):
        return engine_call(
            "body",
            lambda: BatchWorkload(
                models=workload.model_ids,
                input_tokens_total=workload.input_tokens_total,
                output_tokens_total=workload.output_tokens_total,
                deadline_hours=workload.deadline_hours,
                input_tokens_per_request=workload.input_tokens_per_request,
                output_tokens_per_request=workload.output_tokens_per_request,
            ),
        )
    assert isinstance(workload, TrainingWorkloadIn)
    return engine_call(
        "body",
        lambda: TrainingWorkload(
            model=workload.model,
            method=workload.method,
            tokens=workload.tokens_per_run,
            deadline_hours=workload.deadline_hours,
            runs_per_year=workload.runs_per_year,
            sequence_length=workload.sequence_length,
        ),
    )


def _accelerator_ids(session: Session, names: Iterable[str], field: str) -> tuple[str, ...]:
    ids = []
    for index, name in enumerate(names):
        accelerator_id = resolve_accelerator_id(session, name)
        if accelerator_id is None:
            raise InvalidInput(f"{field}.{index}", f"unknown accelerator {name!r}")
        ids.append(accelerator_id)
    return tuple(ids)


def engine_constraints(
    session: Session, constraints: ConstraintsIn, prefix: str = "body.constraints"
) -> Constraints:
    if constraints.min_precision is not None:
        engine_call(prefix, lambda: engine.parse_precision(constraints.min_precision or "", "min_precision"))
    return engine_call(
        prefix.removesuffix(".constraints"),
        lambda: Constraints(
            on_premises_only=constraints.on_premises_only,
            allowed_providers=tuple(p.lower() for p in constraints.allowed_providers),
            excluded_providers=tuple(p.lower() for p in constraints.excluded_providers),
            allowed_regions=tuple(constraints.allowed_regions),
            allowed_accelerators=_accelerator_ids(
                session, constraints.allowed_accelerators, f"{prefix}.allowed_accelerators"
            ),
            excluded_accelerators=_accelerator_ids(
                session, constraints.excluded_accelerators, f"{prefix}.excluded_accelerators"
            ),
            allowed_options=tuple(OptionKind(o) for o in constraints.allowed_options),
            min_precision=constraints.min_precision,
            max_usd_per_month=constraints.max_usd_per_month,
            max_capex_usd=constraints.max_capex_usd,
            include_suspect_prices=constraints.include_suspect_prices,
        ),
    )


def engine_assumptions(assumptions: AssumptionsIn, prefix: str = "body") -> Assumptions:
    overrides: dict[str, Any] = assumptions.model_dump(exclude_none=True)
    if "serving_engine" in overrides:
        overrides["serving_engine"] = engine.ServingEngine(overrides["serving_engine"])
    if "reserved_discounts_by_provider" in overrides:
        overrides["reserved_discounts_by_provider"] = tuple(
            (provider.lower(), terms["one_year"], terms["three_year"])
            for provider, terms in overrides["reserved_discounts_by_provider"].items()
        )
    return engine_call(prefix, lambda: Assumptions(**overrides))


def assumption_reads(assumptions: Assumptions) -> dict[str, AssumptionRead]:
    """Every assumption with its value and where that value comes from."""
    sources = assumptions.sources()
    return {
        item.name: AssumptionRead(value=_plain(getattr(assumptions, item.name)), source=sources[item.name])
        for item in dataclasses.fields(assumptions)
    }


def assumption_defaults() -> dict[str, AssumptionRead]:
    """Every assumption with its default and where that default comes from."""
    return assumption_reads(Assumptions())


def _plain(value: Any) -> Any:
    if isinstance(value, engine.ServingEngine):
        return value.value
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def run_recommendation(
    session: Session,
    workload: WorkloadIn,
    constraints: ConstraintsIn,
    assumptions: AssumptionsIn,
    as_of: dt.datetime | None,
    snapshots: SnapshotCache,
    prefix: str = "body",
) -> Recommendation:
    engine_inputs = (
        engine_workload(workload),
        engine_constraints(session, constraints, f"{prefix}.constraints"),
        engine_assumptions(assumptions, prefix),
    )
    if isinstance(workload, InferenceWorkloadIn):
        check_total_growth(
            workload.growth_per_month, engine_inputs[2].horizon_months, f"{prefix}.workload.growth_per_month"
        )
    snapshot = snapshots.get(session, as_of)
    _check_models(engine_inputs[0], snapshot.models, f"{prefix}.workload")
    return engine_call(prefix, lambda: recommend(*engine_inputs, snapshot))


def _check_models(workload: Workload, catalog: Any, field: str) -> None:
    names = (workload.model,) if isinstance(workload, TrainingWorkload) else workload.models
    for index, name in enumerate(names):
        if name not in catalog:
            where = (
                f"{field}.model"
                if isinstance(workload, TrainingWorkload) or len(names) == 1
                else f"{field}.models.{index}"
            )
            raise InvalidInput(where, f"no catalog model {name!r} (GET /v1/models lists them)")


def recommend_for(
    session: Session, body: RecommendationCreate, snapshots: SnapshotCache
) -> RecommendationRead:
    # without as_of or catalog_version the read is "now" (as_of None): no version to look up first
    as_of = (
        None
        if body.as_of is None and body.catalog_version is None
        else read_point(session, body.as_of, body.catalog_version, "body.catalog_version").as_of
    )
    recommendation = run_recommendation(
        session, body.workload, body.constraints, body.assumptions, as_of, snapshots
    )
    return recommendation_read(recommendation, body.limit)


def recommendation_read(recommendation: Recommendation, limit: int | None = None) -> RecommendationRead:
    """The answer: the first `limit` ranked options, and the rest of the recommendation as it is."""
    options = recommendation.options[:limit] if limit else recommendation.options
    read = {id(option): OptionRead.model_validate(option) for option in options}  # best ones are among them
    return RecommendationRead(
        workload_kind=recommendation.workload_kind,
        options=[read[id(option)] for option in options],
        best_per_option={
            kind.value: read.get(id(option)) or OptionRead.model_validate(option)
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
