"""Scenario use cases: create, list, read, update (new version), delete, evaluate, compare.

Services never commit; the request's session dependency owns the transaction. Updates carry the
version they edit: a missing one is `PreconditionRequired`, a stale one `PreconditionFailed`, so
two planners editing one scenario never overwrite each other silently.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from wheretorun.bounds import MAX_MODELS
from wheretorun.engine import finance
from wheretorun.errors import InvalidInput, NotFound, PreconditionFailed, PreconditionRequired
from wheretorun.pricing.repositories import Page, PageRequest, contains_text
from wheretorun.pricing.snapshot import SnapshotCache, catalog_version_in_force
from wheretorun.scenarios import convert
from wheretorun.scenarios.evaluation_schemas import (
    ComparisonRead,
    EvaluationRead,
    SavedEvaluationRead,
    evaluation_fields,
)
from wheretorun.scenarios.models import ScenarioRecord, ScenarioVersion
from wheretorun.scenarios.recommended import finance_plan_for_option
from wheretorun.scenarios.schemas import (
    MAX_EVALUATION_WORK,
    MAX_SCENARIO_LINES,
    AnalysesIn,
    BreakEvenIn,
    CustomPlanIn,
    MonteCarloIn,
    RecommendedPlanIn,
    ScenarioBody,
    ScenarioCreate,
    ScenarioUpdate,
    SensitivityIn,
)
from wheretorun.security import Actor, record_audit
from wheretorun.services.engine_call import engine_call

__all__ = [
    "ANY_VERSION",
    "Analyses",
    "AnyVersion",
    "Evaluated",
    "Expected",
    "analyse_body",
    "check_analysis_work",
    "check_recommended_models",
    "check_scenario_size",
    "compare_scenarios",
    "create_scenario",
    "delete_scenario",
    "evaluate_body",
    "evaluate_scenario",
    "finance_evaluation",
    "get_scenario",
    "get_version",
    "list_scenarios",
    "run_analyses",
    "saved_body",
    "saved_version",
    "update_scenario",
]


def _stored_body(session: Session, body: ScenarioBody, now: dt.datetime) -> tuple[dict[str, Any], int]:
    """The JSON to store, with `as_of` pinned (so re-evaluating later prices the same catalog)."""
    as_of = body.as_of or now
    stored = body.model_dump(mode="json", exclude={"name", "tags", "note"})
    stored["as_of"] = as_of.isoformat()
    return stored, catalog_version_in_force(session, as_of)


def create_scenario(session: Session, body: ScenarioCreate, actor: Actor, now: dt.datetime) -> ScenarioRecord:
    stored, catalog_version = _stored_body(session, body, now)
    scenario = ScenarioRecord(
        name=body.name, tags=list(body.tags), current_version=1, created_at=now, updated_at=now
    )
    scenario.versions.append(
        ScenarioVersion(
            version=1, created_at=now, body=stored, catalog_version_id=catalog_version, note="created"
        )
    )
    session.add(scenario)
    session.flush()
    record_audit(
        session, actor, "scenario.create", f"scenario:{scenario.id}", {"name": body.name, "version": 1}, now
    )
    return scenario


def list_scenarios(
    session: Session, tag: str | None, q: str | None, page: PageRequest
) -> Page[ScenarioRecord]:
    query = select(ScenarioRecord)
    if q:
        query = query.where(contains_text(ScenarioRecord.name, q))
    scenarios = list(session.scalars(query.order_by(ScenarioRecord.id)))
    if tag:  # tags are a JSON list: filtered here, the same on SQLite and PostgreSQL
        scenarios = [s for s in scenarios if tag in s.tags]
    window = scenarios[page.offset : page.offset + page.limit]
    return Page(items=window, total=len(scenarios), limit=page.limit, offset=page.offset)


def get_scenario(session: Session, scenario_id: int) -> ScenarioRecord:
    scenario = session.get(ScenarioRecord, scenario_id)
    if scenario is None:
        raise NotFound("scenario", scenario_id)
    return scenario


def current_version(scenario: ScenarioRecord) -> ScenarioVersion:
    return scenario.versions[-1]


def get_version(session: Session, scenario_id: int, version: int) -> ScenarioVersion:
    get_scenario(session, scenario_id)
    found = session.scalars(
        select(ScenarioVersion).where(
            ScenarioVersion.scenario_id == scenario_id, ScenarioVersion.version == version
        )
    ).first()
    if found is None:
        raise NotFound(f"version of scenario {scenario_id}", version)
    return found


# --- conditional writes ----------------------------------------------------------------------------


class AnyVersion:
    """`If-Match: *`: the write applies to whatever version is current (RFC 9110 13.1.1)."""

    def __repr__(self) -> str:
        return "*"


ANY_VERSION = AnyVersion()
Expected = int | AnyVersion | frozenset[int] | None  # one version, any, one of several, or not said


def _lock_for_write(session: Session, scenario_id: int, expected: Expected) -> ScenarioRecord:
    """The scenario, locked until the transaction ends, whose current version is `expected`.

    The read takes the row lock (`SELECT ... FOR UPDATE` on PostgreSQL; on SQLite the request's
    transaction already holds the database's write lock), so no other writer can change the version
    between this check and the write; the UPDATE/DELETE then checks it once more in its WHERE clause.
    """
    if expected is None:
        raise PreconditionRequired("send If-Match with the version you edit (the ETag of GET)")
    scenario = session.get(ScenarioRecord, scenario_id, with_for_update=True, populate_existing=True)
    if scenario is None:
        raise NotFound("scenario", scenario_id)
    matches = (
        isinstance(expected, AnyVersion)
        or expected == scenario.current_version
        or (isinstance(expected, frozenset) and scenario.current_version in expected)
    )
    if not matches:
        raise _stale(scenario_id, f"is at version {scenario.current_version}, not {_versions(expected)}")
    return scenario


def _versions(expected: Expected) -> str:
    if isinstance(expected, frozenset):
        return " or ".join(str(version) for version in sorted(expected))
    return str(expected)


def _stale(scenario_id: int, what: str) -> PreconditionFailed:
    return PreconditionFailed(f"scenario {scenario_id} {what}: read it again and re-apply your change")


def _flush_conditional(session: Session, scenario_id: int) -> None:
    """Flush the scenario's write; the version check in its WHERE clause (or the unique version
    number) failing means another writer changed it first: a 412, never a 500."""
    try:
        session.flush()
    except (StaleDataError, IntegrityError) as error:
        raise _stale(scenario_id, "was changed by another request at the same time") from error


def update_scenario(
    session: Session,
    scenario_id: int,
    body: ScenarioUpdate,
    expected_version: Expected,
    actor: Actor,
    now: dt.datetime,
) -> ScenarioRecord:
    scenario = _lock_for_write(session, scenario_id, expected_version)
    stored, catalog_version = _stored_body(session, body, now)
    edited = scenario.current_version
    scenario.current_version = edited + 1
    scenario.name = body.name
    scenario.tags = list(body.tags)
    scenario.updated_at = now
    _flush_conditional(session, scenario_id)  # the scenario row first: the compare-and-set
    scenario.versions.append(
        ScenarioVersion(
            version=scenario.current_version,
            created_at=now,
            body=stored,
            catalog_version_id=catalog_version,
            note=body.note,
        )
    )
    _flush_conditional(session, scenario_id)
    detail = {"name": body.name, "version": scenario.current_version, "edited_version": edited}
    record_audit(session, actor, "scenario.update", f"scenario:{scenario_id}", detail, now)
    return scenario


def delete_scenario(
    session: Session, scenario_id: int, expected_version: Expected, actor: Actor, now: dt.datetime
) -> None:
    scenario = _lock_for_write(session, scenario_id, expected_version)
    detail = {"name": scenario.name, "version": scenario.current_version}
    session.delete(scenario)
    _flush_conditional(session, scenario_id)
    record_audit(session, actor, "scenario.delete", f"scenario:{scenario_id}", detail, now)


# --- evaluation -------------------------------------------------------------------------------


def _plans(session: Session, body: ScenarioBody, snapshots: SnapshotCache) -> list[finance.Plan]:
    check_recommended_models([body])
    plans: list[finance.Plan] = []
    for index, plan in enumerate(body.plans):
        if isinstance(plan, CustomPlanIn):
            plans.append(engine_call("body", partial(convert.custom_plan, plan)))
        else:
            plans.append(_recommended_plan(session, body, plan, index, snapshots))
    return plans


def check_recommended_models(bodies: Sequence[ScenarioBody]) -> None:
    """Each model of a recommended plan is one recommendation over the whole catalog: one request
    (an evaluation, or a comparison of several scenarios) plans at most `MAX_MODELS` of them in
    all, as one recommendation request does."""
    planned = sum(
        len(plan.workload.model_ids)
        for body in bodies
        for plan in body.plans
        if isinstance(plan, RecommendedPlanIn)
    )
    if planned > MAX_MODELS:
        raise InvalidInput(
            "body.plans",
            f"the recommended plans name {planned} models in all; at most {MAX_MODELS} per request",
        )


def _recommended_plan(
    session: Session, body: ScenarioBody, plan: RecommendedPlanIn, index: int, snapshots: SnapshotCache
) -> finance.Plan:
    return finance_plan_for_option(session, plan, body.as_of, f"body.plans.{index}", snapshots)


def finance_evaluation(
    session: Session, body: ScenarioBody, snapshots: SnapshotCache, name: str = ""
) -> tuple[finance.Scenario, finance.Evaluation]:
    scenario = engine_call(
        "body", lambda: convert.finance_scenario(body, _plans(session, body, snapshots), name)
    )
    check_scenario_size(scenario)
    return scenario, engine_call("body", lambda: finance.evaluate(scenario))


@dataclass(frozen=True)
class Analyses:
    """The raw results of an evaluation and of the analyses asked for (None: not asked)."""

    scenario: finance.Scenario
    evaluation: finance.Evaluation
    monte_carlo: finance.MonteCarloResult | None = None
    sensitivity: finance.Sensitivity | None = None
    break_even: finance.BreakEven | None = None
    buy_versus_rent: finance.BuyVersusRent | None = None


def _lines(scenario: finance.Scenario) -> int:
    return sum(len(plan.line_names) for plan in scenario.plans)


def check_scenario_size(scenario: finance.Scenario) -> None:
    """InvalidInput unless the scenario has at most `MAX_SCENARIO_LINES` cost lines in all."""
    lines = _lines(scenario)
    if lines > MAX_SCENARIO_LINES:
        raise InvalidInput(
            "body.plans", f"{lines} cost lines in all plans; at most {MAX_SCENARIO_LINES} per scenario"
        )


def check_analysis_work(scenario: finance.Scenario, request: AnalysesIn) -> None:
    """InvalidInput naming the field when an analysis would evaluate more than
    `MAX_EVALUATION_WORK` draws x cost lines x months (the time it takes grows with each)."""
    per_draw = _lines(scenario) * scenario.horizon_months
    asked: list[tuple[str, int]] = []
    if request.monte_carlo is not None:
        asked.append(("body.monte_carlo.samples", request.monte_carlo.samples))
    if request.break_even is not None:
        draws = request.break_even.points
        if request.break_even.variable == "horizon_months":
            # Every month of the range is a scenario of its own, rebuilt and evaluated alone: ~3x a
            # draw of a batch (bench/bounded_work.py).
            low, high = request.break_even.low or 1, request.break_even.high or scenario.horizon_months
            draws = 3 * (int(high) - int(low) + 1)
        asked.append(("body.break_even.points", draws))
    for field, draws in asked:
        if draws * per_draw > MAX_EVALUATION_WORK:
            raise InvalidInput(
                field,
                f"{draws:,} draws x {_lines(scenario)} cost lines x {scenario.horizon_months} months = "
                f"{draws * per_draw:,} evaluations; at most {MAX_EVALUATION_WORK:,} per request",
            )


def run_analyses(scenario: finance.Scenario, evaluation: finance.Evaluation, request: AnalysesIn) -> Analyses:
    check_analysis_work(scenario, request)
    return Analyses(
        scenario=scenario,
        evaluation=evaluation,
        monte_carlo=_monte_carlo(scenario, request.monte_carlo) if request.monte_carlo else None,
        sensitivity=_sensitivity(scenario, request.sensitivity) if request.sensitivity else None,
        break_even=_break_even(scenario, request.break_even) if request.break_even else None,
        buy_versus_rent=_buy_versus_rent(evaluation, request.buy_versus_rent)
        if request.buy_versus_rent
        else None,
    )


def _buy_versus_rent(evaluation: finance.Evaluation, plans: tuple[str, str]) -> finance.BuyVersusRent:
    buy, rent = plans
    return engine_call("body", lambda: finance.buy_versus_rent(evaluation, buy, rent))


def _monte_carlo(scenario: finance.Scenario, request: MonteCarloIn) -> finance.MonteCarloResult:
    distributions = [
        finance.Distribution(
            input=d.input,
            kind=finance.DistributionKind(d.kind),
            low=d.low,
            high=d.high,
            mode=d.mode,
            plan=d.plan,
        )
        for d in request.distributions
    ]
    metric = finance.Metric(request.metric)
    return engine_call(
        "body", lambda: finance.monte_carlo(scenario, distributions, request.samples, request.seed, metric)
    )


def _sensitivity(scenario: finance.Scenario, request: SensitivityIn) -> finance.Sensitivity:
    ranges: Sequence[finance.SensitivityRange]
    if request.ranges is None:
        ranges = finance.standard_ranges(scenario)
    else:
        ranges = [finance.SensitivityRange(r.input, r.low, r.high, r.plan) for r in request.ranges]
    return engine_call("body", lambda: finance.sensitivity(scenario, ranges, finance.Metric(request.metric)))


def _break_even(scenario: finance.Scenario, request: BreakEvenIn) -> finance.BreakEven:
    return engine_call(
        "body",
        lambda: finance.break_even(
            scenario,
            request.plan_a,
            request.plan_b,
            finance.BreakEvenVariable(request.variable),
            low=request.low,
            high=request.high,
            points=request.points,
            metric=finance.Metric(request.metric),
        ),
    )


def _answer_fields(analyses: Analyses) -> dict[str, Any]:
    return evaluation_fields(
        analyses.evaluation,
        monte_carlo=analyses.monte_carlo,
        sensitivity=analyses.sensitivity,
        break_even=analyses.break_even,
        buy_versus_rent=analyses.buy_versus_rent,
    )


def analyse_body(
    session: Session, body: ScenarioBody, request: AnalysesIn, snapshots: SnapshotCache
) -> Analyses:
    """Evaluate an unsaved scenario and run the analyses asked for."""
    scenario, evaluation = finance_evaluation(session, body, snapshots)
    return run_analyses(scenario, evaluation, request)


@dataclass(frozen=True)
class Evaluated:
    """An evaluation: the raw results (for files and charts) and the JSON answer."""

    analyses: Analyses
    result: EvaluationRead


def evaluate_body(
    session: Session, body: ScenarioBody, request: AnalysesIn, snapshots: SnapshotCache
) -> Evaluated:
    """Evaluate an unsaved scenario, priced as of its `as_of` (now when it has none)."""
    analyses = analyse_body(session, body, request, snapshots)
    result = EvaluationRead(
        **_answer_fields(analyses),
        catalog_version=catalog_version_in_force(session, body.as_of),
        as_of=body.as_of,
    )
    return Evaluated(analyses, result)


def saved_body(version: ScenarioVersion) -> ScenarioBody:
    return ScenarioBody.model_validate(version.body)


def saved_version(session: Session, scenario_id: int, version: int | None) -> ScenarioVersion:
    scenario = get_scenario(session, scenario_id)
    return get_version(session, scenario_id, version) if version is not None else current_version(scenario)


def evaluate_scenario(
    session: Session, scenario_id: int, version: int | None, request: AnalysesIn, snapshots: SnapshotCache
) -> Evaluated:
    """Evaluate a saved version with the catalog version and `as_of` it recorded."""
    stored = saved_version(session, scenario_id, version)
    body = saved_body(stored)
    analyses = analyse_body(session, body, request, snapshots)
    result = SavedEvaluationRead(
        **_answer_fields(analyses),
        catalog_version=stored.catalog_version_id,
        as_of=body.as_of,
        scenario_id=scenario_id,
        version=stored.version,
    )
    return Evaluated(analyses, result)


def compare_scenarios(
    session: Session, bodies: Sequence[tuple[str, ScenarioBody]], snapshots: SnapshotCache
) -> ComparisonRead:
    """Every plan of every scenario side by side, deltas against the first."""
    check_recommended_models([body for _, body in bodies])
    results: list[finance.PlanResult] = []
    labels: list[str] = []
    for label, body in bodies:
        _, evaluation = finance_evaluation(session, body, snapshots, label)
        for plan in evaluation.plans:
            results.append(plan)
            labels.append(f"{label}: {plan.name}" if len(bodies) > 1 else plan.name)
    if len(results) < 2:
        raise InvalidInput("body.scenarios", "compare needs at least two plans in all")
    comparison = engine_call("body", lambda: finance.compare(results, labels))
    return ComparisonRead.model_validate(comparison)


def find_by_ids(session: Session, ids: Sequence[int]) -> list[ScenarioRecord]:
    found = {s.id: s for s in session.scalars(select(ScenarioRecord).where(ScenarioRecord.id.in_(ids)))}
    missing = [i for i in ids if i not in found]
    if missing:
        raise InvalidInput("body.scenario_ids", f"no scenario with id {missing}")
    return [found[i] for i in ids]
