"""SkyPilot reader: zone collapse, GCP accelerator rows, price hygiene and plausibility flags.

Counts and prices are recomputed from the CSV files with the csv module in the test itself.
"""

from __future__ import annotations

import ast
import csv
import json
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

from wheretorun.pricing.records import CloudOfferRecord
from wheretorun.pricing.sources.accelerators import load_resolver, read_accelerators
from wheretorun.pricing.sources.aliases import AliasResolver
from wheretorun.pricing.sources.skypilot import (
    SPOT_ROUNDING_TOLERANCE,
    read_skypilot_dir,
    read_skypilot_offers,
)

DATA = Path(__file__).resolve().parents[2] / "wheretorun" / "pricing" / "data"
SKYPILOT = DATA / "sources" / "skypilot-catalog"
LITELLM = DATA / "sources" / "litellm" / "model_prices_and_context_window.json"
PROVIDERS = sorted(path.name.removesuffix("_vms.csv") for path in SKYPILOT.glob("*_vms.csv"))


def _rows(provider: str) -> list[dict[str, str]]:
    with (SKYPILOT / f"{provider}_vms.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _key(row: dict[str, str]) -> tuple[str, str, Decimal, str]:
    return (row["InstanceType"], row["AcceleratorName"], Decimal(row["AcceleratorCount"]), row["Region"])


def _price(text: str | None) -> Decimal | None:
    return Decimal(text) if text and Decimal(text) > 0 else None


@pytest.fixture(scope="module")
def resolver() -> AliasResolver:
    return load_resolver(DATA, read_accelerators(DATA))


@pytest.fixture(scope="module")
def offers(resolver: AliasResolver) -> list[CloudOfferRecord]:
    return read_skypilot_dir(SKYPILOT, resolver)


@pytest.fixture(scope="module")
def by_provider(offers: list[CloudOfferRecord]) -> dict[str, list[CloudOfferRecord]]:
    grouped: dict[str, list[CloudOfferRecord]] = defaultdict(list)
    for offer in offers:
        grouped[offer.provider].append(offer)
    return grouped


def _offer_key(offer: CloudOfferRecord) -> tuple[str, str, Decimal, str]:
    instance = "" if offer.accelerator_only else offer.instance_type
    return (instance, offer.accelerator_name, offer.accelerator_count, offer.region)


def test_all_sixteen_clouds_are_read(by_provider: dict[str, list[CloudOfferRecord]]) -> None:
    assert len(PROVIDERS) == 16
    assert sorted(by_provider) == PROVIDERS


@pytest.mark.parametrize("provider", PROVIDERS)
def test_one_record_per_instance_count_and_region(
    by_provider: dict[str, list[CloudOfferRecord]], provider: str
) -> None:
    rows = _rows(provider)
    expected = Counter(_key(row) for row in rows)
    offers = by_provider[provider]
    if provider == "azure":  # the one corrected count (12 -> 8) changes that key
        expected = Counter(
            {
                (k[0], k[1], Decimal(8) if k[0] == "Standard_ND96isr_H100_v5" else k[2], k[3]): v
                for k, v in expected.items()
            }
        )
    assert len(offers) == len(expected)
    assert {_offer_key(offer): offer.zone_count for offer in offers} == dict(expected)
    assert sum(offer.zone_count for offer in offers) == len(rows)


def test_aws_prices_are_the_zone_prices(by_provider: dict[str, list[CloudOfferRecord]]) -> None:
    on_demand: dict[tuple[str, str, Decimal, str], set[Decimal]] = defaultdict(set)
    spots: dict[tuple[str, str, Decimal, str], list[Decimal]] = defaultdict(list)
    for row in _rows("aws"):
        if (price := _price(row["Price"])) is not None:
            on_demand[_key(row)].add(price)
        if (spot := _price(row["SpotPrice"])) is not None:
            spots[_key(row)].append(spot)
    assert all(len(prices) == 1 for prices in on_demand.values())  # the file is consistent per region
    for offer in by_provider["aws"]:
        key = _offer_key(offer)
        assert offer.on_demand_usd_per_hour == (max(on_demand[key]) if key in on_demand else None)
        assert offer.spot_usd_per_hour == (min(spots[key]) if key in spots else None)


def test_aws_p5_in_us_east_1_collapses_its_zones(by_provider: dict[str, list[CloudOfferRecord]]) -> None:
    rows = [r for r in _rows("aws") if r["InstanceType"] == "p5.48xlarge" and r["Region"] == "us-east-1"]
    offer = next(
        o for o in by_provider["aws"] if o.instance_type == "p5.48xlarge" and o.region == "us-east-1"
    )
    assert offer.zone_count == len(rows) > 1
    assert offer.accelerator_id == "h100-sxm"
    assert offer.accelerator_count == 8


def test_gcp_rows_are_accelerator_only(by_provider: dict[str, list[CloudOfferRecord]]) -> None:
    assert all(row["InstanceType"] == "" for row in _rows("gcp"))
    for offer in by_provider["gcp"]:
        assert offer.accelerator_only
        assert offer.instance_type == f"gcp-accel:{offer.accelerator_name}x{offer.accelerator_count}"
    others = [o for provider, offers in by_provider.items() if provider != "gcp" for o in offers]
    assert not any(offer.accelerator_only for offer in others)


def test_no_price_is_ever_zero(offers: list[CloudOfferRecord]) -> None:
    for offer in offers:
        for price in (offer.on_demand_usd_per_hour, offer.spot_usd_per_hour):
            assert price is None or price > 0


def test_empty_and_zero_prices_become_none(by_provider: dict[str, list[CloudOfferRecord]]) -> None:
    assert all(row["SpotPrice"] == "0.00" for row in _rows("vast"))
    assert all(offer.spot_usd_per_hour is None for offer in by_provider["vast"])
    p5e = [o for o in by_provider["aws"] if o.instance_type == "p5e.48xlarge"]
    assert p5e
    assert all(row["Price"] == "" for row in _rows("aws") if row["InstanceType"] == "p5e.48xlarge")
    assert all(o.on_demand_usd_per_hour is None for o in p5e)


def test_spot_is_not_above_on_demand_unless_flagged(offers: list[CloudOfferRecord]) -> None:
    flagged = 0
    for offer in offers:
        on_demand, spot = offer.on_demand_usd_per_hour, offer.spot_usd_per_hour
        if on_demand is not None and spot is not None and spot > on_demand * (1 + SPOT_ROUNDING_TOLERANCE):
            assert offer.suspect_reason
            assert "spot" in offer.suspect_reason
            flagged += 1
    assert flagged > 0  # GCP lists some A100 80GB and H200 spot prices above on-demand


def test_mithril_placeholder_prices_are_flagged(by_provider: dict[str, list[CloudOfferRecord]]) -> None:
    placeholders = {
        _key(row) for row in _rows("mithril") if Decimal(row["Price"]) / Decimal(row["AcceleratorCount"]) < 1
    }
    assert len(placeholders) == 5  # four A100 nodes and one B200 node at $0.01-0.08
    for offer in by_provider["mithril"]:
        if _offer_key(offer) in placeholders:
            assert offer.suspect_reason
            assert "floor" in offer.suspect_reason
            assert offer.on_demand_usd_per_hour is not None  # kept as published
        else:
            assert offer.suspect_reason is None


def test_cheap_datacenter_gpus_elsewhere_are_not_flagged(offers: list[CloudOfferRecord]) -> None:
    suspects = Counter(offer.provider for offer in offers if offer.suspect_reason)
    assert set(suspects) <= {"mithril", "gcp", "azure"}  # placeholders, spot > on-demand, partial GPUs


def test_azure_counts(by_provider: dict[str, list[CloudOfferRecord]]) -> None:
    nd96 = [o for o in by_provider["azure"] if o.instance_type == "Standard_ND96isr_H100_v5"]
    assert nd96
    assert all(
        row["AcceleratorCount"] == "12"
        for row in _rows("azure")
        if row["InstanceType"] == "Standard_ND96isr_H100_v5"
    )
    for offer in nd96:
        assert offer.accelerator_count == 8
        assert offer.note
        assert "12 to 8" in offer.note
    partial = [
        o for o in by_provider["azure"] if o.instance_type in {"Standard_NV4as_v4", "Standard_NV8as_v4"}
    ]
    assert partial
    assert all(offer.suspect_reason and "fraction" in offer.suspect_reason for offer in partial)


def test_fractional_gpu_counts_are_kept_exactly(by_provider: dict[str, list[CloudOfferRecord]]) -> None:
    counts = {
        o.accelerator_count for o in by_provider["aws"] if o.instance_type.startswith(("g6f.", "gr6f."))
    }
    assert counts == {
        Decimal(row["AcceleratorCount"])
        for row in _rows("aws")
        if row["InstanceType"].startswith(("g6f.", "gr6f."))
    }
    assert Decimal("0.125") in counts
    assert all(isinstance(count, Decimal) for count in counts)


def test_marketplace_placeholder_host_figures_are_dropped(
    by_provider: dict[str, list[CloudOfferRecord]],
) -> None:
    assert {(row["vCPUs"], row["MemoryGiB"]) for row in _rows("vast")} == {("32", "64.0")}
    assert all(o.vcpus is None and o.memory_gib is None for o in by_provider["vast"])


def _file_memory_gb(provider: str, row: dict[str, str]) -> float | None:
    """Per-GPU memory from GpuInfo, with the data README's per-cloud rules (independent of the reader)."""
    text = row.get("GpuInfo", "")
    if not text.startswith("{"):
        return None
    info = json.loads(text) if provider == "verda" else ast.literal_eval(text.replace("null", "None"))
    raw = info["Gpus"][0].get("MemoryInfo", {}).get("SizeInMiB")
    if not raw:
        return None
    size, count = float(raw), float(row["AcceleratorCount"])
    if provider == "runpod":
        return size  # RunPod publishes GB in the MiB fields
    if provider in {"vast", "verda"} or count < 1:
        size = size / count  # instance totals, or the memory of a fractional slice
    return size / 1024


def test_resolved_parts_match_the_memory_the_clouds_report(
    resolver: AliasResolver, by_provider: dict[str, list[CloudOfferRecord]]
) -> None:
    """A wrong name mapping shows as a memory mismatch; the only one expected is a modified card."""
    mismatches = set()
    for provider in PROVIDERS:
        memory = {_key(row): _file_memory_gb(provider, row) for row in _rows(provider)}
        for offer in by_provider[provider]:
            reported = memory.get(_offer_key(offer))
            part = resolver.record(offer.accelerator_id or "")
            if reported is None or part is None or part.memory_gb is None:
                continue
            if abs(reported - part.memory_gb) > 0.15 * part.memory_gb:
                mismatches.add((provider, offer.instance_type, offer.region))
                assert offer.note
                assert "GpuInfo reports" in offer.note
    # One Vast listing reports a 48 GB RTX 4090 (a modified card); it keeps the RTX 4090 specs and a note.
    assert mismatches == {("vast", "1x-RTX_4090-32-65536", "Hong Kong, HK, AS")}


def test_runpod_and_lambda_pcie_h100s_are_not_the_sxm_part(
    by_provider: dict[str, list[CloudOfferRecord]],
) -> None:
    runpod_pcie = {r["InstanceType"] for r in _rows("runpod") if "'Name': 'H100 PCIe'" in r["GpuInfo"]}
    assert runpod_pcie
    for offer in by_provider["runpod"] + by_provider["lambda"]:
        if offer.instance_type in runpod_pcie or offer.instance_type.endswith("_pcie"):
            assert offer.accelerator_id == "h100-pcie"
        elif offer.accelerator_name in {"H100", "H100-SXM"}:
            assert offer.accelerator_id == "h100-sxm"


def test_columns_are_read_by_name(resolver: AliasResolver) -> None:
    header = ",".join(
        ["InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "Price", "SpotPrice"]
        + ["Region", "AvailabilityZone"]
    )
    rows = [
        "x1,H100,8.0,96,1024,20.5,9.1,r1,z1",
        "x1,H100,8.0,96,1024,20.5,8.7,r1,z2",
        "x1,H100,8.0,96,1024,20.5,,r1,z3",
        'x2,L4,1,4,16,,,"Oregon, US, NA",z1',
    ]
    plain = "\n".join([header, *rows]) + "\n"
    # Other column order, CRLF, an extra column, a UTF-8 region and no final newline.
    reordered_header = (
        "Region,SpotPrice,Extra,AcceleratorName,Price,InstanceType,AvailabilityZone,AcceleratorCount"
    )
    reordered = "\r\n".join(
        [
            reordered_header,
            "r1,9.1,a,H100,20.5,x1,z1,8.0",
            "r1,8.7,b,H100,20.5,x1,z2,8.0",
            "r1,,c,H100,20.5,x1,z3,8.0",
            '"Oregon, US, NA",,d,L4,,x2,z1,1',
        ]
    )
    first = read_skypilot_offers(plain, "test", resolver, "t")
    second = read_skypilot_offers(reordered, "test", resolver, "t")
    for a, b in zip(first, second, strict=True):
        assert (a.instance_type, a.region, a.on_demand_usd_per_hour, a.spot_usd_per_hour, a.zone_count) == (
            b.instance_type,
            b.region,
            b.on_demand_usd_per_hour,
            b.spot_usd_per_hour,
            b.zone_count,
        )
    h100, l4 = first
    assert (h100.zone_count, h100.on_demand_usd_per_hour, h100.spot_usd_per_hour) == (
        3,
        Decimal("20.5"),
        Decimal("8.7"),
    )
    assert (l4.region, l4.on_demand_usd_per_hour, l4.spot_usd_per_hour) == ("Oregon, US, NA", None, None)
    assert h100.vcpus == 96
    assert second[0].vcpus is None  # that file has no vCPUs column
    umlaut = read_skypilot_offers(
        "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nv,L4,1,0.5,Zürich", "t", resolver, "t"
    )
    assert umlaut[0].region == "Zürich"


def test_zone_price_disagreement_keeps_the_highest_and_says_so(resolver: AliasResolver) -> None:
    header = "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region"
    text = "\n".join([header, "x,L4,1,1.00,,r", "x,L4,1,1.20,,r"])
    (offer,) = read_skypilot_offers(text, "test", resolver, "t")
    assert offer.on_demand_usd_per_hour == Decimal("1.20")
    assert offer.note
    assert "disagree" in offer.note


def test_unknown_accelerators_are_kept_unresolved(resolver: AliasResolver) -> None:
    text = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nx,Warp Core 9,1,3.0,r\n"
    (offer,) = read_skypilot_offers(text, "test", resolver, "t")
    assert offer.accelerator_id is None
    assert offer.on_demand_usd_per_hour == Decimal("3.0")
