"""The money model's assumptions: every default, where it comes from, and its valid range.

`Assumptions()` holds the defaults; a request overrides any field. `Assumptions.sources()` says,
field by field, where the value in use comes from (the cited default, or "set by the request"),
so a recommendation can echo it. A default with no public figure behind it says so
("planning convention, no public source") instead of pretending to a citation.

Invalid values raise `InvalidSpec("assumptions.<field>", reason)`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from wheretorun.engine.config import ServingEngine
from wheretorun.engine.errors import InvalidSpec

__all__ = ["DEFAULT_SOURCES", "Assumptions"]

_CONFIGIQ = "redhat-performance/configiq lib/costing-assumptions.ts (DEFAULT_COST_ASSUMPTIONS)"
_EPOCH_CONSTANTS = "epoch-research/training-cost-trends training_cost_trends/constants.py"
_EPOCH_HARDWARE = "epoch-research/training-cost-trends training_cost_trends/hardware.py"

# Where each default comes from. Figures from the shipped calibration data cite its file and row.
DEFAULT_SOURCES: Mapping[str, str] = MappingProxyType(
    {
        "horizon_months": f"{_CONFIGIQ}: analysisMonths = 36",
        "hours_per_month": f"{_CONFIGIQ}: hoursPerMonth = 730 (8,760 hours a year / 12)",
        "electricity_usd_per_kwh": (
            "median of the eight EIA April 2025 commercial electricity rows (9.79 ... 19.14 US cents/kWh; "
            "median (12.78 + 12.82) / 2 = 12.80) in wheretorun/pricing/data/calibration/energy_and_pue.csv, "
            "EIA Electric Power Monthly Table 5.6.A, released 2025-06-25"
        ),
        "pue": (
            "Uptime Institute Intelligence Update 221 (2023 survey average PUE 1.58), row 'data center PUE "
            "(industry average)' in wheretorun/pricing/data/calibration/energy_and_pue.csv"
        ),
        "colocation_usd_per_kw_month": (
            "CBRE North America Data Center Trends H2 2024 (published 2025-02-26): average monthly asking "
            "rate for a 250-500 kW requirement across primary markets, $184.06 per kW (N+1/Tier III, power "
            "billed "
            "separately); https://www.cbre.com/insights/reports/north-america-data-center-trends-h2-2024"
        ),
        "server_overhead_fraction": (
            f"{_EPOCH_HARDWARE}: get_server_cost_overhead() average server-to-chip cost multiplier 1.64 "
            "(CPU, memory, chassis, intra-node interconnect): 0.64 on top of the accelerator price"
        ),
        "cluster_network_fraction": (
            f"{_EPOCH_CONSTANTS}: CLUSTER_INTERCONNECT_COST_FRACTION = 0.19 of total cluster cost; applied "
            "only to deployments of more than one server"
        ),
        "depreciation_years": f"{_CONFIGIQ}: hardwareLifeYears = 4",
        "residual_value_fraction": f"{_CONFIGIQ}: hardwareResidualPct = 20",
        "cost_of_capital_annual": f"{_CONFIGIQ}: annualCostOfCapitalPct = 8",
        "maintenance_fraction_annual": f"{_CONFIGIQ}: annualMaintenancePct = 5",
        "operations_staff_usd_per_month": (
            f"{_CONFIGIQ}: ownedOperationsFte = 0.25 x loadedMonthlyCostPerFte = $18,000 = $4,500 per "
            "owned deployment per month: the minimum; staff grows above it with accelerators_per_staff_fte"
        ),
        "cloud_staff_usd_per_month": (
            f"{_CONFIGIQ}: rentedOperationsFte = 0.2 x $18,000 = $3,600 per rented deployment per month "
            "(serving, batch and training jobs for the months they run): the minimum; staff grows above it "
            "with accelerators_per_staff_fte"
        ),
        "hosted_staff_usd_per_month": (
            f"{_CONFIGIQ}: hostedOperationsFte = 0.05 x $18,000 = $900 per hosted-API integration per month"
        ),
        "staff_usd_per_fte_month": f"{_CONFIGIQ}: loadedMonthlyCostPerFte = 18,000",
        "accelerators_per_staff_fte": (
            "Roskies & Zacharia, 'Designing and Supporting High-end Computational Facilities', CTWatch "
            "Quarterly 2(2), May 2006, p. 4: sites 'add one FTE for roughly every 250 processors' (a rule of "
            "thumb for HPC systems; no public figure exists for accelerators, so processors stand in)"
        ),
        "target_utilisation": (
            f"{_CONFIGIQ}: planningCapacityUsePct = 90 (10% of estimated capacity kept as headroom)"
        ),
        "spot_interruption_overhead": (
            "none: spot reclaims are modelled from spot_reclaims_per_instance_month "
            "(spot_reclaims.py); this flat extra share of spot instance-hours is 0 unless a request "
            "adds pessimism"
        ),
        "spot_reclaims_per_instance_month": (
            "AWS Spot Instance Advisor (spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json) buckets "
            "the share of an instance type's capacity reclaimed in the trailing month as <5%, 5-10%, 10-15%, "
            "15-20%, >20%; GPU instance types sit in the top buckets; its floor, 20% a month, is used (a "
            "planning convention: no provider publishes the rate itself)"
        ),
        "spot_replacement_hours": (
            "planning convention, no public measurement: AWS gives a two-minute interruption notice "
            "(docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html); "
            "launching replacement capacity and loading a model takes longer, taken as 15 minutes"
        ),
        "checkpoint_interval_hours": (
            "planning convention, no public figure for a typical interval: one hour; Meta's Llama 3 run lost "
            "at most 0.28 h per interruption with fast checkpointing (arXiv:2407.21783 §3.3.4), a rented "
            "job saving to network storage checkpoints less often"
        ),
        "reserved_1y_discount": (
            "no default: a reserved plan is priced from the provider's published commitment term in the "
            "catalog (wheretorun/pricing/data/commitment_terms.csv); a value given here is the user's own "
            "1-year discount, applied to every provider and labelled as such"
        ),
        "reserved_3y_discount": (
            "no default: as reserved_1y_discount, for 3-year commitments; providers without a published term "
            "get no reserved plan"
        ),
        "reserved_discounts_by_provider": (
            "no default: the user's own 1-year / 3-year discounts per provider (a negotiated rate); they "
            "take precedence over the catalog's commitment terms and are labelled as the user's"
        ),
        "hardware_lead_time_months": (
            "Dell Taiwan via United Daily News, reported by The Register 2024-04-12 ('Dell shaves months off "
            "lead times for GPU-powered AI servers'): H100 server lead times 8-12 weeks, down from ~39-40 "
            "weeks in late 2023; 12 weeks rounded to 3 months"
        ),
        "base_server_power_w": (
            f"{_CONFIGIQ}: ownedBaseSystemPowerWattsPerServer = 450 (CPUs, memory, fans, NICs; a low figure "
            "next to the 10.2 kW maximum of an 8-GPU DGX H100, of which 5.6 kW are GPUs)"
        ),
        "training_gpu_power_fraction": (
            f"{_EPOCH_HARDWARE}: server_TDP_fraction() = 0.75 for GPUs (average power during training)"
        ),
        "serving_engine": "vLLM, the engine the calibration has the most rows for (wheretorun/calibration)",
        "accelerators_per_sxm_server": (
            "Dell Generative AI in the Enterprise - Inferencing design guide, 'Dell PowerEdge servers and "
            "NVIDIA GPUs': PowerEdge XE9680 holds 8 H100 SXM; the same 8-way baseboard for OAM parts (AMD "
            "Instinct platform); https://infohub.delltechnologies.com/l/design-guide-generative-ai-in-the-"
            "enterprise-inferencing/dell-poweredge-servers-and-nvidia-gpus/"
        ),
        "accelerators_per_pcie_server": (
            "same Dell design guide: PowerEdge R760xa holds 4 double-width PCIe GPUs (H100 PCIe, L40)"
        ),
        "max_accelerators_per_job": (
            "planning convention: 64 nodes x 8 accelerators, the largest scale of the training calibration "
            "rows (wheretorun/engine/training_estimate.py: 'the calibration rows (<= 64 nodes)'); beyond it "
            "estimates are extrapolated"
        ),
        "hosted_batch_completion_hours": (
            "OpenAI Batch API: completion_window '24h' is the only supported value "
            "(platform.openai.com/docs/api-reference/batch/create); batch tiers are used only when the "
            "deadline allows 24 hours"
        ),
        "host_vm_usd_per_accelerator_hour": (
            "no default: the catalog's GCP rows price the GPUs without their host VM and the catalog has no "
            "VM prices, so such offers are rejected as incomplete_price unless a figure is given"
        ),
    }
)

_OVERRIDDEN = "set by the request"


def _require(condition: bool, field: str, reason: str) -> None:
    if not condition:
        raise InvalidSpec(f"assumptions.{field}", reason)


@dataclass(frozen=True, slots=True)
class Assumptions:
    """Inputs of the money model that are not in the catalog. Units are in the names; fractions
    are 0-1 (0.08 = 8%). See `DEFAULT_SOURCES` for where each default comes from."""

    horizon_months: int = 36
    hours_per_month: float = 730.0
    electricity_usd_per_kwh: float = 0.128
    pue: float = 1.58
    colocation_usd_per_kw_month: float = 184.06  # space, cooling, facility; power billed separately
    server_overhead_fraction: float = 0.64  # server on top of the accelerator price
    cluster_network_fraction: float = 0.19  # network share of a multi-server cluster's cost
    depreciation_years: float = 4.0
    residual_value_fraction: float = 0.20  # resale value at the end of the hardware's life
    cost_of_capital_annual: float = 0.08
    maintenance_fraction_annual: float = 0.05  # of capex, per year in service
    operations_staff_usd_per_month: float = 4500.0  # per owned deployment
    cloud_staff_usd_per_month: float = 3600.0  # per rented serving deployment
    hosted_staff_usd_per_month: float = 900.0  # per hosted-API integration
    staff_usd_per_fte_month: float = 18000.0  # loaded cost of one operations FTE
    accelerators_per_staff_fte: float = 250.0  # above the minimum, one FTE per this many accelerators
    target_utilisation: float = 0.9  # share of estimated capacity planned for (10% headroom)
    spot_interruption_overhead: float = 0.0  # flat extra share of spot instance-hours
    spot_reclaims_per_instance_month: float = 0.20  # share of spot instances reclaimed a month
    spot_replacement_hours: float = 0.25  # until reclaimed capacity is replaced
    checkpoint_interval_hours: float = 1.0  # a training run's work since its last checkpoint is redone
    reserved_1y_discount: float | None = None  # the user's, for every provider
    reserved_3y_discount: float | None = None
    reserved_discounts_by_provider: tuple[tuple[str, float, float], ...] = ()  # the user's, per provider
    hardware_lead_time_months: int = 3
    base_server_power_w: float = 450.0
    training_gpu_power_fraction: float = 0.75
    serving_engine: ServingEngine = ServingEngine.VLLM
    accelerators_per_sxm_server: int = 8
    accelerators_per_pcie_server: int = 4
    max_accelerators_per_job: int = 512
    hosted_batch_completion_hours: float = 24.0
    host_vm_usd_per_accelerator_hour: float | None = None

    def __post_init__(self) -> None:
        _require(1 <= self.horizon_months <= 240, "horizon_months", "must be between 1 and 240 months")
        _require(
            672 <= self.hours_per_month <= 744, "hours_per_month", "must be a calendar month, 672-744 hours"
        )
        self._check_range("electricity_usd_per_kwh", 0.0, 10.0)
        self._check_range("pue", 1.0, 3.0)
        self._check_range("colocation_usd_per_kw_month", 0.0, 10_000.0)
        self._check_range("server_overhead_fraction", 0.0, 10.0)
        self._check_range("cluster_network_fraction", 0.0, 0.9)
        _require(
            math.isfinite(self.depreciation_years) and 1 / 12 <= self.depreciation_years <= 20,
            "depreciation_years",
            "must be between one month (1/12) and 20 years",
        )
        for name in ("residual_value_fraction", "cost_of_capital_annual", "maintenance_fraction_annual"):
            self._check_range(name, 0.0, 1.0)
        for name in (
            "operations_staff_usd_per_month",
            "cloud_staff_usd_per_month",
            "hosted_staff_usd_per_month",
            "staff_usd_per_fte_month",
        ):
            self._check_range(name, 0.0, 10_000_000.0)
        self._check_range("accelerators_per_staff_fte", 1.0, 1_000_000.0)
        _require(
            math.isfinite(self.target_utilisation) and 0.01 <= self.target_utilisation <= 1,
            "target_utilisation",
            "must be between 0.01 and 1",
        )
        self._check_range("spot_interruption_overhead", 0.0, 5.0)
        self._check_range("spot_reclaims_per_instance_month", 0.0, 100.0)
        self._check_range("spot_replacement_hours", 0.0, 720.0)
        self._check_range("checkpoint_interval_hours", 0.0, 8760.0)
        self._check_discounts()
        _require(
            0 <= self.hardware_lead_time_months <= 60, "hardware_lead_time_months", "must be 0-60 months"
        )
        self._check_range("base_server_power_w", 0.0, 100_000.0)
        _require(
            0.01 <= self.training_gpu_power_fraction <= 1,
            "training_gpu_power_fraction",
            "must be between 0.01 and 1",
        )
        for name in ("accelerators_per_sxm_server", "accelerators_per_pcie_server"):
            _require(1 <= getattr(self, name) <= 64, name, "must be between 1 and 64")
        _require(self.max_accelerators_per_job >= 1, "max_accelerators_per_job", "must be at least 1")
        _require(
            math.isfinite(self.hosted_batch_completion_hours) and self.hosted_batch_completion_hours > 0,
            "hosted_batch_completion_hours",
            "must be positive",
        )
        if self.host_vm_usd_per_accelerator_hour is not None:
            self._check_range("host_vm_usd_per_accelerator_hour", 0.0, 1_000.0)

    def _check_range(self, name: str, low: float, high: float) -> None:
        value = getattr(self, name)
        _require(
            math.isfinite(value) and low <= value <= high,
            name,
            f"must be between {low} and {high}, got {value}",
        )

    def _check_discounts(self) -> None:
        for name in ("reserved_1y_discount", "reserved_3y_discount"):
            value = getattr(self, name)
            _require(value is None or (math.isfinite(value) and 0 <= value < 1), name, "must be in [0, 1)")
        for provider, one_year, three_year in self.reserved_discounts_by_provider:
            _require(
                bool(provider) and 0 <= one_year < 1 and 0 <= three_year < 1,
                "reserved_discounts_by_provider",
                f"{provider!r}: discounts must be in [0, 1)",
            )

    # ---- derived values ------------------------------------------------------------------------

    @property
    def years(self) -> float:
        return self.horizon_months / 12

    @property
    def life_months(self) -> float:
        return self.depreciation_years * 12

    def reserved_discount(self, provider: str, term_years: int) -> tuple[float, str] | None:
        """The user's own committed-use discount for `provider` and a 1- or 3-year term, and where
        it was given; None when the request gives none (the catalog's terms then decide)."""
        for name, one_year, three_year in self.reserved_discounts_by_provider:
            if name == provider:
                return (
                    one_year if term_years == 1 else three_year
                ), "assumptions.reserved_discounts_by_provider"
        generic = self.reserved_1y_discount if term_years == 1 else self.reserved_3y_discount
        if generic is None:
            return None
        return generic, f"assumptions.reserved_{term_years}y_discount"

    def sources(self) -> dict[str, str]:
        """Field -> where the value in use comes from (the cited default or the request)."""
        return {
            item.name: DEFAULT_SOURCES[item.name] if getattr(self, item.name) == item.default else _OVERRIDDEN
            for item in dataclasses.fields(self)
        }
