"""Work that cannot be done in time (`misses_deadline`).

* owned hardware that arrives after the planning horizon ends (`hardware_lead_time_months`);
* a batch job that needs more than `assumptions.max_accelerators_per_job` accelerators to finish
  by its deadline;
* a training run that, on at most that many accelerators, takes longer than its limit: the
  deadline, shortened on spot by its interruption overhead, and on capacity held all year by
  the share of the year each run may take.
"""

from __future__ import annotations

from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection

__all__ = ["batch_deadline", "lead_time", "training_run"]


def lead_time(lead_time_months: int, horizon_months: int) -> Rejection | None:
    """Hardware whose delivery comes at or after the end of the horizon."""
    if lead_time_months >= horizon_months:
        return Rejection(RejectReason.MISSES_DEADLINE, "the hardware arrives after the planning horizon ends")
    return None


def batch_deadline(max_accelerators: int, accelerator_id: str, deadline_hours: float) -> Rejection:
    """A batch job that needs more accelerators than a job may use to finish in time."""
    return Rejection(
        RejectReason.MISSES_DEADLINE,
        f"more than {max_accelerators} accelerators of {accelerator_id} needed to finish in "
        f"{deadline_hours:g} h",
    )


def training_run(
    most_accelerators: int, accelerator: str, best_hours: float, limit_hours: float
) -> Rejection:
    """A training run slower than its limit on every allowed size and setting."""
    return Rejection(
        RejectReason.MISSES_DEADLINE,
        f"the fastest run on at most {most_accelerators} x {accelerator} takes {best_hours:,.1f} h "
        f"> {limit_hours:,.1f} h allowed (every setting searched)",
    )
