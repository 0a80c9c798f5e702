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
    "CommitmentTerm",
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
class CommitmentTerm:
    """A published commitment of `provider`: `discount_fraction` off the on-demand price, or a
    committed `usd_per_accelerator_hour`, for `term_months`. `accelerator_id` and `instance_family`
    (an instance-type prefix) narrow it; "" means any."""

    provider: str
    accelerator_id: str
    instance_family: str
    term_months: int
    discount_fraction: Decimal | None
    usd_per_accelerator_hour: Decimal | None
    source: str

    def applies_to(self, provider: str, accelerator_id: str, instance_type: str) -> bool:
        return (
            self.provider == provider
            and self.accelerator_id in ("", accelerator_id)
            and instance_type.startswith(self.instance_family)
        )

    @property
    def specificity(self) -> tuple[bool, bool, int]:
        """Larger is more specific: an instance family beats an accelerator beats the provider."""
        return (bool(self.instance_family), bool(self.accelerator_id), len(self.instance_family))


@dataclass(frozen=True, slots=True)
class CloudOffer:
    """An instance type in one region, priced per instance-hour (all its accelerators).

    `commitments` are the catalog's commitment terms that apply to it (the most specific one per
    term length); a pricing mode of a length without one has no price. `suspect_reason` is set
    on offers the catalog flags (pricing/plausibility.py); the snapshot keeps them apart."""

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
    commitments: tuple[CommitmentTerm, ...] = ()
    suspect_reason: str | None = None

    def commitment(self, term_months: int) -> CommitmentTerm | None:
        return next((term for term in self.commitments if term.term_months == term_months), None)


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
    suspect_reason: str | None = None  # set on prices the catalog flags; the snapshot keeps them apart


@dataclass(frozen=True, slots=True)
class HardwarePrice:
    """A typical purchase price: of one accelerator (`basis` "chip", the card or module alone), or
    of a server with `accelerators_per_unit` accelerators (`basis` "system", the host included)."""

    accelerator_id: str
    usd_per_unit: Decimal
    source: str
    basis: str = "chip"  # chip | system
    accelerators_per_unit: int = 1

    @property
    def includes_server(self) -> bool:
        return self.basis == "system"

    @property
    def usd_per_accelerator(self) -> float:
        """The price's share per accelerator (a system price divided by its accelerators)."""
        return float(self.usd_per_unit) / self.accelerators_per_unit

    def describe(self) -> str:
        if self.includes_server:
            return (
                f"${float(self.usd_per_unit):,.0f} per {self.accelerators_per_unit}-accelerator system "
                f"(${self.usd_per_accelerator:,.0f} per accelerator, server included)"
            )
        return f"${self.usd_per_accelerator:,.0f} per accelerator (chip)"


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
    commitment_terms: tuple[CommitmentTerm, ...] = ()
    # Prices flagged by the catalog (pricing/plausibility.py, past a deprecation date): kept apart,
    # used only when a request asks for them, counted under `suspect_price` otherwise.
    suspect_cloud_offers: tuple[CloudOffer, ...] = ()
    suspect_api_prices: tuple[ApiPriceOffer, ...] = ()
