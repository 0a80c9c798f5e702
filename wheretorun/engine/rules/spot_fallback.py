"""Spot serving with nothing to fall back on (`no_spot_fallback`): reclaimed spot capacity must be
replaced at once, by the offer's on-demand instances or by the cheapest hosted API of the same
model (spot_reclaims.py prices that fallback as its own line). With neither priced, spot serving
is not a plan. Spot prices themselves follow one rule (costs/cloud.spot_price).

It applies when a spot plan is built, after the offer is priced.
"""

from __future__ import annotations

from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection

__all__ = ["spot_fallback"]


def spot_fallback(pricing: str, fallback_priced: bool) -> Rejection | None:
    """Serving in `pricing` "spot" without a priced fallback (the offer's on-demand price or a
    hosted API; spot_reclaims.serving_fallback)."""
    if pricing != "spot" or fallback_priced:
        return None
    return Rejection(
        RejectReason.NO_SPOT_FALLBACK,
        "no on-demand price and no hosted API to fall back on when spot capacity is reclaimed",
    )
