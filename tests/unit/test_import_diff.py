"""The diff of an import and the guards that hold it for review: pure functions over plain rows."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from wheretorun.pricing.imports.diff import Current, diff_table, hold_reasons, summarise
from wheretorun.pricing.imports.tables import API_PRICES, CLOUD_OFFERS, ENERGY_PRICES, Key, PriceTable, Row


def energy(region: str, price: str | None, source: str = "EIA") -> Row:
    return {"region": region, "usd_per_kwh": None if price is None else Decimal(price), "source": source}


def keyed(table: PriceTable, rows: list[Row]) -> dict[Key, Row]:
    return {table.key_of(row): row for row in rows}


def current(table: PriceTable, rows: list[Row]) -> dict[Key, Current]:
    return {table.key_of(row): Current(number, row) for number, row in enumerate(rows, start=1)}


def test_rows_are_classified_added_changed_removed_unchanged() -> None:
    before = current(ENERGY_PRICES, [energy("ohio", "0.11"), energy("iowa", "0.10"), energy("texas", "0.09")])
    after = keyed(ENERGY_PRICES, [energy("ohio", "0.1100"), energy("iowa", "0.12"), energy("maine", "0.20")])
    diff = diff_table(ENERGY_PRICES, before, after)
    assert [row["region"] for row in diff.added] == ["maine"]
    assert [(old.values["region"], new["usd_per_kwh"]) for old, new in diff.changed] == [
        ("iowa", Decimal("0.12"))
    ]
    assert [row.values["region"] for row in diff.removed] == ["texas"]
    assert diff.unchanged == 1  # 0.1100 == 0.11: the same amount
    assert diff.writes == 1 + 2 + 1


def test_provenance_alone_is_not_a_change() -> None:
    before = current(ENERGY_PRICES, [energy("ohio", "0.11", source="seed")])
    diff = diff_table(ENERGY_PRICES, before, keyed(ENERGY_PRICES, [energy("ohio", "0.11", source="a URL")]))
    assert not diff.has_changes
    assert diff.unchanged == 1


def test_a_fall_of_more_than_90_percent_is_held_exactly_90_is_not() -> None:
    before = current(ENERGY_PRICES, [energy("ohio", "1.00"), energy("iowa", "1.00")])
    after = keyed(ENERGY_PRICES, [energy("ohio", "0.0999"), energy("iowa", "0.10")])
    reasons = hold_reasons([diff_table(ENERGY_PRICES, before, after)], {})
    assert [(r.kind, r.item) for r in reasons] == [("price_drop", "ohio")]
    assert "-90.01%" in reasons[0].detail


def test_a_known_price_becoming_zero_or_unknown_is_held() -> None:
    before = current(ENERGY_PRICES, [energy("ohio", "0.11"), energy("iowa", "0.10")])
    after = keyed(ENERGY_PRICES, [energy("ohio", "0"), energy("iowa", None)])
    reasons = hold_reasons([diff_table(ENERGY_PRICES, before, after)], {})
    assert {(r.kind, r.item) for r in reasons} == {
        ("zero_price", "ohio"),
        ("zero_price", "iowa"),
        ("unpriced", "region iowa"),  # no price left at all (0 is a price, already flagged above)
    }


def test_a_new_row_priced_at_zero_is_held() -> None:
    reasons = hold_reasons([diff_table(ENERGY_PRICES, {}, keyed(ENERGY_PRICES, [energy("ohio", "0")]))], {})
    assert [(r.kind, r.item) for r in reasons] == [("zero_price", "ohio")]


def offer(instance: str, accelerator: str | None, on_demand: str | None, suspect: str | None = None) -> Row:
    return {
        "provider": "aws",
        "instance_type": instance,
        "region": "us-east-1",
        "accelerator_name": "X",
        "accelerator_id": accelerator,
        "accelerator_count": Decimal(8),
        "vcpus": None,
        "memory_gib": None,
        "on_demand_usd_per_hour": None if on_demand is None else Decimal(on_demand),
        "spot_usd_per_hour": None,
        "zone_count": 1,
        "accelerator_only": False,
        "suspect_reason": suspect,
        "note": None,
        "source": "test",
    }


def test_an_accelerator_left_without_a_usable_offer_is_held_unless_priced_elsewhere() -> None:
    before = current(
        CLOUD_OFFERS, [offer("a", "h100", "30"), offer("b", "a100", "20"), offer("c", "l4", "1")]
    )
    after = keyed(CLOUD_OFFERS, [offer("b", "a100", "20", suspect="implausible"), offer("c", "l4", "1")])
    diff = diff_table(CLOUD_OFFERS, before, after)
    assert diff.losing == {"h100", "a100"}
    reasons = hold_reasons([diff], {"cloud_offers": {"a100"}})  # another provider still offers A100s
    assert [(r.kind, r.item) for r in reasons] == [("unpriced", "accelerator h100")]


def api_price(model_id: str, catalog_model: str | None, output: str | None) -> Row:
    row: dict[str, Any] = dict.fromkeys(API_PRICES.compared)
    row.update(
        model_id=model_id,
        provider="p",
        catalog_model_id=catalog_model,
        input_usd_per_million_tokens=Decimal(1),
        output_usd_per_million_tokens=None if output is None else Decimal(output),
        source="test",
    )
    return row


def test_a_model_keeps_its_price_through_any_of_its_hosted_ids() -> None:
    before = current(API_PRICES, [api_price("x/llama", "llama", "2"), api_price("y/llama", "llama", "3")])
    after = keyed(API_PRICES, [api_price("y/llama", "llama", "3")])
    diff = diff_table(API_PRICES, before, after)
    assert len(diff.removed) == 1
    assert hold_reasons([diff], {}) == []
    gone = diff_table(API_PRICES, before, {})
    assert [r.item for r in hold_reasons([gone], {})] == ["model llama"]


def test_the_summary_counts_everything_and_lists_the_biggest_moves_first() -> None:
    regions = [f"r{n}" for n in range(30)]
    before = current(ENERGY_PRICES, [energy(r, "1.00") for r in regions])
    after = keyed(
        ENERGY_PRICES, [energy(r, str(Decimal("1.00") + Decimal(n) / 100)) for n, r in enumerate(regions)]
    )
    summary = summarise([diff_table(ENERGY_PRICES, before, after)], examples=5)
    assert (summary["added"], summary["changed"], summary["removed"], summary["unchanged"]) == (0, 29, 0, 1)
    assert summary["by_table"] == {"energy_prices": {"added": 0, "changed": 29, "removed": 0, "unchanged": 1}}
    changed = summary["examples"]["changed"]
    assert len(changed) == 5
    assert changed[0] == {
        "table": "energy_prices",
        "item": "r29",
        "prices": [{"field": "usd_per_kwh", "old": "1", "new": "1.29", "change_pct": 29.0}],
        "fields": [],
    }
    assert [example["item"] for example in changed] == ["r29", "r28", "r27", "r26", "r25"]
