"""The catalog as the engine sees it: an immutable snapshot of specs and prices at one moment.

`wheretorun.pricing` builds it from the database (`build_snapshot(session, as_of)`); the engine
only reads it. Every recommendation echoes `version` and `as_of`, so the same workload with the
same snapshot gives the same answer. Prices are `Decimal` USD as published; `None` is unknown,
never free.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from wheretorun.engine.specs import AcceleratorSpec, ModelArchitecture

__all__ = [
    "AcceleratorEntry",
    "ApiPriceOffer",
    "CatalogSnapshot",
    "CloudOffer",
    "HardwarePrice",
    "ModelEntry",
]


@dataclass(frozen=True, slots=True)
class AcceleratorEntry:
    """An accelerator of the catalog. `spec` is None when the catalog lacks a fact the engine needs
    (memory, bandwidth or memory technology): candidates on it are rejected, not guessed."""

    id: str
    name: str
    vendor: str
    kind: str  # datacenter | workstation | consumer | tpu | other
    spec: AcceleratorSpec | None
    form_factor: str | None = None  # "SXM5", "OAM", "PCIe", ...: decides how many fit a server


@dataclass(frozen=True, slots=True)
class ModelEntry:
    """A model of the catalog. `architecture` is None for proprietary hosted models."""

    id: str
    name: str
    family: str
    open_weights: bool
    architecture: ModelArchitecture | None


@dataclass(frozen=True, slots=True)
class CloudOffer:
    """An instance type in one region, priced per instance-hour (all its accelerators)."""

    id: int
    provider: str
    region: str
    instance_type: str
    accelerator_id: str
    accelerator_count: Decimal  # fractional for GPU slices (AWS g6f)
    on_demand_usd_per_hour: Decimal | None
    spot_usd_per_hour: Decimal | None
    accelerator_only: bool  # GCP: the GPUs without their host VM
    source: str


@dataclass(frozen=True, slots=True)
class ApiPriceOffer:
    """A hosted model id at one provider, priced per million tokens."""

    id: int
    provider: str
    model_id: str  # the provider's (LiteLLM) id
    catalog_model_id: str | None  # the catalog model it serves, when known
    input_usd_per_million_tokens: Decimal | None
    cached_input_usd_per_million_tokens: Decimal | None
    output_usd_per_million_tokens: Decimal | None
    batch_input_usd_per_million_tokens: Decimal | None
    batch_output_usd_per_million_tokens: Decimal | None
    context_window_tokens: int | None
    source: str


@dataclass(frozen=True, slots=True)
class HardwarePrice:
    """A typical purchase price of one accelerator (the card or module alone)."""

    accelerator_id: str
    usd_per_unit: Decimal
    source: str


@dataclass(frozen=True, slots=True)
class CatalogSnapshot:
    """Everything priced and specified at `as_of`, from catalog version `version`."""

    version: int
    as_of: dt.datetime
    accelerators: Mapping[str, AcceleratorEntry] = field(hash=False)
    models: Mapping[str, ModelEntry] = field(hash=False)
    cloud_offers: tuple[CloudOffer, ...]
    api_prices: tuple[ApiPriceOffer, ...]
    hardware_prices: Mapping[str, HardwarePrice] = field(hash=False)
