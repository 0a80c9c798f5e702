"""A price file -> the rows it holds for each price table, and the scope of rows it replaces.

The strict checks run first (`checks.py`), then the same readers the seed uses
(`wheretorun.pricing.sources`), so an imported file means exactly what a seeded one does. Both need
no database (`read_price_file`); what needs the catalog (known accelerators and models, accelerator
aliases of canonical rows) comes after, under the import lock (`incoming_prices`).

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

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
from wheretorun.pricing.models import Accelerator, AcceleratorAlias, CloudOffer, Model
from wheretorun.pricing.plausibility import CloudPricePoint, flag_cloud_outliers, flag_token_outliers
from wheretorun.pricing.records import ApiPriceRecord, CloudOfferRecord
from wheretorun.pricing.sources import (
    DATA_DIR,
    AliasResolver,
    hosted_index,
    load_resolver,
    normalise_alias,
    read_litellm_prices,
    read_models,
    read_skypilot_offers,
)

__all__ = [
    "FORMATS",
    "Coverage",
    "Format",
    "IncomingPrices",
    "ReadFile",
    "incoming_prices",
    "read_price_file",
]

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


@dataclass(frozen=True)
class ReadFile:
    """A price file checked and read without the catalog (the slow part of an import, done before
    it takes its lock). `incoming_prices` then checks it against the catalog."""

    format: Format
    provider: str | None
    text: str
    offers: list[CloudOfferRecord] = field(default_factory=list)  # skypilot
    lines: list[tuple[int, dict[str, str]]] = field(default_factory=list)  # skypilot: its CSV rows
    api_prices: list[ApiPriceRecord] = field(default_factory=list)  # litellm


def read_price_file(format: Format, provider: str | None, text: str, source: str) -> ReadFile:
    """Check and read `text`, without the database. Raises `MalformedFile`.

    `source` is the label the SkyPilot and LiteLLM rows carry (the URL or the uploaded file);
    canonical rows carry their own `source` column (and are read by `incoming_prices`, which
    resolves their accelerator names in the catalog).
    """
    if format == "skypilot":
        assert provider is not None
        lines = check_skypilot(text, provider)
        offers = read_skypilot_offers(text, provider, _resolver(), source)
        return ReadFile(format, provider, text, offers=offers, lines=lines)
    if format == "litellm":
        keys = check_litellm(text)
        prices = read_litellm_prices(text, source, hosted_index(read_models(DATA_DIR, keys)))
        return ReadFile(format, provider, text, api_prices=prices)
    return ReadFile(format, provider, text)


def incoming_prices(session: Session, read: ReadFile) -> IncomingPrices:
    """The rows of each price table `read` holds, checked against the catalog. Raises `MalformedFile`."""
    if read.format == "skypilot":
        known = set(session.scalars(select(Accelerator.id)))
        _reject_unknown_accelerators(read.lines, read.offers, known)
        assert read.provider is not None
        records = flag_cloud_outliers(read.offers, _other_providers(session, read.provider))
        coverage = Coverage(CLOUD_OFFERS, (("provider", read.provider),))
        return IncomingPrices([(coverage, _rows(CLOUD_OFFERS, records))])
    if read.format == "litellm":
        known = set(session.scalars(select(Model.id)))
        prices = flag_token_outliers(
            [
                price if price.catalog_model_id in known else replace(price, catalog_model_id=None)
                for price in read.api_prices
            ]
        )
        return IncomingPrices([(Coverage(API_PRICES), _rows(API_PRICES, prices))])
    canonical = read_canonical_prices(read.text, _accelerator_names(session))
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


def _accelerator_names(session: Session) -> Callable[[str], str | None]:
    """Accelerator id or alias -> catalog id, from two queries (not one per row)."""
    ids = set(session.scalars(select(Accelerator.id)))
    query = select(AcceleratorAlias.key, AcceleratorAlias.accelerator_id)
    aliases: dict[str, str] = dict(session.execute(query).all())

    def resolve(name: str) -> str | None:
        return name if name in ids else aliases.get(normalise_alias(name))

    return resolve


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
