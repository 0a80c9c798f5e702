"""`/v1/estimates`: memory, speed and training time of a model on an accelerator.

The handlers are `async`: an estimate that needs no database read (`estimate_*_from_memory`: the
catalog's state is known and its specs are in memory) is a fraction of a millisecond of arithmetic,
answered on the event loop; any other runs in a worker thread. (A plain `def` handler would take
two worker-thread hops per request: the handler and the validation of its answer.)
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool

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
async def estimate_inference(
    session: SessionDep, catalog: SnapshotsDep, request: InferenceEstimateCreate
) -> InferenceEstimateRead:
    """Memory, time to first token, time per output token and throughput of serving `model` on
    `accelerator_count` x `accelerator`. A deployment too big for the memory is a 200 with
    `memory.fits: false` and the shortfall."""
    answer = estimates.estimate_inference_from_memory(session, request, catalog)
    if answer is not None:
        return answer
    return await run_in_threadpool(estimates.estimate_inference, session, request, catalog)


@router.post(
    "/training",
    operation_id="estimate_training",
    response_model=TrainingEstimateRead,
    status_code=200,
    responses=INVALID,
)
async def estimate_training(
    session: SessionDep, catalog: SnapshotsDep, request: TrainingEstimateCreate
) -> TrainingEstimateRead:
    """Memory per accelerator, FLOPs, MFU, accelerator-hours and wall-clock hours of a training or
    fine-tuning job."""
    answer = estimates.estimate_training_from_memory(session, request, catalog)
    if answer is not None:
        return answer
    return await run_in_threadpool(estimates.estimate_training, session, request, catalog)
