"""Whole runs: interruptions (goodput) and efficiency at scale on top of the steady-state time."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.recommend_catalog import H100, LLAMA_8B
from wheretorun.engine import TrainingConfig, estimate_training
from wheretorun.engine.efficiency_data import DEFAULT_EFFICIENCY
from wheretorun.engine.whole_run import (
    HARDWARE_INTERRUPTIONS_PER_ACCELERATOR_HOUR,
    HOURS_LOST_PER_HARDWARE_INTERRUPTION,
    WholeRunEfficiency,
    goodput,
    scale_efficiency,
    whole_run,
)

FITTED = WholeRunEfficiency(0.6, 512, 19.0, 35.0, "test figure")


def test_the_llama_3_cluster_keeps_ninety_percent_of_its_time() -> None:
    # 466 interruptions in 54 days on 16,384 GPUs, each costing at most 10% x 1,296 h / 466:
    # the lost share at 16,384 accelerators is exactly the 10% the paper reports.
    rate = 466 / (54 * 24 * 16384)
    lost_hours = 0.10 * 1296 / 466
    assert HARDWARE_INTERRUPTIONS_PER_ACCELERATOR_HOUR == pytest.approx(rate)
    assert HOURS_LOST_PER_HARDWARE_INTERRUPTION == pytest.approx(lost_hours)
    assert goodput(16384, rate, lost_hours) == pytest.approx(0.90)
    # one 8-GPU node loses 8 / 16,384 of that: 0.0049%
    assert goodput(8, rate, lost_hours) == pytest.approx(1 - 0.10 * 8 / 16384)


def test_efficiency_at_scale_is_none_in_one_node_and_full_from_the_fitted_scale() -> None:
    assert scale_efficiency(8, FITTED) == 1.0
    assert scale_efficiency(512, FITTED) == pytest.approx(0.6)
    assert scale_efficiency(16384, FITTED) == pytest.approx(0.6)
    # 64 accelerators = 8 nodes: log(8) / log(64) = half the way in log nodes -> 0.6 ** 0.5
    assert scale_efficiency(64, FITTED) == pytest.approx(0.6**0.5)
    assert scale_efficiency(64, None) == 1.0


def test_a_whole_run_divides_the_steady_state_time_by_both() -> None:
    run = whole_run(
        100.0, 512, FITTED, interruptions_per_accelerator_hour=1e-4, hours_lost_per_interruption=0.5
    )
    # goodput = 1 - 1e-4 x 512 x 0.5 = 0.9744; wall = 100 / 0.9744 / 0.6
    assert run.goodput == pytest.approx(0.9744)
    assert run.wall_clock_hours == pytest.approx(100 / 0.9744 / 0.6)
    assert run.accelerator_hours == pytest.approx(run.wall_clock_hours * 512)
    assert "19%" in run.uncertainty


@given(
    steady=st.floats(0.1, 1e5),
    small=st.integers(1, 20000),
    extra=st.integers(0, 20000),
    rate=st.floats(0, 1e-3),
)
def test_more_accelerators_never_make_a_run_cheaper_per_steady_hour(
    steady: float, small: int, extra: int, rate: float
) -> None:
    """Overheads only grow with scale: goodput and efficiency at scale never rise."""
    few = whole_run(steady, small, FITTED, rate, 0.5)
    many = whole_run(steady, small + extra, FITTED, rate, 0.5)
    assert many.wall_clock_hours >= few.wall_clock_hours * (1 - 1e-12)
    assert few.wall_clock_hours >= steady


def test_the_training_estimate_keeps_its_steady_state_and_adds_the_whole_run() -> None:
    config = TrainingConfig(accelerator_count=64, tokens=1e10, sequence_length=4096)
    with_runs = estimate_training(LLAMA_8B, H100, config, DEFAULT_EFFICIENCY)
    without = estimate_training(
        LLAMA_8B, H100, config, dataclasses.replace(DEFAULT_EFFICIENCY, whole_run=None)
    )
    assert with_runs.accelerator_hours == without.accelerator_hours  # the steady state is unchanged
    assert with_runs.whole_run is not None
    assert without.whole_run is not None
    fitted = DEFAULT_EFFICIENCY.whole_run
    assert fitted is not None
    assert 0 < fitted.efficiency_at_full_scale < 1
    expected = without.whole_run.wall_clock_hours / fitted.efficiency_at_full_scale ** (
        math.log(64 / 8) / math.log(fitted.full_scale_accelerators / 8)
    )
    assert with_runs.whole_run.wall_clock_hours == pytest.approx(expected)
    assert with_runs.whole_run.accelerator_hours > with_runs.accelerator_hours


def test_the_shipped_fit_meets_its_held_out_target() -> None:
    fitted = DEFAULT_EFFICIENCY.whole_run
    assert fitted is not None
    assert fitted.held_out_median_error_pct <= 25.0
    assert "leave-one-run-out" in fitted.provenance
