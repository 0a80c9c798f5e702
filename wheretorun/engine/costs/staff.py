"""Operations staff: full-time equivalents that scale with the accelerators run, with a minimum.

    staff FTE = max(minimum FTE of the option kind, accelerators / accelerators_per_staff_fte)

The minimum per deployment is configiq's FTE share of the option kind (owned 0.25, rented 0.2,
hosted and local 0.05 FTE at $18,000 per FTE-month; `assumptions.py` cites them). Above it staff
grows with the fleet: one FTE per `accelerators_per_staff_fte` accelerators (250: the TeraGrid
rule of thumb, "sites add one FTE for roughly every 250 processors", Roskies & Zacharia, CTWatch
Quarterly 2(2), May 2006; processors then, accelerators here, which no public source measures).

A plan shows the minimum as "operations staff" (paid whatever the volume: the fixed part that a
marginal cost leaves out) and what the fleet adds above it as "operations staff per accelerator".
Jobs (batch, training runs) pay staff for the months they run; serving for the horizon.
"""

from __future__ import annotations

from typing import TypeVar

from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.costs.arrays import FloatArray
from wheretorun.engine.costs.candidate import FIXED_STAFF_LINES, Line

__all__ = [
    "FIXED_STAFF_LINES",
    "SCALED_STAFF",
    "STAFF",
    "fleet_staff_usd",
    "staff_amounts",
    "staff_fte",
    "staff_lines",
]

_Amount = TypeVar("_Amount", float, FloatArray)

STAFF = "operations staff"
SCALED_STAFF = "operations staff per accelerator"


def staff_fte(minimum_usd_per_month: float, accelerators: float, assumptions: Assumptions) -> float:
    """FTE for a deployment of `accelerators` (average over the time it runs)."""
    minimum = minimum_usd_per_month / assumptions.staff_usd_per_fte_month
    return max(minimum, accelerators / assumptions.accelerators_per_staff_fte)


def fleet_staff_usd(accelerators: _Amount, months: _Amount, assumptions: Assumptions) -> _Amount:
    """What the staff for `accelerators` costs over `months` at the fleet rate, before the
    minimum (a float, or an array of them for many fleets at once)."""
    a = assumptions
    return accelerators / a.accelerators_per_staff_fte * a.staff_usd_per_fte_month * months


def staff_amounts(
    minimum_usd_per_month: float, accelerators: float, months: float, assumptions: Assumptions
) -> tuple[float, float | None]:
    """The amounts of `staff_lines` without their notes (what a total read without the lines
    adds): the minimum (`STAFF`), and what the fleet adds above it (`SCALED_STAFF`; None when
    it needs no more). Two floats, not named pairs: `staff_lines` is called ~120 times for a
    batch request, and each object here costs it (2026-12-05)."""
    fixed = minimum_usd_per_month * months
    scaled = fleet_staff_usd(accelerators, months, assumptions)
    return fixed, (scaled - fixed if scaled > fixed else None)


def staff_lines(
    minimum_usd_per_month: float,
    accelerators: float,
    months: float,
    assumptions: Assumptions,
    note: str,
) -> tuple[Line, ...]:
    """The fixed minimum line, and the scaled line when the fleet needs more than the minimum."""
    a = assumptions
    fixed, above = staff_amounts(minimum_usd_per_month, accelerators, months, a)
    minimum = Line(STAFF, fixed, f"{note}; the minimum per deployment")
    if above is None:
        return (minimum,)
    scaled_note = (
        f"{accelerators:,.1f} accelerators / {a.accelerators_per_staff_fte:g} per FTE x "
        f"${a.staff_usd_per_fte_month:,.0f} per FTE-month, above the minimum"
    )
    return (minimum, Line(SCALED_STAFF, above, scaled_note))
