"""Candidates for a training or fine-tuning workload: cloud, owned servers and local cards.

Each (accelerator, instance or server size) is sized once per time limit (costs/training_jobs.py):
the deadline for jobs rented by the hour, the deadline shortened by spot's interruption overhead,
and the share of the year a run may take on capacity held all year (reservations, owned, local).
Hosted fine-tuning is not a candidate: the catalog has no fine-tuning prices.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from wheretorun.engine.costs import training_jobs as costs
from wheretorun.engine.costs.arrays import IntArray
from wheretorun.engine.costs.candidate import CostedCandidate
from wheretorun.engine.costs.cloud import JOB_MODES, CloudMode, committed_months, offer_label
from wheretorun.engine.costs.owned import server_size
from wheretorun.engine.costs.training_jobs import JobSizer, TrainingJob, job_sizer, year_limit_hours
from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.memo import RecentResults
from wheretorun.engine.planning.cloud_sizing import CloudSizing, size_offer_groups
from wheretorun.engine.planning.cloud_table import ModeHours, OfferTable, choose_cheapest, one_per_group
from wheretorun.engine.planning.context import Context
from wheretorun.engine.planning.offers import EligibleOffers, eligible_hardware, eligible_offers
from wheretorun.engine.planning.rejections import RejectionBook
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules import deadline
from wheretorun.engine.rules.cluster_network import single_instance
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.specs import AcceleratorSpec, ModelArchitecture
from wheretorun.engine.workload import OptionKind, TrainingWorkload

__all__ = ["TRAINING_MODES", "clear_sized_jobs", "training_candidates"]

TRAINING_MODES = (*JOB_MODES, CloudMode("reserved_1y", "always_on"), CloudMode("reserved_3y", "always_on"))
_CLOUD_PLANS_KEPT = 30
_FINE_TUNING_NOTE = (
    "hosted fine-tuning: no provider in the catalog prices fine-tuning, so it is not a candidate"
)


def _architecture(workload: TrainingWorkload, context: Context) -> ModelArchitecture:
    entry = context.snapshot.models.get(workload.model)
    if entry is None:
        raise InvalidSpec("workload.model", f"no catalog model {workload.model!r}")
    if entry.architecture is None:
        raise InvalidSpec("workload.model", f"{workload.model!r} has no published architecture to train")
    return entry.architecture


def _limits(workload: TrainingWorkload, context: Context) -> dict[str, float]:
    """Longest run allowed: by the hour, on spot (interruptions lengthen runs), and on capacity
    held all year."""
    deadline = workload.deadline_hours or math.inf
    a = context.assumptions
    return {
        "hourly": deadline,
        "spot": deadline / (1 + a.spot_interruption_overhead),
        "held": min(deadline, year_limit_hours(workload, a)),
    }


def _limit_of(mode: CloudMode) -> str:
    if mode.reserved:
        return "held"
    return "spot" if mode.pricing == "spot" else "hourly"


def training_candidates(workload: TrainingWorkload, context: Context) -> tuple[list[CostedCandidate], int]:
    model = _architecture(workload, context)
    context.notes.append(_FINE_TUNING_NOTE)
    plans, evaluated = _cloud(model, workload, context)
    cheapest_run = min(
        (p.total_usd / p.runs for p in plans if p.runs and p.setup.pricing_mode == "on_demand"), default=None
    )
    plans += _owned(model, workload, context, cheapest_run)
    plans += _local(model, workload, context)
    return plans, evaluated + len(plans)


def _spec(context: Context, accelerator_id: str) -> AcceleratorSpec:
    spec = context.snapshot.accelerators[accelerator_id].spec
    assert spec is not None, "offer rules keep accelerators with a spec only"
    return spec


def _cloud(
    model: ModelArchitecture, workload: TrainingWorkload, context: Context
) -> tuple[list[CostedCandidate], int]:
    a, book = context.assumptions, context.book
    offers = eligible_offers(context, len(TRAINING_MODES))
    table = offers.table
    limits = _limits(workload, context)
    fastest_job = job_sizer(model, workload, a, context.efficiency)
    sized, rejected = _SIZED.get(
        (offers, fastest_job),
        tuple(limits.items()),
        lambda: _sized(fastest_job, context, offers, limits),
    )
    book.merge(rejected)
    jobs = sized.sizings
    if not jobs:
        return [], sized.rejected
    runs = workload.runs_per_year * a.years
    budget = context.constraints.max_usd_per_month
    choices, priced = choose_cheapest(
        table,
        sized.rows,
        [_mode_hours(mode, jobs, runs, context) for mode in TRAINING_MODES],
        fixed_usd=0.0,
        max_total_usd=None if budget is None else budget * a.horizon_months,
        assumptions=a,
        book=book,
        describe=lambda offer, key, mode: offer_label(table.offers[offer], mode),
    )
    plans: list[CostedCandidate] = []
    for choice in one_per_group(choices, table, _CLOUD_PLANS_KEPT):
        job = jobs[choice.key][_limit_of(choice.mode)]
        assert isinstance(job, TrainingJob)
        plan = costs.cloud_training_plan(
            table.offers[choice.offer], choice.mode, job, workload.model, workload, a
        )
        if plan is not None:
            plans.append(plan)
    return plans, sized.rejected + priced


_Jobs = dict[str, TrainingJob | Rejection]  # the fastest job within each limit (`_limits`)

# The sized groups of the last few (eligible offers, job sizer, limits), and the rejections they
# made: a planning loop over prices or budgets sizes the same jobs (the job sizer is itself
# remembered per model, workload shape and assumptions, so it is matched by identity).
_SIZED: RecentResults[tuple[CloudSizing[_Jobs], RejectionBook]] = RecentResults(kept=16)


def clear_sized_jobs() -> None:
    """Forget the remembered training sizings of offer groups."""
    _SIZED.clear()


def _sized(
    fastest_job: JobSizer, context: Context, offers: EligibleOffers, limits: dict[str, float]
) -> tuple[CloudSizing[_Jobs], RejectionBook]:
    book = RejectionBook()
    groups = _job_groups(fastest_job, context, offers, limits)
    return size_offer_groups(offers.table, groups, book, len(TRAINING_MODES)), book


def _job_groups(
    fastest_job: JobSizer, context: Context, offers: EligibleOffers, limits: dict[str, float]
) -> Iterator[tuple[IntArray, _Jobs | Rejection]]:
    """Training groups: each (accelerator, accelerators per instance) x cluster network, with the
    fastest job within each limit, or why even the hourly limit cannot be met by adding instances
    (a missed deadline is decided per pricing mode when priced)."""
    for (accelerator_id, size), group_rows in offers.by_size.items():
        spec = _spec(context, accelerator_id)
        for network, rows in _by_network(offers.table, group_rows).items():
            sized: _Jobs = {
                name: fastest_job(
                    spec,
                    size,
                    limit,
                    max_units=None if network else 1,
                    spot=name == "spot",
                    internode_gb_s=network,
                )
                for name, limit in limits.items()
            }
            hourly = sized["hourly"]
            if isinstance(hourly, Rejection) and not network:
                hourly = single_instance(hourly)
            if isinstance(hourly, Rejection) and hourly.reason != RejectReason.MISSES_DEADLINE:
                yield rows, hourly
            else:
                yield rows, sized


def _by_network(table: OfferTable, rows: IntArray) -> dict[float | None, IntArray]:
    """A group's rows by the cluster network of their instance type (GB/s per accelerator; None
    for instances without a published one, which run single-instance jobs only)."""
    out: dict[float | None, list[int]] = {}
    for row, network in zip(rows.tolist(), table.network[rows].tolist(), strict=True):
        out.setdefault(None if math.isnan(network) else network, []).append(row)
    return {network: np.asarray(found, dtype=np.int64) for network, found in out.items()}


def _mode_hours(mode: CloudMode, jobs: list[_Jobs], runs: float, context: Context) -> ModeHours:
    """Instance-hours each sized job pays in `mode` over the horizon (NaN: misses its limit)."""
    a = context.assumptions
    hours = np.full(len(jobs), np.nan)
    for key, sized in enumerate(jobs):
        job = sized[_limit_of(mode)]
        if isinstance(job, TrainingJob):
            if mode.reserved:
                hours[key] = job.units * a.hours_per_month * committed_months(mode, a.horizon_months)
            else:
                hours[key] = job.units * job.wall_hours * runs

    def detail(key: int) -> str:
        job = jobs[key][_limit_of(mode)]
        return job.detail if isinstance(job, Rejection) else ""

    return ModeHours(mode, hours, RejectReason.MISSES_DEADLINE, detail)


def _owned(
    model: ModelArchitecture, workload: TrainingWorkload, context: Context, rented_per_run: float | None
) -> list[CostedCandidate]:
    a, book = context.assumptions, context.book
    limit = _limits(workload, context)["held"]
    lead = deadline.lead_time(a.hardware_lead_time_months, a.horizon_months)
    plans = []
    for entry in eligible_hardware(context, OptionKind.OWNED, 1):
        if lead is not None:
            book.record(lead, f"owned {entry.id}")
            continue
        spec = _spec(context, entry.id)
        job = job_sizer(model, workload, a, context.efficiency)(spec, server_size(entry, a), limit)
        if isinstance(job, Rejection):
            book.record(job, f"owned {entry.id}")
            continue
        assert spec.tdp_w is not None, "hardware rules keep accelerators with a TDP only"
        price = context.snapshot.hardware_prices[entry.id]
        plans.append(
            costs.owned_training_plan(
                entry, price, spec.tdp_w, job, workload.model, workload, a, rented_per_run
            )
        )
    return plans


def _local(model: ModelArchitecture, workload: TrainingWorkload, context: Context) -> list[CostedCandidate]:
    a, book = context.assumptions, context.book
    limit = _limits(workload, context)["held"]
    plans = []
    for entry in eligible_hardware(context, OptionKind.LOCAL, 1):
        spec = _spec(context, entry.id)
        job = job_sizer(model, workload, a, context.efficiency)(spec, 1, limit, max_units=1)
        if isinstance(job, Rejection):
            book.record(job, f"local {entry.id}")
            continue
        assert spec.tdp_w is not None, "hardware rules keep accelerators with a TDP only"
        price = context.snapshot.hardware_prices[entry.id]
        plans.append(costs.local_training_plan(entry, price, spec.tdp_w, job, workload.model, workload, a))
    return plans
