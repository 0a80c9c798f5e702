"""ORM rows to response schemas, with the derived fields a planner wants (aliases, purchase price,
price per accelerator-hour, the suspect flag)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy.orm import Session

from wheretorun.api.schemas import AcceleratorRead, ApiPriceRead, CloudOfferRead, ModelRead, OverrideApplied
from wheretorun.pricing import repositories as repo
from wheretorun.pricing.models import Accelerator, ApiPrice, CloudOffer, Model, PriceOverride
from wheretorun.pricing.overrides import adjusted_token_price, effective_on_demand_usd_per_hour
from wheretorun.pricing.sources.precisions import precision_support_table

__all__ = ["accelerator_reads", "api_price_read", "cloud_offer_read", "model_reads"]

_PER_ACCELERATOR_PLACES = Decimal("0.000001")


def accelerator_reads(
    session: Session, accelerators: Sequence[Accelerator], as_of: dt.datetime | None = None
) -> list[AcceleratorRead]:
    prices = repo.current_hardware_prices(session, [a.id for a in accelerators], as_of)
    reads = []
    for accelerator in accelerators:
        price = prices.get(accelerator.id)
        reads.append(
            AcceleratorRead.model_validate(
                {
                    **{c: getattr(accelerator, c) for c in Accelerator.__table__.columns.keys()},
                    "aliases": sorted({a.alias for a in accelerator.aliases}),
                    "purchase_price_usd": price.usd_per_unit if price else None,
                    "purchase_price_source": price.source if price else None,
                    "precision_support": _precision_support(accelerator.family),
                    "purchase_price_basis": price.basis if price else None,
                    "purchase_accelerators_per_unit": price.accelerators_per_unit if price else None,
                }
            )
        )
    return reads


def _precision_support(family: str | None) -> dict[str, object] | None:
    support = precision_support_table().get(family or "")
    if support is None:
        return None
    return {
        "family": support.family,
        "native": sorted(p.value for p in support.native),
        "served": sorted(p.value for p in support.served),
        "source": support.source,
    }


def model_reads(session: Session, models: Sequence[Model]) -> list[ModelRead]:
    served = repo.hosted_model_ids(session, [m.id for m in models])
    return [
        ModelRead.model_validate(
            {
                **{c: getattr(model, c) for c in Model.__table__.columns.keys()},
                "hosted_model_ids": served[model.id],
            }
        )
        for model in models
    ]


def _per_accelerator(price: Decimal | None, count: Decimal) -> Decimal | None:
    if price is None or count <= 0:
        return None
    return (price / count).quantize(_PER_ACCELERATOR_PLACES)


def _override(override: PriceOverride | None) -> OverrideApplied | None:
    return OverrideApplied.model_validate(override) if override is not None else None


def cloud_offer_read(offer: CloudOffer, override: PriceOverride | None = None) -> CloudOfferRead:
    """`override`: the price override in force for the offer, if any; list and effective prices are shown."""
    columns = {c: getattr(offer, c) for c in CloudOffer.__table__.columns.keys()}
    effective = effective_on_demand_usd_per_hour(offer, override)
    return CloudOfferRead.model_validate(
        {
            **columns,
            "effective_on_demand_usd_per_hour": effective,
            "effective_on_demand_usd_per_accelerator_hour": _per_accelerator(
                effective, offer.accelerator_count
            ),
            "override": _override(override),
            "accelerator_memory_gb": offer.accelerator.memory_gb if offer.accelerator else None,
            "on_demand_usd_per_accelerator_hour": _per_accelerator(
                offer.on_demand_usd_per_hour, offer.accelerator_count
            ),
            "spot_usd_per_accelerator_hour": _per_accelerator(
                offer.spot_usd_per_hour, offer.accelerator_count
            ),
            "suspect": offer.suspect_reason is not None,
        }
    )


def api_price_read(price: ApiPrice, override: PriceOverride | None = None) -> ApiPriceRead:
    columns = {c: getattr(price, c) for c in ApiPrice.__table__.columns.keys()}
    return ApiPriceRead.model_validate(
        {
            **columns,
            "suspect": price.suspect_reason is not None,
            "effective_input_usd_per_million_tokens": adjusted_token_price(
                price.input_usd_per_million_tokens, override
            ),
            "effective_output_usd_per_million_tokens": adjusted_token_price(
                price.output_usd_per_million_tokens, override
            ),
            "override": _override(override),
        }
    )
