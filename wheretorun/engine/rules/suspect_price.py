"""Suspect prices (`suspect_price`): a price the catalog's plausibility check flagged (a sudden
drop, a zero, an outlier; pricing/plausibility.py) is left out unless the request sets
`constraints.include_suspect_prices`; then it is a candidate and its option carries the reason
as a risk.

It applies before any sizing: a price nobody trusts should not win a ranking.
"""

from __future__ import annotations

import dataclasses

from wheretorun.engine.catalog import CatalogSnapshot
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.workload import Constraints

__all__ = ["candidates_snapshot", "suspect_price"]


def suspect_price(suspect_reason: str | None, constraints: Constraints) -> Rejection | None:
    """A flagged price, unless the request asked for suspect prices."""
    if suspect_reason is None or constraints.include_suspect_prices:
        return None
    return Rejection(RejectReason.SUSPECT_PRICE, suspect_reason)


def candidates_snapshot(snapshot: CatalogSnapshot, constraints: Constraints) -> CatalogSnapshot:
    """The snapshot the candidates come from: with the suspect prices only when asked for."""
    if not constraints.include_suspect_prices:
        return snapshot
    return dataclasses.replace(
        snapshot,
        cloud_offers=snapshot.cloud_offers + snapshot.suspect_cloud_offers,
        api_prices=snapshot.api_prices + snapshot.suspect_api_prices,
    )
