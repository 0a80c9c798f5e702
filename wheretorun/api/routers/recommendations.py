"""`/v1/recommendations`: ranked, explained, costed ways to run a workload."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from sqlalchemy.orm import Session

from wheretorun.api.deps import in_engine_thread_with_session
from wheretorun.pricing.snapshot import SnapshotCache
from wheretorun.services import recommendations, snapshot_recommendations
from wheretorun.services.recommendation_reads import AssumptionRead, RecommendationRead
from wheretorun.services.recommendation_schemas import RecommendationCreate

router = APIRouter(prefix="/v1/recommendations", tags=["recommendations"])

INVALID: dict[int | str, dict[str, Any]] = {
    422: {
        "description": "Invalid input; `errors[].field` names it",
        "content": {"application/problem+json": {}},
    }
}


@router.post("", operation_id="create_recommendation", response_model=RecommendationRead, responses=INVALID)
async def create_recommendation(request: Request, body: RecommendationCreate) -> Response:
    """Compare hosted APIs, cloud rental, owned hardware, local GPUs and a hybrid plan for the
    workload; answer the ranked options, the rejected candidates grouped by rule, the break-even
    between the top options, the assumptions used and the catalog version."""

    # the session and the snapshots taken here rather than as dependencies (see
    # `in_engine_thread_with_session`)
    snapshots: SnapshotCache = request.app.state.snapshots

    def answer(session: Session) -> tuple[bytes, int]:
        # written here, in the worker thread, as the declared `response_model` would write it:
        # FastAPI would otherwise check the model again and write ~50 KB of JSON on the event
        # loop (bench/load_test.py, 2026-12-05); as bytes, since a str is encoded again for the
        # response (~40 us of ~145 for the 50 KB of the 8B prototype's answer, 2026-12-05)
        return recommendations.recommendation_json_for(session, body, snapshots)

    content, evaluated = await in_engine_thread_with_session(request, answer)
    request.app.state.metrics.candidates_evaluated.observe(evaluated)
    # a returned Response is sent as it is: a header or status set by a dependency would not be
    # merged in (none sets one here)
    return Response(content, media_type="application/json")


@router.get(
    "/assumptions", operation_id="list_recommendation_assumptions", response_model=dict[str, AssumptionRead]
)
def list_assumptions() -> dict[str, AssumptionRead]:
    """Every assumption of the money model, its default, and where that default comes from."""
    return snapshot_recommendations.assumption_defaults()
