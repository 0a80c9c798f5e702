"""`/v1/estimates`: memory, speed and training time of a model on an accelerator.

The handlers are `async`: an estimate that needs no database read (`estimate_*_from_memory`: the
catalog's state is known and its specs are in memory) is a fraction of a millisecond of arithmetic,
answered on the event loop with a session that never begins; any other runs in a worker thread
(`deps.memory_or_database`, which owns that session as `get_session` would, without the cost of a
dependency that yields: ~45 us of an estimate's ~400 in process). (A plain `def` handler would take
two worker-thread hops per request: the handler and the validation of its answer.)
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from wheretorun.api.deps import memory_or_database
from wheretorun.pricing.snapshot import SnapshotCache
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


def _snapshots(http: Request) -> SnapshotCache:
    """The app's catalog snapshots (what `deps.SnapshotsDep` gives), read here: a dependency
    costs its resolution each request (~66,000 instructions of an estimate's ~2.01M, 2026-12-05)."""
    snapshots: SnapshotCache = http.app.state.snapshots
    return snapshots


@router.post(
    "/inference",
    operation_id="estimate_inference",
    response_model=InferenceEstimateRead,
    status_code=200,
    responses=INVALID,
)
async def estimate_inference(http: Request, request: InferenceEstimateCreate) -> InferenceEstimateRead:
    """Memory, time to first token, time per output token and throughput of serving `model` on
    `accelerator_count` x `accelerator`. A deployment too big for the memory is a 200 with
    `memory.fits: false` and the shortfall."""
    catalog = _snapshots(http)
    return await memory_or_database(
        http,
        lambda session: estimates.estimate_inference_from_memory(session, request, catalog),
        lambda session: estimates.estimate_inference(session, request, catalog),
    )


@router.post(
    "/training",
    operation_id="estimate_training",
    response_model=TrainingEstimateRead,
    status_code=200,
    responses=INVALID,
)
async def estimate_training(http: Request, request: TrainingEstimateCreate) -> TrainingEstimateRead:
    """Memory per accelerator, FLOPs, MFU, accelerator-hours and wall-clock hours of a training or
    fine-tuning job."""
    catalog = _snapshots(http)
    return await memory_or_database(
        http,
        lambda session: estimates.estimate_training_from_memory(session, request, catalog),
        lambda session: estimates.estimate_training(session, request, catalog),
    )
