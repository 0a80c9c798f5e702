"""Owning hardware: straight-line depreciation to a residual value, replacement, cost of capital."""

from __future__ import annotations

import pytest

from wheretorun.engine.costs.finance import capital_schedule


def test_a_unit_held_for_part_of_its_life_is_valued_at_book_value() -> None:
    schedule = capital_schedule(0, 36, 48.0, 0.2, 0.08)
    assert schedule.purchases == 1
    assert schedule.resale == pytest.approx(1 - 0.8 * 36 / 48)
    assert schedule.depreciation == pytest.approx(0.8 * 36 / 48)
    expected_charge = sum(1 - 0.8 * month / 48 for month in range(36)) * 0.08 / 12
    assert schedule.cost_of_capital == pytest.approx(expected_charge)


def test_a_horizon_longer_than_the_life_replaces_the_unit() -> None:
    schedule = capital_schedule(0, 60, 48.0, 0.2, 0.0)
    assert schedule.purchases == 2
    # the first unit is sold at 20%, the second is 12 of 48 months old at the end
    assert schedule.resale == pytest.approx(0.2 + (1 - 0.8 * 12 / 48))
    assert schedule.cost_of_capital == 0.0


def test_capital_is_tied_up_during_the_lead_time_without_depreciating() -> None:
    with_lead = capital_schedule(3, 36, 48.0, 0.2, 0.08)
    assert with_lead.in_service_months == 33
    assert with_lead.resale == pytest.approx(1 - 0.8 * 33 / 48)
    assert with_lead.cost_of_capital > capital_schedule(0, 36, 48.0, 0.2, 0.08).cost_of_capital


def test_hardware_that_arrives_after_the_horizon_serves_nothing() -> None:
    assert capital_schedule(36, 36, 48.0, 0.2, 0.08).in_service_months == 0
