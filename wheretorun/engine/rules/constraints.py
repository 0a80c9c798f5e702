"""The request's own limits (`violates_constraint`): providers, accelerators, option kinds and
the precision floor.

* `allowed_providers` / `excluded_providers`: cloud and hosted-API providers (owned and local
  hardware has no provider and passes).
* `allowed_accelerators` / `excluded_accelerators`: catalog accelerator ids.
* `allowed_options`: option kinds.
* `min_precision`: no weights below that many nominal bits (hosted APIs do not publish theirs:
  they pass, with a risk).

They apply right after data residency: they are the user's choices, checked before any fact about
the hardware or the price.
"""

from __future__ import annotations

from wheretorun.engine.precision import Precision, parse_precision
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.workload import Constraints, OptionKind

__all__ = [
    "accelerator",
    "min_bits",
    "nominal_bits",
    "option",
    "precision_allowed",
    "precision_floor",
    "provider",
]

_BITS = {
    Precision.FP32: 32,
    Precision.BF16: 16,
    Precision.FP16: 16,
    Precision.GGUF_F16: 16,
    Precision.FP8: 8,
    Precision.INT8: 8,
    Precision.GGUF_Q8_0: 8,
    Precision.GGUF_Q6_K: 6,
    Precision.GGUF_Q5_K_M: 5,
}


def option(kind: OptionKind, constraints: Constraints) -> Rejection | None:
    """An option kind outside `allowed_options`."""
    if constraints.allowed_options and kind not in constraints.allowed_options:
        return Rejection(RejectReason.VIOLATES_CONSTRAINT, f"option {kind.value} is not allowed")
    return None


def provider(name: str, constraints: Constraints) -> Rejection | None:
    if constraints.allowed_providers and name not in constraints.allowed_providers:
        return Rejection(RejectReason.VIOLATES_CONSTRAINT, f"provider {name} is not allowed")
    if name in constraints.excluded_providers:
        return Rejection(RejectReason.VIOLATES_CONSTRAINT, f"provider {name} is excluded")
    return None


def accelerator(accelerator_id: str, constraints: Constraints) -> Rejection | None:
    if constraints.allowed_accelerators and accelerator_id not in constraints.allowed_accelerators:
        return Rejection(RejectReason.VIOLATES_CONSTRAINT, f"accelerator {accelerator_id} is not allowed")
    if accelerator_id in constraints.excluded_accelerators:
        return Rejection(RejectReason.VIOLATES_CONSTRAINT, f"accelerator {accelerator_id} is excluded")
    return None


def nominal_bits(precision: Precision) -> int:
    """Nominal bits per weight (scales excluded): 16 for bf16, 8 for fp8/int8, 4 for 4-bit formats."""
    return _BITS.get(precision, 4)


def min_bits(constraints: Constraints) -> int:
    """The precision floor in nominal bits (0 without one)."""
    floor = constraints.min_precision
    return 0 if floor is None else nominal_bits(parse_precision(floor, "constraints.min_precision"))


def precision_allowed(precision: Precision, floor_bits: int) -> bool:
    """Weights at `precision` meet a floor of `floor_bits` nominal bits."""
    return nominal_bits(precision) >= floor_bits


def precision_floor(precision: Precision, constraints: Constraints) -> Rejection | None:
    """Weights at `precision` below `min_precision`."""
    if precision_allowed(precision, min_bits(constraints)):
        return None
    return Rejection(
        RejectReason.VIOLATES_CONSTRAINT, f"below the precision floor {constraints.min_precision}"
    )
