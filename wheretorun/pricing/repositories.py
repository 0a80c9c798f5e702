"""Catalog queries. Every list returns one page plus the total count of matching rows.

Price tables are effective-dated: a query `as_of` a moment sees the rows in force then
(`effective_from <= as_of < effective_to`); without `as_of` it sees the current rows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Generic, Literal, TypeVar

from sqlalchemy import ColumnElement, Float, Select, and_, cast, func, or_, select
from sqlalchemy.orm import Session

from wheretorun.errors import InvalidInput, NotFound
from wheretorun.pricing.models import (
    Accelerator,
    AcceleratorAlias,
    ApiPrice,
    CatalogVersion,
    CloudOffer,
    CommitmentTerm,
    EnergyPrice,
    HardwarePrice,
    Model,
)
from wheretorun.pricing.sources import normalise_alias

__all__ = [
    "contains_text",
    "in_force",
    "AcceleratorFilters",
    "ApiPriceFilters",
    "CloudOfferFilters",
    "ModelFilters",
    "Page",
    "PageRequest",
    "ReadPoint",
    "catalog_summary",
    "catalog_version_at",
    "current_hardware_prices",
    "get_accelerator",
    "get_api_price",
    "get_cloud_offer",
    "get_model",
    "hosted_model_ids",
    "list_accelerators",
    "list_api_prices",
    "latest_catalog_version",
    "list_catalog_versions",
    "list_cloud_offers",
    "list_energy_prices",
    "list_models",
    "read_point",
    "resolve_accelerator_id",
]

T = TypeVar("T")


@dataclass(frozen=True)
class PageRequest:
    limit: int = 50
    offset: int = 0
    sort: str | None = None  # a column name, "-" in front for descending


@dataclass(frozen=True)
class Page(Generic[T]):
    items: Sequence[T]
    total: int
    limit: int
    offset: int


def in_force(
    table: type[CloudOffer] | type[ApiPrice] | type[HardwarePrice] | type[EnergyPrice] | type[CommitmentTerm],
    as_of: dt.datetime | None,
) -> Any:
    """The condition for a price row in force at `as_of` (the current rows when None)."""
    if as_of is None:
        return table.effective_to.is_(None)
    return and_(
        table.effective_from <= as_of,
        or_(table.effective_to.is_(None), table.effective_to > as_of),
    )


def contains_text(column: Any, part: str) -> ColumnElement[bool]:
    """`column` contains `part`, case-insensitively.

    `%` and `_` in `part` are matched literally (SQLAlchemy's `autoescape`), so a filter of `_`
    finds names with an underscore instead of every name.
    """
    result: ColumnElement[bool] = func.lower(column).contains(part.lower(), autoescape=True)
    return result


def _paginate(session: Session, query: Select[Any], page: PageRequest, sortable: dict[str, Any]) -> Page[Any]:
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery())) or 0
    query = query.order_by(*_ordering(page.sort, sortable))
    rows = session.scalars(query.limit(page.limit).offset(page.offset)).unique().all()
    return Page(items=rows, total=total, limit=page.limit, offset=page.offset)


def _ordering(sort: str | None, sortable: dict[str, Any]) -> list[Any]:
    """ORDER BY for `sort`; NULLs last either way, then the primary key so pages are stable."""
    tie_breaker = sortable["id"]
    if not sort:
        return [tie_breaker]
    descending = sort.startswith("-")
    name = sort.removeprefix("-")
    if name not in sortable:
        raise InvalidInput("query.sort", f"cannot sort by {name!r}; choose one of {sorted(sortable)}")
    column = sortable[name]
    ordered = column.desc() if descending else column.asc()
    return [column.is_(None), ordered, tie_breaker]


# --- accelerators -------------------------------------------------------------------------------


@dataclass(frozen=True)
class AcceleratorFilters:
    vendor: str | None = None
    kind: str | None = None
    min_memory_gb: float | None = None
    q: str | None = None  # part of the name or of an alias


ACCELERATOR_SORTS = {
    name: getattr(Accelerator, name)
    for name in (
        "id",
        "name",
        "vendor",
        "memory_gb",
        "memory_bandwidth_gb_s",
        "bf16_tflops",
        "fp8_tflops",
        "tdp_w",
    )
}


def list_accelerators(session: Session, filters: AcceleratorFilters, page: PageRequest) -> Page[Accelerator]:
    query = select(Accelerator)
    if filters.vendor:
        query = query.where(func.lower(Accelerator.vendor) == filters.vendor.lower())
    if filters.kind:
        query = query.where(Accelerator.kind == filters.kind)
    if filters.min_memory_gb is not None:
        query = query.where(Accelerator.memory_gb >= filters.min_memory_gb)
    if filters.q:
        part = filters.q
        aliased_ids = select(AcceleratorAlias.accelerator_id).where(
            contains_text(AcceleratorAlias.alias, part)
        )
        query = query.where(or_(contains_text(Accelerator.name, part), Accelerator.id.in_(aliased_ids)))
    return _paginate(session, query, page, ACCELERATOR_SORTS)


def resolve_accelerator_id(session: Session, name_or_id: str) -> str | None:
    """The canonical id for an id or any spelling a source uses (`A100-80GB`, `NVIDIA A100-SXM4-80GB`)."""
    if session.get(Accelerator, name_or_id) is not None:
        return name_or_id
    by_key = select(AcceleratorAlias.accelerator_id).where(
        AcceleratorAlias.key == normalise_alias(name_or_id)
    )
    return session.scalars(by_key.limit(1)).first()


def get_accelerator(session: Session, name_or_id: str) -> Accelerator:
    accelerator_id = resolve_accelerator_id(session, name_or_id)
    accelerator = session.get(Accelerator, accelerator_id) if accelerator_id else None
    if accelerator is None:
        raise NotFound("accelerator", name_or_id)
    return accelerator


def current_hardware_prices(
    session: Session, accelerator_ids: Sequence[str], as_of: dt.datetime | None = None
) -> dict[str, HardwarePrice]:
    """The purchase price in force for each accelerator that has one."""
    query = select(HardwarePrice).where(
        HardwarePrice.accelerator_id.in_(accelerator_ids), in_force(HardwarePrice, as_of)
    )
    return {price.accelerator_id: price for price in session.scalars(query)}


# --- models -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelFilters:
    family: str | None = None
    open_weights: bool | None = None
    q: str | None = None
    min_params_b: float | None = None
    max_params_b: float | None = None


MODEL_SORTS = {
    name: getattr(Model, name)
    for name in ("id", "name", "family", "total_params_b", "active_params_b", "max_context", "layers")
}


def list_models(session: Session, filters: ModelFilters, page: PageRequest) -> Page[Model]:
    query = select(Model)
    if filters.family:
        query = query.where(func.lower(Model.family) == filters.family.lower())
    if filters.open_weights is not None:
        query = query.where(Model.open_weights.is_(filters.open_weights))
    if filters.q:
        part = filters.q
        query = query.where(or_(contains_text(Model.name, part), contains_text(Model.id, part)))
    if filters.min_params_b is not None:
        query = query.where(Model.total_params_b >= filters.min_params_b)
    if filters.max_params_b is not None:
        query = query.where(Model.total_params_b <= filters.max_params_b)
    return _paginate(session, query, page, MODEL_SORTS)


def get_model(session: Session, model_id: str) -> Model:
    model = session.get(Model, model_id)
    if model is None:
        raise NotFound("model", model_id)
    return model


def hosted_model_ids(
    session: Session, model_ids: Sequence[str], as_of: dt.datetime | None = None
) -> dict[str, list[str]]:
    """For each catalog model, the hosted-API model ids that serve it."""
    query = (
        select(ApiPrice.catalog_model_id, ApiPrice.model_id)
        .where(ApiPrice.catalog_model_id.in_(model_ids), in_force(ApiPrice, as_of))
        .order_by(ApiPrice.model_id)
    )
    served: dict[str, list[str]] = {model_id: [] for model_id in model_ids}
    for catalog_model_id, hosted_id in session.execute(query):
        if catalog_model_id is not None:
            served[catalog_model_id].append(hosted_id)
    return served


# --- cloud offers -------------------------------------------------------------------------------

PricingMode = Literal["on_demand", "spot"]


@dataclass(frozen=True)
class CloudOfferFilters:
    provider: str | None = None
    region: str | None = None
    accelerator: str | None = None  # id or any alias
    min_memory_gb: float | None = None  # per accelerator
    min_accelerator_count: Decimal | None = None
    pricing_mode: PricingMode | None = None  # only offers with a price in this mode
    max_usd_per_hour: Decimal | None = None  # in `pricing_mode`, on-demand when not given
    include_suspect: bool = False
    include_accelerator_only: bool = True
    as_of: dt.datetime | None = None


CLOUD_OFFER_SORTS = {
    name: getattr(CloudOffer, name)
    for name in (
        "id",
        "provider",
        "region",
        "instance_type",
        "accelerator_count",
        "on_demand_usd_per_hour",
        "spot_usd_per_hour",
    )
}
# Per-accelerator prices sort as floats: exact enough to order by, and the same on both databases.
CLOUD_OFFER_SORTS["on_demand_usd_per_accelerator_hour"] = cast(
    CloudOffer.on_demand_usd_per_hour, Float
) / cast(CloudOffer.accelerator_count, Float)
CLOUD_OFFER_SORTS["spot_usd_per_accelerator_hour"] = cast(CloudOffer.spot_usd_per_hour, Float) / cast(
    CloudOffer.accelerator_count, Float
)


def _price_column(mode: PricingMode | None) -> Any:
    return CloudOffer.spot_usd_per_hour if mode == "spot" else CloudOffer.on_demand_usd_per_hour


def list_cloud_offers(session: Session, filters: CloudOfferFilters, page: PageRequest) -> Page[CloudOffer]:
    query = select(CloudOffer).where(in_force(CloudOffer, filters.as_of))
    conditions: list[ColumnElement[bool]] = []
    if filters.provider:
        conditions.append(CloudOffer.provider == filters.provider.lower())
    if filters.region:
        conditions.append(CloudOffer.region == filters.region)
    if filters.accelerator:
        accelerator_id = resolve_accelerator_id(session, filters.accelerator)
        if accelerator_id is None:
            raise InvalidInput("query.accelerator", f"unknown accelerator {filters.accelerator!r}")
        conditions.append(CloudOffer.accelerator_id == accelerator_id)
    if filters.min_memory_gb is not None:
        big_enough = select(Accelerator.id).where(Accelerator.memory_gb >= filters.min_memory_gb)
        conditions.append(CloudOffer.accelerator_id.in_(big_enough))
    if filters.min_accelerator_count is not None:
        conditions.append(CloudOffer.accelerator_count >= filters.min_accelerator_count)
    if filters.pricing_mode is not None:
        conditions.append(_price_column(filters.pricing_mode).is_not(None))
    if filters.max_usd_per_hour is not None:
        conditions.append(_price_column(filters.pricing_mode) <= filters.max_usd_per_hour)
    if not filters.include_suspect:
        conditions.append(CloudOffer.suspect_reason.is_(None))
    if not filters.include_accelerator_only:
        conditions.append(CloudOffer.accelerator_only.is_(False))
    return _paginate(session, query.where(*conditions), page, CLOUD_OFFER_SORTS)


def get_cloud_offer(session: Session, offer_id: int) -> CloudOffer:
    offer = session.get(CloudOffer, offer_id)
    if offer is None:
        raise NotFound("cloud offer", offer_id)
    return offer


# --- hosted API prices --------------------------------------------------------------------------


@dataclass(frozen=True)
class ApiPriceFilters:
    provider: str | None = None
    model: str | None = None  # a catalog model id (the open model it serves) or part of the hosted id
    mode: str | None = None
    max_input_usd_per_million_tokens: Decimal | None = None
    max_output_usd_per_million_tokens: Decimal | None = None
    include_suspect: bool = False
    include_deprecated: bool = True
    as_of: dt.datetime | None = None


API_PRICE_SORTS = {
    name: getattr(ApiPrice, name)
    for name in (
        "id",
        "provider",
        "model_id",
        "input_usd_per_million_tokens",
        "output_usd_per_million_tokens",
        "cached_input_usd_per_million_tokens",
        "context_window_tokens",
    )
}


def list_api_prices(session: Session, filters: ApiPriceFilters, page: PageRequest) -> Page[ApiPrice]:
    query = select(ApiPrice).where(in_force(ApiPrice, filters.as_of))
    conditions: list[ColumnElement[bool]] = []
    if filters.provider:
        conditions.append(ApiPrice.provider == filters.provider)
    if filters.model:
        conditions.append(
            or_(
                ApiPrice.catalog_model_id == filters.model,
                contains_text(ApiPrice.model_id, filters.model),
            )
        )
    if filters.mode:
        conditions.append(ApiPrice.mode == filters.mode)
    if filters.max_input_usd_per_million_tokens is not None:
        conditions.append(ApiPrice.input_usd_per_million_tokens <= filters.max_input_usd_per_million_tokens)
    if filters.max_output_usd_per_million_tokens is not None:
        conditions.append(ApiPrice.output_usd_per_million_tokens <= filters.max_output_usd_per_million_tokens)
    if not filters.include_suspect:
        conditions.append(ApiPrice.suspect_reason.is_(None))
    if not filters.include_deprecated:
        today = (filters.as_of or dt.datetime.now(dt.UTC)).date()
        conditions.append(or_(ApiPrice.deprecation_date.is_(None), ApiPrice.deprecation_date > today))
    return _paginate(session, query.where(*conditions), page, API_PRICE_SORTS)


def get_api_price(session: Session, price_id: int) -> ApiPrice:
    price = session.get(ApiPrice, price_id)
    if price is None:
        raise NotFound("API price", price_id)
    return price


# --- the catalog as a whole ---------------------------------------------------------------------


def catalog_summary(session: Session) -> dict[str, Any]:
    """The newest catalog version, row counts per table, and the dates of the sources."""
    latest = session.scalars(select(CatalogVersion).order_by(CatalogVersion.id.desc()).limit(1)).first()

    def count(table: Any, *where: Any) -> int:
        return session.scalar(select(func.count()).select_from(table).where(*where)) or 0

    return {
        "version": latest,
        "counts": {
            "accelerators": count(Accelerator),
            "accelerator_aliases": count(AcceleratorAlias),
            "models": count(Model),
            "cloud_offers": count(CloudOffer, CloudOffer.effective_to.is_(None)),
            "cloud_offers_suspect": count(
                CloudOffer, CloudOffer.effective_to.is_(None), CloudOffer.suspect_reason.is_not(None)
            ),
            "api_prices": count(ApiPrice, ApiPrice.effective_to.is_(None)),
            "api_prices_suspect": count(
                ApiPrice, ApiPrice.effective_to.is_(None), ApiPrice.suspect_reason.is_not(None)
            ),
            "hardware_prices": count(HardwarePrice, HardwarePrice.effective_to.is_(None)),
            "energy_prices": count(EnergyPrice, EnergyPrice.effective_to.is_(None)),
            "commitment_terms": count(CommitmentTerm, CommitmentTerm.effective_to.is_(None)),
            "catalog_versions": count(CatalogVersion),
        },
        "providers": list(
            session.scalars(
                select(CloudOffer.provider)
                .where(CloudOffer.effective_to.is_(None))
                .distinct()
                .order_by(CloudOffer.provider)
            )
        ),
    }


# --- catalog versions and reading the catalog as it was -----------------------------------------
#
# A catalog version is created by the seed and by every import that changes prices; its rows take
# effect at its `created_at` (imports close the rows they replace at that same moment, and imports
# are serialised, so versions are in time order). Reading `as_of` a version's `created_at` therefore
# sees exactly what that version left, and `catalog_version=N` is shorthand for that moment.


def latest_catalog_version(session: Session) -> CatalogVersion | None:
    return session.scalars(select(CatalogVersion).order_by(CatalogVersion.id.desc()).limit(1)).first()


def catalog_version_at(session: Session, as_of: dt.datetime) -> CatalogVersion | None:
    """The catalog version in force at `as_of`: the newest one created at or before it."""
    query = (
        select(CatalogVersion)
        .where(CatalogVersion.created_at <= as_of)
        .order_by(CatalogVersion.created_at.desc(), CatalogVersion.id.desc())
        .limit(1)
    )
    return session.scalars(query).first()


def catalog_version_id_at(session: Session, as_of: dt.datetime) -> int | None:
    """The id of `catalog_version_at(as_of)`, without loading the row."""
    return session.scalar(catalog_version_id_query(as_of))


def catalog_version_id_query(as_of: dt.datetime) -> Select[int]:
    """The query of `catalog_version_id_at`, to ask within another statement."""
    return (
        select(CatalogVersion.id)
        .where(CatalogVersion.created_at <= as_of)
        .order_by(CatalogVersion.created_at.desc(), CatalogVersion.id.desc())
        .limit(1)
    )


@dataclass(frozen=True)
class ReadPoint:
    """The moment a read sees the catalog at (None: now, the current rows) and the version that is."""

    as_of: dt.datetime | None
    catalog_version_id: int | None


def read_point(
    session: Session,
    as_of: dt.datetime | None = None,
    catalog_version: int | None = None,
    field: str = "query.catalog_version",
) -> ReadPoint:
    """Resolve a read's `as_of` or `catalog_version` (at most one of them) to a `ReadPoint`;
    `field` is where a request gave the catalog version, for the error."""
    if as_of is not None and catalog_version is not None:
        raise InvalidInput(field, "give as_of or catalog_version, not both")
    if catalog_version is not None:
        version = session.get(CatalogVersion, catalog_version)
        if version is None:
            raise InvalidInput(field, f"no catalog version {catalog_version}")
        return ReadPoint(as_of=version.created_at, catalog_version_id=version.id)
    if as_of is not None:
        at = catalog_version_at(session, as_of)
        return ReadPoint(as_of=as_of, catalog_version_id=at.id if at else None)
    latest = latest_catalog_version(session)
    return ReadPoint(as_of=None, catalog_version_id=latest.id if latest else None)


def list_catalog_versions(session: Session, page: PageRequest) -> Page[CatalogVersion]:
    return _paginate(session, select(CatalogVersion), page, {"id": CatalogVersion.id})


ENERGY_PRICE_SORTS = {name: getattr(EnergyPrice, name) for name in ("id", "region", "usd_per_kwh")}


def list_energy_prices(
    session: Session, region: str | None, as_of: dt.datetime | None, page: PageRequest
) -> Page[EnergyPrice]:
    query = select(EnergyPrice).where(in_force(EnergyPrice, as_of))
    if region:
        query = query.where(contains_text(EnergyPrice.region, region))
    return _paginate(session, query, page, ENERGY_PRICE_SORTS)
