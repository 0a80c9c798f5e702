"""Write catalog records to the database: the first seed from the shipped public data.

The loader never commits: the caller owns the transaction, so a failed seed leaves nothing behind.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from wheretorun.pricing.imports.canonical import calibration_energy_csv, read_canonical_prices
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
from wheretorun.pricing.plausibility import flag_cloud_outliers, flag_token_outliers
from wheretorun.pricing.records import AcceleratorRecord, ApiPriceRecord, CloudOfferRecord, ModelRecord
from wheretorun.pricing.sources import (
    AliasResolver,
    normalise_alias,
    read_accelerators,
    read_litellm_prices,
    read_models,
    read_skypilot_offers,
)

__all__ = ["DATA_DIR", "SeedReport", "catalog_is_seeded", "seed_catalog"]

DATA_DIR = Path(__file__).resolve().parent / "data"
_BATCH = 1000


class SeedReport(dict[str, int]):
    """Rows written per table."""


def catalog_is_seeded(session: Session) -> bool:
    return session.scalar(select(func.count()).select_from(CatalogVersion)) != 0


def _manifest(data_dir: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((data_dir / "manifest.json").read_text(encoding="utf-8"))
    return manifest


def _as_of(entry: dict[str, Any]) -> dt.datetime:
    day = dt.date.fromisoformat(entry["as_of"])
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)


def seed_catalog(session: Session, data_dir: Path = DATA_DIR, now: dt.datetime | None = None) -> SeedReport:
    """Load every shipped source into an empty catalog as catalog version 1.

    `fetched_at` and `effective_from` of each price come from the source's `as_of` date in
    `data/manifest.json` (the date the file was published, or the date we copied it where its
    publication date is unknown; the manifest says which).
    """
    now = now or dt.datetime.now(dt.UTC)
    manifest = _manifest(data_dir)
    version = CatalogVersion(
        created_at=now,
        kind="seed",
        description="Seed from the public datasets shipped in wheretorun/pricing/data/sources",
        sources=manifest["files"],
    )
    session.add(version)
    session.flush()

    accelerators = read_accelerators(data_dir)
    models = read_models(data_dir)
    resolver = AliasResolver(accelerators)
    report = SeedReport()
    report["accelerators"] = _write_accelerators(session, accelerators)
    report["accelerator_aliases"] = _write_aliases(session, accelerators)
    report["hardware_prices"] = _write_hardware_prices(
        session, accelerators, data_dir, resolver, version.id, now
    )
    report["energy_prices"] = _write_energy_prices(session, data_dir, version.id, now)
    report["commitment_terms"] = _write_commitment_terms(session, data_dir, resolver, version.id, now)
    report["models"] = _bulk_insert(session, Model, [_model_row(m) for m in models])

    # Offers and hosted prices are read whole first: the plausibility rules compare each row with
    # the other providers of the same accelerator or model (pricing/plausibility.py).
    offers: list[tuple[CloudOfferRecord, dt.datetime]] = []
    prices: list[tuple[ApiPriceRecord, dt.datetime]] = []
    for entry in manifest["files"]:
        text = (data_dir / entry["path"]).read_text(encoding="utf-8")
        as_of = _as_of(entry)
        if entry["format"] == "skypilot":
            offers += [
                (o, as_of) for o in read_skypilot_offers(text, entry["provider"], resolver, entry["path"])
            ]
        elif entry["format"] == "litellm":
            prices += [(p, as_of) for p in read_litellm_prices(text, entry["path"], models)]
    flagged_offers = flag_cloud_outliers([offer for offer, _ in offers])
    flagged_prices = flag_token_outliers([price for price, _ in prices])
    report["cloud_offers"] = _write_prices(
        session,
        CloudOffer,
        [(o, as_of) for o, (_, as_of) in zip(flagged_offers, offers, strict=True)],
        version.id,
    )
    report["api_prices"] = _write_prices(
        session,
        ApiPrice,
        [(p, as_of) for p, (_, as_of) in zip(flagged_prices, prices, strict=True)],
        version.id,
    )
    return report


def _bulk_insert(session: Session, table: type[Any], rows: Sequence[dict[str, Any]]) -> int:
    for start in range(0, len(rows), _BATCH):
        session.execute(insert(table), list(rows[start : start + _BATCH]))
    return len(rows)


def _write_accelerators(session: Session, records: Iterable[AcceleratorRecord]) -> int:
    columns = set(Accelerator.__table__.columns.keys())
    rows = [{key: value for key, value in asdict(record).items() if key in columns} for record in records]
    return _bulk_insert(session, Accelerator, rows)


def _write_aliases(session: Session, records: Iterable[AcceleratorRecord]) -> int:
    """Every spelling of every accelerator, with its lookup key; a key must name one accelerator."""
    rows: dict[str, dict[str, str]] = {}
    owner_of_key: dict[str, str] = {}
    for record in records:
        for alias in (record.id, record.name, *record.aliases):
            key = normalise_alias(alias)
            if not key or alias in rows:
                continue
            owner = owner_of_key.setdefault(key, record.id)
            if owner != record.id:
                raise ValueError(f"alias {alias!r} of {record.id!r} also names {owner!r}")
            rows[alias] = {"alias": alias, "key": key, "accelerator_id": record.id}
    return _bulk_insert(session, AcceleratorAlias, list(rows.values()))


def _write_hardware_prices(
    session: Session,
    records: Iterable[AcceleratorRecord],
    data_dir: Path,
    resolver: AliasResolver,
    version_id: int,
    now: dt.datetime,
) -> int:
    """Purchase prices: the accelerator table's (chip prices), replaced or completed by
    `hardware_prices.csv` (canonical format), which says what each of its prices buys."""
    provenance = {
        "fetched_at": now,
        "effective_from": now,
        "effective_to": None,
        "catalog_version_id": version_id,
    }
    rows = {
        r.id: {
            "accelerator_id": r.id,
            "usd_per_unit": r.purchase_price_usd,
            "source": r.purchase_price_source or r.spec_source,
            "basis": "chip",
            "accelerators_per_unit": 1,
            **provenance,
        }
        for r in records
        if r.purchase_price_usd is not None
    }
    curated = read_canonical_prices(
        (data_dir / "hardware_prices.csv").read_text(encoding="utf-8"), resolver.resolve
    )
    for price in curated.hardware:
        rows[price.accelerator_id] = {**asdict(price), **provenance}
    return _bulk_insert(session, HardwarePrice, list(rows.values()))


def _write_commitment_terms(
    session: Session, data_dir: Path, resolver: AliasResolver, version_id: int, now: dt.datetime
) -> int:
    """Published commitment terms from `commitment_terms.csv` (canonical format)."""
    text = (data_dir / "commitment_terms.csv").read_text(encoding="utf-8")
    provenance = {
        "fetched_at": now,
        "effective_from": now,
        "effective_to": None,
        "catalog_version_id": version_id,
    }
    terms = read_canonical_prices(text, resolver.resolve).commitments
    return _bulk_insert(session, CommitmentTerm, [{**asdict(term), **provenance} for term in terms])


def _write_energy_prices(session: Session, data_dir: Path, version_id: int, now: dt.datetime) -> int:
    """Electricity prices from the calibration set, read through the canonical import format."""
    text = calibration_energy_csv(data_dir / "calibration" / "energy_and_pue.csv")
    prices = read_canonical_prices(text, resolve_accelerator=lambda _name: None).energy
    rows = [
        {
            "region": price.region,
            "usd_per_kwh": price.usd_per_kwh,
            "source": price.source,
            "fetched_at": now,
            "effective_from": now,
            "effective_to": None,
            "catalog_version_id": version_id,
        }
        for price in prices
    ]
    return _bulk_insert(session, EnergyPrice, rows)


def _model_row(record: ModelRecord) -> dict[str, Any]:
    row = asdict(record)
    row.pop("hosted_model_ids")
    return row


def _write_prices(
    session: Session,
    table: type[CloudOffer] | type[ApiPrice],
    records: Sequence[tuple[CloudOfferRecord | ApiPriceRecord, dt.datetime]],
    version_id: int,
) -> int:
    """Insert current price rows, each in effect from its source file's `as_of` date."""
    columns = set(table.__table__.columns.keys())
    rows = []
    for record, as_of in records:
        row = {key: value for key, value in asdict(record).items() if key in columns}
        row.update(fetched_at=as_of, effective_from=as_of, effective_to=None, catalog_version_id=version_id)
        rows.append(row)
    return _bulk_insert(session, table, rows)
