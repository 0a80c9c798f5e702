"""`/v1/estimates`: memory, speed and training time of a model on an accelerator."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from wheretorun.api.deps import SessionDep, SnapshotsDep
from wheretorun.services import estimates
from wheretorun.services.estimate_schemas import (
    InferenceEstimateCreate,
    InferenceEstimateRead,
    TrainingEstimateCreate,
    TrainingEstimateRead,
)

router = APIRouter(prefix="/v1/estimates", tags=["estimates"])

INVALID: dict[int | str, dict[str, Any]] = {
    422: {
        "description": "An impossible input; `errors[].field` names it",
        "content": {"application/problem+json": {}},
    }
}


@router.post(
    "/inference",
    operation_id="estimate_inference",
    response_model=InferenceEstimateRead,
    status_code=200,
    responses=INVALID,
)
def estimate_inference(
    session: SessionDep, catalog: SnapshotsDep, request: InferenceEstimateCreate
) -> InferenceEstimateRead:
    """Memory, time to first token, time per output token and throughput of serving `model` on
    `accelerator_count` x `accelerator`. A deployment too big for the memory is a 200 with
    `memory.fits: false` and the shortfall."""
    return estimates.estimate_inference(session, request, catalog)


@router.post(
    "/training",
    operation_id="estimate_training",
    response_model=TrainingEstimateRead,
    status_code=200,
    responses=INVALID,
)
def estimate_training(
    session: SessionDep, catalog: SnapshotsDep, request: TrainingEstimateCreate
) -> TrainingEstimateRead:
    """Memory per accelerator, FLOPs, MFU, accelerator-hours and wall-clock hours of a training or
    fine-tuning job."""
    return estimates.estimate_training(session, request, catalog)
