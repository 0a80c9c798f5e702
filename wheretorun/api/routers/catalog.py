"""Read-only catalog endpoints: accelerators, models, cloud offers, hosted-API prices, energy prices,
catalog versions. Price reads take `as_of` or `catalog_version` and say which version they used."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query

from wheretorun.api.deps import ClockDep, SessionDep, catalog_reads
from wheretorun.api.presenters import accelerator_reads, api_price_read, cloud_offer_read, model_reads
from wheretorun.api.schemas import (
    AcceleratorRead,
    ApiPriceRead,
    CatalogId,
    CatalogRead,
    CatalogVersionRead,
    CloudOfferRead,
    EnergyPriceRead,
    ModelRead,
    PageRead,
    PricedPageRead,
    RowId,
    TextQuery,
)
from wheretorun.bounds import NO_NUL
from wheretorun.errors import InvalidInput
from wheretorun.fields import SAFE_INT_MAX, UtcDateTime
from wheretorun.pricing import repositories as repo
from wheretorun.pricing.overrides import overrides_in_force

router = APIRouter(prefix="/v1", tags=["catalog"], dependencies=[Depends(catalog_reads)])

NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"description": "No such id", "content": {"application/problem+json": {}}}
}
INVALID: dict[int | str, dict[str, Any]] = {
    422: {
        "description": "A parameter is invalid; `errors[].field` names it",
        "content": {"application/problem+json": {}},
    }
}

Limit = Annotated[int, Query(ge=1, le=500, description="Page size (at most 500).")]
Offset = Annotated[int, Query(ge=0, le=SAFE_INT_MAX, description="Rows to skip.")]
AsOf = Annotated[
    UtcDateTime | None,
    Query(description="ISO 8601 date-time: the prices in force at that moment. Default: now."),
]
MAX_FILTER_AMOUNT = 10**9
"""The largest price or count filter: far above any catalog value, and within what both databases
compare exactly (SQLite stores money as scaled 64-bit integers)."""
CatalogVersionQuery = Annotated[
    int | None,
    Query(
        ge=1, le=SAFE_INT_MAX, description="Read the catalog as this version left it (instead of `as_of`)."
    ),
]


def _sort(allowed: dict[str, Any]) -> Any:
    names = ", ".join(sorted(allowed))
    return Query(
        None,
        max_length=100,
        pattern=NO_NUL,
        description=f"Column to sort by, `-` in front for descending: {names}.",
    )


def _aware(moment: dt.datetime | None) -> dt.datetime | None:
    """`as_of` without a time zone is read as UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=dt.UTC)


@router.get(
    "/accelerators",
    operation_id="list_accelerators",
    response_model=PricedPageRead[AcceleratorRead],
    responses=INVALID,
)
def list_accelerators(
    session: SessionDep,
    vendor: TextQuery = None,
    kind: Literal["datacenter", "workstation", "consumer", "tpu", "other"] | None = None,
    min_memory_gb: Annotated[float | None, Query(ge=0)] = None,
    q: Annotated[
        str | None, Query(pattern=NO_NUL, description="Part of the name or of any alias.", max_length=100)
    ] = None,
    as_of: AsOf = None,
    catalog_version: CatalogVersionQuery = None,
    sort: str | None = _sort(repo.ACCELERATOR_SORTS),
    limit: Limit = 50,
    offset: Offset = 0,
) -> PricedPageRead[AcceleratorRead]:
    """Accelerators with their purchase price in force at `as_of` / `catalog_version`."""
    point = repo.read_point(session, _aware(as_of), catalog_version)
    filters = repo.AcceleratorFilters(vendor=vendor, kind=kind, min_memory_gb=min_memory_gb, q=q)
    page = repo.list_accelerators(session, filters, repo.PageRequest(limit, offset, sort))
    return PricedPageRead(
        items=accelerator_reads(session, page.items, point.as_of),
        total=page.total,
        limit=limit,
        offset=offset,
        catalog_version_id=point.catalog_version_id,
        as_of=point.as_of,
    )


@router.get(
    "/accelerators/{accelerator_id}",
    operation_id="get_accelerator",
    response_model=AcceleratorRead,
    responses=NOT_FOUND,
)
def get_accelerator(session: SessionDep, accelerator_id: CatalogId) -> AcceleratorRead:
    """An accelerator by its id or by any spelling a source uses (`A100-80GB`, `NVIDIA A100 SXM4 80 GB`)."""
    return accelerator_reads(session, [repo.get_accelerator(session, accelerator_id)])[0]


@router.get("/models", operation_id="list_models", response_model=PageRead[ModelRead], responses=INVALID)
def list_models(
    session: SessionDep,
    family: TextQuery = None,
    open_weights: bool | None = None,
    q: Annotated[str | None, Query(pattern=NO_NUL, max_length=100)] = None,
    min_params_b: Annotated[float | None, Query(ge=0)] = None,
    max_params_b: Annotated[float | None, Query(ge=0)] = None,
    sort: str | None = _sort(repo.MODEL_SORTS),
    limit: Limit = 50,
    offset: Offset = 0,
) -> PageRead[ModelRead]:
    _check_range("query.min_params_b", min_params_b, max_params_b)
    filters = repo.ModelFilters(
        family=family, open_weights=open_weights, q=q, min_params_b=min_params_b, max_params_b=max_params_b
    )
    page = repo.list_models(session, filters, repo.PageRequest(limit, offset, sort))
    return PageRead(items=model_reads(session, page.items), total=page.total, limit=limit, offset=offset)


@router.get("/models/{model_id}", operation_id="get_model", response_model=ModelRead, responses=NOT_FOUND)
def get_model(session: SessionDep, model_id: CatalogId) -> ModelRead:
    return model_reads(session, [repo.get_model(session, model_id)])[0]


@router.get(
    "/cloud-offers",
    operation_id="list_cloud_offers",
    response_model=PricedPageRead[CloudOfferRead],
    responses=INVALID,
)
def list_cloud_offers(
    session: SessionDep,
    clock: ClockDep,
    provider: TextQuery = None,
    region: TextQuery = None,
    accelerator: Annotated[
        str | None, Query(pattern=NO_NUL, description="Accelerator id or any alias.")
    ] = None,
    min_memory_gb: Annotated[float | None, Query(ge=0, description="Per accelerator.")] = None,
    min_accelerator_count: Annotated[Decimal | None, Query(ge=0, le=MAX_FILTER_AMOUNT)] = None,
    pricing_mode: Annotated[
        Literal["on_demand", "spot"] | None, Query(description="Only offers priced in this mode.")
    ] = None,
    max_usd_per_hour: Annotated[
        Decimal | None,
        Query(
            ge=0,
            le=MAX_FILTER_AMOUNT,
            description="Instance price cap, in `pricing_mode` (on-demand by default).",
        ),
    ] = None,
    include_suspect: Annotated[
        bool, Query(description="Also list offers whose price looks implausible.")
    ] = False,
    include_accelerator_only: Annotated[
        bool, Query(description="Include GCP rows that price the GPUs without their host VM.")
    ] = True,
    as_of: AsOf = None,
    catalog_version: CatalogVersionQuery = None,
    sort: str | None = _sort(repo.CLOUD_OFFER_SORTS),
    limit: Limit = 50,
    offset: Offset = 0,
) -> PricedPageRead[CloudOfferRead]:
    """Filters and sorting use list prices; each offer also shows its price after any price override."""
    point = repo.read_point(session, _aware(as_of), catalog_version)
    filters = repo.CloudOfferFilters(
        provider=provider,
        region=region,
        accelerator=accelerator,
        min_memory_gb=min_memory_gb,
        min_accelerator_count=min_accelerator_count,
        pricing_mode=pricing_mode,
        max_usd_per_hour=max_usd_per_hour,
        include_suspect=include_suspect,
        include_accelerator_only=include_accelerator_only,
        as_of=point.as_of,
    )
    page = repo.list_cloud_offers(session, filters, repo.PageRequest(limit, offset, sort))
    overrides = overrides_in_force(session, point.as_of or clock())
    return PricedPageRead(
        items=[cloud_offer_read(o, overrides.for_cloud_offer(o)) for o in page.items],
        total=page.total,
        limit=limit,
        offset=offset,
        catalog_version_id=point.catalog_version_id,
        as_of=point.as_of,
    )


@router.get(
    "/cloud-offers/{offer_id}",
    operation_id="get_cloud_offer",
    response_model=CloudOfferRead,
    responses=NOT_FOUND,
)
def get_cloud_offer(session: SessionDep, clock: ClockDep, offer_id: RowId) -> CloudOfferRead:
    offer = repo.get_cloud_offer(session, offer_id)
    return cloud_offer_read(offer, overrides_in_force(session, clock()).for_cloud_offer(offer))


@router.get(
    "/api-prices",
    operation_id="list_api_prices",
    response_model=PricedPageRead[ApiPriceRead],
    responses=INVALID,
)
def list_api_prices(
    session: SessionDep,
    clock: ClockDep,
    provider: TextQuery = None,
    model: Annotated[
        str | None,
        Query(
            pattern=NO_NUL,
            description="A catalog model id (the open model served) or part of a hosted model id.",
        ),
    ] = None,
    mode: TextQuery = None,
    max_input_usd_per_million_tokens: Annotated[Decimal | None, Query(ge=0, le=MAX_FILTER_AMOUNT)] = None,
    max_output_usd_per_million_tokens: Annotated[Decimal | None, Query(ge=0, le=MAX_FILTER_AMOUNT)] = None,
    include_suspect: Annotated[
        bool, Query(description="Also list prices that are 0 or missing in the source.")
    ] = False,
    include_deprecated: bool = True,
    as_of: AsOf = None,
    catalog_version: CatalogVersionQuery = None,
    sort: str | None = _sort(repo.API_PRICE_SORTS),
    limit: Limit = 50,
    offset: Offset = 0,
) -> PricedPageRead[ApiPriceRead]:
    point = repo.read_point(session, _aware(as_of), catalog_version)
    filters = repo.ApiPriceFilters(
        provider=provider,
        model=model,
        mode=mode,
        max_input_usd_per_million_tokens=max_input_usd_per_million_tokens,
        max_output_usd_per_million_tokens=max_output_usd_per_million_tokens,
        include_suspect=include_suspect,
        include_deprecated=include_deprecated,
        as_of=point.as_of,
    )
    page = repo.list_api_prices(session, filters, repo.PageRequest(limit, offset, sort))
    overrides = overrides_in_force(session, point.as_of or clock())
    return PricedPageRead(
        items=[api_price_read(p, overrides.for_api_price(p)) for p in page.items],
        total=page.total,
        limit=limit,
        offset=offset,
        catalog_version_id=point.catalog_version_id,
        as_of=point.as_of,
    )


@router.get(
    "/api-prices/{price_id}", operation_id="get_api_price", response_model=ApiPriceRead, responses=NOT_FOUND
)
def get_api_price(session: SessionDep, clock: ClockDep, price_id: RowId) -> ApiPriceRead:
    price = repo.get_api_price(session, price_id)
    return api_price_read(price, overrides_in_force(session, clock()).for_api_price(price))


@router.get(
    "/energy-prices",
    operation_id="list_energy_prices",
    response_model=PricedPageRead[EnergyPriceRead],
    responses=INVALID,
)
def list_energy_prices(
    session: SessionDep,
    region: Annotated[
        str | None, Query(pattern=NO_NUL, description="Part of the region name.", max_length=100)
    ] = None,
    as_of: AsOf = None,
    catalog_version: CatalogVersionQuery = None,
    sort: str | None = _sort(repo.ENERGY_PRICE_SORTS),
    limit: Limit = 50,
    offset: Offset = 0,
) -> PricedPageRead[EnergyPriceRead]:
    """Electricity prices per region, USD per kWh (for owned hardware)."""
    point = repo.read_point(session, _aware(as_of), catalog_version)
    page = repo.list_energy_prices(session, region, point.as_of, repo.PageRequest(limit, offset, sort))
    return PricedPageRead(
        items=[EnergyPriceRead.model_validate(price) for price in page.items],
        total=page.total,
        limit=limit,
        offset=offset,
        catalog_version_id=point.catalog_version_id,
        as_of=point.as_of,
    )


@router.get("/catalog", operation_id="get_catalog", response_model=CatalogRead)
def get_catalog(session: SessionDep) -> CatalogRead:
    """The catalog version in use, row counts, providers, and the sources with their dates."""
    return CatalogRead.model_validate(repo.catalog_summary(session), from_attributes=True)


@router.get(
    "/catalog/versions", operation_id="list_catalog_versions", response_model=PageRead[CatalogVersionRead]
)
def list_catalog_versions(
    session: SessionDep, limit: Limit = 50, offset: Offset = 0
) -> PageRead[CatalogVersionRead]:
    """Every catalog version, oldest first: the seed, then each import that changed prices."""
    page = repo.list_catalog_versions(session, repo.PageRequest(limit, offset))
    return PageRead(
        items=[CatalogVersionRead.model_validate(v) for v in page.items],
        total=page.total,
        limit=limit,
        offset=offset,
    )


def _check_range(field: str, low: float | None, high: float | None) -> None:
    if low is not None and high is not None and low > high:
        raise InvalidInput(field, f"must not exceed the maximum ({low} > {high})")
