"""What an import would change, and whether it looks safe to apply. Pure functions: no database.

`diff_table` compares the current rows an import covers with the rows of the file:

* added: in the file, not in the catalog;
* changed: in both, some compared column differs (prices are listed old -> new with the % change);
* removed: in the catalog, not in the file (only within what the file covers: a SkyPilot AWS file
  says nothing about GCP);
* unchanged: identical.

`hold_reasons` lists the changes a person should look at before they are applied:

* `price_drop`: a known price falls by more than 90%;
* `zero_price`: a known primary price (on-demand, input/output tokens, purchase, energy) would
  become 0 or unknown, or a new row has a price of 0;
* `unpriced`: an accelerator, model or region that has a usable price would be left with none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from wheretorun.pricing.imports.tables import Key, PriceTable, Row

__all__ = [
    "EXAMPLES",
    "Current",
    "HoldReason",
    "TableDiff",
    "diff_table",
    "hold_reasons",
    "summarise",
]

EXAMPLES = 20  # rows listed per kind of change in a diff; the counts are always complete
DROP_LIMIT = Decimal("0.1")  # a new price below 10% of the old one is a >90% fall


@dataclass(frozen=True, slots=True)
class Current:
    """A current catalog row: its id and compared values."""

    id: int
    values: Row


@dataclass(frozen=True)
class TableDiff:
    table: PriceTable
    added: list[Row]
    changed: list[tuple[Current, Row]]
    removed: list[Current]
    unchanged: int
    losing: frozenset[str] = field(default=frozenset())  # subjects priced before, not after (in scope)

    @property
    def has_changes(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    @property
    def writes(self) -> int:
        """Rows to end plus rows to insert."""
        return 2 * len(self.changed) + len(self.removed) + len(self.added)


@dataclass(frozen=True, slots=True)
class HoldReason:
    kind: str  # price_drop | zero_price | unpriced
    table: str
    item: str
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "table": self.table, "item": self.item, "detail": self.detail}


def diff_table(table: PriceTable, current: Mapping[Key, Current], incoming: Mapping[Key, Row]) -> TableDiff:
    """Compare the rows in scope with the file's rows, both keyed by the table's natural key."""
    added = [row for key, row in incoming.items() if key not in current]
    removed = [row for key, row in current.items() if key not in incoming]
    changed: list[tuple[Current, Row]] = []
    unchanged = 0
    for key, row in incoming.items():
        old = current.get(key)
        if old is None:
            continue
        if _differs(table, old.values, row):
            changed.append((old, row))
        else:
            unchanged += 1
    before = _priced_subjects(table, (row.values for row in current.values()))
    after = _priced_subjects(table, incoming.values())
    return TableDiff(table, added, changed, removed, unchanged, frozenset(before - after))


def _differs(table: PriceTable, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    return any(old.get(name) != new.get(name) for name in table.compared)


def _priced_subjects(table: PriceTable, rows: Iterable[Mapping[str, Any]]) -> set[str]:
    return {row[table.subject] for row in rows if row.get(table.subject) is not None and table.is_priced(row)}


# --- guards --------------------------------------------------------------------------------------


def hold_reasons(diffs: Sequence[TableDiff], priced_elsewhere: Mapping[str, set[str]]) -> list[HoldReason]:
    """Why these changes should be reviewed before they apply (empty: safe to apply).

    `priced_elsewhere[table]` holds the subjects losing their price in scope that still have a
    usable price outside it (another provider's offers), so they do not count as unpriced.
    """
    reasons: list[HoldReason] = []
    for diff in diffs:
        table = diff.table
        for old, new in diff.changed:
            reasons += _price_reasons(table, old.values, new)
        for row in diff.added:
            for name in table.primary:
                if row.get(name) == 0:
                    reasons.append(_reason("zero_price", table, row, f"{name} is 0 in the file"))
        elsewhere = priced_elsewhere.get(table.name, set())
        for subject in sorted(diff.losing - elsewhere):
            reasons.append(
                HoldReason(
                    "unpriced",
                    table.name,
                    f"{table.subject_label} {subject}",
                    f"would be left without any usable {table.priced_as}",
                )
            )
    return reasons


def _price_reasons(table: PriceTable, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[HoldReason]:
    reasons = []
    for name in table.prices:
        before, after = old.get(name), new.get(name)
        if before is None or before <= 0:
            continue
        if name in table.primary and (after is None or after == 0):
            shown = "unknown (the file gives no price)" if after is None else "0"
            reasons.append(_reason("zero_price", table, new, f"{name} would fall from {before} to {shown}"))
        elif (
            after is not None
            and 0 < _per_accelerator(new, after) < _per_accelerator(old, before) * DROP_LIMIT
        ):
            reasons.append(
                _reason(
                    "price_drop", table, new, f"{name} would fall {_pct(before, after)}%: {before} -> {after}"
                )
            )
        elif after == 0:
            reasons.append(_reason("zero_price", table, new, f"{name} would fall from {before} to 0"))
    return reasons


def _per_accelerator(row: Mapping[str, Any], price: Any) -> Any:
    """A purchase price per accelerator (a system price divided by its accelerators), so that a
    chip price replacing a system price is compared like with like; other prices as they are."""
    count = row.get("accelerators_per_unit")
    return price / count if count else price


def _reason(kind: str, table: PriceTable, row: Mapping[str, Any], detail: str) -> HoldReason:
    return HoldReason(kind, table.name, table.label(table.key_of(row)), detail)


# --- the summary shown to people and stored with the import -------------------------------------


def summarise(diffs: Sequence[TableDiff], examples: int = EXAMPLES) -> dict[str, Any]:
    """Counts (complete) and the first `examples` rows of each kind of change (JSON-ready).

    Changed rows are listed largest price move first.
    """
    counts = {
        "added": sum(len(d.added) for d in diffs),
        "removed": sum(len(d.removed) for d in diffs),
        "changed": sum(len(d.changed) for d in diffs),
        "unchanged": sum(d.unchanged for d in diffs),
    }
    changed = sorted(
        (_changed_example(d.table, old.values, new) for d in diffs for old, new in d.changed),
        key=lambda example: -max((abs(p["change_pct"] or 0) for p in example["prices"]), default=0),
    )
    return {
        **counts,
        "by_table": {
            d.table.name: {
                "added": len(d.added),
                "removed": len(d.removed),
                "changed": len(d.changed),
                "unchanged": d.unchanged,
            }
            for d in diffs
        },
        "examples": {
            "added": [_row_example(d.table, row) for d in diffs for row in d.added][:examples],
            "removed": [_row_example(d.table, row.values) for d in diffs for row in d.removed][:examples],
            "changed": changed[:examples],
        },
    }


def _row_example(table: PriceTable, row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "table": table.name,
        "item": table.label(table.key_of(row)),
        "prices": {name: _money(row.get(name)) for name in table.prices},
    }


def _changed_example(table: PriceTable, old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    prices = [
        {
            "field": name,
            "old": _money(old.get(name)),
            "new": _money(new.get(name)),
            "change_pct": _pct(old.get(name), new.get(name)),
        }
        for name in table.prices
        if old.get(name) != new.get(name)
    ]
    others = [name for name in table.compared if name not in table.prices and old.get(name) != new.get(name)]
    return {"table": table.name, "item": table.label(table.key_of(new)), "prices": prices, "fields": others}


def _pct(old: Decimal | None, new: Decimal | None) -> float | None:
    """The change in percent, to 0.01; None when either side is unknown or the old price is 0."""
    if old is None or new is None or old == 0:
        return None
    return float(round((new - old) / old * 100, 2))


def _money(value: Decimal | None) -> str | None:
    if value is None:
        return None
    normal = value.normalize()
    return format(normal.quantize(Decimal(1)) if normal == normal.to_integral_value() else normal, "f")
