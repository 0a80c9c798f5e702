"""`accelerator_specs_extra.csv`: sourced figures for parts and fields calibration and Epoch lack.

Expectations are read from the shipped files with the csv module, not from the reader's output.
"""

from __future__ import annotations

import csv
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from wheretorun.pricing.records import AcceleratorRecord
from wheretorun.pricing.sources.accelerators import (
    EXTRA_FIELDS,
    EXTRAS_FILE,
    MEMORY_AGREEMENT_GB,
    read_accelerators,
)
from wheretorun.pricing.sources.aliases import AliasResolver

DATA = Path(__file__).resolve().parents[2] / "wheretorun" / "pricing" / "data"
EXTRAS = DATA / EXTRAS_FILE
CURATED = DATA / "accelerators.csv"
CALIBRATION_GPUS = DATA / "calibration" / "gpus.csv"
EPOCH = DATA / "sources" / "epoch-ml-hardware" / "ml_hardware.csv"

# Record field -> calibration column, and -> Epoch column (as in the reader's documented mapping).
CALIBRATION_COLUMNS = {
    "memory_gb": "memory_gb",
    "memory_bandwidth_gb_s": "memory_bandwidth_gb_s",
    "fp32_tflops": "fp32_tflops",
    "bf16_tflops": "fp16_bf16_dense_tflops",
    "fp8_tflops": "fp8_dense_tflops",
    "int8_tops": "int8_dense_tops",
    "tdp_w": "tdp_w",
}


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def extras() -> list[dict[str, str]]:
    return _csv(EXTRAS)


@pytest.fixture(scope="module")
def by_id() -> dict[str, AcceleratorRecord]:
    return {record.id: record for record in read_accelerators(DATA)}


def _calibration_ids(by_id: dict[str, AcceleratorRecord]) -> dict[str, dict[str, str]]:
    """Calibration rows keyed by the id of the part whose aliases name them."""
    names = AliasResolver(by_id.values(), offer_rules=())
    return {names.resolve_exact(row["gpu"]) or "": row for row in _csv(CALIBRATION_GPUS)}


def _epoch_ids(by_id: dict[str, AcceleratorRecord]) -> set[str]:
    names = AliasResolver(by_id.values(), offer_rules=())
    return {names.resolve_exact(row["Hardware name"]) or "" for row in _csv(EPOCH)}


def test_every_row_names_a_curated_part_and_a_known_field(extras: list[dict[str, str]]) -> None:
    curated = {row["id"] for row in _csv(CURATED)}
    assert len(extras) >= 50
    for row in extras:
        assert row["id"] in curated, row
        assert row["field"] in EXTRA_FIELDS, row
        assert Decimal(row["value"]) > 0, row
        assert row["source"], row
    pairs = [(row["id"], row["field"]) for row in extras]
    assert len(pairs) == len(set(pairs))


def test_every_source_is_a_pinned_repository_file_or_a_url(extras: list[dict[str, str]]) -> None:
    for row in extras:
        source = row["source"]
        if source.startswith("http"):
            continue
        repository, path, commit = source.split()[:3]
        assert repository.count("/") == 1, row
        assert path, row
        assert commit.startswith("@"), row
        assert len(commit) == 41, row  # the full 40-hex commit


def test_merged_records_carry_the_figures_and_their_sources(
    extras: list[dict[str, str]], by_id: dict[str, AcceleratorRecord]
) -> None:
    """Where calibration and Epoch say nothing, the extra figure is the record's, with its source."""
    calibration = _calibration_ids(by_id)
    used = 0
    for row in extras:
        record = by_id[row["id"]]
        field, value = row["field"], Decimal(row["value"])
        if field in ("memory_gb", "purchase_price_usd"):
            continue  # own rules, tested below
        column = CALIBRATION_COLUMNS.get(field)
        if record.id in calibration and column and calibration[record.id][column]:
            continue  # calibration wins, tested below
        assert getattr(record, field) == pytest.approx(float(value)), row
        assert f"{EXTRAS_FILE} ({row['source']})" in record.spec_source, row
        used += 1
    assert used >= 40


@pytest.mark.parametrize(
    ("part", "field", "value"),
    [
        ("rtx-5090", "memory_bandwidth_gb_s", 1792),
        ("rtx-5090", "tdp_w", 575),  # its tensor rates are in accelerator_tensor_peaks.csv
        ("a30", "memory_bandwidth_gb_s", 933),
        ("a30", "bf16_tflops", 165),
        ("h200-nvl", "memory_bandwidth_gb_s", 4800),
        ("rtx-a4500", "memory_bandwidth_gb_s", 640),
        ("rtx-4000-ada", "memory_bandwidth_gb_s", 360),
        ("rtx-2000-ada", "memory_bandwidth_gb_s", 224),
        ("rtx-3070", "memory_bandwidth_gb_s", 448),
        ("rtx-3060", "memory_bandwidth_gb_s", 360),
        ("jetson-agx-orin-64gb", "memory_bandwidth_gb_s", 204.8),
        ("radeon-instinct-mi25", "memory_bandwidth_gb_s", 484),
        ("gh200", "fp8_tflops", 1979),
    ],
)
def test_the_gaps_the_engine_needs_are_filled(
    extras: list[dict[str, str]],
    by_id: dict[str, AcceleratorRecord],
    part: str,
    field: str,
    value: float,
) -> None:
    (row,) = [r for r in extras if (r["id"], r["field"]) == (part, field)]
    assert float(row["value"]) == value  # the file says what the brief says
    assert getattr(by_id[part], field) == pytest.approx(value)


def test_calibration_figures_still_win(
    extras: list[dict[str, str]], by_id: dict[str, AcceleratorRecord]
) -> None:
    calibration = _calibration_ids(by_id)
    overlaps = [
        row
        for row in extras
        if row["id"] in calibration
        and (column := CALIBRATION_COLUMNS.get(row["field"]))
        and calibration[row["id"]][column]
    ]
    assert overlaps  # h100-pcie bandwidth: gpumap 2048, calibration 2000
    for row in overlaps:
        record = by_id[row["id"]]
        expected = float(calibration[row["id"]][CALIBRATION_COLUMNS[row["field"]]])
        assert getattr(record, row["field"]) == expected, row
        assert f"{EXTRAS_FILE} ({row['source']})" not in record.spec_source
    assert by_id["h100-pcie"].memory_bandwidth_gb_s == 2000


def test_calibration_and_epoch_win_over_a_conflicting_extra_row(tmp_path: Path) -> None:
    """A planted extra row for fields calibration (H100 SXM) and Epoch (H800) already give changes nothing."""
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    planted = [
        {"id": "h100-sxm", "field": "memory_bandwidth_gb_s", "value": "1", "source": "planted", "notes": ""},
        {"id": "h100-sxm", "field": "purchase_price_usd", "value": "1", "source": "planted", "notes": ""},
    ]
    with (data / EXTRAS_FILE).open("a", newline="", encoding="utf-8") as handle:
        csv.DictWriter(handle, fieldnames=["id", "field", "value", "source", "notes"]).writerows(planted)
    record = {r.id: r for r in read_accelerators(data)}["h100-sxm"]
    assert record.memory_bandwidth_gb_s == 3350
    assert record.purchase_price_usd != 1
    assert "planted" not in record.spec_source
    assert "planted" not in (record.purchase_price_source or "")


def test_memory_replaces_a_cloud_reading_only_beyond_the_tolerance(
    extras: list[dict[str, str]], by_id: dict[str, AcceleratorRecord]
) -> None:
    calibration = _calibration_ids(by_id)
    epoch = _epoch_ids(by_id)
    rows = [row for row in extras if row["field"] == "memory_gb"]
    assert rows
    replaced = kept = 0
    for row in rows:
        record = by_id[row["id"]]
        if record.id in calibration or record.id in epoch:
            continue
        assert record.memory_gb is not None
        sourced = float(row["value"])
        if (
            abs(record.memory_gb - sourced) <= MEMORY_AGREEMENT_GB
            and "memory_gb: SkyPilot" in record.spec_source
        ):
            kept += 1  # the cloud reading agrees: it stays
        else:
            assert record.memory_gb == sourced, row
            assert f"{EXTRAS_FILE} ({row['source']})" in record.spec_source
            replaced += 1
    assert kept >= 5
    assert replaced >= 2
    # H200 NVL: RunPod GpuInfo says 143, the sourced figure 141 differs by 2 GB, so it replaces it.
    assert by_id["h200-nvl"].memory_gb == 141
    # MI25: no cloud reading at all (Azure publishes none), so the sourced figure is used.
    assert by_id["radeon-instinct-mi25"].memory_gb == 16
    # RTX 5090: GpuInfo 32 = sourced 32, the cloud reading is kept.
    assert by_id["rtx-5090"].memory_gb == 32
    assert "SkyPilot" in by_id["rtx-5090"].spec_source


def test_prices_only_where_calibration_and_epoch_have_none(
    extras: list[dict[str, str]], by_id: dict[str, AcceleratorRecord]
) -> None:
    rows = [row for row in extras if row["field"] == "purchase_price_usd"]
    assert {row["id"] for row in rows} >= {
        "rtx-5090",
        "a30",
        "a40",
        "t4",
        "rtx-3060",
        "rtx-3070",
        "rtx-4000-ada",
    }
    for row in rows:
        record = by_id[row["id"]]
        assert record.purchase_price_usd == Decimal(row["value"]), row
        assert EXTRAS_FILE in (record.purchase_price_source or "")
        assert row["source"] in (record.purchase_price_source or "")
    # Calibration and Epoch prices are untouched.
    assert by_id["h100-sxm"].purchase_price_usd is not None
    assert EXTRAS_FILE not in (by_id["h100-sxm"].purchase_price_source or "")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("no-such-part,tdp_w,1,somewhere,", "no curated accelerator"),
        ("a30,clock_mhz,1,somewhere,", "not in"),
        ("a30,tdp_w,0,somewhere,", "positive number"),
        ("a30,tdp_w,1,,", "needs its source"),
        ("a30,memory_bandwidth_gb_s,1,somewhere,", "a second"),
    ],
)
def test_bad_rows_are_refused(tmp_path: Path, row: str, message: str) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    with (data / EXTRAS_FILE).open("a", encoding="utf-8") as handle:
        handle.write(row + "\n")
    with pytest.raises(ValueError, match=message):
        read_accelerators(data)
