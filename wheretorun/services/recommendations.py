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
    recommendation_json,
    recommendation_read,
)

__all__ = ["recommend_for", "recommendation_json_for", "run_recommendation"]


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
    return recommendation_read(_recommendation(session, body, snapshots), body.limit)


def recommendation_json_for(
    session: Session, body: RecommendationCreate, snapshots: SnapshotCache
) -> tuple[bytes, int]:
    """`recommend_for`'s answer as JSON bytes (the same to the byte as its read model written by
    `TypeAdapter(RecommendationRead)`), and how many candidates were evaluated."""
    recommendation = _recommendation(session, body, snapshots)
    return recommendation_json(recommendation, body.limit), recommendation.candidates_evaluated


def _recommendation(session: Session, body: RecommendationCreate, snapshots: SnapshotCache) -> Recommendation:
    # a read of "now" (as_of None) has no version to look up first
    as_of = (
        None
        if reads_now(body)
        else read_point(session, body.as_of, body.catalog_version, "body.catalog_version").as_of
    )
    return run_recommendation(
        session, body.workload, body.constraints, body.assumptions, as_of, snapshots, limit=body.limit
    )
