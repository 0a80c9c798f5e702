"""Request and response shapes of the admin API: imports, price overrides, the audit log."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from wheretorun.bounds import NO_NUL
from wheretorun.fields import AwareUtcDateTime
from wheretorun.pricing.models import ImportRun, PriceOverride
from wheretorun.security import AuditEntry

__all__ = [
    "AuditEntryRead",
    "DiffRead",
    "HoldReasonRead",
    "ImportCreate",
    "ImportRead",
    "OverrideCreate",
    "OverrideRead",
]


class ImportCreate(BaseModel):
    """Start an import (or a dry run). Multipart uploads send the same fields plus a `file` part."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "format": "canonical",
                    "filename": "quotes-2026-q3.csv",
                    "content": (
                        "kind,key,usd_per_unit,usd_per_kwh,source\nhardware,H100-SXM,30000,,vendor quote\n"
                    ),
                    "dry_run": True,
                },
                {
                    "format": "skypilot",
                    "provider": "lambda",
                    "url": "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v7/lambda/vms.csv",
                },
            ]
        },
    )

    format: Literal["skypilot", "litellm", "canonical"] = Field(
        description="skypilot: a SkyPilot vms.csv; litellm: LiteLLM's price JSON; canonical: our "
        "hardware/energy price CSV or JSON (README)."
    )
    content: str | None = Field(None, description="The file's text. Give this or `url`.")
    url: str | None = Field(
        None,
        pattern=NO_NUL,
        max_length=2048,
        description="An http(s) URL on the import allow-list. Give this or `content`.",
    )
    filename: str | None = Field(
        None, pattern=NO_NUL, max_length=255, description="A name for uploaded content, for the record."
    )
    provider: str | None = Field(
        None, pattern=NO_NUL, max_length=40, description="The cloud of a SkyPilot file: aws, gcp, lambda..."
    )
    dry_run: bool = Field(False, description="Only compute the diff; nothing is written.")
    force: bool = Field(
        False, description="Apply even if the import would be held for review; refetch an unchanged URL."
    )

    @model_validator(mode="after")
    def _one_source(self) -> ImportCreate:
        if (self.content is None) == (self.url is None):
            raise ValueError("give exactly one of content (or a file upload) and url")
        return self


class DiffExamplesRead(BaseModel):
    added: list[dict[str, Any]]
    removed: list[dict[str, Any]]
    changed: list[dict[str, Any]] = Field(description="Largest price move first: old -> new and % change.")


class DiffRead(BaseModel):
    """Counts are complete; `examples` lists the first rows of each kind of change."""

    added: int
    removed: int
    changed: int
    unchanged: int
    by_table: dict[str, dict[str, int]] = {}
    examples: DiffExamplesRead = DiffExamplesRead(added=[], removed=[], changed=[])


class HoldReasonRead(BaseModel):
    kind: Literal["price_drop", "zero_price", "unpriced"]
    table: str
    item: str
    detail: str


class ImportRead(BaseModel):
    id: int | None = Field(description="Null for a dry run (not recorded).")
    status: Literal["dry_run", "applied", "unchanged", "not_modified", "held"] = Field(
        description="applied: a new catalog version; unchanged: same prices, no new version; "
        "not_modified: the URL answered 304; held: suspicious changes wait for review (repeat with force)."
    )
    created_at: dt.datetime
    format: str
    provider: str | None
    source_kind: Literal["upload", "url"]
    source_url: str | None
    filename: str | None
    sha256: str | None
    size_bytes: int
    etag: str | None
    last_modified: str | None
    fetched_at: dt.datetime
    force: bool
    based_on_catalog_version: int | None = Field(
        description="The catalog version the diff was computed against."
    )
    catalog_version: int | None = Field(description="The catalog version this import created, when applied.")
    api_key_id: int | None
    run_by: str = Field(description="The API key (id and name) or the CLI user that ran it.")
    diff: DiffRead
    hold_reasons: list[HoldReasonRead]

    @classmethod
    def of(cls, run: ImportRun) -> ImportRead:
        return cls(
            id=run.id,
            status=run.status,
            created_at=run.created_at,
            format=run.format,
            provider=run.provider,
            source_kind=run.source_kind,
            source_url=run.source_url,
            filename=run.filename,
            sha256=run.sha256,
            size_bytes=run.size_bytes,
            etag=run.etag,
            last_modified=run.last_modified,
            fetched_at=run.fetched_at,
            force=run.force,
            based_on_catalog_version=run.based_on_version_id,
            catalog_version=run.catalog_version_id,
            api_key_id=run.api_key_id,
            run_by=run.actor,
            diff=DiffRead.model_validate(run.diff),
            hold_reasons=[HoldReasonRead.model_validate(reason) for reason in run.hold_reasons],
        )


class OverrideCreate(BaseModel):
    """A negotiated price: `multiplier` (0.8 = 20% off the list price) or, for one cloud
    `instance_type`, `fixed_usd_per_hour`."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "applies_to": "cloud_offers",
                    "provider": "aws",
                    "multiplier": "0.8",
                    "reason": "EDP: 20% off",
                },
                {
                    "applies_to": "cloud_offers",
                    "provider": "lambda",
                    "instance_type": "gpu_8x_h100_sxm5",
                    "fixed_usd_per_hour": "19.92",
                    "reason": "reserved cluster quote",
                },
                {
                    "applies_to": "api_prices",
                    "provider": "openai",
                    "model_id": "gpt-4o",
                    "multiplier": "0.9",
                    "reason": "enterprise agreement",
                },
            ]
        },
    )

    applies_to: Literal["cloud_offers", "api_prices"]
    provider: str = Field(
        pattern=NO_NUL, min_length=1, max_length=80, description="aws, lambda, openai, anthropic, ..."
    )
    reason: str = Field(
        pattern=NO_NUL, min_length=1, max_length=2000, description="Why: the contract, the quote."
    )
    multiplier: Decimal | None = Field(None, gt=0, le=10, allow_inf_nan=False)
    fixed_usd_per_hour: Decimal | None = Field(None, gt=0, lt=10**8, allow_inf_nan=False)
    region: str | None = Field(None, pattern=NO_NUL, max_length=120)
    instance_type: str | None = Field(None, pattern=NO_NUL, max_length=120)
    accelerator: str | None = Field(
        None, pattern=NO_NUL, max_length=200, description="Accelerator id or any alias."
    )
    model_id: str | None = Field(
        None, pattern=NO_NUL, max_length=300, description="Hosted model id (api_prices only)."
    )
    effective_from: AwareUtcDateTime | None = Field(None, description="Default: now. Not in the past.")
    effective_to: AwareUtcDateTime | None = Field(None, description="Default: until ended.")


class OverrideRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    applies_to: str
    provider: str
    region: str | None
    instance_type: str | None
    accelerator_id: str | None
    model_id: str | None
    multiplier: Decimal | None
    fixed_usd_per_hour: Decimal | None
    reason: str
    effective_from: dt.datetime
    effective_to: dt.datetime | None
    created_at: dt.datetime
    api_key_id: int | None
    created_by: str = Field(validation_alias="actor")

    @classmethod
    def of(cls, override: PriceOverride) -> OverrideRead:
        return cls.model_validate(override)


class AuditEntryRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    at: dt.datetime
    api_key_id: int | None
    actor: str
    action: str = Field(description="import.applied, import.held, override.create, key.revoke, ...")
    target: str
    detail: dict[str, Any]

    @classmethod
    def of(cls, entry: AuditEntry) -> AuditEntryRead:
        return cls.model_validate(entry)
