"""A price file -> the rows it holds for each price table, and the scope of rows it replaces.

The strict checks run first (`checks.py`), then the same readers the seed uses
(`wheretorun.pricing.sources`), so an imported file means exactly what a seeded one does.

What a file covers, i.e. which current rows it may end as "removed":

| format | covers |
| --- | --- |
| `skypilot` | the cloud offers of its `provider` (a complete price list of that cloud) |
| `litellm` | every hosted-API price (a complete table) |
| `canonical` | only the rows it lists: it adds or changes hardware, energy and commitment prices |

Cross-provider plausibility rules (`pricing/plausibility.py`) run on what is read: a SkyPilot file
against the current offers of every other provider, a LiteLLM table against itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from wheretorun.pricing import repositories as repo
from wheretorun.pricing.imports.canonical import read_canonical_prices
from wheretorun.pricing.imports.checks import ProblemList, check_litellm, check_skypilot
from wheretorun.pricing.imports.tables import (
    API_PRICES,
    CLOUD_OFFERS,
    COMMITMENT_TERMS,
    ENERGY_PRICES,
    HARDWARE_PRICES,
    Key,
    PriceTable,
    Row,
)
from wheretorun.pricing.models import Accelerator, CloudOffer, Model
from wheretorun.pricing.plausibility import CloudPricePoint, flag_cloud_outliers, flag_token_outliers
from wheretorun.pricing.sources import (
    DATA_DIR,
    AliasResolver,
    hosted_index,
    load_resolver,
    read_litellm_prices,
    read_models,
    read_skypilot_offers,
)

__all__ = ["FORMATS", "Coverage", "Format", "IncomingPrices", "read_price_file"]

Format = Literal["skypilot", "litellm", "canonical"]
FORMATS: tuple[Format, ...] = ("skypilot", "litellm", "canonical")


@dataclass(frozen=True)
class Coverage:
    """The current rows a file speaks for: a table, narrowed by column values. A file that is not
    a complete list (`complete=False`) speaks only for the rows it lists."""

    table: PriceTable
    where: tuple[tuple[str, Any], ...] = ()
    complete: bool = True

    def describe(self) -> str:
        narrowed = " and ".join(f"{name} = {value!r}" for name, value in self.where)
        return f"{self.table.name} where {narrowed}" if narrowed else f"all {self.table.name}"


@dataclass(frozen=True)
class IncomingPrices:
    parts: list[tuple[Coverage, dict[Key, Row]]]

    @property
    def rows(self) -> int:
        return sum(len(rows) for _, rows in self.parts)


def read_price_file(
    session: Session, format: Format, provider: str | None, text: str, source: str
) -> IncomingPrices:
    """Check and read `text`. Raises `MalformedFile`.

    `source` is the label the SkyPilot and LiteLLM rows carry (the URL or the uploaded file);
    canonical rows carry their own `source` column.
    """
    if format == "skypilot":
        assert provider is not None
        lines = check_skypilot(text, provider)
        offers = read_skypilot_offers(text, provider, _resolver(), source)
        known = set(session.scalars(select(Accelerator.id)))
        _reject_unknown_accelerators(lines, offers, known)
        records = flag_cloud_outliers(offers, _other_providers(session, provider))
        return IncomingPrices(
            [(Coverage(CLOUD_OFFERS, (("provider", provider),)), _rows(CLOUD_OFFERS, records))]
        )
    if format == "litellm":
        keys = check_litellm(text)
        known = set(session.scalars(select(Model.id)))
        index = {
            key: model for key, model in hosted_index(read_models(DATA_DIR, keys)).items() if model in known
        }
        prices = flag_token_outliers(read_litellm_prices(text, source, index))
        return IncomingPrices([(Coverage(API_PRICES), _rows(API_PRICES, prices))])
    canonical = read_canonical_prices(text, lambda name: repo.resolve_accelerator_id(session, name))
    parts = []
    if canonical.hardware:
        parts.append((Coverage(HARDWARE_PRICES, complete=False), _rows(HARDWARE_PRICES, canonical.hardware)))
    if canonical.energy:
        parts.append((Coverage(ENERGY_PRICES, complete=False), _rows(ENERGY_PRICES, canonical.energy)))
    if canonical.commitments:
        parts.append(
            (Coverage(COMMITMENT_TERMS, complete=False), _rows(COMMITMENT_TERMS, canonical.commitments))
        )
    return IncomingPrices(parts)


def _other_providers(session: Session, provider: str) -> list[CloudPricePoint]:
    """The current on-demand prices per accelerator-hour of every other provider's trusted offers."""
    query = select(
        CloudOffer.provider,
        CloudOffer.accelerator_id,
        CloudOffer.on_demand_usd_per_hour,
        CloudOffer.accelerator_count,
    ).where(
        CloudOffer.effective_to.is_(None),
        CloudOffer.provider != provider,
        CloudOffer.accelerator_id.is_not(None),
        CloudOffer.on_demand_usd_per_hour.is_not(None),
        CloudOffer.suspect_reason.is_(None),
        CloudOffer.accelerator_only.is_(False),
        CloudOffer.accelerator_count > 0,
    )
    return [
        (p, str(a), float(price) / float(count))
        for p, a, price, count in session.execute(query)
        if price is not None  # the query excludes unknown prices; this tells the type checker
    ]


def _rows(table: PriceTable, records: Sequence[Any]) -> dict[Key, Row]:
    rows: dict[Key, Row] = {}
    for record in records:
        row = table.row_from_record(record, where=_where(table, record))
        rows[table.key_of(row)] = row
    return rows


def _where(table: PriceTable, record: Any) -> str:
    return table.label(tuple(getattr(record, name) for name in table.key))


def _reject_unknown_accelerators(
    lines: Sequence[tuple[int, dict[str, str]]], offers: Sequence[Any], known: set[str]
) -> None:
    """Every offer must name an accelerator the catalog has (an id or an alias of one): an offer of
    an unknown part could be priced but never compared, so the file is rejected, naming the first
    line of each unknown name."""
    unknown = {offer.accelerator_name for offer in offers if offer.accelerator_id not in known}
    if not unknown:
        return
    problems = ProblemList()
    for line, row in lines:
        name = row["AcceleratorName"]
        if name in unknown:
            unknown.discard(name)
            problems.add(
                line,
                "AcceleratorName",
                f"unknown accelerator {name!r}: not an id or alias in the catalog (GET /v1/accelerators)",
            )
    problems.raise_if_any()


@lru_cache(maxsize=1)
def _resolver() -> AliasResolver:
    return load_resolver(DATA_DIR)
