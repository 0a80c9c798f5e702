"""Recommendations on a catalog snapshot already in hand: request model -> engine values ->
`engine.recommend` -> read model, without the database.

`recommendations.py` adds what needs the database (the catalog read point, accelerator aliases, the
snapshot cache); the CLI's warm path (`cli_recommend.py`) calls `recommend_on_cached_snapshot`
directly with a snapshot read from disk, so it imports neither SQLAlchemy nor the ORM models (a
layer contract in pyproject.toml keeps it that way).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import TypeAdapter

from wheretorun import engine
from wheretorun.bounds import check_total_growth
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.catalog import CatalogSnapshot
from wheretorun.engine.memo import RecentResults
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
from wheretorun.services.engine_call import engine_call
from wheretorun.services.recommendation_reads import (
    AssumptionRead,
    BreakEvenRead,
    OptionRead,
    RecommendationAnswer,
    RecommendationRead,
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
    "AcceleratorResolver",
    "EngineInputs",
    "assumption_defaults",
    "assumption_reads",
    "clear_read_memos",
    "engine_assumptions",
    "engine_constraints",
    "engine_inputs",
    "engine_workload",
    "recommend_on_cached_snapshot",
    "recommend_on_snapshot",
    "reads_now",
    "recommendation_answer",
    "recommendation_json",
    "recommendation_read",
]

# The canonical accelerator id for a name a client sent, or None when the catalog has no such one.
AcceleratorResolver = Callable[[str], str | None]


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


def _accelerator_ids(resolve: AcceleratorResolver, names: Iterable[str], field: str) -> tuple[str, ...]:
    ids = []
    for index, name in enumerate(names):
        accelerator_id = resolve(name)
        if accelerator_id is None:
            raise InvalidInput(f"{field}.{index}", f"unknown accelerator {name!r}")
        ids.append(accelerator_id)
    return tuple(ids)


def engine_constraints(
    constraints: ConstraintsIn, resolve: AcceleratorResolver, prefix: str = "body.constraints"
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
                resolve, constraints.allowed_accelerators, f"{prefix}.allowed_accelerators"
            ),
            excluded_accelerators=_accelerator_ids(
                resolve, constraints.excluded_accelerators, f"{prefix}.excluded_accelerators"
            ),
            allowed_options=tuple(OptionKind(o) for o in constraints.allowed_options),
            min_precision=constraints.min_precision,
            max_usd_per_month=constraints.max_usd_per_month,
            max_capex_usd=constraints.max_capex_usd,
            include_suspect_prices=constraints.include_suspect_prices,
        ),
    )


# Assumptions by the exact overrides a request sent, so the requests of a client that sends the same
# ones share one value: its checks (~0.2M instructions) run once, and its reads are remembered by
# identity (`_ASSUMPTION_READS`). 2026-12-05.
_ENGINE_ASSUMPTIONS: RecentResults[Assumptions] = RecentResults(kept=32)


def engine_assumptions(assumptions: AssumptionsIn, prefix: str = "body") -> Assumptions:
    """The engine's assumptions for a request's overrides; the same overrides give the same object.
    They are matched by `repr`, which tells -0.0 from 0.0 and 1 from 1.0 where `==` does not."""
    overrides: dict[str, Any] = assumptions.model_dump(exclude_none=True)
    return _ENGINE_ASSUMPTIONS.get((), repr(overrides), lambda: _assumptions_from(overrides, prefix))


def _assumptions_from(overrides: dict[str, Any], prefix: str) -> Assumptions:
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
    if isinstance(value, tuple):  # a tuple still: the reads are shared by answers (AssumptionRead)
        return tuple(_plain(v) for v in value)
    return value


EngineInputs = tuple[Workload, Constraints, Assumptions]


def engine_inputs(
    workload: WorkloadIn,
    constraints: ConstraintsIn,
    assumptions: AssumptionsIn,
    resolve: AcceleratorResolver,
    prefix: str = "body",
) -> EngineInputs:
    """The engine's values for a request; a field the engine refuses is named under `prefix`."""
    inputs = (
        engine_workload(workload),
        engine_constraints(constraints, resolve, f"{prefix}.constraints"),
        engine_assumptions(assumptions, prefix),
    )
    if isinstance(workload, InferenceWorkloadIn):
        check_total_growth(
            workload.growth_per_month, inputs[2].horizon_months, f"{prefix}.workload.growth_per_month"
        )
    return inputs


def recommend_on_snapshot(
    inputs: EngineInputs, snapshot: CatalogSnapshot, prefix: str = "body", limit: int | None = None
) -> Recommendation:
    """The engine's recommendation; with `limit`, only the first `limit` options (and the best of
    each kind) are written up, which is all `recommendation_read(..., limit)` reads."""
    _check_models(inputs[0], snapshot.models, f"{prefix}.workload")
    return engine_call(prefix, lambda: recommend(*inputs, snapshot, limit=limit))


def recommend_on_cached_snapshot(
    body: RecommendationCreate, snapshot: CatalogSnapshot
) -> RecommendationRead | None:
    """The answer to `body` from a snapshot of the catalog as it is now, or None when the answer
    needs the database: a read point in the past (`as_of`, `catalog_version`) or an accelerator
    named otherwise than by its catalog id (aliases live in the database only). On the same
    snapshot, the answer is the one `recommendations.recommend_for` gives."""
    if not reads_now(body):
        return None
    names = (*body.constraints.allowed_accelerators, *body.constraints.excluded_accelerators)
    if any(name not in snapshot.accelerators for name in names):
        return None
    inputs = engine_inputs(body.workload, body.constraints, body.assumptions, _catalog_id)
    return recommendation_read(recommend_on_snapshot(inputs, snapshot, limit=body.limit), body.limit)


def reads_now(body: RecommendationCreate) -> bool:
    """Whether `body` asks about the catalog as it is now (no `as_of`, no `catalog_version`)."""
    return body.as_of is None and body.catalog_version is None


def _catalog_id(name: str) -> str:
    return name


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


# The reads of each assumptions value in use, by identity: `engine_assumptions` hands out one object
# for the same overrides. 35 reads built: ~0.45M instructions a request (2026-12-05).
_ASSUMPTION_READS: RecentResults[dict[str, AssumptionRead]] = RecentResults(kept=32)
# The ranked options validated in one call: ~5,000 instructions less per option than
# `OptionRead.model_validate` each (the prototype's 10: 0.95M against 1.00M, 2026-12-05).
_OPTION_READS = TypeAdapter(list[OptionRead])


def clear_read_memos() -> None:
    """Forget the remembered assumptions and their reads (as `engine.caches.clear_caches` does
    the engine's memos), for tests that compare the remembered path with a fresh one."""
    _ENGINE_ASSUMPTIONS.clear()
    _ASSUMPTION_READS.clear()


_ANSWER_WRITER = TypeAdapter(RecommendationAnswer)


def recommendation_answer(recommendation: Recommendation, limit: int | None = None) -> RecommendationAnswer:
    """The answer `recommendation_read` reads, holding the engine's values as they are."""
    best = recommendation.best_per_option
    assumptions = recommendation.assumptions
    break_even = recommendation.break_even
    return RecommendationAnswer(
        workload_kind=recommendation.workload_kind,
        options=recommendation.options[:limit] if limit else recommendation.options,
        best_per_option={kind.value: option for kind, option in best.items()},
        rejected=recommendation.rejected,
        break_even=None if break_even is None else BreakEvenRead.model_validate(break_even),
        # a dict of its own, as validating the read model made one: an answer's caller may change
        # it without changing the remembered reads
        assumptions=dict(_ASSUMPTION_READS.get((assumptions,), (), lambda: assumption_reads(assumptions))),
        catalog_version=recommendation.catalog_version,
        as_of=recommendation.as_of,
        candidates_evaluated=recommendation.candidates_evaluated,
        notes=recommendation.notes,
        binding_constraints=recommendation.binding_constraints,
    )


def recommendation_json(recommendation: Recommendation, limit: int | None = None) -> bytes:
    """The answer as JSON bytes: `recommendation_read(recommendation, limit)` written by its
    `TypeAdapter`, to the byte, without the read models. An engine value not of its declared type
    is an error, as its read model's validation made it, not written as it comes."""
    answer = recommendation_answer(recommendation, limit)
    return _ANSWER_WRITER.dump_json(answer, by_alias=True, warnings="error")


def recommendation_read(recommendation: Recommendation, limit: int | None = None) -> RecommendationRead:
    """The answer: the first `limit` ranked options, and the rest of the recommendation as it is.
    The engine's values are read by the read models (`from_attributes`) as the answer is validated;
    the best option of each kind is the read of that ranked option when it is among them."""
    options = recommendation.options[:limit] if limit else recommendation.options
    reads = _OPTION_READS.validate_python(options)
    read = dict(zip(map(id, options), reads, strict=True))
    best = recommendation.best_per_option
    assumptions = recommendation.assumptions
    return RecommendationRead(
        workload_kind=recommendation.workload_kind,
        options=reads,
        best_per_option={kind.value: read.get(id(option), option) for kind, option in best.items()},
        rejected=recommendation.rejected,
        break_even=recommendation.break_even,
        assumptions=dict(_ASSUMPTION_READS.get((assumptions,), (), lambda: assumption_reads(assumptions))),
        catalog_version=recommendation.catalog_version,
        as_of=recommendation.as_of,
        candidates_evaluated=recommendation.candidates_evaluated,
        notes=recommendation.notes,
        binding_constraints=recommendation.binding_constraints,
    )
