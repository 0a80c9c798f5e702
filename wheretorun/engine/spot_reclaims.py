"""Spot capacity is reclaimed at short notice: what that costs, charged in one place per effect.

Reclaims arrive at `spot_reclaims_per_instance_month` per instance (AWS Spot Instance Advisor's
"frequency of interruption"; sources in assumptions.py), i.e. a rate per instance-hour of
reclaims / hours_per_month. Each reclaim leaves its instance's work undone until capacity is
replaced, `spot_replacement_hours` later.

* serving: requests cannot wait for a replacement, so spot serving always carries a fallback,
  its own cost line, sized for the reclaim rate and the replacement time, the cheaper of
    - on-demand standby: warm on-demand instances of the same offer, always on, enough to cover
      the reclaims that can fall in one replacement window at the peak (the 99th percentile of
      a Poisson count, at least one), or
    - a hosted API for the same model: the share of requests the missing capacity would have
      served, reclaim rate x replacement time, at the API's price.
  Without either (no on-demand price, no hosted price) spot serving is not offered
  (`no_spot_fallback`).
* synchronous jobs (training): a reclaim stops the whole job, which restarts from its last
  checkpoint: it loses the replacement time plus on average half the work since the last
  checkpoint (half the run, when it is shorter than the checkpoint interval). Interruptions come
  at the rate x instances, so the lost share grows with the node count and, up to the interval,
  with the run's length: run hours = hours / (1 - rate x instances x loss per reclaim).
* independent jobs (batch): a reclaim loses one instance's replacement time only:
  instance-hours / (1 - rate x replacement time).
* `spot_interruption_overhead` adds a flat share of extra spot instance-hours on top (default 0:
  the reclaims above are modelled; a request can add pessimism); costs/cloud.py charges it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.costs.arrays import FloatArray

__all__ = [
    "SERVING_RISK",
    "STANDBY_QUANTILE",
    "TRAINING_RISK",
    "SpotFallback",
    "batch_spot_hours",
    "poisson_quantile",
    "reclaims_per_instance_hour",
    "serving_fallback",
    "training_spot_hours",
]

SERVING_RISK = (
    "spot reclaims can take a whole capacity pool at once, beyond the fallback sized for independent reclaims"
)
TRAINING_RISK = (
    "spot reclaims restart the whole run from its last checkpoint; the reclaim rate, replacement time "
    "and checkpoint interval are assumptions"
)
# The on-demand standby covers the reclaims of one replacement window at this percentile: a
# planning convention (no public figure for a serving SLA's fallback sizing).
STANDBY_QUANTILE = 0.99
# A job that loses this share of its time to reclaims is treated as never finishing.
_MAX_LOST_SHARE = 0.95


_Hours = TypeVar("_Hours", float, FloatArray)


def reclaims_per_instance_hour(assumptions: Assumptions) -> float:
    return assumptions.spot_reclaims_per_instance_month / assumptions.hours_per_month


def _stretched(hours: _Hours, lost_share: float) -> _Hours:
    """`hours` of work when `lost_share` of it is lost to reclaims (infinite past the cap); for
    one figure or an array of them."""
    if lost_share < _MAX_LOST_SHARE:
        return hours / (1.0 - lost_share)
    return math.inf if isinstance(hours, float) else np.full_like(hours, math.inf)


def training_spot_hours(wall_hours: float, instances: int, assumptions: Assumptions) -> float:
    """Wall-clock hours of a synchronous run on `instances` spot instances (see the docstring)."""
    a = assumptions
    loss = a.spot_replacement_hours + min(a.checkpoint_interval_hours, wall_hours) / 2
    return _stretched(wall_hours, reclaims_per_instance_hour(a) * instances * loss)


def batch_spot_hours(instance_hours: _Hours, assumptions: Assumptions) -> _Hours:
    """Instance-hours of independent work on spot: each reclaim loses one replacement time (for
    one job, or an array of them)."""
    return _stretched(
        instance_hours, reclaims_per_instance_hour(assumptions) * assumptions.spot_replacement_hours
    )


@dataclass(frozen=True, slots=True)
class SpotFallback:
    """The fallback's cost, and what it is in words (`note`, written when a plan shows it: most
    spot costs are only added up)."""

    usd: float
    describe: Callable[[], str] = field(compare=False, repr=False)

    @property
    def note(self) -> str:
        return self.describe()


_SUMMED_MEANS = 50.0  # up to this mean the Poisson terms are summed here (e^-50 is far from underflow)
_CLEAR_OF_Q = 1e-9  # a cumulative probability this close to q is left to SciPy to decide


@functools.lru_cache(maxsize=1024)
def poisson_quantile(q: float, mu: float) -> int:
    """The q-quantile of a Poisson count of mean `mu` (0 < q < 1, mu >= 0): the smallest k with
    P(X <= k) >= q, as `scipy.stats.poisson.ppf(q, mu)` gives it. For the small means spot
    standby asks for, the probabilities are summed term by term, and the answer is taken only
    when P(X <= k) and P(X <= k - 1) are clear of q by far more than the sum's rounding error;
    otherwise SciPy's own steps (`poisson_gen._ppf` in scipy/stats/_discrete_distns.py, on
    scipy.special) decide. Importing scipy costs the CLI ~0.2-0.5 s, and `scipy.stats`' generic
    `ppf` ~0.3 ms a call. Remembered: a recommendation asks for the same few means many times."""
    if mu <= _SUMMED_MEANS:
        term = math.exp(-mu)
        below, k = 0.0, 0
        cumulative = term
        while cumulative < q and k < 10_000:
            below = cumulative
            k += 1
            term *= mu / k
            cumulative += term
        if cumulative - q > _CLEAR_OF_Q and (k == 0 or q - below > _CLEAR_OF_Q):
            return k
    return _scipy_poisson_quantile(q, mu)


def _scipy_poisson_quantile(q: float, mu: float) -> int:
    # imported on first use: scipy is slow to import
    from scipy import special

    above = math.ceil(float(special.pdtrik(q, mu)))
    below = max(above - 1, 0)
    return below if float(special.pdtr(below, mu)) >= q else above


def serving_fallback(
    spot_instance_hours: float,
    peak_instances: int,
    on_demand_usd_per_hour: float | None,
    hosted_usd: float | None,
    horizon_hours: float,
    assumptions: Assumptions,
) -> SpotFallback | None:
    """The cheaper fallback for spot serving; None when neither is priced. `hosted_usd` is what
    the hosted API would charge for all the requests served."""
    a = assumptions
    rate = reclaims_per_instance_hour(a)
    standby_usd: float | None = None
    if on_demand_usd_per_hour is not None:
        on_demand = on_demand_usd_per_hour
        in_one_window = rate * peak_instances * a.spot_replacement_hours
        instances = max(poisson_quantile(STANDBY_QUANTILE, in_one_window), 1)
        standby_usd = instances * on_demand * horizon_hours
    share = rate * a.spot_replacement_hours
    # the cheaper of the two, the standby when equal (min's rule: the first of equals); only the
    # chosen one is made (0.4% of the prototype's and the 70B chat's instructions, 2026-12-05)
    if hosted_usd is not None and (standby_usd is None or share * hosted_usd < standby_usd):

        def hosted_note() -> str:
            return (
                f"hosted API for the {share:.3%} of requests reclaimed capacity would serve "
                f"({a.spot_replacement_hours:g} h to replace each of "
                f"{spot_instance_hours * rate:,.1f} reclaims)"
            )

        return SpotFallback(share * hosted_usd, hosted_note)
    if standby_usd is None:
        return None

    def standby_note() -> str:
        return (
            f"{instances} on-demand standby instance(s) always on at ${on_demand:.4f}/h: "
            f"{rate * a.hours_per_month:.0%} of instances reclaimed a month, "
            f"{a.spot_replacement_hours:g} h to replace"
        )

    return SpotFallback(standby_usd, standby_note)
