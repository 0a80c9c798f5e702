"""Recommendation requests against the catalog database: the read point, accelerator aliases and
the snapshot cache, around `snapshot_recommendations.py` (which needs no database).

The request and read models are this service's own (`recommendation_schemas.py`,
`recommendation_reads.py`); the HTTP API and the CLI both speak them.
"""

from __future__ import annotations

import datetime as dt
from functools import partial

from sqlalchemy.orm import Session

from wheretorun.engine.recommendation import Recommendation
from wheretorun.pricing.repositories import read_point, resolve_accelerator_id
from wheretorun.pricing.snapshot import SnapshotCache
from wheretorun.services.recommendation_reads import RecommendationRead
from wheretorun.services.recommendation_schemas import (
    AssumptionsIn,
    ConstraintsIn,
    RecommendationCreate,
    WorkloadIn,
)
from wheretorun.services.snapshot_recommendations import (
    engine_inputs,
    reads_now,
    recommend_on_snapshot,
    recommendation_read,
)

__all__ = ["recommend_for", "run_recommendation"]


def run_recommendation(
    session: Session,
    workload: WorkloadIn,
    constraints: ConstraintsIn,
    assumptions: AssumptionsIn,
    as_of: dt.datetime | None,
    snapshots: SnapshotCache,
    prefix: str = "body",
    limit: int | None = None,
) -> Recommendation:
    resolve = partial(resolve_accelerator_id, session)
    inputs = engine_inputs(workload, constraints, assumptions, resolve, prefix)
    return recommend_on_snapshot(inputs, snapshots.get(session, as_of), prefix, limit)


def recommend_for(
    session: Session, body: RecommendationCreate, snapshots: SnapshotCache
) -> RecommendationRead:
    # a read of "now" (as_of None) has no version to look up first
    as_of = (
        None
        if reads_now(body)
        else read_point(session, body.as_of, body.catalog_version, "body.catalog_version").as_of
    )
    recommendation = run_recommendation(
        session, body.workload, body.constraints, body.assumptions, as_of, snapshots, limit=body.limit
    )
    return recommendation_read(recommendation, body.limit)
