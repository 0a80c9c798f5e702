"""The shipped hardware tables: tensor peaks from vendor documents win over the other sources,
every chip family states what it runs, and malformed rows are refused."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from wheretorun.calibration.catalog import accelerators as calibration_accelerators
from wheretorun.engine import Precision
from wheretorun.pricing.sources import DATA_DIR, read_accelerators
from wheretorun.pricing.sources.accelerators import PEAKS_FILE
from wheretorun.pricing.sources.precisions import PRECISION_FILE, read_precision_support

CATALOG = {record.id: record for record in read_accelerators(DATA_DIR)}
SUPPORT = read_precision_support(DATA_DIR / PRECISION_FILE)


def _peak_rows() -> list[dict[str, str]]:
    with (DATA_DIR / PEAKS_FILE).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_geforce_16bit_peaks_are_the_fp32_accumulate_rates() -> None:
    assert CATALOG["rtx-4090"].bf16_tflops == pytest.approx(165.2)
    assert CATALOG["rtx-4090"].fp8_tflops == pytest.approx(330.3)
    assert CATALOG["rtx-3090"].bf16_tflops == pytest.approx(71)
    assert CATALOG["rtx-3070"].bf16_tflops == pytest.approx(40.6)
    assert CATALOG["rtx-5090"].bf16_tflops == pytest.approx(209.5)


def test_the_fp16_accumulate_rate_is_what_the_calibration_table_called_bf16() -> None:
    calibration = calibration_accelerators()
    for part, name in (("rtx-4090", "NVIDIA GeForce RTX 4090"), ("rtx-3090", "NVIDIA GeForce RTX 3090")):
        fp16_accumulate = CATALOG[part].fp16_accumulate_tflops
        assert fp16_accumulate == pytest.approx(2 * (CATALOG[part].bf16_tflops or 0), rel=0.01)
        assert fp16_accumulate == pytest.approx(calibration[name].fp16_accumulate_tflops)
    assert CATALOG["rtx-4090"].fp16_accumulate_tflops == pytest.approx(330, rel=0.002)  # gpus.csv's 330


def test_every_peak_row_is_the_figure_the_catalog_uses_and_cites_it() -> None:
    rows = _peak_rows()
    assert rows
    for row in rows:
        record = CATALOG[row["id"]]
        assert getattr(record, row["field"]) == pytest.approx(float(row["value"])), row
        assert f"{row['field']}: {PEAKS_FILE}" in record.spec_source
        assert row["source"]


def test_calibration_uses_the_same_corrected_peaks_as_the_catalog() -> None:
    calibration = calibration_accelerators()
    assert calibration["NVIDIA GeForce RTX 4090"].bf16_tflops == CATALOG["rtx-4090"].bf16_tflops
    assert calibration["NVIDIA GeForce RTX 3090"].bf16_tflops == CATALOG["rtx-3090"].bf16_tflops
    assert calibration["NVIDIA H100 SXM"].bf16_tflops == CATALOG["h100-sxm"].bf16_tflops


def test_every_cloud_rented_part_with_a_spec_has_a_compute_peak_or_states_none() -> None:
    """The NVL parts had no peak and their prefill was dropped; they are sourced now."""
    for part in ("h100-nvl", "h200-nvl"):
        assert CATALOG[part].bf16_tflops is not None
        assert CATALOG[part].fp32_tflops is not None


def test_every_chip_family_of_the_catalog_states_its_precisions() -> None:
    families = {record.family for record in CATALOG.values() if record.family}
    assert families <= set(SUPPORT), sorted(families - set(SUPPORT))


@pytest.mark.parametrize(
    ("family", "served", "not_served"),
    [
        ("turing", {Precision.FP16, Precision.INT8, Precision.AWQ_INT4}, {Precision.BF16, Precision.FP8}),
        ("volta", {Precision.FP16, Precision.GPTQ_INT4}, {Precision.BF16, Precision.FP8, Precision.INT8}),
        ("ampere", {Precision.BF16, Precision.FP8, Precision.INT8}, {Precision.FP4}),
        ("ada", {Precision.BF16, Precision.FP8, Precision.INT8}, {Precision.FP4}),
        ("hopper", {Precision.BF16, Precision.FP8, Precision.AWQ_INT4}, {Precision.FP4}),
        ("blackwell", {Precision.FP4, Precision.FP8}, set()),
        ("cdna3", {Precision.BF16, Precision.FP8}, {Precision.AWQ_INT4, Precision.INT8}),
    ],
)
def test_the_support_table_says_what_the_vendor_and_vllm_tables_say(
    family: str, served: set[Precision], not_served: set[Precision]
) -> None:
    support = SUPPORT[family]
    assert served <= support.served
    assert not (not_served & support.served)


def test_native_fp8_starts_with_ada_and_hopper() -> None:
    assert Precision.FP8 not in SUPPORT["ampere"].native  # weight-only via Marlin, not native
    assert Precision.FP8 in SUPPORT["ada"].native
    assert Precision.BF16 not in SUPPORT["volta"].native


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("volta,fp32;fp16,fp32;fp16;bf16,src,", "without native arithmetic"),
        ("volta,fp32;fp17,fp32,src,", "native"),
        ("volta,fp32,fp32,,", "source"),
    ],
)
def test_malformed_support_rows_are_refused(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / PRECISION_FILE
    path.write_text(f"family,native,served,source,notes\n{line}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_precision_support(path)
