"""What `recommend` returns: ranked, costed, explained options and the candidates it rejected.

Money is `Decimal` USD rounded to cents (per-token figures to 1/10,000 of a cent); everything
else is float. The same workload, assumptions and catalog snapshot give an identical value.

    Recommendation
     ├── options            PlanOption, ranked by total_usd over the horizon, best first
     ├── best_per_option    option kind -> its cheapest PlanOption (hosted_api, cloud, owned, local, hybrid)
     ├── rejected           RejectedGroup per rule: reason, count, a few examples
     ├── break_even         the volume at which the winner changes, with curve points
     └── assumptions, assumption_sources, catalog_version, as_of, notes
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING

from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.memo import ClearedWhenFull
from wheretorun.engine.workload import OptionKind

if TYPE_CHECKING:
    from wheretorun.engine.catalog import ApiPriceOffer, CloudOffer

__all__ = [
    "BindingConstraint",
    "VolumeBreakEven",
    "BreakEvenPoint",
    "CostLine",
    "Crossover",
    "HybridPart",
    "PlanOption",
    "Recommendation",
    "RejectReason",
    "RejectedGroup",
    "Setup",
    "clear_setup_memo",
]


class RejectReason(StrEnum):
    """The rule that rejected a candidate. The first failing rule decides, in this order."""

    VIOLATES_DATA_RESIDENCY = "violates_data_residency"  # on-premises only, or a region not allowed
    VIOLATES_CONSTRAINT = "violates_constraint"  # provider, accelerator, option or precision floor
    SUSPECT_PRICE = "suspect_price"  # the catalog flags the price as implausible (its reason is kept)
    UNSUPPORTED_OFFER = "unsupported_offer"  # GPU slices, TPUs for purchase
    UNSPECIFIED_HARDWARE = "unspecified_hardware"  # a spec fact the estimate needs is unknown
    UNSUPPORTED_PRECISION = "unsupported_precision"  # a format the hardware's serving engines do not run
    EXCEEDS_CONTEXT_WINDOW = "exceeds_context_window"
    DOES_NOT_FIT_MEMORY = "does_not_fit_memory"
    MISSES_LATENCY_TARGET = "misses_latency_target"
    EXCEEDS_LOCAL_CAPACITY = "exceeds_local_capacity"  # more than one user for a local GPU
    ONE_OFF_JOB = "one_off_job"  # buying hardware for a single batch job
    UNPRICED = "unpriced"  # a price the plan needs is missing (never costed as $0)
    INCOMPLETE_PRICE = "incomplete_price"  # the price covers only part of what is needed
    MISSES_DEADLINE = "misses_deadline"
    NO_SPOT_FALLBACK = "no_spot_fallback"  # spot serving with neither an on-demand nor a hosted fallback
    NO_CLUSTER_NETWORK = "no_cluster_network"  # a multi-instance job on boxes without a cluster network
    OVER_BUDGET = "over_budget"
    OVER_CAPEX = "over_capex"


@dataclass(frozen=True, slots=True)
class CostLine:
    """One line of a cost breakdown over the whole horizon (or the whole job)."""

    name: str
    usd: Decimal
    note: str = ""


@dataclass(frozen=True, slots=True)
class Setup:
    """What an option is. Fields that do not apply to the option are None / empty."""

    model_id: str
    accelerator_id: str | None = None
    accelerator_count: int | None = None  # accelerators at the peak (all replicas, all instances)
    accelerators_per_replica: int | None = None  # tensor-parallel group of one model copy
    replicas: int | None = None  # at the peak, spares included
    precision: str | None = None
    serving_engine: str | None = None
    provider: str | None = None
    region: str | None = None
    instance_type: str | None = None
    instance_count: int | None = None  # instances or servers at the peak
    pricing_mode: str | None = (
        None  # on_demand | spot | reserved_1y | reserved_3y | purchase | api | api_batch
    )
    scaling: str | None = None  # autoscaled | always_on | job
    offer_ids: tuple[int, ...] = ()
    api_price_id: int | None = None
    hosted_model_id: str | None = None

    @classmethod
    def for_cloud(
        cls,
        model_id: str,
        offer: CloudOffer,
        *,
        pricing_mode: str,
        scaling: str,
        instances: int,
        accelerators: int,
        accelerators_per_replica: int,
        replicas: int,
        precision: str,
        serving_engine: str | None = None,
    ) -> Setup:
        """`instances` of a cloud `offer` (`accelerators` in all) in one pricing mode; remembered
        (`_SETUPS`), the offer by identity."""
        key = (
            "cloud",
            cls,
            model_id,
            id(offer),
            pricing_mode,
            scaling,
            instances,
            accelerators,
            accelerators_per_replica,
            replicas,
            precision,
            serving_engine,
        )
        setup = _SETUPS.found(key)
        if setup is None:
            setup = _SETUPS.kept(
                key,
                offer,
                cls(
                    model_id=model_id,
                    accelerator_id=offer.accelerator_id,
                    accelerator_count=accelerators,
                    accelerators_per_replica=accelerators_per_replica,
                    replicas=replicas,
                    precision=precision,
                    serving_engine=serving_engine,
                    provider=offer.provider,
                    region=offer.region,
                    instance_type=offer.instance_type,
                    instance_count=instances,
                    pricing_mode=pricing_mode,
                    scaling=scaling,
                    offer_ids=(offer.id,),
                ),
            )
        return setup

    @classmethod
    def for_purchase(
        cls,
        model_id: str,
        accelerator_id: str,
        *,
        scaling: str,
        units: int,
        accelerators: int,
        accelerators_per_replica: int,
        replicas: int,
        precision: str,
        serving_engine: str | None = None,
    ) -> Setup:
        """`units` servers or cards of `accelerator_id` (`accelerators` in all), bought; remembered
        (`_SETUPS`)."""
        key = (
            "purchase",
            cls,
            model_id,
            accelerator_id,
            scaling,
            units,
            accelerators,
            accelerators_per_replica,
            replicas,
            precision,
            serving_engine,
        )
        setup = _SETUPS.found(key)
        if setup is None:
            setup = _SETUPS.kept(
                key,
                None,
                cls(
                    model_id=model_id,
                    accelerator_id=accelerator_id,
                    accelerator_count=accelerators,
                    accelerators_per_replica=accelerators_per_replica,
                    replicas=replicas,
                    precision=precision,
                    serving_engine=serving_engine,
                    instance_count=units,
                    pricing_mode="purchase",
                    scaling=scaling,
                ),
            )
        return setup

    @classmethod
    def for_hosted(cls, model_id: str, price: ApiPriceOffer, pricing_mode: str) -> Setup:
        """A hosted API's price row, paid per token (`pricing_mode` api or api_batch); remembered
        (`_SETUPS`), the row by identity."""
        key = ("hosted", cls, model_id, id(price), pricing_mode)
        setup = _SETUPS.found(key)
        if setup is None:
            setup = _SETUPS.kept(
                key,
                price,
                cls(
                    model_id=model_id,
                    provider=price.provider,
                    pricing_mode=pricing_mode,
                    scaling="per_token",
                    api_price_id=price.id,
                    hosted_model_id=price.model_id,
                ),
            )
        return setup


# Setups of cloud offers, bought hardware and hosted price rows, remembered by every argument
# (an offer or a price row by identity: its entry holds it, so the identity is not reused while
# the entry lives) and forgotten when full or by `clear_setup_memo` (engine/caches.py). A
# request builds one for every owned server size and local card it prices, every cloud plan it
# writes or re-prices and every hosted row it prices (37, 21 and 22 for the 8B prototype); a
# frozen dataclass sets each of its fields through `object.__setattr__`, so a setup costs
# ~25-30k instructions to build against ~2k to find (2026-12-05, callgrind). A setup is
# immutable: answers may share one. The arguments are the plain values the signatures name
# (str, int), so equal arguments give an identical setup.
_SETUPS_KEPT = 4096
_SETUPS: ClearedWhenFull[tuple[object, ...], Setup] = ClearedWhenFull(_SETUPS_KEPT)


def clear_setup_memo() -> None:
    """Forget the remembered setups (the next `Setup.for_cloud`, `for_purchase` or `for_hosted`
    builds afresh)."""
    _SETUPS.clear()


@dataclass(frozen=True, slots=True)
class HybridPart:
    """One part of a hybrid plan: the base (`units` bought or reserved) or a burst source."""

    role: str  # base | burst
    label: str
    units: int | None  # base units (servers or instances); None for burst
    share_of_requests: float  # 0-1, over the horizon
    usd: Decimal


@dataclass(frozen=True, slots=True)
class PlanOption:
    """One costed way to run the workload.

    `total_usd` covers the horizon (inference, training) or the job (batch); `usd_per_month` is
    its monthly average. `capex_usd` is one purchase of the hardware (replacements within the
    horizon are in the breakdown). `utilisation` is the average share of the capacity paid for
    that serves demand; `headroom` the capacity above the busiest hour's demand (0.25: 1.25 x that
    demand, a fifth of the capacity spare then).
    `usd_per_accelerator_hour` is, for cloud options, the price paid per accelerator-hour in the
    option's pricing mode; for owned and local options the all-in cost per accelerator-hour of the
    horizon. `price_source` says where the price behind it comes from.
    """

    rank: int  # 1 = the best (cheapest over the horizon) of `Recommendation.options`
    option: OptionKind
    label: str
    setup: Setup
    total_usd: Decimal
    usd_per_month: Decimal | None
    usd_per_million_tokens: Decimal | None
    usd_per_run: Decimal | None
    capex_usd: Decimal
    opex_usd_per_month: Decimal
    breakdown: tuple[CostLine, ...]
    utilisation: float | None
    ttft_ms: float | None
    tpot_ms: float | None
    headroom: float | None
    risks: tuple[str, ...]
    rationale: str
    hybrid_parts: tuple[HybridPart, ...] = ()
    # The same money without the fixed staff minimum: what more volume (or one more run) costs.
    marginal_usd_per_million_tokens: Decimal | None = None
    marginal_usd_per_run: Decimal | None = None
    accelerator_hours_per_run: float | None = None  # training: one whole run
    wall_clock_hours_per_run: float | None = None
    setting: str | None = None  # training: the parallelism/memory setting chosen
    uncertainty: str | None = None
    # Options of the same kind and provider at the same total, folded into this row.
    same_total: tuple[str, ...] = ()
    usd_per_accelerator_hour: Decimal | None = None
    price_source: str | None = None


@dataclass(frozen=True, slots=True)
class RejectedGroup:
    reason: RejectReason
    count: int
    examples: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BreakEvenPoint:
    """Monthly cost of each compared plan at `multiplier` x today's volume."""

    multiplier: float
    volume: float
    usd_per_month: tuple[tuple[str, Decimal], ...]  # (plan label, cost), in `VolumeBreakEven.compared` order
    winner: str


@dataclass(frozen=True, slots=True)
class Crossover:
    """At `multiplier` x today's volume (`volume`) the cheapest compared plan changes."""

    multiplier: float  # where the two cost curves meet (bisected)
    volume: float
    from_label: str
    to_label: str


@dataclass(frozen=True, slots=True)
class VolumeBreakEven:
    """How the winner depends on volume: each compared plan keeps its configuration (offer,
    accelerator, layout) and is re-sized and re-priced at each volume. `crossovers` is empty when
    the winner never changes in the searched range."""

    volume_unit: str  # requests_per_day | tokens | runs_per_year
    current_volume: float
    compared: tuple[str, ...]
    points: tuple[BreakEvenPoint, ...]
    crossovers: tuple[Crossover, ...]
    searched: tuple[float, float]  # multiplier range
    summary: str


@dataclass(frozen=True, slots=True)
class BindingConstraint:
    """When nothing is feasible: a constraint that binds, and the cheapest option that relaxing
    it (alone) would admit. `cheapest_label` is None when relaxing it alone admits nothing."""

    constraint: str  # the field, e.g. "constraints.max_usd_per_month" or "workload.ttft_ms"
    relaxed_to: str  # what the relaxed run used instead, in words
    cheapest_label: str | None
    cheapest_total_usd: Decimal | None
    cheapest_figure: str | None  # its per-unit figure, e.g. "$0.42 per million tokens"


@dataclass(frozen=True, slots=True)
class Recommendation:
    workload_kind: str  # inference | batch | training
    options: tuple[PlanOption, ...]
    best_per_option: Mapping[OptionKind, PlanOption] = field(hash=False)
    rejected: tuple[RejectedGroup, ...]
    assumptions: Assumptions
    assumption_sources: Mapping[str, str] = field(hash=False)
    catalog_version: int
    as_of: dt.datetime
    break_even: VolumeBreakEven | None
    notes: tuple[str, ...]
    candidates_evaluated: int
    binding_constraints: tuple[BindingConstraint, ...] = ()  # only when no option is feasible
