"""The effective-dated price tables, described once so that one diff serves them all.

A row is identified by its natural key (what makes it "the same offer" across catalog versions)
and compared on every column except its id and provenance (`source`, `fetched_at`, the effective
dates, the catalog version): re-importing identical prices from another copy of a file changes
nothing, and the first import's provenance stays.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from sqlalchemy import ColumnElement, and_, or_

from wheretorun.db import Money
from wheretorun.errors import FileProblem, MalformedFile
from wheretorun.pricing.models import ApiPrice, CloudOffer, CommitmentTerm, EnergyPrice, HardwarePrice

__all__ = [
    "API_PRICES",
    "CLOUD_OFFERS",
    "COMMITMENT_TERMS",
    "ENERGY_PRICES",
    "HARDWARE_PRICES",
    "TABLES",
    "Key",
    "PriceTable",
    "Row",
]

PROVENANCE = frozenset({"id", "source", "fetched_at", "effective_from", "effective_to", "catalog_version_id"})

Row = dict[str, Any]  # compared columns + `source`
Key = tuple[Any, ...]
PriceModel = (
    type[CloudOffer] | type[ApiPrice] | type[HardwarePrice] | type[EnergyPrice] | type[CommitmentTerm]
)


@dataclass(frozen=True)
class PriceTable:
    """How to diff one price table.

    `prices`: money columns shown as old -> new with the % change. `primary`: the prices whose loss
    (to 0 or unknown) holds an import for review. `subject`: the column naming what a row prices
    (an accelerator, a model, a region); an import that leaves a subject with no usable price is
    held too. A row is usable when it has a known price and no `suspect_reason`.
    """

    model: PriceModel
    key: tuple[str, ...]
    prices: tuple[str, ...]
    primary: tuple[str, ...]
    subject: str
    subject_label: str  # "accelerator", "model", "region"
    priced_as: str  # what losing the last usable row means: "cloud offer", "hosted-API price", ...

    @property
    def name(self) -> str:
        return str(self.model.__tablename__)

    @property
    def compared(self) -> tuple[str, ...]:
        return tuple(name for name in self.model.__table__.columns.keys() if name not in PROVENANCE)

    def key_of(self, row: Mapping[str, Any]) -> Key:
        return tuple(row[name] for name in self.key)

    def label(self, key: Key) -> str:
        return "/".join(_text(part) for part in key)

    def is_priced(self, row: Mapping[str, Any]) -> bool:
        if row.get("suspect_reason"):
            return False
        return any(row.get(name) is not None for name in self.prices)

    def priced_sql(self) -> ColumnElement[bool]:
        """`is_priced` as SQL, for rows outside an import's scope."""
        known = or_(*(getattr(self.model, name).is_not(None) for name in self.prices))
        if "suspect_reason" in self.model.__table__.columns:
            return and_(known, self.model.suspect_reason.is_(None))  # type: ignore[union-attr]
        return known

    def row_from_record(self, record: Any, where: str) -> Row:
        """The record's values for this table's columns, money rounded to the column's scale.

        An amount the column cannot hold, or a positive price that would round to 0, rejects the
        file (`where` names the item) rather than being stored wrong.
        """
        values = dataclasses.asdict(record)
        row: Row = {name: values.get(name) for name in (*self.compared, "source")}
        for name, column in self.model.__table__.columns.items():
            value = row.get(name)
            if value is None or not isinstance(column.type, Money):
                continue
            row[name] = _fit(value, column.type, where, name)
        return row


def _fit(value: Decimal, money: Money, where: str, column: str) -> Decimal:
    places = Decimal(1).scaleb(-money.scale)
    rounded = Decimal(value).quantize(places, rounding=ROUND_HALF_EVEN)
    limit = Decimal(10) ** (money.precision - money.scale)
    if abs(rounded) >= limit:
        raise MalformedFile([FileProblem(where, column, f"{value} does not fit (the limit is {limit:,})")])
    if value > 0 and rounded == 0:
        raise MalformedFile(
            [FileProblem(where, column, f"{value} is below the smallest amount stored ({places})")]
        )
    return rounded


def _text(part: Any) -> str:
    if isinstance(part, Decimal):
        normal = part.normalize()
        return str(normal.quantize(Decimal(1)) if normal == normal.to_integral_value() else normal)
    return str(part)


CLOUD_OFFERS = PriceTable(
    model=CloudOffer,
    key=("provider", "instance_type", "region", "accelerator_name", "accelerator_count"),
    prices=("on_demand_usd_per_hour", "spot_usd_per_hour"),
    primary=("on_demand_usd_per_hour",),
    subject="accelerator_id",
    subject_label="accelerator",
    priced_as="cloud offer",
)
API_PRICES = PriceTable(
    model=ApiPrice,
    key=("model_id",),
    prices=(
        "input_usd_per_million_tokens",
        "cached_input_usd_per_million_tokens",
        "cache_write_usd_per_million_tokens",
        "output_usd_per_million_tokens",
        "batch_input_usd_per_million_tokens",
        "batch_output_usd_per_million_tokens",
    ),
    primary=("input_usd_per_million_tokens", "output_usd_per_million_tokens"),
    subject="catalog_model_id",
    subject_label="model",
    priced_as="hosted-API price",
)
HARDWARE_PRICES = PriceTable(
    model=HardwarePrice,
    key=("accelerator_id",),
    prices=("usd_per_unit",),
    primary=("usd_per_unit",),
    subject="accelerator_id",
    subject_label="accelerator",
    priced_as="purchase price",
)
ENERGY_PRICES = PriceTable(
    model=EnergyPrice,
    key=("region",),
    prices=("usd_per_kwh",),
    primary=("usd_per_kwh",),
    subject="region",
    subject_label="region",
    priced_as="energy price",
)
COMMITMENT_TERMS = PriceTable(
    model=CommitmentTerm,
    key=("provider", "accelerator_id", "instance_family", "term_months"),
    prices=("discount_fraction", "usd_per_accelerator_hour"),
    primary=(),
    subject="provider",
    subject_label="provider",
    priced_as="commitment term",
)
TABLES = {
    table.name: table
    for table in (CLOUD_OFFERS, API_PRICES, HARDWARE_PRICES, ENERGY_PRICES, COMMITMENT_TERMS)
}
