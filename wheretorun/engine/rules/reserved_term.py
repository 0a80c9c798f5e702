"""A reservation without a commitment term (`unpriced`): a reserved plan is priced only from the
user's own discount for the provider (`assumptions.reserved_discounts_by_provider`) or from a
commitment term the provider publishes (`offer.commitments`, costs/cloud.reserved_rate); a
provider with neither has no reserved plan: no discount is ever assumed. A term is paid in full,
also past the horizon (costs/cloud.committed_months).

It applies when the offer is priced, as the reserved modes' form of missing_price.py.
"""

from __future__ import annotations

from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.missing_price import mode_price
from wheretorun.engine.rules.rejection import Rejection

__all__ = ["no_term"]


def no_term(pricing: str) -> Rejection:
    """A reserved mode (`reserved_1y`, `reserved_3y`) of an offer with no committed price."""
    return Rejection(
        RejectReason.UNPRICED,
        mode_price(pricing).detail + " (the provider publishes no commitment term in the catalog; give "
        "assumptions.reserved_discounts_by_provider to plan one)",
    )
