"""A weight or compute format the hardware cannot run (`unsupported_precision`): the serving
engines have no kernels for it on that chip (fp8 before Hopper/Ada, bf16 on Volta and Turing
unless a same-bytes format stands in; capacity.py), or the chip trains in neither bf16 nor fp16.

It applies before sizing: a format that cannot run has no speed to estimate.
"""

from __future__ import annotations

from wheretorun.engine.precision import Precision
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.specs import AcceleratorSpec

__all__ = ["serving", "training"]


def serving(accelerator: AcceleratorSpec, precision: Precision) -> Rejection | None:
    """Serving weights at `precision` on `accelerator`."""
    problem = accelerator.serving_problem(precision)
    return None if problem is None else Rejection(RejectReason.UNSUPPORTED_PRECISION, problem)


def training(accelerator: AcceleratorSpec) -> Rejection:
    """Training on a chip with neither bf16 nor fp16 mixed precision."""
    return Rejection(RejectReason.UNSUPPORTED_PRECISION, accelerator.training_problem(Precision.BF16) or "")
