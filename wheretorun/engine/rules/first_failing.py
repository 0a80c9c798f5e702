"""The rules chained in their order for a candidate checked whole: a hosted-API price row, and a
piece of hardware to buy. The first failing rule decides (the order of `RejectReason`)."""

from __future__ import annotations

from wheretorun.engine.catalog import AcceleratorEntry, ApiPriceOffer
from wheretorun.engine.rules import (
    constraints,
    context_window,
    data_residency,
    hardware_spec,
    missing_price,
    offer_support,
)
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.workload import Constraints, OptionKind

__all__ = ["hardware", "hosted_api", "hosted_price", "hosted_row", "option"]


def option(kind: OptionKind, limits: Constraints) -> Rejection | None:
    """The option kind itself: data residency, then `allowed_options`."""
    return data_residency.on_premises(kind, limits) or constraints.option(kind, limits)


def hosted_row(price: ApiPriceOffer, context_tokens: int, limits: Constraints) -> Rejection | None:
    """A hosted-API price row that serves an acceptable model."""
    return hosted_api(limits) or hosted_price(price, context_tokens, limits)


def hosted_api(limits: Constraints) -> Rejection | None:
    """What rejects every hosted-API row alike: the option kind and data residency (asked once a
    request rather than once a row)."""
    return option(OptionKind.HOSTED_API, limits) or data_residency.hosted_region(limits)


def hosted_price(price: ApiPriceOffer, context_tokens: int, limits: Constraints) -> Rejection | None:
    """The rules of one hosted-API row that `hosted_api` passed."""
    return (
        constraints.provider(price.provider, limits)
        or context_window.hosted_window(context_tokens, price.context_window_tokens)
        or missing_price.hosted_tokens(price)
    )


def hardware(
    entry: AcceleratorEntry, kind: OptionKind, limits: Constraints, priced: bool
) -> Rejection | None:
    """`entry` bought as owned servers or a local card (`priced`: the catalog has its purchase price)."""
    return (
        option(kind, limits)
        or constraints.accelerator(entry.id, limits)
        or offer_support.purchasable(entry, kind)
        or hardware_spec.spec(entry, entry.id)
        or missing_price.purchase(entry.id, priced)
        or hardware_spec.power(entry)
    )
