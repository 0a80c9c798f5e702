"""Training and fine-tuning: accelerator-hours from `estimate_training`, priced per option.

Sizing (`fastest_job`). A job runs on whole units (cloud instances or owned servers) of
`unit_size` accelerators. It starts from the fewest units whose memory holds the job
(`TrainingEstimate.min_accelerators`, ZeRO-3 data parallelism, bf16 mixed precision, or fp16
where the chip has no bf16 units: V100, T4) and doubles the units
until a run finishes within its time limit, up to `assumptions.max_accelerators_per_job`. The
limit is the workload's deadline, and, for capacity that is held all year (owned servers,
reservations), also the share of the year each run may take: runs_per_year x run time <=
8,760 h x target utilisation. Otherwise: `misses_deadline`.

Costs over the horizon (`runs` = runs_per_year x horizon years):
* cloud on demand / spot: units x run hours x price x runs (spot: its interruption overhead is in
  the price and lengthens the run for the deadline);
* cloud reserved: the units held for whole commitment terms;
* owned: servers (with the cluster network share once the job spans more than one server),
  capital, maintenance, colocation, staff and power: accelerators draw
  `training_gpu_power_fraction` x TDP while training, the servers' base power all the time;
  runs that fall in the hardware lead time are rented (the cheapest cloud cost per run);
* local: one card, its capital, its power while training and its upkeep (the hosted-API staff
  rate, as for local serving).
Every option pays operations staff (staff.py): rented clusters for the hours their runs take
(reserved: the whole term), owned clusters for every month in service.
Hosted fine-tuning is not offered: the catalog has no fine-tuning prices.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any

from wheretorun.engine import spot_reclaims
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.catalog import AcceleratorEntry, CloudOffer, HardwarePrice
from wheretorun.engine.cluster_network import cluster_network
from wheretorun.engine.config import TrainingMethod
from wheretorun.engine.costs.candidate import CostedCandidate, Line
from wheretorun.engine.costs.cloud import (
    CloudMode,
    committed_months,
    hourly_price,
    offer_label,
    price_source,
    reserved_rate,
)
from wheretorun.engine.costs.finance import capital_schedule
from wheretorun.engine.costs.owned import lead_months, server_capex_usd, server_price_note
from wheretorun.engine.costs.staff import SCALED_STAFF, STAFF, staff_lines
from wheretorun.engine.efficiency import EfficiencyTable
from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.precision import Precision
from wheretorun.engine.recommendation import RejectReason, Setup
from wheretorun.engine.rules import deadline, hardware_spec, memory_fit, precision_support
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.specs import AcceleratorSpec, ModelArchitecture
from wheretorun.engine.training_estimate import TrainingEstimate
from wheretorun.engine.training_setting import TrainingSetting, best_setting, fewest_for_any
from wheretorun.engine.whole_run import WholeRun
from wheretorun.engine.workload import OptionKind, TrainingWorkload

__all__ = [
    "TrainingJob",
    "clear_job_sizers",
    "cloud_training_plan",
    "JobSizer",
    "fastest_job",
    "job_sizer",
    "local_training_plan",
    "owned_training_plan",
    "year_limit_hours",
]

_HOURS_PER_YEAR = 8760.0
_OPEX = ("maintenance", "colocation", "power", STAFF, SCALED_STAFF)
_W_PER_KW = 1000.0


@dataclass(frozen=True, slots=True)
class TrainingJob:
    """A run on `units` x `unit_size` accelerators."""

    units: int
    unit_size: int
    wall_hours: float  # one whole run: steady-state time plus interruptions and scale losses
    mfu: float | None
    precision: Precision = Precision.BF16  # the mixed-precision type the run computes in
    uncertainty: str = ""  # where the time may be off (`_uncertainty`)
    setting: TrainingSetting | None = None  # the parallelism and memory setting the search chose
    caveats: tuple[str, ...] = ()  # what a plan's risks must say about the run's time (`_caveats`)

    @property
    def accelerators(self) -> int:
        return self.units * self.unit_size


def year_limit_hours(workload: TrainingWorkload, assumptions: Assumptions) -> float:
    """Longest run that lets `runs_per_year` runs share capacity held all year."""
    return _HOURS_PER_YEAR * assumptions.target_utilisation / workload.runs_per_year


def fastest_job(
    model: ModelArchitecture,
    spec: AcceleratorSpec,
    workload: TrainingWorkload,
    unit_size: int,
    limit_hours: float,
    assumptions: Assumptions,
    efficiency: EfficiencyTable,
    max_units: int | None = None,
    *,
    spot: bool = False,
    internode_gb_s: float | None = None,
) -> TrainingJob | Rejection:
    """The fewest units (doubling) that run the job within `limit_hours`, at most `max_units`
    units and `assumptions.max_accelerators_per_job` accelerators, each count with the fastest
    setting that fits (training_setting.py): recomputation, ZeRO stage, tensor-parallel degree
    and micro-batch are searched before a job is rejected. On `spot` a run also loses what its
    instances' reclaims cost (spot_reclaims.py), more the more instances it spans.
    `internode_gb_s` is the cluster network between instances, per accelerator."""
    precision = _mixed_precision(spec)
    if precision is None:
        return precision_support.training(spec)
    no_peak = hardware_spec.compute_peak(spec, precision)
    if no_peak is not None:
        return no_peak
    method = TrainingMethod(workload.method)
    try:
        minimum = fewest_for_any(
            model, spec, method, precision, workload.tokens, workload.sequence_length, unit_size
        )
    except InvalidSpec as error:
        return Rejection(RejectReason.UNSPECIFIED_HARDWARE, error.reason)
    if minimum is None:
        return memory_fit.training_setting(spec.name)
    units = max(math.ceil(minimum / unit_size), 1)
    most = assumptions.max_accelerators_per_job // unit_size
    if max_units is not None:
        most = min(most, max_units)
    best_hours = math.inf
    fitted = False
    while units <= most:
        accelerators = units * unit_size
        found = best_setting(
            model,
            spec,
            method,
            precision,
            workload.tokens,
            workload.sequence_length,
            accelerators,
            unit_size,
            efficiency,
            internode_gb_s,
        )
        if found is not None:
            fitted = True
            setting, estimate = found
            run = estimate.whole_run
            if run is None:
                return Rejection(
                    RejectReason.UNSPECIFIED_HARDWARE,
                    f"{spec.name} publishes no {precision.value} compute peak",
                )
            hours = run.wall_clock_hours
            if spot:
                hours = spot_reclaims.training_spot_hours(hours, units, assumptions)
            if hours <= limit_hours:
                caveats = _caveats(estimate, spec, accelerators, hours, limit_hours)
                uncertainty = _uncertainty(estimate, run)
                return TrainingJob(
                    units, unit_size, hours, estimate.mfu, precision, uncertainty, setting, caveats
                )
            best_hours = min(best_hours, hours)
        units *= 2
    if not fitted:
        return memory_fit.training_holds(minimum, most * unit_size, spec.name)
    return deadline.training_run(most * unit_size, spec.name, best_hours, limit_hours)


def _uncertainty(estimate: TrainingEstimate, run: WholeRun) -> str:
    """Where the run's time may be off: the source of the training efficiency (a family's own
    fit, or what stands in for a family with no calibration rows), then the whole run's error."""
    return "; ".join(part for part in (estimate.efficiency_source, run.uncertainty) if part)


def _caveats(
    estimate: TrainingEstimate, spec: AcceleratorSpec, accelerators: int, hours: float, limit_hours: float
) -> tuple[str, ...]:
    """What a plan's risks must say about its run's time: what it leaves out for want of a
    figure, and a limit that the estimate's own median error would break. The limit is the
    deadline, or the share of the year each run may take on capacity held all year (both less
    any flat spot overhead, which lengthens the run alike): so the spare share is said, not hours."""
    caveats = []
    if not estimate.communication_priced:
        caveats.append(
            f"the catalog has no interconnect figure for {spec.name}: the data-parallel communication "
            f"between its {accelerators} accelerators is not priced, so a run may take longer than stated"
        )
    error = None if estimate.whole_run is None else estimate.whole_run.median_error
    if error is not None and hours * (1 + error) > limit_hours:
        caveats.append(
            f"a run leaves {1 - hours / limit_hours:.0%} of its time limit spare; {error:.0%} more time, "
            "the estimate's median error, would pass the limit: it may not fit"
        )
    return tuple(caveats)


_SIZINGS_KEPT = 4096  # per sizer: a recommendation over the full catalog sizes ~800 cases
_SIZERS_KEPT = 16


class JobSizer:
    """`fastest_job` for one model, workload shape (method, tokens, sequence length), assumptions
    and efficiency table, each answer remembered by (accelerator, unit size, time limit, unit cap,
    spot, network): a recommendation sizes hundreds of such cases, and a repeat, or a change of
    volume, prices or constraints, sizes the same ones. Every argument is an immutable value,
    so remembering changes timing, never answers."""

    __slots__ = ("_assumptions", "_efficiency", "_known", "_model", "_workload")

    def __init__(
        self,
        model: ModelArchitecture,
        workload: TrainingWorkload,
        assumptions: Assumptions,
        efficiency: EfficiencyTable,
    ) -> None:
        self._model, self._workload = model, workload
        self._assumptions, self._efficiency = assumptions, efficiency
        self._known: dict[tuple[Any, ...], TrainingJob | Rejection] = {}

    def __call__(
        self,
        spec: AcceleratorSpec,
        unit_size: int,
        limit_hours: float,
        max_units: int | None = None,
        *,
        spot: bool = False,
        internode_gb_s: float | None = None,
    ) -> TrainingJob | Rejection:
        key = (spec, unit_size, limit_hours, max_units, spot, internode_gb_s)
        found = self._known.get(key)
        if found is None:
            found = fastest_job(
                self._model,
                spec,
                self._workload,
                unit_size,
                limit_hours,
                self._assumptions,
                self._efficiency,
                max_units,
                spot=spot,
                internode_gb_s=internode_gb_s,
            )
            if len(self._known) < _SIZINGS_KEPT:
                self._known[key] = found
        return found


def job_sizer(
    model: ModelArchitecture,
    workload: TrainingWorkload,
    assumptions: Assumptions,
    efficiency: EfficiencyTable,
) -> JobSizer:
    """The `JobSizer` of this model, workload shape, assumptions and efficiency table (the last
    few are kept)."""
    shape = dataclasses.replace(workload, deadline_hours=None, runs_per_year=1.0)
    return _job_sizer(model, shape, assumptions, efficiency)


def clear_job_sizers() -> None:
    """Forget every remembered sizing."""
    _job_sizer.cache_clear()


@functools.lru_cache(maxsize=_SIZERS_KEPT)
def _job_sizer(
    model: ModelArchitecture, shape: TrainingWorkload, assumptions: Assumptions, efficiency: EfficiencyTable
) -> JobSizer:
    return JobSizer(model, shape, assumptions, efficiency)


def _mixed_precision(spec: AcceleratorSpec) -> Precision | None:
    """bf16 mixed precision, fp16 on chips without bf16 units (its precision support says which);
    None when it has neither. Unstated support: bf16."""
    support = spec.precision_support
    return Precision.BF16 if support is None else support.trained_instead(Precision.BF16)


def _network_fact(offer: CloudOffer, job: TrainingJob) -> tuple[str, ...]:
    """How the instances of a multi-instance job are joined (cluster_network.py)."""
    network = cluster_network(offer.provider, offer.instance_type)
    if job.units < 2 or network is None:
        return ()
    return (f"{job.units} instances joined over a {network.gbit_s_per_instance:,.0f} Gbit/s cluster network",)


def _run_figures(job: TrainingJob) -> dict[str, Any]:
    """What every training plan reports about one run."""
    return {
        "accelerator_hours_per_run": job.wall_hours * job.accelerators,
        "wall_clock_hours_per_run": job.wall_hours,
        "uncertainty": job.uncertainty or None,
        "setting": None if job.setting is None else job.setting.describe(),
    }


def _runs(workload: TrainingWorkload, assumptions: Assumptions) -> float:
    return workload.runs_per_year * assumptions.years


def _purchase(model_id: str, accelerator_id: str, job: TrainingJob, scaling: str) -> Setup:
    """Owned servers or a local card running one training job at a time (one model copy)."""
    return Setup.for_purchase(
        model_id,
        accelerator_id,
        scaling=scaling,
        units=job.units,
        accelerators=job.accelerators,
        accelerators_per_replica=job.accelerators,
        replicas=1,
        precision=job.precision.value,
    )


def cloud_training_plan(
    offer: CloudOffer,
    mode: CloudMode,
    job: TrainingJob,
    model_id: str,
    workload: TrainingWorkload,
    assumptions: Assumptions,
) -> CostedCandidate | None:
    price = hourly_price(offer, mode, assumptions)
    if price is None:
        return None
    runs = _runs(workload, assumptions)
    if mode.reserved:
        months = committed_months(mode, assumptions.horizon_months)
        hours = job.units * assumptions.hours_per_month * months
        note = f"{job.units} x {offer.instance_type} reserved for {months} months"
    else:
        hours = job.units * job.wall_hours * runs
        note = f"{runs:g} runs x {job.units} x {offer.instance_type} x {job.wall_hours:,.1f} h"
    staffed_months = (
        assumptions.horizon_months if mode.reserved else job.wall_hours * runs / assumptions.hours_per_month
    )
    lines = (
        Line("instance hours", price * hours, f"{note} at ${price:.4f} per instance-hour"),
        *staff_lines(
            assumptions.cloud_staff_usd_per_month,
            job.accelerators,
            staffed_months,
            assumptions,
            "rented training cluster" + ("" if mode.reserved else ", for the hours its runs take"),
        ),
    )
    return CostedCandidate(
        option=OptionKind.CLOUD,
        label=offer_label(offer, mode),
        setup=Setup.for_cloud(
            model_id,
            offer,
            pricing_mode=mode.pricing,
            scaling=mode.scaling,
            instances=job.units,
            accelerators=job.accelerators,
            accelerators_per_replica=job.accelerators,
            replicas=1,
            precision=job.precision.value,
        ),
        lines=lines,
        months=assumptions.horizon_months,
        opex_usd_per_month=sum(line.usd for line in lines) / assumptions.horizon_months,
        runs=runs,
        utilisation=job.wall_hours * runs / (hours / job.units) if mode.reserved else 1.0,
        risks=(*_cloud_risks(offer, mode, assumptions), *job.caveats),
        **_run_figures(job),
        facts=(
            f"One run takes {job.wall_hours:,.1f} h on {job.accelerators} x {offer.accelerator_id}"
            + (f" at {job.mfu:.0%} MFU" if job.mfu else "")
            + (f" ({job.setting.describe()})" if job.setting else ""),
            _run_fact(workload),
            *_network_fact(offer, job),
        ),
        usd_per_accelerator_hour=price / float(offer.accelerator_count),
        price_source=price_source(offer, mode, assumptions),
        reprice=lambda multiplier: _scaled_cloud(
            offer, mode, job, model_id, workload, assumptions, multiplier
        ),
    )


def _scaled_cloud(
    offer: CloudOffer,
    mode: CloudMode,
    job: TrainingJob,
    model_id: str,
    workload: TrainingWorkload,
    assumptions: Assumptions,
    multiplier: float,
) -> CostedCandidate | None:
    scaled = _more_runs(workload, multiplier)
    if mode.reserved and job.wall_hours > year_limit_hours(scaled, assumptions):
        return None
    return cloud_training_plan(offer, mode, job, model_id, scaled, assumptions)


def _more_runs(workload: TrainingWorkload, multiplier: float) -> TrainingWorkload:
    return TrainingWorkload(
        model=workload.model,
        method=workload.method,
        tokens=workload.tokens,
        deadline_hours=workload.deadline_hours,
        runs_per_year=workload.runs_per_year * multiplier,
        sequence_length=workload.sequence_length,
    )


def _run_fact(workload: TrainingWorkload) -> str:
    """What one run is sized for: its tokens and the sequence length its memory and attention
    FLOPs follow from (the workload's, 2,048 unless it says otherwise)."""
    tokens = workload.tokens
    amount = f"{tokens / 1e9:,.4g}B" if tokens >= 1e9 else f"{tokens / 1e6:,.4g}M"
    sequence = f"{workload.sequence_length:,}"
    return f"A run is {amount} tokens of {workload.method} training in sequences of {sequence} tokens"


def _cloud_risks(offer: CloudOffer, mode: CloudMode, assumptions: Assumptions) -> tuple[str, ...]:
    risks = [f"vendor concentration: capacity and price depend on {offer.provider}"]
    if mode.pricing == "spot":
        risks.append("spot interruptions: runs must checkpoint and resume; the overhead is an assumption")
    if mode.reserved:
        risks.append("the reservation is paid whether or not runs use it")
        rate = reserved_rate(offer, mode.term_years, assumptions)
        if rate is not None and rate.users:
            risks.append("the committed price is the user's own discount, not a published term")
    return tuple(risks)


def owned_training_plan(
    entry: AcceleratorEntry,
    price: HardwarePrice,
    tdp_w: float,
    job: TrainingJob,
    model_id: str,
    workload: TrainingWorkload,
    assumptions: Assumptions,
    rented_usd_per_run: float | None,
) -> CostedCandidate:
    a = assumptions
    servers = job.units
    server_capex = server_capex_usd(price, job.unit_size, a)
    network = (
        servers * server_capex * a.cluster_network_fraction / (1 - a.cluster_network_fraction)
        if servers > 1
        else 0.0
    )
    capex = servers * server_capex + network
    lead = lead_months(a)
    schedule = capital_schedule(
        lead, a.horizon_months, a.life_months, a.residual_value_fraction, a.cost_of_capital_annual
    )
    months = schedule.in_service_months
    busy_hours = workload.runs_per_year * job.wall_hours * months / 12
    kwh = (job.accelerators * tdp_w * a.training_gpu_power_fraction * busy_hours) / _W_PER_KW + (
        servers * a.base_server_power_w * a.hours_per_month * months
    ) / _W_PER_KW
    nameplate_kw = servers * (job.unit_size * tdp_w + a.base_server_power_w) / _W_PER_KW
    lines = [
        Line(
            "hardware purchase",
            capex * schedule.purchases,
            f"{servers} server(s) x {job.unit_size} x {entry.id} at {server_price_note(price, a)}"
            + (f", network {a.cluster_network_fraction:.0%} of the cluster" if network else "")
            + f" = ${capex / job.accelerators:,.0f} per accelerator",
        ),
        Line("resale value", -capex * schedule.resale),
        Line("cost of capital", capex * schedule.cost_of_capital),
        Line("maintenance", capex * a.maintenance_fraction_annual / 12 * months),
        Line("colocation", nameplate_kw * a.colocation_usd_per_kw_month * months),
        Line("power", kwh * a.pue * a.electricity_usd_per_kwh, f"{busy_hours:,.0f} h of training in service"),
        *staff_lines(a.operations_staff_usd_per_month, job.accelerators, months, a, "owned training cluster"),
    ]
    risks = []
    runs = _runs(workload, a)
    lead_runs = workload.runs_per_year * lead / 12
    if lead and rented_usd_per_run is not None:
        lines.append(
            Line("rental during lead time", rented_usd_per_run * lead_runs, f"{lead_runs:g} runs rented")
        )
        risks.append(f"hardware lead time {lead} months: runs in that time are rented")
    elif lead:
        risks.append(f"hardware lead time {lead} months: no runs until delivery (renting is not allowed)")
        runs -= lead_runs  # those runs are not made: the cost per run is over the runs that are
    utilisation = busy_hours / (a.hours_per_month * months) if months else None
    if utilisation is not None and utilisation < 0.5:
        risks.append(f"low utilisation ({utilisation:.0%}): the servers idle between runs")
    return CostedCandidate(
        option=OptionKind.OWNED,
        label=f"owned {servers} x {job.unit_size} x {entry.id} servers",
        setup=_purchase(model_id, entry.id, job, "always_on"),
        lines=tuple(lines),
        months=a.horizon_months,
        capex_usd=capex,
        opex_usd_per_month=sum(line.usd for line in lines if line.name in _OPEX) / months if months else 0.0,
        runs=runs,
        utilisation=utilisation,
        risks=(*risks, *job.caveats),
        **_run_figures(job),
        facts=(
            f"One run takes {job.wall_hours:,.1f} h on {job.accelerators} x {entry.id}",
            _run_fact(workload),
            f"${capex:,.0f} of hardware, ${capex / job.accelerators:,.0f} per {entry.id}",
        ),
        usd_per_accelerator_hour=sum(line.usd for line in lines)
        / (job.accelerators * a.hours_per_month * a.horizon_months),
        price_source=f"purchase price {price.describe()}: {price.source}",
        reprice=lambda multiplier: _scaled_owned(
            entry, price, tdp_w, job, model_id, workload, a, rented_usd_per_run, multiplier
        ),
    )


def _scaled_owned(
    entry: AcceleratorEntry,
    price: HardwarePrice,
    tdp_w: float,
    job: TrainingJob,
    model_id: str,
    workload: TrainingWorkload,
    assumptions: Assumptions,
    rented_usd_per_run: float | None,
    multiplier: float,
) -> CostedCandidate | None:
    scaled = _more_runs(workload, multiplier)
    if job.wall_hours > year_limit_hours(scaled, assumptions):
        return None
    return owned_training_plan(entry, price, tdp_w, job, model_id, scaled, assumptions, rented_usd_per_run)


def local_training_plan(
    entry: AcceleratorEntry,
    price: HardwarePrice,
    tdp_w: float,
    job: TrainingJob,
    model_id: str,
    workload: TrainingWorkload,
    assumptions: Assumptions,
) -> CostedCandidate:
    a = assumptions
    card = price.usd_per_accelerator
    schedule = capital_schedule(
        0, a.horizon_months, a.life_months, a.residual_value_fraction, a.cost_of_capital_annual
    )
    busy_hours = workload.runs_per_year * job.wall_hours * a.years
    energy = tdp_w * a.training_gpu_power_fraction * busy_hours / _W_PER_KW * a.electricity_usd_per_kwh
    lines = (
        Line("card purchase", card * schedule.purchases, f"{entry.id}; the host machine is not costed"),
        Line("resale value", -card * schedule.resale),
        Line("cost of capital", card * schedule.cost_of_capital),
        Line("power", energy, f"{busy_hours:,.0f} h of training, office power without PUE"),
        Line("upkeep", a.hosted_staff_usd_per_month * a.horizon_months, "care at the hosted-API staff rate"),
    )
    return CostedCandidate(
        option=OptionKind.LOCAL,
        label=f"local {entry.id}",
        setup=_purchase(model_id, entry.id, job, "job"),
        lines=lines,
        months=a.horizon_months,
        capex_usd=card,
        opex_usd_per_month=energy / a.horizon_months + a.hosted_staff_usd_per_month,
        runs=_runs(workload, a),
        utilisation=busy_hours / (a.hours_per_month * a.horizon_months),
        risks=("no SLA: a single card, a failed run restarts from its last checkpoint", *job.caveats),
        **_run_figures(job),
        facts=(f"One run takes {job.wall_hours:,.1f} h on one {entry.id}", _run_fact(workload)),
        usd_per_accelerator_hour=sum(line.usd for line in lines) / (a.hours_per_month * a.horizon_months),
        price_source=f"purchase price {price.describe()}: {price.source}",
        reprice=lambda multiplier: (
            None
            if job.wall_hours > year_limit_hours(_more_runs(workload, multiplier), a)
            else local_training_plan(entry, price, tdp_w, job, model_id, _more_runs(workload, multiplier), a)
        ),
    )
