"""Candidates for an offline batch job: hosted APIs (batch tier when the deadline allows) and
cloud instances for as long as the job takes.

Owned and local hardware are not costed for a one-off job: buying hardware for a single job only
makes sense when it is resold at once, which the money model cannot value honestly (used-GPU
prices are not in the catalog). They are rejected as `one_off_job`; recurring work belongs in an
inference workload (steady traffic) or a training workload (runs per year).
"""

from __future__ import annotations

from collections.abc import Iterable

from wheretorun.engine.capacity import serving_capacities
from wheretorun.engine.costs import cloud, hosted
from wheretorun.engine.costs.candidate import CostedCandidate
from wheretorun.engine.costs.cloud import JOB_MODES, Layout
from wheretorun.engine.costs.demand import BatchDemand
from wheretorun.engine.planning.acceptable_models import SelfHosted, acceptable_models
from wheretorun.engine.planning.cloud_sizing import size_replica_groups
from wheretorun.engine.planning.cloud_table import (
    Choice,
    ModeHours,
    OfferTable,
    choose_cheapest,
    one_per_group,
)
from wheretorun.engine.planning.context import SERVING_PRECISIONS, Context
from wheretorun.engine.planning.offers import EligibleOffers, eligible_offers
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules import deadline, first_failing
from wheretorun.engine.rules.constraints import precision_floor
from wheretorun.engine.rules.offer_support import LOCAL_KINDS, OWNED_KINDS
from wheretorun.engine.rules.one_off_job import purchase_for_one_job
from wheretorun.engine.workload import BatchWorkload

__all__ = ["batch_candidates"]

_CLOUD_PLANS_KEPT = 30
_HOURS_PER_BUDGET_MONTH = 730.0


def batch_candidates(workload: BatchWorkload, context: Context) -> tuple[list[CostedCandidate], int]:
    demand = BatchDemand.from_workload(workload)
    models = acceptable_models(workload.models, context.snapshot)
    context.notes.extend(models.notes)
    plans: list[CostedCandidate] = []
    evaluated = 0
    context_tokens = demand.input_tokens_per_request + demand.output_tokens_per_request
    for price, model_id in models.hosted_rows:
        evaluated += 1
        rejection = first_failing.hosted_row(price, context_tokens, context.constraints)
        if rejection is None:
            plans.append(hosted.batch_plan(price, model_id, demand, context.assumptions))
        else:
            context.book.record(rejection, hosted.label(price))
    if models.self_hosted:
        offers = eligible_offers(context, len(models.self_hosted) * len(SERVING_PRECISIONS) * len(JOB_MODES))
        for model in models.self_hosted:
            cloud_plans, priced = _cloud(model, demand, offers, context)
            plans += cloud_plans
            evaluated += priced
        _reject_purchases(context, len(models.self_hosted))
    return plans, evaluated


def _reject_purchases(context: Context, models: int) -> None:
    bought = [
        entry.id
        for entry in context.snapshot.accelerators.values()
        if entry.kind in OWNED_KINDS | LOCAL_KINDS and entry.id in context.snapshot.hardware_prices
    ]
    one_off = purchase_for_one_job()
    context.book.reject(one_off.reason, one_off.detail, len(bought) * models * len(SERVING_PRECISIONS))


def _cloud(
    model: SelfHosted, demand: BatchDemand, offers: EligibleOffers, context: Context
) -> tuple[list[CostedCandidate], int]:
    a, book, table = context.assumptions, context.book, offers.table
    precisions = [p for p in SERVING_PRECISIONS if precision_floor(p, context.constraints) is None]
    rows_per_precision = len(table.offers) * len(JOB_MODES)
    book.reject(
        RejectReason.VIOLATES_CONSTRAINT,
        f"{model.model_id}: precisions below the floor {context.constraints.min_precision}",
        (len(SERVING_PRECISIONS) - len(precisions)) * rows_per_precision,
    )
    capacities = serving_capacities(
        model.architecture,
        [
            (i, spec)
            for i in sorted(offers.accelerator_ids)
            if (spec := context.snapshot.accelerators[i].spec)
        ],
        precisions,
        engine=a.serving_engine,
        input_tokens=demand.input_tokens_per_request,
        output_tokens=demand.output_tokens_per_request,
        ttft_ms=None,
        tpot_ms=None,
        efficiency=context.efficiency,
    )
    sized = size_replica_groups(offers, capacities, precisions, book, len(JOB_MODES))
    layouts = sized.sizings
    if not layouts:
        return [], sized.rejected
    jobs = {mode: cloud.batch_jobs(layouts, demand, mode, a) for mode in JOB_MODES}
    budget = context.constraints.max_usd_per_month
    months = max(1.0, demand.deadline_hours / _HOURS_PER_BUDGET_MONTH)
    choices, priced = choose_cheapest(
        table,
        sized.rows,
        [_mode_hours(mode, jobs[mode], layouts, demand, context) for mode in JOB_MODES],
        fixed_usd=0.0,
        max_total_usd=None if budget is None else budget * months,
        assumptions=a,
        book=book,
        describe=lambda offer, key, mode: (
            f"{cloud.offer_label(table.offers[offer], mode)} {layouts[key].capacity.precision.value}"
        ),
    )
    return _plans(choices, table, layouts, jobs, model, demand, context), sized.rejected + priced


def _mode_hours(
    mode: cloud.CloudMode,
    jobs: cloud.BatchJobs,
    layouts: list[Layout],
    demand: BatchDemand,
    context: Context,
) -> ModeHours:
    hours = jobs.instance_hours

    def detail(key: int) -> str:
        accelerator_id = layouts[key].capacity.accelerator_id
        limit = context.assumptions.max_accelerators_per_job
        return deadline.batch_deadline(limit, accelerator_id, demand.deadline_hours).detail

    return ModeHours(mode, hours, RejectReason.MISSES_DEADLINE, detail)


def _plans(
    choices: Iterable[Choice],
    table: OfferTable,
    layouts: list[Layout],
    jobs: dict[cloud.CloudMode, cloud.BatchJobs],
    model: SelfHosted,
    demand: BatchDemand,
    context: Context,
) -> list[CostedCandidate]:
    plans: list[CostedCandidate] = []
    for choice in one_per_group(choices, table, _CLOUD_PLANS_KEPT):
        offer, key = table.offers[choice.offer], choice.key
        job = jobs[choice.mode].job(key)
        plan = cloud.batch_plan(
            offer, choice.mode, layouts[key], model.model_id, demand, context.assumptions, job
        )
        if plan is not None:
            plans.append(plan)
    return plans
