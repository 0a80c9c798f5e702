"""Data residency (`violates_data_residency`): where the data may be processed.

* `constraints.on_premises_only`: only owned and local hardware; hosted APIs and clouds break it.
* `constraints.allowed_regions`: a cloud offer outside them breaks it; hosted APIs publish no
  region, so they break it too; owned and local hardware are on premises and pass.

It applies first: a legal limit outranks every preference and every technical fact.
"""

from __future__ import annotations

from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.workload import Constraints, OptionKind

__all__ = ["cloud_region", "hosted_region", "on_premises"]


def on_premises(kind: OptionKind, constraints: Constraints) -> Rejection | None:
    """Hosted APIs and clouds when the data must stay on premises."""
    if constraints.on_premises_only and kind in (OptionKind.HOSTED_API, OptionKind.CLOUD):
        return Rejection(RejectReason.VIOLATES_DATA_RESIDENCY, "data must stay on premises")
    return None


def cloud_region(region: str, constraints: Constraints) -> Rejection | None:
    """A cloud region outside `allowed_regions` (when the request lists any)."""
    if constraints.allowed_regions and region not in constraints.allowed_regions:
        return Rejection(RejectReason.VIOLATES_DATA_RESIDENCY, f"region {region} is not allowed")
    return None


def hosted_region(constraints: Constraints) -> Rejection | None:
    """A hosted API when regions are restricted: it does not say where it processes data."""
    if constraints.allowed_regions:
        return Rejection(
            RejectReason.VIOLATES_DATA_RESIDENCY, "the hosted API does not say where it processes data"
        )
    return None
