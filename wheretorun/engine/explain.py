"""One-paragraph rationales, written from a plan's own numbers and its rank."""

from __future__ import annotations

from typing import NamedTuple

from wheretorun.engine.costs.candidate import CostedCandidate
from wheretorun.engine.money import small_unit_usd

__all__ = ["UnitCosts", "rationale", "unit_costs"]


class UnitCosts(NamedTuple):
    """A plan's costs per unit, each read once from the plan (its properties add up the lines
    again on every read): the recommender writes them as money and the rationale as text."""

    per_month: float | None
    per_million_tokens: float | None
    marginal_per_million_tokens: float | None
    per_run: float | None
    marginal_per_run: float | None


def unit_costs(plan: CostedCandidate) -> UnitCosts:
    return UnitCosts(
        plan.usd_per_month,
        plan.usd_per_million_tokens,
        plan.marginal_usd_per_million_tokens,
        plan.usd_per_run,
        plan.marginal_usd_per_run,
    )


def _usd(value: float) -> str:
    if abs(value) >= 1e6:
        return f"${value / 1e6:,.2f}M"
    if abs(value) >= 1e4:
        return f"${value / 1e3:,.1f}k"
    return f"${value:,.2f}"


def _unit_usd(value: float) -> str:
    return small_unit_usd(value) or _usd(value)


def _cost_sentence(plan: CostedCandidate, units: UnitCosts) -> str:
    parts = [f"{plan.label} costs {_usd(plan.total_usd)}"]
    parts.append(
        f"over {plan.months:g} months ({_usd(units.per_month or 0.0)} a month)"
        if plan.months
        else "for the job"
    )
    per_token = units.per_million_tokens
    if per_token is not None:
        parts.append(f"or {_unit_usd(per_token)} per million tokens all-in")
        marginal = units.marginal_per_million_tokens
        if marginal is not None and marginal < per_token * 0.99:
            parts.append(f"({_unit_usd(marginal)} without the fixed staff minimum)")
    per_run = units.per_run
    if per_run is not None:
        parts.append(f"or {_unit_usd(per_run)} per run all-in")
        marginal = units.marginal_per_run
        if marginal is not None and marginal < per_run * 0.99:
            parts.append(f"({_unit_usd(marginal)} without the fixed staff minimum)")
    return " ".join(parts) + "."


def _biggest_line(plan: CostedCandidate) -> str:
    """The largest cost line as a share of everything paid out (the positive lines): a resale
    credit lowers the total but is not a cost, so the shares of the costs add up to 100%."""
    # one loop: what `sum` of the positive lines and `max` by amount (the first of equals) give
    paid = 0.0
    top = None
    for line in plan.lines:
        usd = line.usd
        if usd > 0:
            paid += usd
            if top is None or usd > top.usd:
                top = line
    if top is None or paid <= 0:
        return ""
    return f" The largest cost is {top.name} ({top.usd / paid:.0%} of the costs paid)."


def _relative(extra: float, base: float) -> str:
    """`extra` against `base`: a percentage up to 2x, a multiple beyond (a percentage of a tiny
    base reads as nonsense: 1507563%)."""
    if base <= 0:
        return "the cheapest costs nothing"
    ratio = (base + extra) / base
    if ratio >= 2:
        return f"{ratio:,.1f} times the cheapest"
    return f"{extra / base:.0%} more"


def _comparison(
    plan: CostedCandidate, rank: int, winner: CostedCandidate, runner_up: CostedCandidate | None
) -> str:
    if rank == 0:
        if runner_up is None:
            return " It is the only feasible option."
        gap = runner_up.total_usd - plan.total_usd
        share = gap / runner_up.total_usd if runner_up.total_usd else 0.0
        return (
            f" It is the cheapest option, {_usd(gap)} below the next, {runner_up.label} "
            f"({share:.0%} less than it)."
        )
    extra = plan.total_usd - winner.total_usd
    return (
        f" It costs {_usd(extra)} more than the cheapest, {winner.label} "
        f"({_relative(extra, winner.total_usd)})."
    )


def _usage(plan: CostedCandidate) -> str:
    parts = []
    if plan.utilisation is not None:
        parts.append(f"the capacity paid for is {min(plan.utilisation, 1.0):.0%} used on average")
    if plan.headroom is not None:
        if plan.headroom > 10:
            parts.append("the capacity is more than ten times the busiest hour's demand")
        else:
            times = 1 + plan.headroom
            spare = plan.headroom / times
            parts.append(
                f"the capacity is {times:.2f} x the busiest hour's demand ({spare:.0%} of it spare then)"
            )
    if plan.ttft_ms is not None and plan.tpot_ms is not None:
        parts.append(f"estimated TTFT {plan.ttft_ms:.0f} ms and TPOT {plan.tpot_ms:.1f} ms")
    return f" At this volume {', '.join(parts)}." if parts else ""


def rationale(
    plan: CostedCandidate,
    rank: int,
    winner: CostedCandidate,
    runner_up: CostedCandidate | None,
    units: UnitCosts | None = None,
) -> str:
    """Cost, rank against the winner, the main cost driver, usage, the plan's own facts and its
    first risk; `units` is the plan's `unit_costs` where the caller has them already."""
    facts = "".join(f" {fact}." for fact in plan.facts[:2])
    risk = f" Main risk: {plan.risks[0]}." if plan.risks else ""
    return (
        _cost_sentence(plan, unit_costs(plan) if units is None else units)
        + _comparison(plan, rank, winner, runner_up)
        + _biggest_line(plan)
        + facts
        + _usage(plan)
        + risk
    )
