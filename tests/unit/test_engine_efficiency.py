"""The calibrated table is complete, physical (fractions <= 1) and says where each factor came from."""

from __future__ import annotations

import re

import pytest

from wheretorun.engine import (
    DEFAULT_EFFICIENCY,
    ComputeDtype,
    InvalidSpec,
    MemoryKind,
    ServingEfficiency,
    ServingEngine,
    TrainingEfficiency,
)


@pytest.mark.parametrize("engine", list(ServingEngine))
@pytest.mark.parametrize("kind", list(MemoryKind))
def test_every_engine_and_memory_kind_has_factors_with_provenance(
    engine: ServingEngine, kind: MemoryKind
) -> None:
    entry = DEFAULT_EFFICIENCY.serving_for(engine, kind)
    assert 0 < entry.bandwidth_fraction <= 1
    assert 0 < entry.compute_fraction <= 1
    assert entry.layer_overhead_ms >= 0
    fitted = re.search(r"fitted on \d+ figures from rows inf\d{3}", entry.provenance)
    assert fitted or "borrowed from" in entry.provenance


def test_engines_without_rows_say_they_are_borrowed() -> None:
    # The calibration set has no vLLM, SGLang or TGI rows that can be expressed (calibration README).
    for engine in (ServingEngine.VLLM, ServingEngine.SGLANG, ServingEngine.TGI):
        assert "no calibration rows" in DEFAULT_EFFICIENCY.serving_for(engine, MemoryKind.HBM).provenance


def test_unknown_family_falls_back_to_the_all_family_entry() -> None:
    fallback = DEFAULT_EFFICIENCY.training_for("some-future-chip", ComputeDtype.BF16)
    assert DEFAULT_EFFICIENCY.training_key("some-future-chip", ComputeDtype.BF16) == ("*", ComputeDtype.BF16)
    assert fallback.provenance == "median of the fitted families (ampere, hopper)"
    assert 0 < fallback.hardware_flops_fraction <= 1


def test_fractions_above_one_are_rejected() -> None:
    with pytest.raises(InvalidSpec) as error:
        ServingEfficiency(1.2, 0.5, 0.0, "beats the hardware")
    assert error.value.field == "bandwidth_fraction"
    with pytest.raises(InvalidSpec):
        TrainingEfficiency(0.0, "no utilisation")


def test_version_is_a_content_hash_of_the_calibration_data() -> None:
    assert re.fullmatch(r"calibration-[0-9a-f]{12}", DEFAULT_EFFICIENCY.version)
