"""Estimate requests: resolve catalog references, build the engine's inputs, run the engine, answer
the read model (`estimate_schemas.py` holds both the request and the read models).

Impossible inputs come back as `InvalidInput` naming the request field (`body.model.layers`,
`body.tensor_parallel`), whether pydantic, the catalog or the engine found them. That includes a
precision the accelerator cannot run (`body.weight_precision`, `body.precision`: V100 has no bf16,
T4 no fp8; `precision_support.csv`), and an inference estimate on an accelerator whose compute
peak is unknown (`body.accelerator`): its prefill cannot be estimated, and a throughput from
decode alone would be wrong, so none is given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from wheretorun import engine
from wheretorun.errors import InvalidInput, NotFound
from wheretorun.pricing.snapshot import CatalogSpecs, NotInMemory, SnapshotCache
from wheretorun.pricing.sources.precisions import precision_support_table
from wheretorun.services.engine_call import engine_call
from wheretorun.services.estimate_schemas import (
    AcceleratorSpecIn,
    InferenceEstimateCreate,
    InferenceEstimateRead,
    ModelArchitectureIn,
    TrainingEstimateCreate,
    TrainingEstimateRead,
)

_Read = TypeVar("_Read", InferenceEstimateRead, TrainingEstimateRead)

__all__ = [
    "estimate_inference",
    "estimate_inference_from_memory",
    "estimate_training",
    "estimate_training_from_memory",
    "resolve_accelerator",
    "resolve_model",
]


def resolve_model(
    session: Session, catalog: CatalogSpecs, ref: str | ModelArchitectureIn, field: str
) -> engine.ModelArchitecture:
    """A catalog model by id (looked up once per catalog state), or the spec object sent."""
    if isinstance(ref, str):
        try:
            return catalog.model_architecture(session, ref, field)
        except NotFound as error:
            raise InvalidInput(field, f"no catalog model {ref!r} (GET /v1/models lists them)") from error
    values = ref.model_dump()
    values["attention"] = engine.AttentionKind(values["attention"])
    return engine_call(field, lambda: engine.ModelArchitecture(**values))


def resolve_accelerator(
    session: Session, catalog: CatalogSpecs, ref: str | AcceleratorSpecIn, field: str
) -> engine.AcceleratorSpec:
    """A catalog accelerator by id or alias (looked up once per catalog state), or the spec sent."""
    if isinstance(ref, str):
        try:
            return catalog.accelerator_spec(session, ref, field)
        except NotFound as error:
            raise InvalidInput(
                field, f"no catalog accelerator {ref!r} (GET /v1/accelerators lists them)"
            ) from error
    values = ref.model_dump()
    values["memory_kind"] = engine.MemoryKind(values["memory_kind"])
    values["precision_support"] = precision_support_table().get(values["family"])
    return engine_call(field, lambda: engine.AcceleratorSpec(**values))


def _precision(value: str, field: str) -> engine.Precision:
    return engine_call("body", lambda: engine.parse_precision(value, field))


def estimate_inference(
    session: Session, request: InferenceEstimateCreate, snapshots: SnapshotCache
) -> InferenceEstimateRead:
    return _inference(session, request, snapshots.specs(session))


def estimate_inference_from_memory(
    session: Session, request: InferenceEstimateCreate, snapshots: SnapshotCache
) -> InferenceEstimateRead | None:
    """The estimate, when it needs no database read (the catalog's state is known without asking
    and every catalog name in the request is in memory for it), else None. Such an estimate is a
    fraction of a millisecond of arithmetic; the API answers it on the event loop."""
    return _from_memory(session, snapshots, lambda specs: _inference(session, request, specs))


def estimate_training_from_memory(
    session: Session, request: TrainingEstimateCreate, snapshots: SnapshotCache
) -> TrainingEstimateRead | None:
    """`estimate_inference_from_memory`, for training."""
    return _from_memory(session, snapshots, lambda specs: _training(session, request, specs))


def _from_memory(
    session: Session, snapshots: SnapshotCache, estimate: Callable[[CatalogSpecs], _Read]
) -> _Read | None:
    specs = snapshots.specs_in_memory(session)
    if specs is None:
        return None
    try:
        return estimate(specs.in_memory_only())
    except NotInMemory:
        return None


def _inference(
    session: Session, request: InferenceEstimateCreate, catalog: CatalogSpecs
) -> InferenceEstimateRead:
    model = resolve_model(session, catalog, request.model, "body.model")
    accelerator = resolve_accelerator(session, catalog, request.accelerator, "body.accelerator")
    speculative = None
    if request.speculative is not None:
        draft = resolve_model(
            session, catalog, request.speculative.draft_model, "body.speculative.draft_model"
        )
        speculative = engine_call(
            "body",
            lambda: engine.SpeculativeDecoding(
                draft_model=draft,
                draft_tokens=request.speculative.draft_tokens,  # type: ignore[union-attr]
                acceptance_rate=request.speculative.acceptance_rate,  # type: ignore[union-attr]
            ),
        )
    offload = None
    if request.cpu_offload is not None:
        offload = engine_call("body", lambda: engine.CpuOffload(**request.cpu_offload.model_dump()))  # type: ignore[union-attr]
    config = engine_call(
        "body",
        lambda: engine.InferenceConfig(
            accelerator_count=request.accelerator_count,
            weight_precision=_precision(request.weight_precision, "weight_precision"),
            kv_cache_precision=_precision(request.kv_cache_precision, "kv_cache_precision"),
            engine=engine.ServingEngine(request.engine),
            input_tokens=request.input_tokens,
            output_tokens=request.output_tokens,
            concurrency=request.concurrency,
            tensor_parallel=request.tensor_parallel,
            pipeline_parallel=request.pipeline_parallel,
            ttft_target_ms=request.ttft_target_ms,
            tpot_target_ms=request.tpot_target_ms,
            speculative=speculative,
            cpu_offload=offload,
        ),
    )
    _require_compute_peak(accelerator, config.weight_precision)
    estimate = engine_call("body", lambda: engine.estimate_inference(model, accelerator, config))
    return InferenceEstimateRead.model_validate(_named(estimate, model, accelerator), from_attributes=True)


def _require_compute_peak(accelerator: engine.AcceleratorSpec, precision: engine.Precision) -> None:
    """An inference estimate needs the compute peak (prefill is compute-bound); a precision the
    accelerator cannot serve is left to the engine, which names `weight_precision`."""
    if accelerator.serving_problem(precision) is not None:
        return
    missing = accelerator.compute_peak_problem(precision)
    if missing is not None:
        raise InvalidInput("body.accelerator", f"{missing}; pass a spec object with bf16_tflops instead")


def estimate_training(
    session: Session, request: TrainingEstimateCreate, snapshots: SnapshotCache
) -> TrainingEstimateRead:
    return _training(session, request, snapshots.specs(session))


def _training(
    session: Session, request: TrainingEstimateCreate, catalog: CatalogSpecs
) -> TrainingEstimateRead:
    model = resolve_model(session, catalog, request.model, "body.model")
    accelerator = resolve_accelerator(session, catalog, request.accelerator, "body.accelerator")
    fields = request.model_dump(exclude={"model", "accelerator"})
    fields["method"] = engine.TrainingMethod(fields["method"])
    fields["precision"] = _precision(request.precision, "precision")
    config = engine_call("body", lambda: engine.TrainingConfig(**fields))
    estimate = engine_call("body", lambda: engine.estimate_training(model, accelerator, config))
    return TrainingEstimateRead.model_validate(_named(estimate, model, accelerator), from_attributes=True)


def _named(
    estimate: engine.InferenceEstimate | engine.TrainingEstimate,
    model: engine.ModelArchitecture,
    accelerator: engine.AcceleratorSpec,
) -> dict[str, Any]:
    """The estimate's fields, with the model and accelerator it is for. Its nested values stay
    dataclasses, read by attribute (`from_attributes`): `dataclasses.asdict` deep-copies them,
    ~20 us a request for the same answer."""
    fields = {name: getattr(estimate, name) for name in _field_names(type(estimate))}
    return {"model": model.name, "accelerator": accelerator.name, **fields}


_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _field_names(kind: type[Any]) -> tuple[str, ...]:
    """The dataclass's field names, read once: `dataclasses.fields` costs ~0.7 us a call."""
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(field.name for field in dataclasses.fields(kind))
    return names
