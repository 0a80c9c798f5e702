"""The rules that reject a candidate before it is costed, in the order they apply.

Each check returns None (the candidate passes) or a `Rejection` (reason and detail). Constraints read:
* `on_premises_only`: only owned and local hardware; hosted APIs and clouds break data residency.
* `allowed_regions`: cloud offers outside them break data residency; hosted APIs publish no
  region, so they break it too; owned and local hardware are on premises and pass.
* `allowed_providers` / `excluded_providers`: cloud and hosted-API providers (owned and local
  hardware has no provider and passes).
* `allowed_accelerators` / `excluded_accelerators`: catalog accelerator ids.
* `allowed_options`: option kinds.
* `min_precision`: no weights below that many bits (hosted APIs do not publish theirs: they
  pass with a risk).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.catalog import AcceleratorEntry, ApiPriceOffer, CatalogSnapshot
from wheretorun.engine.costs import hosted
from wheretorun.engine.efficiency import EfficiencyTable
from wheretorun.engine.planning.rejections import RejectionBook
from wheretorun.engine.precision import Precision, parse_precision
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.workload import Constraints, OptionKind

__all__ = [
    "SERVING_PRECISIONS",
    "Context",
    "accelerator_verdict",
    "hardware_verdict",
    "hosted_verdict",
    "lead_time_verdict",
    "money_verdict",
    "nominal_bits",
    "option_verdict",
    "precision_allowed",
    "provider_verdict",
    "spec_verdict",
]

# Weight precisions tried for self-hosted serving: 16-bit, the two 8-bit formats, 4-bit AWQ.
SERVING_PRECISIONS = (Precision.BF16, Precision.FP8, Precision.INT8, Precision.AWQ_INT4)
OWNED_KINDS = frozenset({"datacenter", "workstation", "other"})
LOCAL_KINDS = frozenset({"workstation", "consumer"})

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


def nominal_bits(precision: Precision) -> int:
    """Nominal bits per weight (scales excluded): 16 for bf16, 8 for fp8/int8, 4 for 4-bit formats."""
    return _BITS.get(precision, 4)


@dataclass(slots=True)
class Context:
    """Everything one recommendation reads, and the book its rejections go to."""

    constraints: Constraints
    assumptions: Assumptions
    snapshot: CatalogSnapshot
    efficiency: EfficiencyTable
    book: RejectionBook = field(default_factory=RejectionBook)
    notes: list[str] = field(default_factory=list)

    @property
    def min_bits(self) -> int:
        floor = self.constraints.min_precision
        return 0 if floor is None else nominal_bits(parse_precision(floor, "constraints.min_precision"))


def option_verdict(kind: OptionKind, constraints: Constraints) -> Rejection | None:
    if constraints.on_premises_only and kind in (OptionKind.HOSTED_API, OptionKind.CLOUD):
        return Rejection(RejectReason.VIOLATES_DATA_RESIDENCY, "data must stay on premises")
    if constraints.allowed_options and kind not in constraints.allowed_options:
        return Rejection(RejectReason.VIOLATES_CONSTRAINT, f"option {kind.value} is not allowed")
    return None


def provider_verdict(provider: str, constraints: Constraints) -> Rejection | None:
    if constraints.allowed_providers and provider not in constraints.allowed_providers:
        return Rejection(RejectReason.VIOLATES_CONSTRAINT, f"provider {provider} is not allowed")
    if provider in constraints.excluded_providers:
        return Rejection(RejectReason.VIOLATES_CONSTRAINT, f"provider {provider} is excluded")
    return None


def accelerator_verdict(accelerator_id: str, constraints: Constraints) -> Rejection | None:
    if constraints.allowed_accelerators and accelerator_id not in constraints.allowed_accelerators:
        return Rejection(RejectReason.VIOLATES_CONSTRAINT, f"accelerator {accelerator_id} is not allowed")
    if accelerator_id in constraints.excluded_accelerators:
        return Rejection(RejectReason.VIOLATES_CONSTRAINT, f"accelerator {accelerator_id} is excluded")
    return None


def precision_allowed(precision: Precision, min_bits: int) -> bool:
    return nominal_bits(precision) >= min_bits


def spec_verdict(entry: AcceleratorEntry | None, accelerator_id: str) -> Rejection | None:
    if entry is None or entry.spec is None:
        return Rejection(
            RejectReason.UNSPECIFIED_HARDWARE,
            f"{accelerator_id}: the catalog lacks its memory, bandwidth or memory technology",
        )
    return None


def hosted_verdict(price: ApiPriceOffer, context_tokens: int, context: Context) -> Rejection | None:
    """Rules for a hosted-API price row that serves an acceptable model."""
    constraints = context.constraints
    verdict = option_verdict(OptionKind.HOSTED_API, constraints)
    if verdict is None and constraints.allowed_regions:
        verdict = Rejection(
            RejectReason.VIOLATES_DATA_RESIDENCY, "the hosted API does not say where it processes data"
        )
    verdict = verdict or provider_verdict(price.provider, constraints)
    if (
        verdict is None
        and price.context_window_tokens is not None
        and price.context_window_tokens < context_tokens
    ):
        verdict = Rejection(
            RejectReason.EXCEEDS_CONTEXT_WINDOW,
            f"{context_tokens} tokens exceed its {price.context_window_tokens}-token window",
        )
    if verdict is None:
        missing = hosted.missing_price(price)
        verdict = None if missing is None else Rejection(RejectReason.UNPRICED, missing)
    return verdict


def hardware_verdict(entry: AcceleratorEntry, kind: OptionKind, context: Context) -> Rejection | None:
    """Rules for buying `entry` as owned servers or a local card."""
    allowed_kinds = OWNED_KINDS if kind == OptionKind.OWNED else LOCAL_KINDS
    verdict = option_verdict(kind, context.constraints) or accelerator_verdict(entry.id, context.constraints)
    if verdict is None and entry.kind not in allowed_kinds:
        what = (
            "TPUs are not sold"
            if entry.kind == "tpu"
            else f"a {entry.kind} part is not a {kind.value} option"
        )
        verdict = Rejection(RejectReason.UNSUPPORTED_OFFER, what)
    verdict = verdict or spec_verdict(entry, entry.id)
    if verdict is None and entry.id not in context.snapshot.hardware_prices:
        verdict = Rejection(RejectReason.UNPRICED, f"no purchase price for {entry.id}")
    if verdict is None and entry.spec is not None and entry.spec.tdp_w is None:
        verdict = Rejection(
            RejectReason.UNSPECIFIED_HARDWARE, f"{entry.id} has no TDP: its power cannot be costed"
        )
    return verdict


def money_verdict(usd_per_month: float, capex_usd: float, constraints: Constraints) -> Rejection | None:
    """`over_budget` above `max_usd_per_month`, `over_capex` above `max_capex_usd`."""
    if constraints.max_usd_per_month is not None and usd_per_month > constraints.max_usd_per_month:
        return Rejection(
            RejectReason.OVER_BUDGET,
            f"${usd_per_month:,.0f} a month > ${constraints.max_usd_per_month:,.0f}",
        )
    if constraints.max_capex_usd is not None and capex_usd > constraints.max_capex_usd:
        return Rejection(
            RejectReason.OVER_CAPEX, f"capex ${capex_usd:,.0f} > ${constraints.max_capex_usd:,.0f}"
        )
    return None


def lead_time_verdict(assumptions: Assumptions) -> Rejection | None:
    if assumptions.hardware_lead_time_months >= assumptions.horizon_months:
        return Rejection(RejectReason.MISSES_DEADLINE, "the hardware arrives after the planning horizon ends")
    return None
