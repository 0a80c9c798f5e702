"""Recommendation requests: API body -> engine values -> `engine.recommend` -> response dict.

Also turns one recommended option into a finance plan for scenarios (`finance_plan_for_option`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable
from typing import Any

from sqlalchemy.orm import Session

from wheretorun import engine
from wheretorun.api.recommendation_schemas import (
    AssumptionsIn,
    BatchWorkloadIn,
    ConstraintsIn,
    InferenceWorkloadIn,
    RecommendationCreate,
    TrainingWorkloadIn,
    WorkloadIn,
)
from wheretorun.engine.assumptions import DEFAULT_SOURCES, Assumptions
from wheretorun.engine.recommend import recommend
from wheretorun.engine.recommendation import PlanOption, Recommendation
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

__all__ = [
    "assumption_defaults",
    "engine_assumptions",
    "engine_constraints",
    "engine_workload",
    "recommend_for",
    "recommendation_dict",
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


def assumption_defaults() -> dict[str, dict[str, Any]]:
    """Every assumption with its default and where that default comes from."""
    defaults = Assumptions()
    return {
        item.name: {"value": _plain(getattr(defaults, item.name)), "source": DEFAULT_SOURCES[item.name]}
        for item in dataclasses.fields(defaults)
    }


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


def recommend_for(session: Session, body: RecommendationCreate, snapshots: SnapshotCache) -> dict[str, Any]:
    recommendation = run_recommendation(
        session,
        body.workload,
        body.constraints,
        body.assumptions,
        read_point(session, body.as_of, body.catalog_version, "body.catalog_version").as_of,
        snapshots,
    )
    return recommendation_dict(recommendation, body.limit)


def _option_dict(option: PlanOption, rank: int) -> dict[str, Any]:
    values = dataclasses.asdict(option)
    values["option"] = option.option.value
    values["rank"] = rank
    return values


def recommendation_dict(recommendation: Recommendation, limit: int | None = None) -> dict[str, Any]:
    options = recommendation.options[:limit] if limit else recommendation.options
    ranks = {id(option): rank for rank, option in enumerate(recommendation.options, start=1)}
    sources = recommendation.assumptions.sources()
    break_even = recommendation.break_even
    return {
        "workload_kind": recommendation.workload_kind,
        "options": [_option_dict(option, rank) for rank, option in enumerate(options, start=1)],
        "best_per_option": {
            kind.value: _option_dict(option, ranks.get(id(option), 0))
            for kind, option in recommendation.best_per_option.items()
        },
        "rejected": [
            {"reason": group.reason.value, "count": group.count, "examples": list(group.examples)}
            for group in recommendation.rejected
        ],
        "break_even": None
        if break_even is None
        else {
            **dataclasses.asdict(break_even),
            "points": [
                {**dataclasses.asdict(point), "usd_per_month": dict(point.usd_per_month)}
                for point in break_even.points
            ],
        },
        "assumptions": {
            item.name: {
                "value": _plain(getattr(recommendation.assumptions, item.name)),
                "source": sources[item.name],
            }
            for item in dataclasses.fields(recommendation.assumptions)
        },
        "catalog_version": recommendation.catalog_version,
        "as_of": recommendation.as_of,
        "candidates_evaluated": recommendation.candidates_evaluated,
        "notes": list(recommendation.notes),
    }


# --- a recommended option as a finance plan (for scenarios) ----------------------------------

# The finance engine models purchases, resale and the cost of capital itself (capex, book value,
# discounting), so those lines of an option become one capex item instead of cash flows.
_CAPITAL_LINES = {"hardware purchase", "card purchase", "resale value", "cost of capital"}
# Lines that do not grow with traffic: paid per month.
_FIXED_LINES = {"operations staff", "upkeep", "maintenance", "colocation"}
_CATEGORIES = {
    "operations staff": "staff",
    "upkeep": "staff",
    "maintenance": "maintenance",
    "colocation": "colocation",
    "power": "power",
    "instance hours": "compute",
    "rental during lead time": "compute",
}


def finance_plan_for_option(
    session: Session, plan: Any, as_of: dt.datetime | None, field: str, snapshots: SnapshotCache
) -> Any:
    """The best `plan.option` for `plan.workload` as a finance plan: capex for the hardware,
    fixed monthly lines, and the rest per million tokens so it follows the scenario's traffic."""
    from wheretorun.engine import finance

    recommendation = run_recommendation(
        session, plan.workload, plan.constraints, plan.assumptions, as_of, snapshots, prefix=field
    )
    option = recommendation.best_per_option.get(OptionKind(plan.option))
    if option is None:
        reasons = ", ".join(f"{g.reason.value} ({g.count})" for g in recommendation.rejected)
        raise InvalidInput(
            f"{field}.option", f"no feasible {plan.option} option for this workload; rejected: {reasons}"
        )
    a = recommendation.assumptions
    months = a.horizon_months
    tokens = _tokens_served(option)
    capex = []
    if option.capex_usd > 0:
        capex.append(
            finance.CapexItem(
                name=f"{option.setup.accelerator_id or 'hardware'} purchase",
                amount_usd=float(option.capex_usd),
                depreciation_years=a.depreciation_years,
                residual_fraction=a.residual_value_fraction,
            )
        )
    opex, usage = [], []
    for line in option.breakdown:
        if line.name in _CAPITAL_LINES or line.usd == 0:
            continue
        category = finance.CostCategory(_CATEGORIES.get(line.name, "tokens"))
        if line.name in _FIXED_LINES or tokens is None:
            opex.append(finance.OpexLine(line.name, float(line.usd) / months, category))
        else:
            usage.append(finance.UsageLine(line.name, float(line.usd) / tokens * 1e6, category=category))
    return finance.Plan(
        name=plan.name or option.label, capex=tuple(capex), opex=tuple(opex), usage=tuple(usage)
    )


def _tokens_served(option: PlanOption) -> float | None:
    """Tokens over the horizon, from the all-in price per million tokens (None for training)."""
    if option.usd_per_million_tokens is None or option.usd_per_million_tokens <= 0:
        return None
    return float(option.total_usd / option.usd_per_million_tokens) * 1e6
