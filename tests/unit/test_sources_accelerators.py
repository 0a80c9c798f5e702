"""Accelerator reader: names resolve, specs equal the source files, nothing is invented.

Expectations are read from the shipped files with the csv module, not from the reader's output.
"""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import pytest

from wheretorun.pricing.records import AcceleratorRecord
from wheretorun.pricing.sources.accelerators import KINDS, load_resolver, read_accelerators
from wheretorun.pricing.sources.aliases import AliasResolver

DATA = Path(__file__).resolve().parents[2] / "wheretorun" / "pricing" / "data"
SKYPILOT = DATA / "sources" / "skypilot-catalog"
EPOCH = DATA / "sources" / "epoch-ml-hardware" / "ml_hardware.csv"
CALIBRATION_GPUS = DATA / "calibration" / "gpus.csv"


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def records() -> list[AcceleratorRecord]:
    return read_accelerators(DATA)


@pytest.fixture(scope="module")
def by_id(records: list[AcceleratorRecord]) -> dict[str, AcceleratorRecord]:
    return {record.id: record for record in records}


@pytest.fixture(scope="module")
def resolver(records: list[AcceleratorRecord]) -> AliasResolver:
    return load_resolver(DATA, records)


@pytest.fixture(scope="module")
def calibration() -> dict[str, dict[str, str]]:
    return {row["gpu"]: row for row in _csv(CALIBRATION_GPUS)}


def _skypilot_names() -> set[str]:
    return {row["AcceleratorName"] for path in SKYPILOT.glob("*_vms.csv") for row in _csv(path)}


def test_every_skypilot_accelerator_name_resolves(resolver: AliasResolver) -> None:
    names = _skypilot_names()
    assert len(names) > 60  # all 16 clouds' spellings
    assert sorted(name for name in names if resolver.resolve(name) is None) == []


def test_every_skypilot_row_resolves_in_context(resolver: AliasResolver) -> None:
    rows = [(path, row) for path in sorted(SKYPILOT.glob("*_vms.csv")) for row in _csv(path)]
    assert len({path.name for path, _ in rows}) == 16  # all 16 clouds' files were read
    assert len(rows) > 1000
    unresolved = [
        (path.name, row["InstanceType"], row["AcceleratorName"])
        for path, row in rows
        if resolver.resolve_offer(
            path.name.removesuffix("_vms.csv"), row["AcceleratorName"], row["InstanceType"], None
        )
        is None
    ]
    assert unresolved == []


@pytest.mark.parametrize(
    "spellings",
    [
        ["RTX-A6000", "RTXA6000", "A6000", "NVIDIA RTX A6000", "rtx a6000"],
        ["L40s", "L40S", "NVIDIA L40S", "l40-s"],
        ["H100", "H100-SXM", "H100-80G-SXM5", "H100-MEGA", "NVIDIA-H100-80GB-HBM3", "NVIDIA H100 SXM5 80GB"],
        ["A100-80GB", "A100-80GB-SXM", "A100-80GB-640GB", "NVIDIA A100 SXM4 80 GB", "NVIDIA A100 SXM 80GB"],
        ["A100", "A100-40GB", "A100-40GB-320GB", "NVIDIA A100", "NVIDIA A100 SXM4 40 GB"],
        ["A100-80G-PCIe", "A100-80G-PCIe-NVLink", "NVIDIA A100 PCIe 80GB"],
        ["V100", "Tesla-V100", "NVIDIA Tesla V100 SXM2"],
        ["H100-80G-PCIe", "H100-80G-PCIe-NVLink", "NVIDIA H100 PCIe"],
        ["NVIDIA-H200-NVL", "NVIDIA H200 NVL"],
        ["RTX6000-Ada", "RTX-6000-Ada", "NVIDIA RTX 6000 Ada Generation", "NVIDIA RTX 6000 Ada"],
        ["RTXPRO6000", "RTX-PRO-6000", "RTXPRO6000-WK", "RTXPRO6000WS", "NVIDIA RTX Pro 6000 Blackwell"],
        ["RTX4090", "NVIDIA GeForce RTX 4090", "GeForce RTX 4090"],
        ["T4", "NVIDIA Tesla T4", "Tesla-T4"],
    ],
)
def test_spellings_of_one_part_resolve_to_one_id(resolver: AliasResolver, spellings: list[str]) -> None:
    ids = {resolver.resolve(spelling) for spelling in spellings}
    assert len(ids) == 1
    assert None not in ids


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("A100", "A100-80GB"),
        ("H100", "H100-NVL"),
        ("H100", "H100-80G-PCIe"),
        ("RTX6000", "RTX6000-Ada"),
        ("V100", "V100-32GB"),
        ("H200", "NVIDIA-H200-NVL"),
        ("Inferentia", "Inferentia2"),
    ],
)
def test_different_parts_stay_apart(resolver: AliasResolver, one: str, other: str) -> None:
    assert resolver.resolve(one) != resolver.resolve(other)


def test_unknown_decorations_are_accepted_only_when_they_agree(resolver: AliasResolver) -> None:
    assert resolver.resolve("NVIDIA-A100-SXM4-80GB") == resolver.resolve("A100-80GB")
    assert resolver.resolve("H100-SXM5-80GB") == resolver.resolve("H100")
    assert resolver.resolve("L4-24GB") == resolver.resolve("L4")
    assert resolver.resolve("H100-PCIe-80GB") == resolver.resolve("H100-80G-PCIe")
    assert resolver.resolve("RTX4090-48GB") is None  # memory disagrees with the part
    assert resolver.resolve("A100-SXM5") is None  # form factor disagrees
    assert resolver.resolve("Quantum Flux 9000") is None


def test_rtx6000_is_the_24gb_quadro_as_the_gpuinfo_memory_says(
    resolver: AliasResolver, by_id: dict[str, AcceleratorRecord]
) -> None:
    rows = [
        row
        for path in SKYPILOT.glob("*_vms.csv")
        for row in _csv(path)
        if row["AcceleratorName"] == "RTX6000"
    ]
    assert rows
    assert all("'SizeInMiB': 24576" in row["GpuInfo"] for row in rows)
    part = by_id[resolver.resolve("RTX6000") or ""]
    assert part.memory_gb == 24
    assert "Quadro" in part.name


def test_cloud_specific_rules(resolver: AliasResolver) -> None:
    assert resolver.resolve_offer("runpod", "H100", "1x_H100_SECURE", 80) == resolver.resolve("H100 PCIe")
    assert resolver.resolve_offer("runpod", "H100-SXM", "1x_H100-SXM_SECURE", 80) == resolver.resolve("H100")
    assert resolver.resolve_offer("aws", "H100", "p5.48xlarge", 80) == resolver.resolve("H100-SXM")
    assert resolver.resolve_offer("lambda", "H100", "gpu_1x_h100_pcie", 80) == resolver.resolve("H100 PCIe")
    assert resolver.resolve_offer("azure", "H100", "Standard_NC40ads_H100_v5", None) == resolver.resolve(
        "H100-NVL"
    )
    assert resolver.resolve_offer("azure", "H100", "Standard_ND96isr_H100_v5", None) == resolver.resolve(
        "H100"
    )
    assert resolver.resolve_offer("mithril", "A100", "a100-80gb.sxm.1x", 80) == resolver.resolve("A100-80GB")
    assert resolver.resolve_offer("vast", "A100", "1x-A100_PCIE-32-65536", 80) == resolver.resolve(
        "A100-80G-PCIe"
    )
    assert resolver.resolve_offer("vast", "A100", "1x-A100_SXM4-32-65536", 40) == resolver.resolve("A100")


def test_every_calibration_gpu_and_epoch_row_is_an_accelerator(resolver: AliasResolver) -> None:
    for row in _csv(CALIBRATION_GPUS):
        assert resolver.resolve_exact(row["gpu"]) is not None, row["gpu"]
    epoch_names = [row["Hardware name"] for row in _csv(EPOCH)]
    assert len(epoch_names) == 176
    assert [name for name in epoch_names if resolver.resolve_exact(name) is None] == []


def _cal(row: dict[str, str], column: str) -> float:
    return float(row[column])


@pytest.mark.parametrize(
    ("accelerator", "gpu", "expected"),
    [
        (
            "H100",
            "NVIDIA H100 SXM",
            {"memory_gb": 80, "memory_bandwidth_gb_s": 3350, "bf16_tflops": 989, "tdp_w": 700},
        ),
        (
            "A100-80GB",
            "NVIDIA A100 SXM 80GB",
            {"memory_gb": 80, "memory_bandwidth_gb_s": 2039, "bf16_tflops": 312},
        ),
        ("L4", "NVIDIA L4", {"memory_gb": 24, "memory_bandwidth_gb_s": 300, "bf16_tflops": 121}),
        (
            "RTX4090",
            "NVIDIA GeForce RTX 4090",
            # bf16: the whitepaper's FP32-accumulate 165.2 wins over the file's FP16-accumulate 330
            # (accelerator_tensor_peaks.csv; tests/unit/test_hardware_tables.py)
            {"memory_gb": 24, "memory_bandwidth_gb_s": 1008},
        ),
    ],
)
def test_specs_equal_the_calibration_file(
    resolver: AliasResolver,
    by_id: dict[str, AcceleratorRecord],
    calibration: dict[str, dict[str, str]],
    accelerator: str,
    gpu: str,
    expected: dict[str, float],
) -> None:
    record = by_id[resolver.resolve(accelerator) or ""]
    row = calibration[gpu]
    columns = {
        "memory_gb": "memory_gb",
        "memory_bandwidth_gb_s": "memory_bandwidth_gb_s",
        "bf16_tflops": "fp16_bf16_dense_tflops",
        "tdp_w": "tdp_w",
    }
    for field, value in expected.items():
        assert _cal(row, columns[field]) == value  # the file says what the brief says
        assert getattr(record, field) == value
    assert f"calibration/gpus.csv {gpu!r}" in record.spec_source


def test_epoch_units_are_converted(by_id: dict[str, AcceleratorRecord]) -> None:
    epoch = {row["Hardware name"]: row for row in _csv(EPOCH)}
    h800 = epoch["NVIDIA H800 SXM5"]  # an Epoch-only part
    record = next(r for r in by_id.values() if "NVIDIA H800 SXM5" in r.aliases)
    assert record.memory_gb == pytest.approx(float(h800["Memory (bytes)"]) / 1e9)
    assert record.memory_bandwidth_gb_s == pytest.approx(float(h800["Memory bandwidth (byte/s)"]) / 1e9)
    assert record.bf16_tflops == pytest.approx(float(h800["Tensor-FP16/BF16 performance (FLOP/s)"]) / 1e12)
    assert record.tdp_w == float(h800["TDP (W)"])
    h100 = epoch["NVIDIA H100 SXM5 80GB"]
    # Internode bandwidth is in bits per second: 400 Gbit/s = 50 GB/s.
    assert by_id["h100-sxm"].internode_gb_s == pytest.approx(
        float(h100["Internode bandwidth (bit/s)"]) / 8 / 1e9
    )
    assert by_id["h100-sxm"].internode_gb_s == pytest.approx(50.0)
    assert by_id["h100-sxm"].tf32_tflops == pytest.approx(
        float(h100["TF32 (TensorFloat-32) performance (FLOP/s)"]) / 1e12
    )


def test_nothing_is_invented(by_id: dict[str, AcceleratorRecord]) -> None:
    spec_fields = ("memory_gb", "memory_bandwidth_gb_s", "fp32_tflops", "bf16_tflops", "fp8_tflops", "tdp_w")
    for record in by_id.values():
        for field in spec_fields:
            if getattr(record, field) is not None:
                assert field in record.spec_source, (record.id, field)
    # Parts neither calibration nor Epoch covers: every figure comes from the sourced extras file or,
    # for memory, from SkyPilot GpuInfo (see test_sources_accelerator_extras.py).
    for part in ("rtx-5090", "a30", "h200-nvl", "rtx-a4500"):
        record = by_id[part]
        assert record.memory_gb is not None
        assert "calibration/gpus.csv" not in record.spec_source
        assert "Epoch AI" not in record.spec_source
        assert "accelerator_specs_extra.csv" in record.spec_source
    assert by_id["rtx-2000-ada"].bf16_tflops is None  # no citable dense tensor figure
    for part in ("qualcomm-ai100", "aws-inferentia"):
        assert by_id[part].memory_gb is None
        assert by_id[part].spec_source == "no sourced figures"


def test_skypilot_memory_fallback_uses_the_documented_units(by_id: dict[str, AcceleratorRecord]) -> None:
    assert by_id["rtx-5090"].memory_gb == 32  # Daytona/Lium 32768 MiB, RunPod "32" (GB)
    assert by_id["gh200"].memory_gb == 96  # Lambda 98304 MiB = 96 x 1024


def test_purchase_prices_come_from_the_sources(by_id: dict[str, AcceleratorRecord]) -> None:
    calibration = {row["gpu"]: row for row in _csv(CALIBRATION_GPUS)}
    low, high = calibration["NVIDIA GeForce RTX 4090"]["price_usd"].split("-")
    assert by_id["rtx-4090"].purchase_price_usd == (Decimal(low) + Decimal(high)) / 2
    assert "midpoint" in (by_id["rtx-4090"].purchase_price_source or "")
    epoch = {row["Hardware name"]: row for row in _csv(EPOCH)}
    assert by_id["h100-sxm"].purchase_price_usd == Decimal(
        epoch["NVIDIA H100 SXM5 80GB"]["Release price (USD)"]
    )
    assert by_id["rtx-a4500"].purchase_price_usd is None  # no calibration, Epoch or sourced extra price
    for record in by_id.values():
        assert (record.purchase_price_usd is None) == (record.purchase_price_source is None)
        assert record.purchase_price_usd is None or record.purchase_price_usd > 0


def test_kinds_and_local_cards(by_id: dict[str, AcceleratorRecord]) -> None:
    assert {record.kind for record in by_id.values()} <= KINDS
    for part in ("rtx-3090", "rtx-4090", "rtx-5090"):
        assert by_id[part].kind == "consumer"
    for part in ("rtx-6000-ada", "rtx-a6000", "rtx-pro-6000", "apple-m2-ultra"):
        assert by_id[part].kind == "workstation"
    for part in ("aws-inferentia", "aws-trainium", "habana-gaudi", "qualcomm-ai100", "xilinx-vu9p"):
        assert by_id[part].kind == "other"
    assert by_id["apple-m2-ultra"].memory_gb == 192


def test_ids_are_unique_slugs(records: list[AcceleratorRecord]) -> None:
    ids = [record.id for record in records]
    assert len(ids) == len(set(ids))
    assert all(i == i.lower() and " " not in i for i in ids)
