"""Accelerator records: our curated table merged with the specs the public sources publish.

`data/accelerators.csv` (ours) has one row per canonical part with every spelling the sources use
in `aliases`. Specs are merged per field in priority order, and every figure's origin is written
to `spec_source`:

0. `data/accelerator_tensor_peaks.csv` (ours): dense tensor peaks from the vendors' architecture
   whitepapers and product pages, one row per figure like the extras below. They win over every
   other source: GeForce tensor rates with FP32 accumulation (the calibration table and Epoch give
   the FP16-accumulate rate, twice as high: RTX 4090 330 vs 165.2), and the NVL parts' rates;
1. `data/calibration/gpus.csv` (best-sourced: stas00/ml-engineering and others, see its README);
2. Epoch AI `ml_hardware.csv` (CC BY 4.0), converted: FLOP/s -> TFLOPS, bytes -> GB, byte/s -> GB/s,
   `Internode bandwidth (bit/s)` / 8 -> GB/s. Several Epoch rows can name one part (`NVIDIA A100` and
   `NVIDIA A100 SXM4 40 GB`); they are used in the order the curated `aliases` list them;
3. `data/accelerator_specs_extra.csv` (ours): one row per figure (`id`, `field`, `value`, `source`,
   `notes`) for parts and fields neither source covers (RTX 5090, A30, H200 NVL, ...), each citing a
   public source (repository + path + commit, or URL). A price there is used only where calibration
   and Epoch have none;
4. memory only: the per-GPU memory in SkyPilot's `GpuInfo`, per-cloud quirks undone (`gpuinfo.py`).
   Memory rule between 3 and 4: where both exist and differ by at most 1 GB (`MEMORY_AGREEMENT_GB`),
   the cloud reading is kept; where they differ by more, the sourced figure of step 3 replaces it
   (H200 NVL: RunPod 143 -> 141).

Nothing is estimated: an unknown figure stays None. Epoch rows that are not one of our curated
parts become accelerators of their own (slug id, kind from Epoch's `Type` and the name).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path

from wheretorun.pricing.records import AcceleratorRecord
from wheretorun.pricing.sources._text import (
    csv_rows,
    optional_decimal,
    plain_decimal,
    read_text,
    split_list,
)
from wheretorun.pricing.sources.aliases import RULES_FILE, AliasResolver, normalise_alias, read_offer_rules
from wheretorun.pricing.sources.gpuinfo import parse_gpu_info, per_gpu_memory_gb

__all__ = [
    "EXTRA_FIELDS",
    "KINDS",
    "MEMORY_AGREEMENT_GB",
    "AliasResolver",
    "load_resolver",
    "read_accelerators",
]

KINDS = frozenset({"datacenter", "workstation", "consumer", "tpu", "other"})

CURATED_FILE = "accelerators.csv"
ARCHITECTURE_FILE = "accelerator_architecture.csv"
EXTRAS_FILE = "accelerator_specs_extra.csv"
PEAKS_FILE = "accelerator_tensor_peaks.csv"
MEMORY_KINDS = ("hbm", "gddr", "unified")
CALIBRATION_FILE = Path("calibration") / "gpus.csv"
EPOCH_FILE = Path("sources") / "epoch-ml-hardware" / "ml_hardware.csv"
SKYPILOT_DIR = Path("sources") / "skypilot-catalog"

EPOCH_LABEL = 'Epoch AI "Machine Learning Hardware" (CC BY 4.0) ml_hardware.csv'
_TERA = Decimal(10) ** 12
_GIGA = Decimal(10) ** 9

# Spec fields in record order; each maps to (calibration column, Epoch column, Epoch divisor).
_SPEC_FIELDS: dict[str, tuple[str | None, str | None, Decimal]] = {
    "memory_gb": ("memory_gb", "Memory (bytes)", _GIGA),
    "memory_bandwidth_gb_s": ("memory_bandwidth_gb_s", "Memory bandwidth (byte/s)", _GIGA),
    "fp32_tflops": ("fp32_tflops", "FP32 (single precision) performance (FLOP/s)", _TERA),
    "tf32_tflops": (None, "TF32 (TensorFloat-32) performance (FLOP/s)", _TERA),
    "bf16_tflops": ("fp16_bf16_dense_tflops", "Tensor-FP16/BF16 performance (FLOP/s)", _TERA),
    "fp8_tflops": ("fp8_dense_tflops", "FP8 performance (FLOP/s)", _TERA),
    "int8_tops": ("int8_dense_tops", "INT8 performance (OP/s)", _TERA),
    "int4_tops": (None, "INT4 performance (OP/s)", _TERA),
    "tdp_w": ("tdp_w", "TDP (W)", Decimal(1)),
}

# Fields `accelerator_specs_extra.csv` may give: every spec field, the link speeds, and a price.
EXTRA_FIELDS = frozenset({*_SPEC_FIELDS, "interconnect_gb_s", "internode_gb_s", "purchase_price_usd"})
# Fields `accelerator_tensor_peaks.csv` may give: compute rates only.
PEAK_FIELDS = frozenset(
    {
        "fp32_tflops",
        "tf32_tflops",
        "bf16_tflops",
        "fp16_accumulate_tflops",
        "fp8_tflops",
        "int8_tops",
        "int4_tops",
    }
)
# A sourced memory figure replaces a SkyPilot GpuInfo reading only where they differ by more than this.
MEMORY_AGREEMENT_GB = 1.0


@dataclass
class _Merged:
    """Spec values collected for one accelerator, with the source of each field."""

    values: dict[str, float | None] = field(default_factory=dict)
    sources: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def offer(self, name: str, value: float | None, source: str) -> None:
        if value is not None and self.values.get(name) is None:
            self.values[name] = value
            self.sources[source].append(name)

    def spec_source(self) -> str:
        if not self.sources:
            return "no sourced figures"
        return " | ".join(f"{', '.join(names)}: {source}" for source, names in self.sources.items())


def read_accelerators(data_dir: Path) -> list[AcceleratorRecord]:
    """All accelerators: the curated rows (specs merged) followed by the Epoch-only parts."""
    curated = _read_curated(data_dir / CURATED_FILE)
    names = AliasResolver(curated, offer_rules=())  # spellings only, to match source rows to our parts
    calibration = _calibration_by_id(data_dir / CALIBRATION_FILE, names)
    epoch_by_id, epoch_only = _epoch_rows(data_dir / EPOCH_FILE, names)
    rules = read_offer_rules(data_dir / RULES_FILE)
    skypilot_memory = _skypilot_memory(data_dir / SKYPILOT_DIR, AliasResolver(curated, rules))
    known = {stub.id for stub in curated}
    extras = _read_extras(data_dir / EXTRAS_FILE, known)
    peaks = _read_extras(data_dir / PEAKS_FILE, known, PEAK_FIELDS)
    records = [
        _merge(
            stub,
            peaks.get(stub.id, {}),
            calibration.get(stub.id),
            epoch_by_id.get(stub.id, []),
            extras.get(stub.id, {}),
            skypilot_memory.get(stub.id),
        )
        for stub in curated
    ]
    records += [_epoch_record(row) for row in epoch_only]
    records = _with_architecture(records, data_dir / ARCHITECTURE_FILE)
    AliasResolver(records, offer_rules=())  # raises if two parts claim one spelling or one id
    return records


def _with_architecture(records: list[AcceleratorRecord], path: Path) -> list[AcceleratorRecord]:
    """Chip family and memory technology from `accelerator_architecture.csv` (each row says why)."""
    rows = {row["id"]: row for row in csv_rows(read_text(path))}
    unknown = set(rows) - {record.id for record in records}
    if unknown:
        raise ValueError(f"{path.name}: no accelerator with id {sorted(unknown)}")
    for row in rows.values():
        if row["memory_kind"] not in MEMORY_KINDS:
            raise ValueError(
                f"{path.name}: {row['id']}: memory_kind {row['memory_kind']!r} not in {MEMORY_KINDS}"
            )
    return [
        replace(record, family=rows[record.id]["family"], memory_kind=rows[record.id]["memory_kind"])
        if record.id in rows
        else record
        for record in records
    ]


def load_resolver(data_dir: Path, records: Iterable[AcceleratorRecord] | None = None) -> AliasResolver:
    """The resolver for SkyPilot rows: all accelerators plus the per-cloud rules."""
    if records is None:
        records = read_accelerators(data_dir)
    return AliasResolver(records, read_offer_rules(data_dir / RULES_FILE))


# --- curated table -------------------------------------------------------------------------------


def _read_curated(path: Path) -> list[AcceleratorRecord]:
    """Curated rows as records without specs yet (they are merged in later)."""
    stubs = []
    for row in csv_rows(read_text(path)):
        if row["kind"] not in KINDS:
            raise ValueError(f"{path.name}: {row['id']}: kind {row['kind']!r} not in {sorted(KINDS)}")
        stubs.append(
            _blank_record(
                id=row["id"],
                name=row["name"],
                vendor=row["vendor"],
                kind=row["kind"],
                form_factor=row["form_factor"] or None,
                aliases=split_list(row["aliases"]),
                notes=row["notes"] or None,
            )
        )
    return stubs


def _blank_record(
    *,
    id: str,
    name: str,
    vendor: str,
    kind: str,
    form_factor: str | None,
    aliases: tuple[str, ...],
    notes: str | None,
) -> AcceleratorRecord:
    """A record with identity only; `_record` fills in the merged specs."""
    return AcceleratorRecord(
        id=id,
        name=name,
        vendor=vendor,
        kind=kind,
        form_factor=form_factor,
        memory_gb=None,
        memory_bandwidth_gb_s=None,
        fp32_tflops=None,
        tf32_tflops=None,
        bf16_tflops=None,
        fp8_tflops=None,
        int8_tops=None,
        int4_tops=None,
        tdp_w=None,
        interconnect=None,
        interconnect_gb_s=None,
        purchase_price_usd=None,
        purchase_price_source=None,
        spec_source="",
        aliases=aliases,
        notes=notes,
    )


# --- calibration/gpus.csv ------------------------------------------------------------------------


def _calibration_by_id(path: Path, names: AliasResolver) -> dict[str, dict[str, str]]:
    """Calibration rows keyed by accelerator id; every row must be one of our curated parts."""
    by_id: dict[str, dict[str, str]] = {}
    for row in csv_rows(read_text(path)):
        accelerator_id = names.resolve_exact(row["gpu"])
        if accelerator_id is None:
            raise ValueError(f"calibration GPU {row['gpu']!r} is not an alias in {CURATED_FILE}")
        by_id[accelerator_id] = row
    return by_id


def _calibration_label(row: Mapping[str, str]) -> str:
    return f"calibration/gpus.csv {row['gpu']!r} ({row['source']})"


def _number_or_upper_bound(text: str) -> float | None:
    """A number, or the upper end of a range such as `15-60` (TDP given as a range)."""
    value = optional_decimal(text)
    if value is None and re.fullmatch(r"\d+(\.\d+)?-\d+(\.\d+)?", text):
        value = optional_decimal(text.split("-")[1])
    return None if value is None else float(value)


def _calibration_price(row: Mapping[str, str]) -> tuple[Decimal, str] | None:
    """`price_usd` as a Decimal: a single figure, `~2500` as 2500, or the midpoint of `1600-3000`."""
    raw = row["price_usd"]
    if not raw:
        return None
    label = f"calibration/gpus.csv {row['gpu']!r} price_usd {raw!r}"
    single = optional_decimal(raw.lstrip("~"))
    if single is not None:
        note = " (approximate figure, stored as written)" if raw.startswith("~") else ""
        return single, f"{label}{note}; {row['source']}"
    low, _, high = raw.partition("-")
    low_value, high_value = optional_decimal(low), optional_decimal(high)
    if low_value is None or high_value is None:
        return None
    midpoint = (low_value + high_value) / 2
    return midpoint, f"{label}: street-price range, midpoint {midpoint} stored; {row['source']}"


# --- Epoch ml_hardware.csv -----------------------------------------------------------------------


def _epoch_rows(
    path: Path, names: AliasResolver
) -> tuple[dict[str, list[dict[str, str]]], list[dict[str, str]]]:
    """Epoch rows matched to curated parts (by exact alias) and the rows that are parts of their own."""
    matched: dict[str, list[dict[str, str]]] = defaultdict(list)
    unmatched = []
    for row in csv_rows(read_text(path)):
        accelerator_id = names.resolve_exact(row["Hardware name"])
        if accelerator_id is None:
            unmatched.append(row)
        else:
            matched[accelerator_id].append(row)
    for accelerator_id, rows in matched.items():
        _sort_by_alias_order(rows, names.record(accelerator_id))
    return matched, unmatched


def _sort_by_alias_order(rows: list[dict[str, str]], record: AcceleratorRecord | None) -> None:
    """Epoch rows of one part in the order its curated `aliases` list them (first wins per field)."""
    aliases = [normalise_alias(alias) for alias in record.aliases] if record else []
    rows.sort(
        key=lambda row: (
            aliases.index(key) if (key := normalise_alias(row["Hardware name"])) in aliases else 99
        )
    )


def _epoch_value(row: Mapping[str, str], column: str | None, divisor: Decimal) -> float | None:
    if column is None:
        return None
    value = optional_decimal(row.get(column))
    return None if value is None or value <= 0 else float(value / divisor)


def _epoch_label(row: Mapping[str, str]) -> str:
    return f"{EPOCH_LABEL} {row['Hardware name']!r}"


def _offer_epoch(merged: _Merged, row: Mapping[str, str]) -> None:
    label = _epoch_label(row)
    for name, (_, column, divisor) in _SPEC_FIELDS.items():
        merged.offer(name, _epoch_value(row, column, divisor), label)
    merged.offer("internode_gb_s", _epoch_internode(row), f"{label} (bit/s / 8)")
    if row["Manufacturer"] == "NVIDIA":
        # NVIDIA quotes NVLink/PCIe bandwidth as the bidirectional total (H100 SXM 900 GB/s); our field
        # is one direction, as in the calibration table (stas00: 450 = 900 / 2). Other vendors' figures
        # do not say which they are, so they are not converted.
        intranode = _epoch_value(row, "Intranode bandwidth (byte/s)", _GIGA)
        merged.offer("interconnect_gb_s", None if intranode is None else intranode / 2, f"{label} (/ 2)")


def _epoch_internode(row: Mapping[str, str]) -> float | None:
    bits = _epoch_value(row, "Internode bandwidth (bit/s)", _GIGA)
    return None if bits is None else bits / 8


def _epoch_price(row: Mapping[str, str]) -> tuple[Decimal, str] | None:
    price = optional_decimal(row["Release price (USD)"])
    if price is None or price <= 0:
        return None
    origin = " ".join(row["Source for the price"].split())[:300]
    return price, f"{_epoch_label(row)} Release price (USD); Epoch's source: {origin or 'not given'}"


def _epoch_kind(row: Mapping[str, str]) -> str:
    """Kind of an Epoch-only part, from its name and Epoch's `Type` column (documented rule)."""
    name, kind = row["Hardware name"], row["Type"]
    if kind == "TPU" or "TPU" in name:
        return "tpu"
    if re.search(r"GeForce|TITAN|Titan|Radeon RX", name):
        return "consumer"
    if re.search(r"Quadro|RTX A\d|RTX Pro|Ada Generation", name):
        return "workstation"
    if kind in {"GPU", "GPGPU", "DCU (GPGPU)"}:
        return "datacenter"
    return "other"


def _epoch_slug(row: Mapping[str, str]) -> str:
    """`NVIDIA Tesla V100 PCIe 16 GB` -> `tesla-v100-pcie-16-gb` (leading maker word dropped)."""
    words = row["Hardware name"].replace("PCle", "PCIe").split()
    maker = row["Manufacturer"].split()[0] if row["Manufacturer"] else ""
    if len(words) > 1 and words[0].lower() == maker.lower():
        words = words[1:]
    return re.sub(r"[^a-z0-9]+", "-", " ".join(words).lower()).strip("-")


def _form_factor_from_name(name: str) -> str | None:
    match = re.search(r"\b(SXM\d?|PCIe|PCle|OAM)\b", name)  # Epoch writes "PCle" for L2/L20
    return None if match is None else match.group(1).replace("PCle", "PCIe")


def _epoch_record(row: Mapping[str, str]) -> AcceleratorRecord:
    merged = _Merged()
    _offer_epoch(merged, row)
    price = _epoch_price(row)
    return _record(
        stub=_blank_record(
            id=_epoch_slug(row),
            name=row["Hardware name"],
            vendor=row["Manufacturer"] or "unknown",
            kind=_epoch_kind(row),
            form_factor=_form_factor_from_name(row["Hardware name"]),
            aliases=(row["Hardware name"],),
            notes="Epoch AI row without a curated entry; kind from Epoch's Type column and the name",
        ),
        merged=merged,
        interconnect=None,
        price=price,
    )


# --- accelerator_specs_extra.csv -----------------------------------------------------------------


@dataclass(frozen=True)
class _Extra:
    """One sourced figure from `accelerator_specs_extra.csv`."""

    value: Decimal
    source: str
    notes: str

    file: str = EXTRAS_FILE

    @property
    def label(self) -> str:
        return f"{self.file} ({self.source})"


def _read_extras(
    path: Path, known_ids: set[str], fields: frozenset[str] = EXTRA_FIELDS
) -> dict[str, dict[str, _Extra]]:
    """Sourced figures by accelerator id and field; every row must name a curated part and one of
    `fields`."""
    by_id: dict[str, dict[str, _Extra]] = defaultdict(dict)
    for number, row in enumerate(csv_rows(read_text(path)), start=2):
        where = f"{path.name} line {number}"
        accelerator_id, name = row["id"], row["field"]
        if accelerator_id not in known_ids:
            raise ValueError(f"{where}: no curated accelerator with id {accelerator_id!r}")
        if name not in fields:
            raise ValueError(f"{where}: field {name!r} not in {sorted(fields)}")
        value = optional_decimal(row["value"])
        if value is None or value <= 0:
            raise ValueError(f"{where}: value {row['value']!r} is not a positive number")
        if not row["source"]:
            raise ValueError(f"{where}: a figure needs its source")
        if name in by_id[accelerator_id]:
            raise ValueError(f"{where}: a second {name} for {accelerator_id}")
        by_id[accelerator_id][name] = _Extra(value, row["source"], row["notes"], path.name)
    return dict(by_id)


def _memory_choice(extra: _Extra | None, skypilot: tuple[float, str] | None) -> tuple[float, str] | None:
    """The sourced memory figure, unless a SkyPilot reading agrees with it to within MEMORY_AGREEMENT_GB."""
    if extra is None:
        return skypilot
    if skypilot is not None and abs(skypilot[0] - float(extra.value)) <= MEMORY_AGREEMENT_GB:
        return skypilot
    return float(extra.value), extra.label


def _extra_price(extra: _Extra | None) -> tuple[Decimal, str] | None:
    if extra is None:
        return None
    note = f"; {extra.notes}" if extra.notes else ""
    return extra.value, f"{EXTRAS_FILE} purchase_price_usd {extra.value}: {extra.source}{note}"


# --- SkyPilot GpuInfo memory ---------------------------------------------------------------------


def _skypilot_memory(directory: Path, resolver: AliasResolver) -> dict[str, tuple[float, str]]:
    """Per-GPU memory per accelerator from SkyPilot `GpuInfo`: the figure most clouds agree on."""
    seen: dict[str, dict[float, set[str]]] = defaultdict(lambda: defaultdict(set))
    for provider, row in _skypilot_rows(directory):
        count = optional_decimal(row.get("AcceleratorCount"))
        if count is None:
            continue
        memory = per_gpu_memory_gb(parse_gpu_info(row.get("GpuInfo", "")), provider, count)
        if memory is None:
            continue
        accelerator_id = resolver.resolve_offer(provider, row["AcceleratorName"], row["InstanceType"], memory)
        if accelerator_id is not None:
            seen[accelerator_id][round(memory, 1)].add(provider)
    chosen = {}
    for accelerator_id, by_value in seen.items():
        value, providers = max(by_value.items(), key=lambda item: (len(item[1]), item[0]))
        source = (
            f"SkyPilot catalog GpuInfo per-GPU memory ({', '.join(sorted(providers))}_vms.csv; "
            "nominal GB = SizeInMiB / 1024, per-cloud quirks undone)"
        )
        chosen[accelerator_id] = (value, source)
    return chosen


def _skypilot_rows(directory: Path) -> Iterator[tuple[str, dict[str, str]]]:
    for path in sorted(directory.glob("*_vms.csv")):
        provider = path.name.removesuffix("_vms.csv")
        for row in csv_rows(read_text(path)):
            yield provider, row


# --- merge ---------------------------------------------------------------------------------------


def _merge(
    stub: AcceleratorRecord,
    peaks: Mapping[str, _Extra],
    calibration: Mapping[str, str] | None,
    epoch_rows: list[dict[str, str]],
    extras: Mapping[str, _Extra],
    skypilot_memory: tuple[float, str] | None,
) -> AcceleratorRecord:
    merged = _Merged()
    interconnect = None
    price = None
    for name, peak in peaks.items():
        merged.offer(name, float(peak.value), peak.label)
    if calibration is not None:
        label = _calibration_label(calibration)
        for name, (column, _, _) in _SPEC_FIELDS.items():
            if column is not None:
                raw = calibration[column]
                ranged = optional_decimal(raw) is None and raw != ""
                source = f"{label}, upper end of {raw!r}" if ranged else label
                merged.offer(name, _number_or_upper_bound(raw), source)
        merged.offer(
            "interconnect_gb_s",
            _number_or_upper_bound(calibration["interconnect_bw_gb_s_unidirectional"]),
            label,
        )
        interconnect = calibration["interconnect"] or None
        price = _calibration_price(calibration)
    for row in epoch_rows:
        _offer_epoch(merged, row)
        price = price or _epoch_price(row)
    for name, extra in extras.items():
        if name not in {"memory_gb", "purchase_price_usd"}:
            merged.offer(name, float(extra.value), extra.label)
    price = price or _extra_price(extras.get("purchase_price_usd"))
    memory = _memory_choice(extras.get("memory_gb"), skypilot_memory)
    if memory is not None:
        merged.offer("memory_gb", *memory)
    return _record(stub, merged, interconnect, price)


def _record(
    stub: AcceleratorRecord,
    merged: _Merged,
    interconnect: str | None,
    price: tuple[Decimal, str] | None,
) -> AcceleratorRecord:
    values = merged.values
    return AcceleratorRecord(
        id=stub.id,
        name=stub.name,
        vendor=stub.vendor,
        kind=stub.kind,
        form_factor=stub.form_factor,
        memory_gb=values.get("memory_gb"),
        memory_bandwidth_gb_s=values.get("memory_bandwidth_gb_s"),
        fp32_tflops=values.get("fp32_tflops"),
        tf32_tflops=values.get("tf32_tflops"),
        bf16_tflops=values.get("bf16_tflops"),
        fp8_tflops=values.get("fp8_tflops"),
        int8_tops=values.get("int8_tops"),
        int4_tops=values.get("int4_tops"),
        tdp_w=values.get("tdp_w"),
        interconnect=interconnect,
        interconnect_gb_s=values.get("interconnect_gb_s"),
        purchase_price_usd=None if price is None else plain_decimal(price[0]),
        purchase_price_source=None if price is None else price[1],
        spec_source=merged.spec_source(),
        aliases=stub.aliases,
        notes=stub.notes,
        internode_gb_s=values.get("internode_gb_s"),
        fp16_accumulate_tflops=values.get("fp16_accumulate_tflops"),
    )
