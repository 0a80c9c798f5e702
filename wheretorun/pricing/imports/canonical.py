"""Our canonical price format, for prices no public catalog publishes: hardware purchase prices
and electricity prices. CSV or JSON (a file whose first character is `{` or `[` is JSON).

CSV, columns by header name (others are ignored):

    kind,key,usd_per_unit,usd_per_kwh,source
    hardware,H100-SXM,30000,,"Vendor quote 2026-11"
    energy,US/Pennsylvania,,0.1199,"EIA Electric Power Monthly Table 5.6.A, April 2025"

JSON, the same fields per row (numbers as JSON numbers or strings):

    {"prices": [{"kind": "hardware", "key": "h100-sxm", "usd_per_unit": 30000, "source": "..."}]}

* `kind`: `hardware` (price of one accelerator; `key` is its id or any alias, `usd_per_unit` the
  price) or `energy` (`key` is a region name, `usd_per_kwh` the price). The other price column
  stays empty.
* `source`: where the price comes from; required.

A file adds or changes the prices it lists and leaves every other price as it is: a quote for one
accelerator is a one-row file. (Unlike the public catalogs, these are not complete price lists, so
nothing is ever removed by one.)
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from wheretorun.pricing.imports.checks import ProblemList, parse_amount, read_csv_grid, reject
from wheretorun.pricing.records import EnergyPriceRecord, HardwarePriceRecord

__all__ = [
    "CANONICAL_COLUMNS",
    "CanonicalPrices",
    "calibration_energy_csv",
    "read_canonical_prices",
]

CANONICAL_COLUMNS = ("kind", "key", "usd_per_unit", "usd_per_kwh", "source")
KINDS = {"hardware": "usd_per_unit", "energy": "usd_per_kwh"}  # kind -> its price column
# Exclusive upper bounds of the database columns.
_BOUNDS = {"usd_per_unit": Decimal(10) ** 12, "usd_per_kwh": Decimal(10) ** 6}


@dataclass(frozen=True)
class CanonicalPrices:
    hardware: list[HardwarePriceRecord]
    energy: list[EnergyPriceRecord]

    @property
    def kinds(self) -> set[str]:
        """The kinds of price the file lists."""
        return {kind for kind, rows in (("hardware", self.hardware), ("energy", self.energy)) if rows}


def read_canonical_prices(text: str, resolve_accelerator: Callable[[str], str | None]) -> CanonicalPrices:
    """Records of a canonical price file; every row is checked, the file is rejected whole if any is bad.

    `resolve_accelerator` maps an accelerator id or alias to the catalog id (None when unknown).
    """
    rows = _json_rows(text) if text.lstrip()[:1] in ("{", "[") else _csv_rows(text)
    problems = ProblemList()
    hardware: list[HardwarePriceRecord] = []
    energy: list[EnergyPriceRecord] = []
    first_seen: dict[tuple[str, str], int | str] = {}
    for where, row in rows:
        parsed = _parse_row(problems, where, row, resolve_accelerator)
        if parsed is None:
            continue
        kind, key, price, source = parsed
        if (kind, key) in first_seen:
            problems.add(where, "key", f"{kind} {key!r} appears twice (first at row {first_seen[kind, key]})")
            continue
        first_seen[kind, key] = where
        if kind == "hardware":
            hardware.append(HardwarePriceRecord(accelerator_id=key, usd_per_unit=price, source=source))
        else:
            energy.append(EnergyPriceRecord(region=key, usd_per_kwh=price, source=source))
    if not first_seen and not problems.count:
        problems.add(None, None, "no price rows: nothing to import")
    problems.raise_if_any()
    return CanonicalPrices(hardware=hardware, energy=energy)


def _parse_row(
    problems: ProblemList,
    where: int | str,
    row: Mapping[str, str],
    resolve_accelerator: Callable[[str], str | None],
) -> tuple[str, str, Decimal, str] | None:
    before = problems.count
    kind = row.get("kind", "")
    if kind not in KINDS:
        problems.add(where, "kind", f"must be one of {sorted(KINDS)}, not {kind!r}")
        return None
    key = row.get("key", "")
    if not key:
        problems.add(where, "key", "empty: name the accelerator or the region")
    elif kind == "hardware":
        resolved = resolve_accelerator(key)
        if resolved is None:
            problems.add(where, "key", f"unknown accelerator {key!r} (GET /v1/accelerators lists them)")
        key = resolved or key
    column = KINDS[kind]
    other = next(name for name in KINDS.values() if name != column)
    price = parse_amount(row.get(column, "")) if row.get(column) else f"empty: a {kind} row needs {column}"
    if isinstance(price, str):
        problems.add(where, column, price)
    elif price < 0:
        problems.add(where, column, f"negative price {price}")
    elif price >= _BOUNDS[column]:
        problems.add(where, column, f"{price} is implausibly large")
    if row.get(other):
        problems.add(where, other, f"must be empty in a {kind} row")
    source = row.get("source", "")
    if not source:
        problems.add(where, "source", "empty: every price needs its source")
    if problems.count > before or isinstance(price, str):
        return None
    return kind, key, price, source


def _csv_rows(text: str) -> list[tuple[int | str, dict[str, str]]]:
    _, rows = read_csv_grid(text, CANONICAL_COLUMNS)
    return [(line, row) for line, row in rows]


def _json_rows(text: str) -> list[tuple[int | str, dict[str, str]]]:
    """JSON rows as text cells, so CSV and JSON are checked by the same code. `row` is 1-based."""
    try:
        document = json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as error:
        raise reject(
            f"invalid JSON: {error.msg}", row=error.lineno, column=f"character {error.colno}"
        ) from error
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
