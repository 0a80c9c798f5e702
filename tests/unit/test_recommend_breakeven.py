"""Break-even: where the cheapest of the compared plans changes with volume."""

from __future__ import annotations

import pytest

from wheretorun.engine.costs.candidate import CostedCandidate, Line
from wheretorun.engine.recommendation import Setup
from wheretorun.engine.volume_break_even import volume_break_even
from wheretorun.engine.workload import OptionKind


def _linear(option: OptionKind, fixed: float, per_unit: float, volume: float = 1.0) -> CostedCandidate:
    """A plan costing `fixed` + `per_unit` x volume a month, for 12 months."""
    return CostedCandidate(
        option,
        option.value,
        Setup("m"),
        (Line("fixed", 12 * fixed), Line("usage", 12 * per_unit * volume)),
        months=12,
        reprice=lambda multiplier: _linear(option, fixed, per_unit, volume * multiplier),
    )


def test_the_switch_from_pay_per_use_to_fixed_capacity_is_found() -> None:
    api = _linear(OptionKind.HOSTED_API, 0.0, 100.0)  # $100 a month per unit of volume
    owned = _linear(OptionKind.OWNED, 1000.0, 10.0)  # equal at 1000 / 90 = 11.1 units
    result = volume_break_even([api, owned], "requests_per_day", 1.0)
    assert result is not None
    (crossover,) = result.crossovers
    assert crossover.from_label == "hosted_api"
    assert crossover.to_label == "owned"
    assert crossover.multiplier == pytest.approx(1000 / 90, rel=0.03)
    assert [p.winner for p in result.points][0] == "hosted_api"
    assert [p.winner for p in result.points][-1] == "owned"


def test_no_switch_in_range_is_reported_as_never() -> None:
    cheap = _linear(OptionKind.HOSTED_API, 0.0, 1.0)
    dear = _linear(OptionKind.CLOUD, 1e9, 1.0)
    result = volume_break_even([cheap, dear], "tokens", 5e9)
    assert result is not None
    assert result.crossovers == ()
    assert "never changes" in result.summary
    assert result.points[0].volume == pytest.approx(5e9 / 64)


def test_a_plan_that_cannot_serve_a_volume_drops_out() -> None:
    api = _linear(OptionKind.HOSTED_API, 0.0, 100.0)
    local = CostedCandidate(
        OptionKind.LOCAL,
        "local",
        Setup("m"),
        (Line("card", 120.0),),
        months=12,
        reprice=lambda multiplier: (
            None
            if multiplier > 2
            else CostedCandidate(OptionKind.LOCAL, "local", Setup("m"), (Line("card", 120.0),), months=12)
        ),
    )
    result = volume_break_even([api, local], "requests_per_day", 1.0)
    assert result is not None
    assert result.points[-1].winner == "hosted_api"
    assert all(label != "local" for label, _ in result.points[-1].usd_per_month)


def test_fewer_than_two_plans_have_no_break_even() -> None:
    assert volume_break_even([_linear(OptionKind.HOSTED_API, 0.0, 1.0)], "tokens", 1.0) is None
