"""Monte Carlo: uncertain inputs drawn from distributions, every plan evaluated on every sample.

Samples come from `numpy.random.default_rng(seed)`, drawn input by input in the order given, so
the same distributions, sample count and seed give the same result. The plans are evaluated for
all samples at once (arrays of shape (samples, months)), in chunks that bound the memory used.

Distributions (`low` <= `high`, both values the input can take — see `engine.finance.inputs`):
* `uniform`:    between `low` and `high`;
* `triangular`: between `low` and `high`, most likely at `mode`;
* `lognormal`:  `low` and `high` are its 10th and 90th percentiles (so a planner can say "80%
                sure it is between these"); draws beyond what the input can take are clipped
                to it (a utilisation above 1 counts as 1).
A distribution whose `low` equals its `high` is that constant, exactly.

`probability_cheapest` counts, for each plan, the share of samples in which it costs least; a
tie shares the sample between the tied plans, so the probabilities add up to 1.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.finance.cashflow import Metric, evaluate_settings
from wheretorun.engine.finance.inputs import InputKind, NamedInput, as_member, parse_input
from wheretorun.engine.finance.plan import Scenario

__all__ = [
    "Distribution",
    "DistributionKind",
    "MonteCarloResult",
    "PlanOutcome",
    "monte_carlo",
]

FloatArray = npt.NDArray[np.float64]

_PATH = "monte_carlo"
MAX_SAMPLES = 1_000_000
_CHUNK = 25_000
_Z90 = 1.2815515655446004  # the standard normal's 90th percentile


class DistributionKind(StrEnum):
    UNIFORM = "uniform"
    TRIANGULAR = "triangular"
    LOGNORMAL = "lognormal"


@dataclass(frozen=True, slots=True)
class Distribution:
    input: str
    kind: DistributionKind
    low: float
    high: float
    mode: float | None = None  # triangular only
    plan: str | None = None


@dataclass(frozen=True, slots=True)
class PlanOutcome:
    plan: str
    p10_usd: float
    p50_usd: float
    p90_usd: float
    mean_usd: float
    probability_cheapest: float
    deterministic_usd: float  # the figure with every input as the scenario says


@dataclass(frozen=True, slots=True)
class MonteCarloResult:
    samples: int
    seed: int
    metric: Metric
    plans: tuple[PlanOutcome, ...]
    outcomes_usd: FloatArray = field(compare=False, repr=False)  # (samples, plans), read-only

    def plan(self, name: str) -> PlanOutcome:
        for outcome in self.plans:
            if outcome.plan == name:
                return outcome
        raise KeyError(name)


def monte_carlo(
    scenario: Scenario,
    distributions: Sequence[Distribution],
    samples: int = 10_000,
    seed: int = 0,
    metric: Metric = Metric.TOTAL,
) -> MonteCarloResult:
    """P10/P50/P90 and mean of each plan's `metric`, and the probability that each plan is the
    cheapest, over `samples` draws of `distributions`."""
    _check_run(samples, seed)
    metric = as_member(Metric, metric, f"{_PATH}.metric")
    checked = _checked(scenario, distributions)
    rng = np.random.default_rng(seed)
    draws = [_draw(rng, named, item, samples) for named, item in checked]
    inputs = [named for named, _ in checked]
    outcomes = np.empty((samples, len(scenario.plans)))
    for start in range(0, samples, _CHUNK):
        stop = min(start + _CHUNK, samples)
        settings = [(named, values[start:stop]) for named, values in zip(inputs, draws, strict=True)]
        outcomes[start:stop] = evaluate_settings(scenario, settings, size=stop - start).metric(metric)
    outcomes.flags.writeable = False
    deterministic = evaluate_settings(scenario, (), size=1).metric(metric)[0]
    p10, p50, p90 = np.percentile(outcomes, [10, 50, 90], axis=0)
    cheapest = _probability_cheapest(outcomes)
    plans = tuple(
        PlanOutcome(
            plan=plan.name,
            p10_usd=float(p10[index]),
            p50_usd=float(p50[index]),
            p90_usd=float(p90[index]),
            mean_usd=float(outcomes[:, index].mean()),
            probability_cheapest=float(cheapest[index]),
            deterministic_usd=float(deterministic[index]),
        )
        for index, plan in enumerate(scenario.plans)
    )
    return MonteCarloResult(samples, seed, metric, plans, outcomes)


def _check_run(samples: int, seed: int) -> None:
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        raise InvalidSpec(
            f"{_PATH}.samples", f"must be a whole number from 1 to {MAX_SAMPLES}, got {samples!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidSpec(f"{_PATH}.seed", f"must be a whole number >= 0, got {seed!r}")


def _checked(
    scenario: Scenario, distributions: Sequence[Distribution]
) -> list[tuple[NamedInput, Distribution]]:
    """Each distribution with its parsed input, its kind a `DistributionKind` member."""
    checked: list[tuple[NamedInput, Distribution]] = []
    for index, item in enumerate(distributions):
        path = f"{_PATH}.distributions[{index}]"
        item = dataclasses.replace(item, kind=as_member(DistributionKind, item.kind, f"{path}.kind"))
        named = parse_input(scenario, item.input, item.plan, path)
        if named.kind is InputKind.HORIZON:
            raise InvalidSpec(
                f"{path}.input", "the horizon cannot vary between samples; use a sensitivity range"
            )
        if any(named == seen for seen, _ in checked):
            raise InvalidSpec(f"{path}.input", f"{named.label} already has a distribution")
        _check_distribution(named, item, path)
        checked.append((named, item))
    return checked


def _check_distribution(named: NamedInput, item: Distribution, path: str) -> None:
    named.check_value(item.low, f"{path}.low")
    named.check_value(item.high, f"{path}.high")
    if item.low > item.high:
        raise InvalidSpec(f"{path}.low", f"must not exceed high ({item.high!r}), got {item.low!r}")
    if item.kind is DistributionKind.TRIANGULAR:
        if item.mode is None or not item.low <= item.mode <= item.high:
            raise InvalidSpec(f"{path}.mode", "a triangular distribution needs a mode between low and high")
    elif item.mode is not None:
        raise InvalidSpec(f"{path}.mode", f"only a triangular distribution has a mode, not {item.kind.value}")
    if item.kind is DistributionKind.LOGNORMAL and item.low <= 0:
        raise InvalidSpec(f"{path}.low", "a lognormal distribution needs low > 0 (its 10th percentile)")


def _draw(rng: np.random.Generator, named: NamedInput, item: Distribution, samples: int) -> FloatArray:
    if item.low == item.high:
        return np.full(samples, float(item.low))
    if item.kind is DistributionKind.UNIFORM:
        return rng.uniform(item.low, item.high, samples)
    if item.kind is DistributionKind.TRIANGULAR:
        assert item.mode is not None
        return rng.triangular(item.low, item.mode, item.high, samples)
    mu = (np.log(item.low) + np.log(item.high)) / 2
    sigma = (np.log(item.high) - np.log(item.low)) / (2 * _Z90)
    return _clip_to_input(named, rng.lognormal(mu, sigma, samples))


def _clip_to_input(named: NamedInput, values: FloatArray) -> FloatArray:
    if named.kind in (InputKind.UTILISATION, InputKind.SPOT_AVAILABILITY, InputKind.DISCOUNT_RATE):
        return np.minimum(values, 1.0)
    if named.kind is InputKind.GROWTH:
        return np.clip(values, -0.99, 1.0)
    return values


def _probability_cheapest(outcomes: FloatArray) -> FloatArray:
    cheapest = outcomes == outcomes.min(axis=1, keepdims=True)
    shares = cheapest / cheapest.sum(axis=1, keepdims=True)
    return np.asarray(shares.mean(axis=0))
