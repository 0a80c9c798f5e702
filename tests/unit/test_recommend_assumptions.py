"""The money model's defaults: every one sourced, the sourced figures right, bad values named."""

from __future__ import annotations

import csv
import dataclasses
import statistics

import pytest

from tests.sources import CALIBRATION_DIR
from wheretorun.engine.assumptions import DEFAULT_SOURCES, Assumptions
from wheretorun.engine.errors import InvalidSpec


def _energy_rows() -> list[dict[str, str]]:
    with (CALIBRATION_DIR / "energy_and_pue.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_every_field_has_a_source_and_nothing_else_does() -> None:
    fields = {field.name for field in dataclasses.fields(Assumptions)}
    assert set(DEFAULT_SOURCES) == fields
    assert all(len(source) > 20 for source in DEFAULT_SOURCES.values())


def test_electricity_is_the_median_of_the_eia_april_2025_commercial_rows() -> None:
    cents = [
        float(row["value"])
        for row in _energy_rows()
        if row["metric"] == "average commercial electricity price" and row["period"] == "April 2025"
    ]
    assert len(cents) == 8
    assert Assumptions().electricity_usd_per_kwh == pytest.approx(statistics.median(cents) / 100, abs=5e-4)


def test_pue_is_the_uptime_2023_survey_average() -> None:
    (row,) = [
        r
        for r in _energy_rows()
        if r["metric"] == "data center PUE (industry average)" and r["period"] == "2023"
    ]
    assert Assumptions().pue == float(row["value"])


def test_unsourced_defaults_say_so() -> None:
    assert "planning convention" in DEFAULT_SOURCES["spot_replacement_hours"]
    assert "planning convention" in DEFAULT_SOURCES["checkpoint_interval_hours"]
    assert "planning convention" in DEFAULT_SOURCES["spot_reclaims_per_instance_month"]
    assert "planning convention" in DEFAULT_SOURCES["max_accelerators_per_job"]


def test_sources_mark_what_the_request_changed() -> None:
    sources = Assumptions(pue=1.2, horizon_months=24).sources()
    assert sources["pue"] == "set by the request"
    assert sources["horizon_months"] == "set by the request"
    assert sources["electricity_usd_per_kwh"] == DEFAULT_SOURCES["electricity_usd_per_kwh"]


def test_no_reserved_discount_is_assumed_unless_the_user_gives_one() -> None:
    assert Assumptions().reserved_discount("aws", 3) is None
    assert Assumptions().reserved_discount("mithril", 1) is None
    mine = Assumptions(reserved_discounts_by_provider=(("lambda", 0.2, 0.4),))
    assert mine.reserved_discount("lambda", 3) == (0.4, "assumptions.reserved_discounts_by_provider")
    assert mine.reserved_discount("aws", 3) is None
    everyone = Assumptions(reserved_1y_discount=0.1)
    assert everyone.reserved_discount("aws", 1) == (0.1, "assumptions.reserved_1y_discount")
    assert everyone.reserved_discount("aws", 3) is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"horizon_months": 0}, "assumptions.horizon_months"),
        ({"pue": 0.9}, "assumptions.pue"),
        ({"electricity_usd_per_kwh": float("nan")}, "assumptions.electricity_usd_per_kwh"),
        ({"residual_value_fraction": 1.5}, "assumptions.residual_value_fraction"),
        ({"target_utilisation": 0.0}, "assumptions.target_utilisation"),
        ({"reserved_3y_discount": 1.0}, "assumptions.reserved_3y_discount"),
        (
            {"reserved_discounts_by_provider": (("aws", 0.4, 1.2),)},
            "assumptions.reserved_discounts_by_provider",
        ),
        ({"hardware_lead_time_months": -1}, "assumptions.hardware_lead_time_months"),
        ({"host_vm_usd_per_accelerator_hour": -1.0}, "assumptions.host_vm_usd_per_accelerator_hour"),
    ],
)
def test_invalid_values_name_the_field(change: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidSpec) as error:
        Assumptions(**change)  # type: ignore[arg-type]
    assert error.value.field == field
