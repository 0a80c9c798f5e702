"""Hosted API: tokens x price per million tokens.

A request costs (uncached input x input price + cached input x cached price + output x output
price) / 1e6. A missing cached-input price charges cached tokens at the full input price (the
price a provider without prompt caching charges). Batch jobs use the provider's batch tier when
the deadline leaves the tier's completion window (24 h); otherwise the standard prices.
Serving plans add the operations staff of a hosted integration for every month.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from decimal import Decimal

from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.catalog import ApiPriceOffer
from wheretorun.engine.costs.candidate import CostedCandidate, Line, PricedCandidate
from wheretorun.engine.costs.demand import BatchDemand, ServingDemand
from wheretorun.engine.costs.staff import staff_amounts, staff_lines
from wheretorun.engine.memo import ClearedWhenFull
from wheretorun.engine.recommendation import Setup
from wheretorun.engine.workload import OptionKind

__all__ = [
    "batch_plan",
    "clear_row_memos",
    "label",
    "priced_serving_plan",
    "priced_serving_plans",
    "serving_lines",
    "serving_plan",
    "serving_total",
    "usd_per_request",
    "uses_batch_tier",
]

_MILLION = 1e6


# What a price row gives whatever the volume, by the row's identity (an entry holds its row, so
# the identity is not reused while the entry lives), cleared when full: a request prices every
# hosted row of its models (22 for the 8B prototype), re-prices the best and bridges owned
# plans' lead times with it; three Decimal-to-float conversions ~4.5K instructions, a look-up
# ~1K (2026-12-05, callgrind). The rows' setups are remembered by `Setup.for_hosted` itself.
_ROWS_KEPT = 4096
_TOKEN_PRICES: ClearedWhenFull[int, tuple[float, float, float]] = ClearedWhenFull(_ROWS_KEPT)


def _token_prices(price: ApiPriceOffer) -> tuple[float, float, float]:
    """USD per million uncached input, cached input and output tokens, remembered. A missing
    cached-input price charges cached tokens at the input price."""
    prices = _TOKEN_PRICES.found(id(price))
    if prices is None:
        prices = _TOKEN_PRICES.kept(id(price), price, _token_prices_of(price))
    return prices


def _token_prices_of(price: ApiPriceOffer) -> tuple[float, float, float]:
    input_usd = _usd(price.input_usd_per_million_tokens)
    cached = price.cached_input_usd_per_million_tokens
    cached_usd = input_usd if cached is None else float(cached)
    return input_usd, cached_usd, _usd(price.output_usd_per_million_tokens)


def clear_row_memos() -> None:
    """Forget the remembered token prices of price rows."""
    _TOKEN_PRICES.clear()


def label(price: ApiPriceOffer) -> str:
    return f"{price.provider} {price.model_id}"


def _usd(value: Decimal | None) -> float:
    assert value is not None, "rows without a price are rejected first (rules/missing_price.py)"
    return float(value)


_CACHED_AT_INPUT_PRICE = "no cached-input price: charged at the input price"


def _cached_note(price: ApiPriceOffer) -> str:
    return _CACHED_AT_INPUT_PRICE if price.cached_input_usd_per_million_tokens is None else ""


def _risks(price: ApiPriceOffer, latency_targets: bool) -> tuple[str, ...]:
    risks = [f"vendor concentration: all traffic depends on {price.provider}'s API, terms and prices"]
    if price.suspect_reason:
        risks.append(f"suspect price, used because the request asked for it: {price.suspect_reason}")
    if latency_targets:
        risks.append("the hosted API publishes no latency figures: TTFT/TPOT targets are not verified")
    if price.context_window_tokens is None:
        risks.append("the provider does not publish the context window of this model")
    return tuple(risks)


def _token_usd(price: ApiPriceOffer, demand: ServingDemand) -> tuple[float, float, float]:
    """USD per request of the uncached input, the cached input and the output tokens."""
    input_usd, cached_usd, output_usd = _token_prices(price)
    return (
        (demand.input_tokens - demand.cached_input_tokens) * input_usd / _MILLION,
        demand.cached_input_tokens * cached_usd / _MILLION,
        demand.output_tokens * output_usd / _MILLION,
    )


def usd_per_request(price: ApiPriceOffer, demand: ServingDemand) -> float:
    """Tokens of one request of `demand` at `price` (staff excluded)."""
    return sum(_token_usd(price, demand))


def _token_amounts(price: ApiPriceOffer, demand: ServingDemand) -> tuple[float, float | None, float]:
    """The token lines' amounts over the whole horizon: uncached input, cached input (None, and no
    line, when cached tokens cost nothing) and output."""
    requests = demand.total_requests
    uncached, cached, output = _token_usd(price, demand)
    return requests * uncached, (requests * cached if cached else None), requests * output


def _staff(demand: ServingDemand, assumptions: Assumptions) -> tuple[float, int, int, Assumptions]:
    """`staff_lines`' and `staff_amounts`' arguments for a hosted integration: its minimum for
    every month, no accelerators."""
    return assumptions.hosted_staff_usd_per_month, 0, demand.months, assumptions


def serving_lines(price: ApiPriceOffer, demand: ServingDemand, assumptions: Assumptions) -> list[Line]:
    """The cost lines of online serving through `price` for the whole horizon (`serving_plan`
    without the plan)."""
    uncached, cached, output = _token_amounts(price, demand)
    lines = [Line("input tokens", uncached)]
    if cached is not None:
        lines.append(Line("cached input tokens", cached, _cached_note(price)))
    lines.append(Line("output tokens", output))
    lines += staff_lines(*_staff(demand, assumptions), "hosted-API integration")
    return lines


def _total(tokens: tuple[float, float | None, float], staff: tuple[float, float | None]) -> float:
    """The amounts of `serving_lines` added in the lines' order, as `added` adds them (written out:
    cloud._added says why)."""
    uncached, cached, output = tokens
    fixed, above = staff
    total = 0.0
    total += uncached
    if cached is not None:
        total += cached
    total += output
    total += fixed
    if above is not None:
        total += above
    return total


def serving_total(price: ApiPriceOffer, demand: ServingDemand, assumptions: Assumptions) -> float:
    """`lines_total(serving_lines(...))` without the lines: the same amounts added in the same
    order. Every hosted row is priced, the best re-priced by the break-even search, and hosted
    lead-time bridges priced by their total only: ~13K instructions against ~43K for the lines
    (2026-12-05)."""
    return _total(_token_amounts(price, demand), staff_amounts(*_staff(demand, assumptions)))


def serving_plan(
    price: ApiPriceOffer, model_id: str, demand: ServingDemand, assumptions: Assumptions
) -> CostedCandidate:
    """Online serving through `price` for the whole horizon."""
    lines = serving_lines(price, demand, assumptions)
    months = demand.months
    total = sum(line.usd for line in lines)
    per_request = usd_per_request(price, demand)
    return CostedCandidate(
        option=OptionKind.HOSTED_API,
        label=label(price),
        setup=Setup.for_hosted(model_id, price, "api"),
        lines=tuple(lines),
        months=months,
        opex_usd_per_month=total / months,
        tokens=demand.total_tokens,
        risks=_risks(price, demand.ttft_ms is not None or demand.tpot_ms is not None),
        facts=(f"Pays per token (${per_request * 1000:.4f} per 1,000 requests), nothing when idle",),
        price_source=f"token prices of {price.model_id}: {price.source}",
        reprice=lambda multiplier: serving_plan(price, model_id, demand.scaled(multiplier), assumptions),
        repriced_total_usd=lambda multiplier: serving_total(price, demand.scaled(multiplier), assumptions),
    )


def priced_serving_plans(
    rows: Iterable[tuple[ApiPriceOffer, str]], demand: ServingDemand, assumptions: Assumptions
) -> list[PricedCandidate]:
    """`priced_serving_plan` of each (price, model id) row, the staff (the same for every row)
    priced once: a request prices every row of its models (22 for the 8B prototype)."""
    staff = staff_amounts(*_staff(demand, assumptions))
    months = demand.months
    # positional, in the fields' order (option, label, setup, total, months, capex, write): a class
    # called with keywords gets them as a dict, ~3.4K instructions more a candidate (2026-12-05)
    return [
        PricedCandidate(
            OptionKind.HOSTED_API,
            label(price),
            Setup.for_hosted(model_id, price, "api"),
            _total(_token_amounts(price, demand), staff),
            months,
            0.0,
            _writer(price, model_id, demand, assumptions),
        )
        for price, model_id in rows
    ]


def _writer(
    price: ApiPriceOffer, model_id: str, demand: ServingDemand, assumptions: Assumptions
) -> Callable[[], CostedCandidate]:
    """What writes the plan of a row priced by `priced_serving_plans` (a function per row: a lambda
    in the loop would see the loop's last row)."""
    return lambda: serving_plan(price, model_id, demand, assumptions)


def priced_serving_plan(
    price: ApiPriceOffer, model_id: str, demand: ServingDemand, assumptions: Assumptions
) -> PricedCandidate:
    """`serving_plan` priced, written only when it is shown."""
    return priced_serving_plans(((price, model_id),), demand, assumptions)[0]


def uses_batch_tier(price: ApiPriceOffer, demand: BatchDemand, assumptions: Assumptions) -> bool:
    has_tier = (
        price.batch_input_usd_per_million_tokens is not None
        and price.batch_output_usd_per_million_tokens is not None
    )
    return has_tier and demand.deadline_hours >= assumptions.hosted_batch_completion_hours


def batch_plan(
    price: ApiPriceOffer, model_id: str, demand: BatchDemand, assumptions: Assumptions
) -> CostedCandidate:
    """One offline job through `price`: the batch tier when the deadline allows it."""
    batch = uses_batch_tier(price, demand, assumptions)
    if batch:
        input_price = _usd(price.batch_input_usd_per_million_tokens)
        output_price = _usd(price.batch_output_usd_per_million_tokens)
        note = f"batch tier (completes within {assumptions.hosted_batch_completion_hours:g} h)"
    else:
        input_price = _usd(price.input_usd_per_million_tokens)
        output_price = _usd(price.output_usd_per_million_tokens)
        note = "standard prices (no batch tier, or the deadline is shorter than its completion window)"
    lines = (
        Line("input tokens", demand.input_tokens_total * input_price / _MILLION, note),
        Line("output tokens", demand.output_tokens_total * output_price / _MILLION, note),
        *staff_lines(
            assumptions.hosted_staff_usd_per_month,
            0,
            demand.deadline_hours / assumptions.hours_per_month,
            assumptions,
            "hosted-API batch job, until its deadline",
        ),
    )
    return CostedCandidate(
        option=OptionKind.HOSTED_API,
        label=label(price) + (" (batch)" if batch else ""),
        setup=Setup.for_hosted(model_id, price, "api_batch" if batch else "api"),
        lines=lines,
        months=None,
        tokens=demand.total_tokens,
        risks=_risks(price, latency_targets=False),
        facts=(note,),
        price_source=f"token prices of {price.model_id}: {price.source}",
        reprice=lambda multiplier: batch_plan(price, model_id, demand.scaled(multiplier), assumptions),
    )
