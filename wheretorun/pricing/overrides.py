"""Price overrides: negotiated prices kept as their own effective-dated rows beside the list prices.

An override names a provider, optionally narrows it (cloud offers: region, instance type,
accelerator; hosted APIs: model id), and adjusts the matching prices in one of two ways:

* `multiplier`: the list price times this (0.8 = a 20% discount). For cloud offers it applies to
  the on-demand price only (spot is a market price, not negotiated); for hosted APIs to every
  token price.
* `fixed_usd_per_hour`: the negotiated on-demand price of one cloud instance type.

When several overrides match a row, the most specific one wins (most filters set), then the one
that started last, then the newest. List prices are never changed: reads show both the list price
and the effective one, and the snapshot applies `effective_on_demand_usd_per_hour` and
`adjusted_token_price` the same way.

An override cannot start in the past and ending one sets its `effective_to`; nothing is deleted,
so a result computed `as_of` a past moment stays reproducible.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Literal

from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.orm import Session

from wheretorun.errors import Conflict, InvalidInput, NotFound
from wheretorun.pricing import repositories as repo
from wheretorun.pricing.models import ApiPrice, CloudOffer, PriceOverride
from wheretorun.security import Actor, record_audit

__all__ = [
    "OverrideIndex",
    "OverrideSpec",
    "adjusted_token_price",
    "create_override",
    "effective_on_demand_usd_per_hour",
    "end_override",
    "list_overrides",
    "overrides_in_force",
]

AppliesTo = Literal["cloud_offers", "api_prices"]
MAX_MULTIPLIER = Decimal(10)
_HOURLY_PLACES = Decimal("0.000001")
_TOKEN_PLACES = Decimal("0.00000001")


@dataclass(frozen=True)
class OverrideSpec:
    applies_to: AppliesTo
    provider: str
    reason: str
    multiplier: Decimal | None = None
    fixed_usd_per_hour: Decimal | None = None
    region: str | None = None
    instance_type: str | None = None
    accelerator: str | None = None  # id or any alias
    model_id: str | None = None  # hosted model id, e.g. gpt-4o
    effective_from: dt.datetime | None = None  # default: now
    effective_to: dt.datetime | None = None  # default: open-ended


def create_override(session: Session, spec: OverrideSpec, actor: Actor, now: dt.datetime) -> PriceOverride:
    accelerator_id = _check(session, spec, now)
    override = PriceOverride(
        applies_to=spec.applies_to,
        provider=spec.provider,
        region=spec.region,
        instance_type=spec.instance_type,
        accelerator_id=accelerator_id,
        model_id=spec.model_id,
        multiplier=spec.multiplier,
        fixed_usd_per_hour=spec.fixed_usd_per_hour,
        reason=spec.reason.strip(),
        effective_from=spec.effective_from or now,
        effective_to=spec.effective_to,
        created_at=now,
        api_key_id=actor.key_id,
        actor=actor.label,
    )
    session.add(override)
    session.flush()
    detail = {
        "applies_to": override.applies_to,
        "provider": override.provider,
        "multiplier": _text(override.multiplier),
        "fixed_usd_per_hour": _text(override.fixed_usd_per_hour),
        "effective_from": override.effective_from.isoformat(),
        "reason": override.reason,
    }
    record_audit(session, actor, "override.create", f"override:{override.id}", detail, now)
    return override


def end_override(session: Session, override_id: int, actor: Actor, now: dt.datetime) -> PriceOverride:
    """Stop an override now (one that has not started yet never takes effect)."""
    override = session.get(PriceOverride, override_id)
    if override is None:
        raise NotFound("price override", override_id)
    if override.effective_to is not None and override.effective_to <= now:
        raise Conflict(f"price override {override_id} ended at {override.effective_to.isoformat()}")
    override.effective_to = max(now, override.effective_from)
    detail = {"effective_to": override.effective_to.isoformat()}
    record_audit(session, actor, "override.end", f"override:{override.id}", detail, now)
    return override


def list_overrides(
    session: Session, limit: int, offset: int, in_force_at: dt.datetime | None = None
) -> tuple[list[PriceOverride], int]:
    """All overrides, newest first, or only those in force at `in_force_at`."""
    query = select(PriceOverride)
    if in_force_at is not None:
        query = query.where(_in_force(in_force_at))
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(query.order_by(PriceOverride.id.desc()).limit(limit).offset(offset))
    return list(rows), total


# --- applying them -------------------------------------------------------------------------------


class OverrideIndex:
    """The overrides in force at one moment, to find the one for a row quickly."""

    def __init__(self, overrides: Iterable[PriceOverride]) -> None:
        by_provider: dict[tuple[str, str], list[PriceOverride]] = defaultdict(list)
        for override in overrides:
            by_provider[override.applies_to, override.provider].append(override)
        for candidates in by_provider.values():
            candidates.sort(key=lambda o: (_specificity(o), o.effective_from, o.id), reverse=True)
        self._by_provider = dict(by_provider)

    def for_cloud_offer(self, offer: CloudOffer) -> PriceOverride | None:
        for override in self._by_provider.get(("cloud_offers", offer.provider), []):
            if (
                override.region in (None, offer.region)
                and override.instance_type in (None, offer.instance_type)
                and override.accelerator_id in (None, offer.accelerator_id)
            ):
                return override
        return None

    def for_api_price(self, price: ApiPrice) -> PriceOverride | None:
        for override in self._by_provider.get(("api_prices", price.provider), []):
            if override.model_id in (None, price.model_id):
                return override
        return None


def overrides_in_force(session: Session, at: dt.datetime) -> OverrideIndex:
    return OverrideIndex(session.scalars(select(PriceOverride).where(_in_force(at))))


def effective_on_demand_usd_per_hour(offer: CloudOffer, override: PriceOverride | None) -> Decimal | None:
    """The on-demand price after the override (the list price without one; unknown stays unknown)."""
    if override is None or offer.on_demand_usd_per_hour is None:
        return offer.on_demand_usd_per_hour
    if override.fixed_usd_per_hour is not None:
        return override.fixed_usd_per_hour
    assert override.multiplier is not None
    return (offer.on_demand_usd_per_hour * override.multiplier).quantize(_HOURLY_PLACES, ROUND_HALF_EVEN)


def adjusted_token_price(amount: Decimal | None, override: PriceOverride | None) -> Decimal | None:
    if amount is None or override is None or override.multiplier is None:
        return amount
    return (amount * override.multiplier).quantize(_TOKEN_PLACES, ROUND_HALF_EVEN)


# --- checks --------------------------------------------------------------------------------------


def _check(session: Session, spec: OverrideSpec, now: dt.datetime) -> str | None:
    """Validate `spec`; returns the canonical accelerator id of its filter, if any."""
    if not spec.reason.strip():
        raise InvalidInput("body.reason", "say why the price differs (the contract, the quote)")
    if (spec.multiplier is None) == (spec.fixed_usd_per_hour is None):
        raise InvalidInput("body.multiplier", "give exactly one of multiplier and fixed_usd_per_hour")
    if spec.multiplier is not None and not Decimal(0) < spec.multiplier <= MAX_MULTIPLIER:
        raise InvalidInput("body.multiplier", f"must be above 0 and at most {MAX_MULTIPLIER}")
    if spec.fixed_usd_per_hour is not None:
        if spec.applies_to != "cloud_offers" or not spec.instance_type:
            raise InvalidInput("body.fixed_usd_per_hour", "a fixed price is for one cloud instance_type")
        if spec.fixed_usd_per_hour <= 0:
            raise InvalidInput("body.fixed_usd_per_hour", "must be above 0 (a missing price is never 0)")
    cloud_filters = {
        "region": spec.region,
        "instance_type": spec.instance_type,
        "accelerator": spec.accelerator,
    }
    if spec.applies_to == "api_prices":
        for name, value in cloud_filters.items():
            if value is not None:
                raise InvalidInput(f"body.{name}", "only cloud-offer overrides filter by this")
    elif spec.model_id is not None:
        raise InvalidInput("body.model_id", "only hosted-API overrides filter by model_id")
    start = spec.effective_from or now
    if start < now:
        raise InvalidInput(
            "body.effective_from", "an override cannot start in the past (it would rewrite results)"
        )
    if spec.effective_to is not None and spec.effective_to <= start:
        raise InvalidInput("body.effective_to", "must be after effective_from")
    accelerator_id = None
    if spec.accelerator is not None:
        accelerator_id = repo.resolve_accelerator_id(session, spec.accelerator)
        if accelerator_id is None:
            raise InvalidInput("body.accelerator", f"unknown accelerator {spec.accelerator!r}")
    table = CloudOffer if spec.applies_to == "cloud_offers" else ApiPrice
    listed = select(table.id).where(table.provider == spec.provider, table.effective_to.is_(None)).limit(1)
    if session.scalar(listed) is None:
        raise InvalidInput(
            "body.provider", f"no current {spec.applies_to.replace('_', ' ')} from {spec.provider!r}"
        )
    return accelerator_id


def _in_force(at: dt.datetime) -> ColumnElement[bool]:
    return and_(
        PriceOverride.effective_from <= at,
        or_(PriceOverride.effective_to.is_(None), PriceOverride.effective_to > at),
    )


def _specificity(override: PriceOverride) -> int:
    filters = (override.region, override.instance_type, override.accelerator_id, override.model_id)
    return sum(value is not None for value in filters)


def _text(value: Decimal | None) -> str | None:
    return None if value is None else str(value)
