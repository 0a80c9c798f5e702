"""SkyPilot catalog `vms.csv` files -> one `CloudOfferRecord` per instance type and region.

Columns are read by header name (their order differs per cloud; extra columns are ignored).

Zones collapse to regions: one record per (instance type, accelerator name, accelerator count,
region), with `zone_count` = rows collapsed. The on-demand price is the same in every zone of a
region in these files; if zones ever disagree the highest is kept and a note says so. The spot
price is the lowest over the zones that have one (the best a planner can get in that region, and
what SkyPilot's optimizer picks); zones without spot do not count.

Prices: an empty cell is None, never 0. A 0 spot price (Vast writes `0.00` for "no spot") is None;
a 0 on-demand price is None and flagged. Prices stay as published; implausible ones get a
`suspect_reason` (see `suspect_reasons`) and the API decides what to do with them.

GCP rows price attachable GPUs without the host VM: `accelerator_only=True`, and as they have no
instance type the record gets the synthetic `gcp-accel:<AcceleratorName>x<count>` (`gcp-accel:A100x8`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from wheretorun.pricing.plausibility import (
    FLAGSHIP_FLOOR_USD_PER_GPU_HOUR,
    FLAGSHIP_MIN_MEMORY_GB,
    MAX_USD_PER_GPU_HOUR,
    MIN_USD_PER_GPU_HOUR,
    SPOT_ROUNDING_TOLERANCE,
)
from wheretorun.pricing.records import AcceleratorRecord, CloudOfferRecord
from wheretorun.pricing.sources._text import csv_rows, optional_decimal, plain_decimal, read_text
from wheretorun.pricing.sources.accelerators import SKYPILOT_DIR, load_resolver
from wheretorun.pricing.sources.aliases import AliasResolver
from wheretorun.pricing.sources.gpuinfo import parse_gpu_info, per_gpu_memory_gb
from wheretorun.pricing.sources.manifest import DATA_DIR, source_labels

__all__ = [
    "FLAGSHIP_FLOOR_USD_PER_GPU_HOUR",
    "MAX_USD_PER_GPU_HOUR",
    "MIN_USD_PER_GPU_HOUR",
    "SPOT_ROUNDING_TOLERANCE",
    "read_skypilot_dir",
    "read_skypilot_offers",
    "suspect_reasons",
]

GCP_ACCELERATOR_PREFIX = "gcp-accel:"

# Plausibility thresholds live in `wheretorun.pricing.plausibility`, with their rationale.

# Published counts known to be wrong, corrected with a note (data/sources/README.md, Azure caveats).
_COUNT_CORRECTIONS: dict[tuple[str, str], Decimal] = {
    ("azure", "Standard_ND96isr_H100_v5"): Decimal(8),
}
# Sizes that get a fraction of one GPU but are listed with AcceleratorCount 1 (same README).
_PARTIAL_GPU_SIZES = frozenset(
    {("azure", "Standard_NV4as_v4"), ("azure", "Standard_NV8as_v4"), ("azure", "Standard_NV16as_v4")}
)
# Vast publishes fixed placeholder host figures (vCPUs 32, MemoryGiB 64.0) for every offer.
_PLACEHOLDER_HOST_PROVIDERS = frozenset({"vast"})
_MEMORY_MISMATCH = 0.15  # GpuInfo per-GPU memory this far from the spec gets a note


@dataclass(frozen=True, slots=True)
class _Row:
    """One catalog row, parsed."""

    instance_type: str  # as published ("" for GCP)
    accelerator_name: str
    count: Decimal
    vcpus: Decimal | None
    memory_gib: Decimal | None
    price: Decimal | None
    spot: Decimal | None
    region: str
    gpu_memory_gb: float | None

    @property
    def key(self) -> tuple[str, str, Decimal, str]:
        return (self.instance_type, self.accelerator_name, self.count, self.region)


def read_skypilot_offers(
    text: str, provider: str, resolver: AliasResolver, source: str
) -> list[CloudOfferRecord]:
    """Offers of one cloud's `vms.csv`, zones collapsed, in the order they first appear."""
    groups: dict[tuple[str, str, Decimal, str], list[_Row]] = {}
    for raw in csv_rows(text):
        row = _parse_row(raw, provider)
        if row is not None:
            groups.setdefault(row.key, []).append(row)
    return [_collapse(rows, provider, resolver, source) for rows in groups.values()]


def read_skypilot_dir(
    directory: Path, resolver: AliasResolver | None = None, sources: Mapping[str, str] | None = None
) -> list[CloudOfferRecord]:
    """Offers of every `<provider>_vms.csv` in a directory; the provider is the file-name prefix.

    `sources` maps file names to the citation each record carries; for the shipped directory it
    defaults to the manifest's origin (repository, path, commit).
    """
    if resolver is None:
        resolver = load_resolver(DATA_DIR)
    if sources is None:
        shipped = directory.resolve() == (DATA_DIR / SKYPILOT_DIR).resolve()
        sources = source_labels() if shipped else {}
    offers: list[CloudOfferRecord] = []
    for path in sorted(directory.glob("*_vms.csv")):
        provider = path.name.removesuffix("_vms.csv")
        source = sources.get(path.name, f"SkyPilot catalog file {path.name}")
        offers += read_skypilot_offers(read_text(path), provider, resolver, source)
    return offers


# --- parsing -------------------------------------------------------------------------------------


def _parse_row(raw: Mapping[str, str], provider: str) -> _Row | None:
    name = raw.get("AcceleratorName", "")
    count = optional_decimal(raw.get("AcceleratorCount"))
    if not name or count is None or count <= 0:
        return None
    count = plain_decimal(count)
    return _Row(
        instance_type=raw.get("InstanceType", ""),
        accelerator_name=name,
        count=count,
        vcpus=_positive(raw.get("vCPUs")),
        memory_gib=_positive(raw.get("MemoryGiB")),
        price=_positive(raw.get("Price")),
        spot=_positive(raw.get("SpotPrice")),
        region=raw.get("Region", ""),
        gpu_memory_gb=per_gpu_memory_gb(parse_gpu_info(raw.get("GpuInfo", "")), provider, count),
    )


def _positive(text: str | None) -> Decimal | None:
    """A price or size as published; empty, 0 and negative are None (a 0 is never a real price)."""
    value = optional_decimal(text)
    return None if value is None or value <= 0 else plain_decimal(value)


# --- collapsing zones ----------------------------------------------------------------------------


def _collapse(rows: list[_Row], provider: str, resolver: AliasResolver, source: str) -> CloudOfferRecord:
    """One record for the rows (zones) of one instance type, count and region."""
    first = rows[0]
    notes: list[str] = []
    on_demand = _on_demand(rows, notes)
    spots = [row.spot for row in rows if row.spot is not None]
    spot = min(spots) if spots else None
    notes += _price_notes(on_demand, spot)
    count = _corrected_count(provider, first, notes)
    vcpus, memory_gib = _host(provider, first, notes)
    accelerator_id = resolver.resolve_offer(
        provider, first.accelerator_name, first.instance_type, first.gpu_memory_gb
    )
    accelerator = resolver.record(accelerator_id) if accelerator_id else None
    notes += _memory_note(first.gpu_memory_gb, accelerator)
    partial_gpu = (provider, first.instance_type) in _PARTIAL_GPU_SIZES
    accelerator_only = provider == "gcp" and not first.instance_type
    return CloudOfferRecord(
        provider=provider,
        instance_type=_instance_type(first, count, accelerator_only),
        region=first.region,
        accelerator_name=first.accelerator_name,
        accelerator_id=accelerator_id,
        accelerator_count=count,
        vcpus=vcpus,
        memory_gib=memory_gib,
        on_demand_usd_per_hour=on_demand,
        spot_usd_per_hour=spot,
        zone_count=len(rows),
        accelerator_only=accelerator_only,
        suspect_reason="; ".join(suspect_reasons(on_demand, spot, count, accelerator, partial_gpu)) or None,
        source=source,
        note="; ".join(notes) or None,
    )


def _instance_type(row: _Row, count: Decimal, accelerator_only: bool) -> str:
    """The published instance type; GCP accelerator rows have none and get `gcp-accel:<name>x<count>`."""
    return (
        f"{GCP_ACCELERATOR_PREFIX}{row.accelerator_name}x{count}" if accelerator_only else row.instance_type
    )


def _host(provider: str, row: _Row, notes: list[str]) -> tuple[Decimal | None, Decimal | None]:
    if provider in _PLACEHOLDER_HOST_PROVIDERS:
        notes.append("vCPUs and MemoryGiB are the marketplace's fixed placeholders, not used")
        return None, None
    return row.vcpus, row.memory_gib


def _price_notes(on_demand: Decimal | None, spot: Decimal | None) -> list[str]:
    if on_demand is None:
        return ["no on-demand price published"]
    if spot is not None and on_demand < spot <= on_demand * (1 + SPOT_ROUNDING_TOLERANCE):
        return ["spot equals on-demand up to rounding (no spot discount)"]
    return []


def _on_demand(rows: list[_Row], notes: list[str]) -> Decimal | None:
    prices = {row.price for row in rows if row.price is not None}
    if not prices:
        return None
    if len(prices) > 1:
        notes.append(f"zones disagree on the on-demand price ({min(prices)}-{max(prices)}); highest kept")
    return max(prices)


def _corrected_count(provider: str, row: _Row, notes: list[str]) -> Decimal:
    corrected = _COUNT_CORRECTIONS.get((provider, row.instance_type))
    if corrected is None or corrected == row.count:
        return row.count
    notes.append(
        f"AcceleratorCount corrected from {row.count} to {corrected}: the size has {corrected} GPUs "
        "(data/sources/README.md)"
    )
    return corrected


def _memory_note(gpu_memory_gb: float | None, accelerator: AcceleratorRecord | None) -> list[str]:
    if gpu_memory_gb is None or accelerator is None or not accelerator.memory_gb:
        return []
    if abs(gpu_memory_gb - accelerator.memory_gb) <= _MEMORY_MISMATCH * accelerator.memory_gb:
        return []
    spec = f"the {accelerator.name} spec is {accelerator.memory_gb:g} GB"
    return [f"GpuInfo reports {gpu_memory_gb:g} GB per GPU ({spec})"]


# --- plausibility --------------------------------------------------------------------------------


def suspect_reasons(
    on_demand: Decimal | None,
    spot: Decimal | None,
    count: Decimal,
    accelerator: AcceleratorRecord | None,
    partial_gpu: bool = False,
) -> list[str]:
    """Why an offer's prices look implausible (empty when they look fine).

    Rules, per GPU-hour (price / accelerator count): below `FLAGSHIP_FLOOR_USD_PER_GPU_HOUR` for a
    datacenter part with >= 80 GB; below `MIN_USD_PER_GPU_HOUR` for anything; above
    `MAX_USD_PER_GPU_HOUR`; a spot price above the on-demand price (beyond rounding); a partial GPU
    listed as one whole GPU.
    """
    reasons = []
    floor, floor_label = _floor(accelerator)
    for label, price in (("on-demand", on_demand), ("spot", spot)):
        if price is None:
            continue
        per_gpu = price / count
        if per_gpu < floor:
            reasons.append(f"{label} ${_fmt(per_gpu)}/GPU-hour is below the ${floor} floor for {floor_label}")
        elif per_gpu > MAX_USD_PER_GPU_HOUR:
            reasons.append(f"{label} ${_fmt(per_gpu)}/GPU-hour is above the ${MAX_USD_PER_GPU_HOUR} ceiling")
    if on_demand is not None and spot is not None and spot > on_demand * (1 + SPOT_ROUNDING_TOLERANCE):
        reasons.append(f"spot {spot} above on-demand {on_demand}")
    if partial_gpu:
        reasons.append("a fraction of one GPU listed as AcceleratorCount 1; per-GPU figures would mislead")
    return reasons


def _floor(accelerator: AcceleratorRecord | None) -> tuple[Decimal, str]:
    if (
        accelerator is not None
        and accelerator.kind == "datacenter"
        and (accelerator.memory_gb or 0) >= FLAGSHIP_MIN_MEMORY_GB
    ):
        return FLAGSHIP_FLOOR_USD_PER_GPU_HOUR, f"a datacenter GPU with {accelerator.memory_gb:g} GB"
    return MIN_USD_PER_GPU_HOUR, "any accelerator"


def _fmt(value: Decimal) -> str:
    return f"{value:.4f}".rstrip("0").rstrip(".")
