"""What a rule returns: a `Rejection` (the `RejectReason` reported, and why in words), or None
when the candidate passes.

`RejectReason` (engine/recommendation.py) is the one vocabulary of reasons: the answer groups
rejected candidates by it, and its order is the order the rules apply in.
"""

from __future__ import annotations

from dataclasses import dataclass

from wheretorun.engine.recommendation import RejectReason

__all__ = ["RejectReason", "Rejection"]


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a candidate cannot be a plan: the rule that decided (`reason`) and the facts (`detail`)."""

    reason: RejectReason
    detail: str
