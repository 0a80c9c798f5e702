"""What a recommendation is asked for: a workload, the constraints on where it may run, and the
assumptions of the money model.

All values validate on construction and raise `InvalidSpec(field, reason)` with the request path
of the field (`workload.requests_per_day`, `assumptions.pue`). Defaults of `Assumptions` live in
`engine/assumptions.py` with the source of each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from wheretorun.engine.errors import InvalidSpec

__all__ = [
    "BatchWorkload",
    "Constraints",
    "InferenceWorkload",
    "OptionKind",
    "TrainingWorkload",
    "Workload",
]


class OptionKind(StrEnum):
    HOSTED_API = "hosted_api"
    CLOUD = "cloud"
    OWNED = "owned"
    LOCAL = "local"
    HYBRID = "hybrid"


def _require(condition: bool, field: str, reason: str) -> None:
    if not condition:
        raise InvalidSpec(field, reason)


def _finite_at_least(value: float, minimum: float, field: str) -> None:
    _require(math.isfinite(value) and value >= minimum, field, f"must be at least {minimum}, got {value}")


@dataclass(frozen=True, slots=True)
class InferenceWorkload:
    """Online serving. `models` lists acceptable catalog models (open or hosted), best first.

    Traffic is `requests_per_day` with either a `peak_to_average` ratio or a 24-value
    `hourly_profile` (relative weights per hour of the day, any scale). `redundancy` is the
    number of spare replicas kept for failures (N+1 = 1).
    """

    models: tuple[str, ...]
    requests_per_day: float
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0  # of `input_tokens`, the part served from a prompt cache
    peak_to_average: float = 1.0
    hourly_profile: tuple[float, ...] | None = None
    growth_per_month: float = 0.0  # fractional: 0.05 = +5% a month
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    redundancy: int = 0

    def __post_init__(self) -> None:
        _require(len(self.models) >= 1, "workload.model", "name at least one model")
        _finite_at_least(self.requests_per_day, 0, "workload.requests_per_day")
        _require(self.input_tokens >= 1, "workload.input_tokens", "must be at least 1")
        _require(self.output_tokens >= 1, "workload.output_tokens", "must be at least 1")
        _require(
            0 <= self.cached_input_tokens <= self.input_tokens,
            "workload.cached_input_tokens",
            "must be between 0 and input_tokens",
        )
        _finite_at_least(self.peak_to_average, 1, "workload.peak_to_average")
        if self.hourly_profile is not None:
            _require(
                len(self.hourly_profile) == 24, "workload.hourly_profile", "needs 24 values, one per hour"
            )
            _require(
                all(math.isfinite(v) and v >= 0 for v in self.hourly_profile)
                and sum(self.hourly_profile) > 0,
                "workload.hourly_profile",
                "values must be non-negative and not all zero",
            )
        _require(
            math.isfinite(self.growth_per_month) and self.growth_per_month > -1,
            "workload.growth_per_month",
            "must be greater than -1",
        )
        for name in ("ttft_ms", "tpot_ms"):
            target = getattr(self, name)
            _require(
                target is None or (math.isfinite(target) and target > 0),
                f"workload.{name}",
                "must be positive",
            )
        _require(self.redundancy >= 0, "workload.redundancy", "must not be negative")

    @property
    def hourly_shape(self) -> tuple[float, ...]:
        """24 multipliers of the average rate: the profile normalised to mean 1, or a flat day
        whose peak hour is `peak_to_average` when no profile is given."""
        if self.hourly_profile is not None:
            mean = sum(self.hourly_profile) / 24
            return tuple(v / mean for v in self.hourly_profile)
        if self.peak_to_average == 1:
            return (1.0,) * 24
        # one peak hour at `peak_to_average`, the other 23 share the rest evenly
        rest = (24 - self.peak_to_average) / 23
        return (self.peak_to_average, *([max(rest, 0.0)] * 23))

    @property
    def peak_multiplier(self) -> float:
        return max(self.hourly_shape)


@dataclass(frozen=True, slots=True)
class BatchWorkload:
    """Offline processing of a token volume by a deadline (one job)."""

    models: tuple[str, ...]
    input_tokens_total: float
    output_tokens_total: float
    deadline_hours: float
    input_tokens_per_request: int = 1024
    output_tokens_per_request: int = 256

    def __post_init__(self) -> None:
        _require(len(self.models) >= 1, "workload.model", "name at least one model")
        _finite_at_least(self.input_tokens_total, 0, "workload.input_tokens_total")
        _finite_at_least(self.output_tokens_total, 0, "workload.output_tokens_total")
        _require(
            self.input_tokens_total + self.output_tokens_total > 0,
            "workload.output_tokens_total",
            "a batch needs some tokens",
        )
        _require(
            math.isfinite(self.deadline_hours) and self.deadline_hours > 0,
            "workload.deadline_hours",
            "must be positive",
        )
        _require(
            self.input_tokens_per_request >= 1, "workload.input_tokens_per_request", "must be at least 1"
        )
        _require(
            self.output_tokens_per_request >= 1, "workload.output_tokens_per_request", "must be at least 1"
        )


@dataclass(frozen=True, slots=True)
class TrainingWorkload:
    """A training or fine-tuning job, repeated `runs_per_year` times."""

    model: str
    method: str  # full | lora | qlora
    tokens: float  # dataset tokens x epochs, per run
    deadline_hours: float | None = None
    runs_per_year: float = 1.0
    sequence_length: int = 2048

    def __post_init__(self) -> None:
        _require(self.method in ("full", "lora", "qlora"), "workload.method", "must be full, lora or qlora")
        _require(math.isfinite(self.tokens) and self.tokens > 0, "workload.tokens", "must be positive")
        _require(
            self.deadline_hours is None or (math.isfinite(self.deadline_hours) and self.deadline_hours > 0),
            "workload.deadline_hours",
            "must be positive",
        )
        _require(
            math.isfinite(self.runs_per_year) and self.runs_per_year > 0,
            "workload.runs_per_year",
            "must be positive",
        )
        _require(self.sequence_length >= 1, "workload.sequence_length", "must be at least 1")


Workload = InferenceWorkload | BatchWorkload | TrainingWorkload


@dataclass(frozen=True, slots=True)
class Constraints:
    """Where the workload may run. Empty tuples mean "no restriction"."""

    on_premises_only: bool = False
    allowed_providers: tuple[str, ...] = ()
    excluded_providers: tuple[str, ...] = ()
    allowed_regions: tuple[str, ...] = ()
    allowed_accelerators: tuple[str, ...] = ()
    excluded_accelerators: tuple[str, ...] = ()
    allowed_options: tuple[OptionKind, ...] = ()
    min_precision: str | None = None  # e.g. "int8": nothing below 8-bit weights
    max_usd_per_month: float | None = None
    max_capex_usd: float | None = None
    # Prices the catalog flags as suspect (pricing/plausibility.py) are left out unless this is set.
    include_suspect_prices: bool = False

    def __post_init__(self) -> None:
        for name in ("max_usd_per_month", "max_capex_usd"):
            cap = getattr(self, name)
            _require(
                cap is None or (math.isfinite(cap) and cap >= 0),
                f"constraints.{name}",
                "must not be negative",
            )
        overlap = set(self.allowed_providers) & set(self.excluded_providers)
        _require(not overlap, "constraints.excluded_providers", f"also allowed: {sorted(overlap)}")
