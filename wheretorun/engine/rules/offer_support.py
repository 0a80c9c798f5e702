"""Offers the planner does not model (`unsupported_offer`): GPU slices (a fraction of a GPU, such
as AWS g6f) and hardware bought as an option it is not: TPUs are not sold, and a part of one kind
(consumer, workstation, datacenter) is not a candidate for an option of another.

It applies after the request's constraints and before any spec fact is needed.
"""

from __future__ import annotations

from decimal import Decimal

from wheretorun.engine.catalog import AcceleratorEntry
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.workload import OptionKind

__all__ = ["LOCAL_KINDS", "OWNED_KINDS", "gpu_slice", "purchasable"]

OWNED_KINDS = frozenset({"datacenter", "workstation", "other"})  # bought as servers
LOCAL_KINDS = frozenset({"workstation", "consumer"})  # bought as one card for one user


def gpu_slice(accelerator_count: Decimal) -> Rejection | None:
    """An instance with less than one whole accelerator, or a fractional count."""
    if accelerator_count >= 1 and accelerator_count == accelerator_count.to_integral_value():
        return None
    return Rejection(
        RejectReason.UNSUPPORTED_OFFER, f"{accelerator_count} of a GPU: GPU slices are not modelled"
    )


def purchasable(entry: AcceleratorEntry, kind: OptionKind) -> Rejection | None:
    """`entry` bought as `kind` (owned servers or a local card)."""
    allowed = OWNED_KINDS if kind == OptionKind.OWNED else LOCAL_KINDS
    if entry.kind in allowed:
        return None
    what = "TPUs are not sold" if entry.kind == "tpu" else f"a {entry.kind} part is not a {kind.value} option"
    return Rejection(RejectReason.UNSUPPORTED_OFFER, what)
