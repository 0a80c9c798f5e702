"""The catalog schema: accelerators, models, cloud offers, hosted-API prices, and their versions.

Every price row is effective-dated: `effective_from` (inclusive) to `effective_to` (exclusive, NULL
while current), with the `source` it came from, when it was `fetched_at`, and the catalog version
that introduced it. Old rows are never updated in place, so a past plan can be re-priced `as_of`
its date. Unknown prices are NULL, never 0.

Every schema change goes through an Alembic migration in `wheretorun/migrations/versions/`.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from wheretorun.db import Base, Money, UTCDateTime
from wheretorun.security import ApiKey

__all__ = [
    "Accelerator",
    "AcceleratorAlias",
    "ApiPrice",
    "CatalogVersion",
    "CloudOffer",
    "CommitmentTerm",
    "EnergyPrice",
    "HardwarePrice",
    "ImportRun",
    "Model",
    "PriceOverride",
]

# Scales of the money columns: hourly prices to a millionth of a dollar, token prices (per million
# tokens) to 1e-8 dollars, enough for every LiteLLM per-token price times 1e6.
HOURLY = Money(precision=14, scale=6)
PER_MILLION_TOKENS = Money(precision=20, scale=8)


class CatalogVersion(Base):
    """One load of prices into the catalog: the seed, or a later import."""

    __tablename__ = "catalog_versions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    kind: Mapped[str] = mapped_column(String(32))  # seed | import
    description: Mapped[str] = mapped_column(Text)
    # what it was loaded from: [{"path", "format", "as_of", "sha256", ...}]
    sources: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)


class EffectiveDated:
    """Columns every price row carries."""

    source: Mapped[str] = mapped_column(Text)
    fetched_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    effective_from: Mapped[dt.datetime] = mapped_column(UTCDateTime(), index=True)
    effective_to: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    catalog_version_id: Mapped[int] = mapped_column(ForeignKey("catalog_versions.id"), index=True)


class Accelerator(Base):
    """A GPU, TPU or other accelerator: specs are physical facts, with their source."""

    __tablename__ = "accelerators"

    id: Mapped[str] = mapped_column(String(80), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    vendor: Mapped[str] = mapped_column(String(80), index=True)
    kind: Mapped[str] = mapped_column(String(20), index=True)
    form_factor: Mapped[str | None] = mapped_column(String(80))
    memory_gb: Mapped[float | None] = mapped_column(Float)
    memory_bandwidth_gb_s: Mapped[float | None] = mapped_column(Float)
    fp32_tflops: Mapped[float | None] = mapped_column(Float)
    tf32_tflops: Mapped[float | None] = mapped_column(Float)
    bf16_tflops: Mapped[float | None] = mapped_column(Float)
    fp16_accumulate_tflops: Mapped[float | None] = mapped_column(Float)
    fp8_tflops: Mapped[float | None] = mapped_column(Float)
    int8_tops: Mapped[float | None] = mapped_column(Float)
    int4_tops: Mapped[float | None] = mapped_column(Float)
    tdp_w: Mapped[float | None] = mapped_column(Float)
    interconnect: Mapped[str | None] = mapped_column(String(80))
    interconnect_gb_s: Mapped[float | None] = mapped_column(Float)
    internode_gb_s: Mapped[float | None] = mapped_column(Float)
    family: Mapped[str | None] = mapped_column(String(40))
    memory_kind: Mapped[str | None] = mapped_column(String(20))
    spec_source: Mapped[str] = mapped_column(Text)
    notes: Mapped[str | None] = mapped_column(Text)

    aliases: Mapped[list[AcceleratorAlias]] = relationship(
        back_populates="accelerator", order_by="AcceleratorAlias.alias", lazy="selectin"
    )


class AcceleratorAlias(Base):
    """A spelling of an accelerator name used by some source.

    `key` is the spelling normalised for lookup (`A100-80GB` and `a100 80gb` share one); several
    spellings may share a key, but a key always names one accelerator (the loader checks).
    """

    __tablename__ = "accelerator_aliases"

    alias: Mapped[str] = mapped_column(String(200), primary_key=True)
    key: Mapped[str] = mapped_column(String(200), index=True)
    accelerator_id: Mapped[str] = mapped_column(ForeignKey("accelerators.id", ondelete="CASCADE"), index=True)

    accelerator: Mapped[Accelerator] = relationship(back_populates="aliases")


class HardwarePrice(EffectiveDated, Base):
    """A typical purchase price: of one accelerator (`basis` chip), or of a server holding
    `accelerators_per_unit` of them (`basis` system, migration 0007). Server overhead is added to
    chip prices only."""

    __tablename__ = "hardware_prices"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    accelerator_id: Mapped[str] = mapped_column(ForeignKey("accelerators.id", ondelete="CASCADE"), index=True)
    usd_per_unit: Mapped[Decimal] = mapped_column(Money(precision=14, scale=2))
    basis: Mapped[str] = mapped_column(String(10), server_default="chip")  # chip | system
    accelerators_per_unit: Mapped[int] = mapped_column(Integer, server_default="1")


class Model(Base):
    """An open model with its architecture, or a proprietary hosted model without one."""

    __tablename__ = "models"

    id: Mapped[str] = mapped_column(String(120), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    family: Mapped[str] = mapped_column(String(80), index=True)
    open_weights: Mapped[bool] = mapped_column(Boolean)
    hf_id: Mapped[str | None] = mapped_column(String(200))
    total_params_b: Mapped[float | None] = mapped_column(Float)
    active_params_b: Mapped[float | None] = mapped_column(Float)
    layers: Mapped[int | None] = mapped_column(Integer)
    hidden_size: Mapped[int | None] = mapped_column(Integer)
    intermediate_size: Mapped[int | None] = mapped_column(Integer)
    attention_heads: Mapped[int | None] = mapped_column(Integer)
    kv_heads: Mapped[int | None] = mapped_column(Integer)
    head_dim: Mapped[int | None] = mapped_column(Integer)
    vocab_size: Mapped[int | None] = mapped_column(Integer)
    max_context: Mapped[int | None] = mapped_column(Integer)
    attention: Mapped[str | None] = mapped_column(String(20))
    sliding_window: Mapped[int | None] = mapped_column(Integer)
    sliding_window_layers: Mapped[int | None] = mapped_column(Integer)
    experts: Mapped[int | None] = mapped_column(Integer)
    experts_per_token: Mapped[int | None] = mapped_column(Integer)
    kv_cache_bytes_per_token_16bit: Mapped[int | None] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(Text)


class CloudOffer(EffectiveDated, Base):
    """An instance type in one region of one provider, with its hourly prices (zones collapsed)."""

    __tablename__ = "cloud_offers"
    __table_args__ = (
        Index(
            "uq_cloud_offers_current",
            "provider",
            "instance_type",
            "region",
            "accelerator_name",
            "accelerator_count",
            unique=True,
            sqlite_where=text("effective_to IS NULL"),
            postgresql_where=text("effective_to IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    provider: Mapped[str] = mapped_column(String(40), index=True)
    instance_type: Mapped[str] = mapped_column(String(120))
    region: Mapped[str] = mapped_column(String(120), index=True)
    accelerator_name: Mapped[str] = mapped_column(String(120))
    accelerator_id: Mapped[str | None] = mapped_column(ForeignKey("accelerators.id"), index=True)
    accelerator_count: Mapped[Decimal] = mapped_column(Money(precision=10, scale=3))
    vcpus: Mapped[Decimal | None] = mapped_column(Money(precision=10, scale=3))
    memory_gib: Mapped[Decimal | None] = mapped_column(Money(precision=12, scale=3))
    on_demand_usd_per_hour: Mapped[Decimal | None] = mapped_column(HOURLY)
    spot_usd_per_hour: Mapped[Decimal | None] = mapped_column(HOURLY)
    zone_count: Mapped[int] = mapped_column(Integer)
    accelerator_only: Mapped[bool] = mapped_column(Boolean)
    suspect_reason: Mapped[str | None] = mapped_column(Text)
    note: Mapped[str | None] = mapped_column(Text)

    accelerator: Mapped[Accelerator | None] = relationship(lazy="joined")


class ApiPrice(EffectiveDated, Base):
    """Token prices of one hosted model id at one provider."""

    __tablename__ = "api_prices"
    __table_args__ = (
        Index(
            "uq_api_prices_current",
            "model_id",
            unique=True,
            sqlite_where=text("effective_to IS NULL"),
            postgresql_where=text("effective_to IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    provider: Mapped[str] = mapped_column(String(80), index=True)
    model_id: Mapped[str] = mapped_column(String(300), index=True)
    mode: Mapped[str | None] = mapped_column(String(40), index=True)
    catalog_model_id: Mapped[str | None] = mapped_column(ForeignKey("models.id"), index=True)
    input_usd_per_million_tokens: Mapped[Decimal | None] = mapped_column(PER_MILLION_TOKENS)
    cached_input_usd_per_million_tokens: Mapped[Decimal | None] = mapped_column(PER_MILLION_TOKENS)
    cache_write_usd_per_million_tokens: Mapped[Decimal | None] = mapped_column(PER_MILLION_TOKENS)
    output_usd_per_million_tokens: Mapped[Decimal | None] = mapped_column(PER_MILLION_TOKENS)
    batch_input_usd_per_million_tokens: Mapped[Decimal | None] = mapped_column(PER_MILLION_TOKENS)
    batch_output_usd_per_million_tokens: Mapped[Decimal | None] = mapped_column(PER_MILLION_TOKENS)
    context_window_tokens: Mapped[int | None] = mapped_column(Integer)
    max_output_tokens: Mapped[int | None] = mapped_column(Integer)
    deprecation_date: Mapped[dt.date | None] = mapped_column(nullable=True)
    suspect_reason: Mapped[str | None] = mapped_column(Text)


# --- the price lifecycle (migration 0002): energy prices, API keys, imports, audit, overrides ----


class EnergyPrice(EffectiveDated, Base):
    """The price of electricity in one region (for owned hardware: power x PUE x hours)."""

    __tablename__ = "energy_prices"
    __table_args__ = (
        Index(
            "uq_energy_prices_current",
            "region",
            unique=True,
            sqlite_where=text("effective_to IS NULL"),
            postgresql_where=text("effective_to IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    region: Mapped[str] = mapped_column(String(120), index=True)
    usd_per_kwh: Mapped[Decimal] = mapped_column(Money(precision=12, scale=6))


class CommitmentTerm(EffectiveDated, Base):
    """A published commitment term of one provider (migration 0007): a discount off on-demand, or
    a committed price per accelerator-hour, for `term_months`. `accelerator_id` and
    `instance_family` narrow it ("" = every accelerator / every instance type of the provider); the
    most specific current term of a length applies. A provider with no term gets no reserved plan."""

    __tablename__ = "commitment_terms"
    __table_args__ = (
        Index(
            "uq_commitment_terms_current",
            "provider",
            "accelerator_id",
            "instance_family",
            "term_months",
            unique=True,
            sqlite_where=text("effective_to IS NULL"),
            postgresql_where=text("effective_to IS NULL"),
        ),
        CheckConstraint(
            "(discount_fraction IS NULL) <> (usd_per_accelerator_hour IS NULL)", name="one_price"
        ),
        CheckConstraint("term_months > 0", name="term_months"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    provider: Mapped[str] = mapped_column(String(40), index=True)
    accelerator_id: Mapped[str] = mapped_column(String(80))  # "" = every accelerator
    instance_family: Mapped[str] = mapped_column(String(120))  # "" = every instance type
    term_months: Mapped[int] = mapped_column(Integer)
    discount_fraction: Mapped[Decimal | None] = mapped_column(Money(precision=10, scale=6))
    usd_per_accelerator_hour: Mapped[Decimal | None] = mapped_column(HOURLY)


class ImportRun(Base):
    """One import of a price file that was applied, found unchanged, or held for review.

    Dry runs are not recorded (they write nothing). `etag` / `last_modified` are the HTTP
    validators of a URL source, sent back on the next import of the same URL.
    """

    __tablename__ = "import_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    status: Mapped[str] = mapped_column(String(20), index=True)  # applied | unchanged | not_modified | held
    format: Mapped[str] = mapped_column(String(20))
    provider: Mapped[str | None] = mapped_column(String(40))
    source_kind: Mapped[str] = mapped_column(String(10))  # upload | url
    source_url: Mapped[str | None] = mapped_column(Text)
    filename: Mapped[str | None] = mapped_column(String(255))
    sha256: Mapped[str | None] = mapped_column(String(64))
    size_bytes: Mapped[int] = mapped_column(Integer)
    etag: Mapped[str | None] = mapped_column(Text)
    last_modified: Mapped[str | None] = mapped_column(String(64))
    fetched_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    force: Mapped[bool] = mapped_column(Boolean)
    based_on_version_id: Mapped[int | None] = mapped_column(ForeignKey("catalog_versions.id"))
    catalog_version_id: Mapped[int | None] = mapped_column(ForeignKey("catalog_versions.id"), index=True)
    api_key_id: Mapped[int | None] = mapped_column(ForeignKey(ApiKey.id))
    actor: Mapped[str] = mapped_column(String(200))
    diff: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    hold_reasons: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)


class PriceOverride(Base):
    """A negotiated price for one provider, effective-dated like the prices it adjusts.

    It matches the current rows of `applies_to` (cloud_offers or api_prices) of `provider`, narrowed
    by whichever of region / instance_type / accelerator_id (cloud) or model_id (hosted API) are set.
    Exactly one adjustment: `multiplier` (0.8 = 20% off the list price) or, for one cloud instance
    type, `fixed_usd_per_hour` (the negotiated on-demand price of the instance).
    """

    __tablename__ = "price_overrides"
    __table_args__ = (
        CheckConstraint("(multiplier IS NULL) <> (fixed_usd_per_hour IS NULL)", name="one_adjustment"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    applies_to: Mapped[str] = mapped_column(String(20))  # cloud_offers | api_prices
    provider: Mapped[str] = mapped_column(String(80), index=True)
    region: Mapped[str | None] = mapped_column(String(120))
    instance_type: Mapped[str | None] = mapped_column(String(120))
    accelerator_id: Mapped[str | None] = mapped_column(ForeignKey("accelerators.id"))
    model_id: Mapped[str | None] = mapped_column(String(300))
    multiplier: Mapped[Decimal | None] = mapped_column(Money(precision=10, scale=6))  # a ratio, kept exact
    fixed_usd_per_hour: Mapped[Decimal | None] = mapped_column(HOURLY)
    reason: Mapped[str] = mapped_column(Text)
    effective_from: Mapped[dt.datetime] = mapped_column(UTCDateTime(), index=True)
    effective_to: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    api_key_id: Mapped[int | None] = mapped_column(ForeignKey(ApiKey.id))
    actor: Mapped[str] = mapped_column(String(200))
