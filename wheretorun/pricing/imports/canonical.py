"""Our canonical price format, for prices no public catalog publishes: hardware purchase prices,
electricity prices and commitment terms. CSV or JSON (a file whose first character is `{` or `[`
is JSON).

CSV, columns by header name (others are ignored; the last group is optional):

    kind,key,usd_per_unit,usd_per_kwh,source[,basis,accelerators_per_unit,accelerator,instance_family,
                                              term_months,discount_fraction,usd_per_accelerator_hour]
    hardware,H100-SXM,268800,,"Epoch AI ...",system,8
    hardware,L40S,10000,,"Vendor quote 2026-11",chip,1
    energy,US/Pennsylvania,,0.1199,"EIA Electric Power Monthly Table 5.6.A, April 2025"
    commitment,aws,,,"AWS p4d pricing page ...",,,A100-40GB,p4d,36,0.646,

JSON, the same fields per row (numbers as JSON numbers or strings):

    {"prices": [{"kind": "hardware", "key": "h100-sxm", "usd_per_unit": 30000, "source": "..."}]}

* `kind`: `hardware` (`key` is an accelerator id or alias, `usd_per_unit` the price; `basis` is
  `chip` (default: the card or module alone) or `system` (a server with `accelerators_per_unit`
  accelerators, chassis and host included)), `energy` (`key` is a region name, `usd_per_kwh` the
  price) or `commitment` (`key` is a cloud provider; optional `accelerator` and `instance_family`
  (an instance-type prefix) narrow it; `term_months`; exactly one of `discount_fraction` (0.64 =
  64% off on-demand) or `usd_per_accelerator_hour`). Columns of the other kinds stay empty.
* `source`: where the price comes from; required.

A file adds or changes the prices it lists and leaves every other price as it is: a quote for one
accelerator is a one-row file. (Unlike the public catalogs, these are not complete price lists, so
nothing is ever removed by one.)
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from wheretorun.pricing.imports.checks import (
    MAX_PRICE_ROWS,
    ProblemList,
    load_json,
    parse_amount,
    read_csv_grid,
    reject,
    too_many_rows,
)
from wheretorun.pricing.records import CommitmentTermRecord, EnergyPriceRecord, HardwarePriceRecord

__all__ = [
    "CANONICAL_COLUMNS",
    "OPTIONAL_COLUMNS",
    "CanonicalPrices",
    "calibration_energy_csv",
    "read_canonical_prices",
]

CANONICAL_COLUMNS = ("kind", "key", "usd_per_unit", "usd_per_kwh", "source")
OPTIONAL_COLUMNS = (
    "basis",
    "accelerators_per_unit",
    "accelerator",
    "instance_family",
    "term_months",
    "discount_fraction",
    "usd_per_accelerator_hour",
)
KINDS = ("hardware", "energy", "commitment")
# The columns each kind may fill; every other price column must stay empty in its rows.
_COLUMNS_OF = {
    "hardware": {"usd_per_unit", "basis", "accelerators_per_unit"},
    "energy": {"usd_per_kwh"},
    "commitment": {
        "accelerator",
        "instance_family",
        "term_months",
        "discount_fraction",
        "usd_per_accelerator_hour",
    },
}
_KIND_COLUMNS = set().union(*_COLUMNS_OF.values())
# Exclusive upper bounds of the database columns.
_BOUNDS = {
    "usd_per_unit": Decimal(10) ** 12,
    "usd_per_kwh": Decimal(10) ** 6,
    "usd_per_accelerator_hour": Decimal(10) ** 8,
}
_MAX_ACCELERATORS_PER_UNIT = 1024
_MAX_TERM_MONTHS = 120
_PROVIDER = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


@dataclass(frozen=True)
class CanonicalPrices:
    hardware: list[HardwarePriceRecord]
    energy: list[EnergyPriceRecord]
    commitments: list[CommitmentTermRecord]

    @property
    def kinds(self) -> set[str]:
        """The kinds of price the file lists."""
        listed = (("hardware", self.hardware), ("energy", self.energy), ("commitment", self.commitments))
        return {kind for kind, rows in listed if rows}


Record = HardwarePriceRecord | EnergyPriceRecord | CommitmentTermRecord


def read_canonical_prices(text: str, resolve_accelerator: Callable[[str], str | None]) -> CanonicalPrices:
    """Records of a canonical price file; every row is checked, the file is rejected whole if any is bad.

    `resolve_accelerator` maps an accelerator id or alias to the catalog id (None when unknown).
    """
    rows = _json_rows(text) if text.lstrip()[:1] in ("{", "[") else _csv_rows(text)
    if len(rows) > MAX_PRICE_ROWS:
        raise reject(too_many_rows(len(rows), "price rows"))
    problems = ProblemList()
    records: list[Record] = []
    first_seen: dict[tuple[str, ...], int | str] = {}
    for where, row in rows:
        record = _parse_row(problems, where, row, resolve_accelerator)
        if record is None:
            continue
        identity = _identity(record)
        if identity in first_seen:
            label = " ".join(part for part in identity[1:] if part)
            problems.add(
                where, "key", f"{identity[0]} {label!r} appears twice (first at row {first_seen[identity]})"
            )
            continue
        first_seen[identity] = where
        records.append(record)
    if not first_seen and not problems.count:
        problems.add(None, None, "no price rows: nothing to import")
    problems.raise_if_any()
    return CanonicalPrices(
        hardware=[r for r in records if isinstance(r, HardwarePriceRecord)],
        energy=[r for r in records if isinstance(r, EnergyPriceRecord)],
        commitments=[r for r in records if isinstance(r, CommitmentTermRecord)],
    )


def _identity(record: Record) -> tuple[str, ...]:
    if isinstance(record, HardwarePriceRecord):
        return ("hardware", record.accelerator_id)
    if isinstance(record, EnergyPriceRecord):
        return ("energy", record.region)
    return (
        "commitment",
        record.provider,
        record.accelerator_id,
        record.instance_family,
        f"{record.term_months} months",
    )


def _parse_row(
    problems: ProblemList,
    where: int | str,
    row: Mapping[str, str],
    resolve_accelerator: Callable[[str], str | None],
) -> Record | None:
    before = problems.count
    kind = row.get("kind", "")
    if kind not in KINDS:
        problems.add(where, "kind", f"must be one of {list(KINDS)}, not {kind!r}")
        return None
    for column in sorted(_KIND_COLUMNS - _COLUMNS_OF[kind]):
        if row.get(column):
            problems.add(where, column, f"must be empty in a {kind} row")
    source = row.get("source", "")
    if not source:
        problems.add(where, "source", "empty: every price needs its source")
    key = row.get("key", "")
    if not key:
        problems.add(where, "key", "empty: name the accelerator, the region or the provider")
        return None
    if kind == "hardware":
        record: Record | None = _hardware(problems, where, row, key, source, resolve_accelerator)
    elif kind == "energy":
        price = _price(problems, where, row, "usd_per_kwh", required=True)
        record = None if price is None else EnergyPriceRecord(region=key, usd_per_kwh=price, source=source)
    else:
        record = _commitment(problems, where, row, key, source, resolve_accelerator)
    return None if problems.count > before else record


def _price(
    problems: ProblemList, where: int | str, row: Mapping[str, str], column: str, required: bool
) -> Decimal | None:
    cell = row.get(column, "")
    if not cell:
        if required:
            problems.add(where, column, f"empty: a {row.get('kind')} row needs {column}")
        return None
    price = parse_amount(cell)
    if isinstance(price, str):
        problems.add(where, column, price)
        return None
    if price < 0:
        problems.add(where, column, f"negative price {price}")
        return None
    if price >= _BOUNDS[column]:
        problems.add(where, column, f"{price} is implausibly large")
        return None
    return price


def _whole_number(
    problems: ProblemList, where: int | str, row: Mapping[str, str], column: str, low: int, high: int
) -> int | None:
    cell = row.get(column, "")
    value = parse_amount(cell) if cell else f"empty: needs a whole number {low}-{high}"
    if isinstance(value, str) or value != value.to_integral_value() or not low <= value <= high:
        problems.add(
            where, column, value if isinstance(value, str) else f"must be a whole number {low}-{high}"
        )
        return None
    return int(value)


def _accelerator(
    problems: ProblemList, where: int | str, column: str, name: str, resolve: Callable[[str], str | None]
) -> str:
    resolved = resolve(name)
    if resolved is None:
        problems.add(where, column, f"unknown accelerator {name!r} (GET /v1/accelerators lists them)")
        return name
    return resolved


def _hardware(
    problems: ProblemList,
    where: int | str,
    row: Mapping[str, str],
    key: str,
    source: str,
    resolve: Callable[[str], str | None],
) -> HardwarePriceRecord | None:
    accelerator_id = _accelerator(problems, where, "key", key, resolve)
    price = _price(problems, where, row, "usd_per_unit", required=True)
    basis = row.get("basis") or "chip"
    if basis not in ("chip", "system"):
        problems.add(where, "basis", f"must be chip or system, not {basis!r}")
        return None
    count = 1
    if basis == "system" or row.get("accelerators_per_unit"):
        found = _whole_number(problems, where, row, "accelerators_per_unit", 1, _MAX_ACCELERATORS_PER_UNIT)
        if found is None:
            return None
        count = found
    if basis == "chip" and count != 1:
        problems.add(where, "accelerators_per_unit", "a chip price is for one accelerator: use basis system")
    if price is None:
        return None
    return HardwarePriceRecord(
        accelerator_id=accelerator_id,
        usd_per_unit=price,
        source=source,
        basis=basis,
        accelerators_per_unit=count,
    )


def _commitment(
    problems: ProblemList,
    where: int | str,
    row: Mapping[str, str],
    key: str,
    source: str,
    resolve: Callable[[str], str | None],
) -> CommitmentTermRecord | None:
    provider = key.strip().lower()
    if not _PROVIDER.fullmatch(provider):
        problems.add(where, "key", f"a commitment row's key is the provider (a-z, 0-9, -, _), not {key!r}")
    accelerator = row.get("accelerator", "")
    accelerator_id = _accelerator(problems, where, "accelerator", accelerator, resolve) if accelerator else ""
    months = _whole_number(problems, where, row, "term_months", 1, _MAX_TERM_MONTHS)
    discount = None
    if row.get("discount_fraction"):
        value = parse_amount(row["discount_fraction"])
        if isinstance(value, str) or not 0 < value < 1:
            problems.add(
                where,
                "discount_fraction",
                value if isinstance(value, str) else "must be in (0, 1): 0.4 = 40% off",
            )
        else:
            discount = value
    price = _price(problems, where, row, "usd_per_accelerator_hour", required=False)
    if price is not None and price == 0:
        problems.add(where, "usd_per_accelerator_hour", "a committed price of 0 is not a price")
    if bool(row.get("discount_fraction")) == bool(row.get("usd_per_accelerator_hour")):
        problems.add(
            where, "discount_fraction", "give exactly one of discount_fraction or usd_per_accelerator_hour"
        )
    if months is None:
        return None
    return CommitmentTermRecord(
        provider=provider,
        accelerator_id=accelerator_id,
        instance_family=row.get("instance_family", ""),
        term_months=months,
        discount_fraction=discount,
        usd_per_accelerator_hour=price,
        source=source,
    )


def _csv_rows(text: str) -> list[tuple[int | str, dict[str, str]]]:
    _, rows = read_csv_grid(text, CANONICAL_COLUMNS)
    return [(line, row) for line, row in rows]


def _json_rows(text: str) -> list[tuple[int | str, dict[str, str]]]:
    """JSON rows as text cells, so CSV and JSON are checked by the same code. `row` is 1-based."""
    document = load_json(text)
    items = document.get("prices") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise reject('expected {"prices": [...]} or a list of price rows')
    rows: list[tuple[int | str, dict[str, str]]] = []
    problems = ProblemList()
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            problems.add(number, None, "a price row must be a JSON object")
            continue
        cells = {}
        for name, value in item.items():
            if isinstance(value, bool) or isinstance(value, dict | list):
                problems.add(number, str(name), f"must be a string or a number, not {value!r}")
            else:
                cells[str(name)] = "" if value is None else str(value).strip()
        rows.append((number, cells))
    problems.raise_if_any()
    return rows


# --- the seed: electricity prices from the calibration set ---------------------------------------

_CENTS_PER_KWH = "US cents/kWh"
_OLDEST_YEAR = 2023  # older figures (the 2011 U.S. total) are history, not a price to plan with
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}


def calibration_energy_csv(path: Path) -> str:
    """Canonical CSV of the electricity prices in `calibration/energy_and_pue.csv`.

    One row per region: its most recent period, in USD per kWh (the table gives US cents). Regions
    whose newest figure is older than 2023 are left out. The region is `US/<scope>`.
    """
    newest: dict[str, tuple[tuple[int, int], dict[str, str]]] = {}
    for row in csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))):
        if row["metric"] != "average commercial electricity price" or row["unit"] != _CENTS_PER_KWH:
            continue
        period = _period_end(row["period"])
        if period[0] < _OLDEST_YEAR:
            continue
        if row["scope"] not in newest or period > newest[row["scope"]][0]:
            newest[row["scope"]] = (period, row)
    return _to_csv(
        {
            "kind": "energy",
            "key": f"US/{scope}",
            "usd_per_kwh": str(Decimal(row["value"]) / 100),
            "source": f"{row['source']} ({row['period']}, {row['figure_type']})",
        }
        for scope, (_, row) in sorted(newest.items())
    )


def _period_end(period: str) -> tuple[int, int]:
    """(year, last month) of `Jan-Jul 2024 YTD`, `April 2025`, `2011 annual`."""
    year = int(re.findall(r"\b(\d{4})\b", period)[-1])
    months = [_MONTHS[word] for word in re.findall(r"[a-z]+", period.lower()) if word in _MONTHS]
    return year, months[-1] if months else 12


def _to_csv(rows: Iterable[Mapping[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CANONICAL_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
