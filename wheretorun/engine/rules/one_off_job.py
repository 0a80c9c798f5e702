"""Hardware bought for one batch job (`one_off_job`): buying hardware for a single job only makes
sense when it is resold at once, which the money model cannot value honestly (used-GPU prices are
not in the catalog). Recurring work belongs in an inference workload (steady traffic) or a
training workload (runs per year).
"""

from __future__ import annotations

from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection

__all__ = ["purchase_for_one_job"]


def purchase_for_one_job() -> Rejection:
    """Owned and local hardware for a batch workload: always rejected."""
    return Rejection(
        RejectReason.ONE_OFF_JOB,
        "owned and local hardware: buying hardware for one batch job is not costed; describe recurring "
        "work as an inference or training workload",
    )
