"""Types of the client's arguments and answers.

Answers are the service's JSON as plain dicts (see the OpenAPI document, `openapi/openapi.json`,
for their fields); pages are typed. Filters are `TypedDict`s, so a type checker catches a
misspelt filter (the service itself ignores unknown query parameters).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Literal, NotRequired, TypedDict

from pydantic import BaseModel

__all__ = [
    "AcceleratorFilters",
    "ApiPriceFilters",
    "AuditFilters",
    "Body",
    "CloudOfferFilters",
    "EnergyPriceFilters",
    "ImportFilters",
    "JSONObject",
    "ModelFilters",
    "OverrideFilters",
    "Page",
    "PageParams",
    "ScenarioFilters",
]

JSONObject = dict[str, Any]
"""A JSON object as the service sent it (money as decimal strings, times as ISO 8601 strings)."""

Body = Mapping[str, Any] | BaseModel
"""A request body: a mapping, or one of the API's own request models
(`wheretorun.services.estimate_schemas.InferenceEstimateCreate`, ...), sent with `exclude_unset`."""

Money = Decimal | str
Moment = dt.datetime | str


class Page(TypedDict):
    """One page of a list. Price lists also say which catalog version they read."""

    items: list[JSONObject]
    total: int
    limit: int
    offset: int
    catalog_version_id: NotRequired[int | None]
    as_of: NotRequired[str | None]


class PageParams(TypedDict, total=False):
    limit: int  # 1-500, default 50
    offset: int


class _Sorted(PageParams, total=False):
    sort: str  # a column, `-` in front for descending


class _PricePoint(TypedDict, total=False):
    as_of: Moment
    catalog_version: int


class AcceleratorFilters(_Sorted, _PricePoint, total=False):
    vendor: str
    kind: Literal["datacenter", "workstation", "consumer", "tpu", "other"]
    min_memory_gb: float
    q: str


class ModelFilters(_Sorted, total=False):
    family: str
    open_weights: bool
    q: str
    min_params_b: float
    max_params_b: float


class CloudOfferFilters(_Sorted, _PricePoint, total=False):
    provider: str
    region: str
    accelerator: str
    min_memory_gb: float
    min_accelerator_count: Decimal | int
    pricing_mode: Literal["on_demand", "spot"]
    max_usd_per_hour: Money
    include_suspect: bool
    include_accelerator_only: bool


class ApiPriceFilters(_Sorted, _PricePoint, total=False):
    provider: str
    model: str
    mode: str
    max_input_usd_per_million_tokens: Money
    max_output_usd_per_million_tokens: Money
    include_suspect: bool
    include_deprecated: bool


class EnergyPriceFilters(_Sorted, _PricePoint, total=False):
    region: str


class ScenarioFilters(PageParams, total=False):
    tag: str
    q: str


class ImportFilters(PageParams, total=False):
    status: str


class OverrideFilters(PageParams, total=False):
    in_force: bool


class AuditFilters(PageParams, total=False):
    action: str
