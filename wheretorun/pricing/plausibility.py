"""When a price is suspect: every threshold in one place, with the reason it has that value.

A suspect price stays in the catalog with its `suspect_reason` (listings show it with
`include_suspect=true`); recommendations leave it out unless the request asks for it
(`constraints.include_suspect_prices`) and count it under the `suspect_price` rejection.

Rules on one row (applied by the readers, `sources/skypilot.py`, `sources/litellm.py`):
* per GPU-hour below a floor or above a ceiling; spot above on-demand; a GPU slice listed as one
  GPU; a token price that is 0 or missing (`sources/litellm.py`);
* a provider known to have shut down (`SHUT_DOWN_PROVIDERS`, each with its citation).

Rules against the other providers of the same part or model (applied to the whole set of rows
when the catalog is seeded, and to an imported file against the catalog's other providers):
* a cloud on-demand price per accelerator-hour below `CLOUD_OUTLIER_FRACTION` x the cross-provider
  median of the same accelerator;
* a marketplace row whose spot equals its on-demand price below `SPOT_EQUALS_ON_DEMAND_FRACTION` x
  that median (a bid floor or placeholder, not a rentable on-demand price);
* a hosted token price whose input AND output prices are both below `TOKEN_OUTLIER_FRACTION` x the
  cross-provider medians of the same catalog model.

The median is the median of per-provider medians (one vote per provider, so AWS's 30 regions do
not outvote a marketplace), and only where at least `MIN_PROVIDERS` providers price the part.

Rule at the moment of a plan (`pricing/snapshot.py`): a hosted model past its `deprecation_date`.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from decimal import Decimal

from wheretorun.pricing.records import ApiPriceRecord, CloudOfferRecord

__all__ = [
    "CLOUD_OUTLIER_FRACTION",
    "FLAGSHIP_FLOOR_USD_PER_GPU_HOUR",
    "FLAGSHIP_MIN_MEMORY_GB",
    "MAX_USD_PER_GPU_HOUR",
    "MIN_PROVIDERS",
    "MIN_USD_PER_GPU_HOUR",
    "SHUT_DOWN_PROVIDERS",
    "SPOT_EQUALS_ON_DEMAND_FRACTION",
    "SPOT_ROUNDING_TOLERANCE",
    "TOKEN_OUTLIER_FRACTION",
    "CloudPricePoint",
    "TokenPricePoint",
    "cloud_outlier_reasons",
    "cloud_price_points",
    "flag_cloud_outliers",
    "flag_token_outliers",
    "shut_down_reason",
    "token_outlier_reasons",
    "token_price_points",
]

# --- floors and ceilings per GPU-hour (one row) ---------------------------------------------------
# The floors sit well below every genuine listing in the shipped catalogs (cheapest 80 GB+
# datacenter GPU: A100 80GB spot at ~$0.40; cheapest of any kind: ~$0.03 Inferentia spot) and catch
# placeholders such as Mithril's $0.01-0.08 A100/B200 nodes.
FLAGSHIP_FLOOR_USD_PER_GPU_HOUR = Decimal("0.25")  # datacenter parts with >= 80 GB (H100, A100 80GB, ...)
FLAGSHIP_MIN_MEMORY_GB = 80.0
MIN_USD_PER_GPU_HOUR = Decimal("0.02")  # any accelerator
MAX_USD_PER_GPU_HOUR = Decimal("40")  # above every list price here (highest: B200 on AWS, ~$14)
# AWS publishes spot to 4 decimals and on-demand to 5, so "no discount" can read as spot 9.9898 >
# on-demand 9.98976. A spot price is "above on-demand" only beyond this relative margin.
SPOT_ROUNDING_TOLERANCE = Decimal("0.001")

# --- against the other providers ------------------------------------------------------------------
MIN_PROVIDERS = 3  # fewer providers give no distribution to stand out from
# Cloud: in the shipped SkyPilot catalogs the cheapest genuine on-demand listing of a part with
# >= 3 providers sits at 0.26-0.6 x the cross-provider median (V100 16GB: Verda $0.14 vs $0.55;
# H100 SXM: Hyperbolic $1.29 vs $2.54; L40: Lium $0.33 vs $1.00). A quarter of the median is
# below all of them: such a price is a placeholder or a bid, not a price to plan on.
CLOUD_OUTLIER_FRACTION = 0.25
# A row whose spot equals its on-demand price is a marketplace quoting one (auction) price for
# both; at under half the median it is a bid floor (Mithril H100 and H200 8x at $1.00/GPU-hour,
# spot = on-demand, vs medians $2.54 and $3.50). The genuine spot = on-demand rows (AWS, Azure
# "no spot discount" sizes) sit at or above the median.
SPOT_EQUALS_ON_DEMAND_FRACTION = 0.5
# Hosted tokens: the cheapest genuine providers of a model in LiteLLM 1.110.2 (DeepInfra, Nebius,
# Lambda, Novita, ...) sit at 0.2-0.4 x the cross-provider median of the same model on input or
# output. Llama 3.1 405B at Hyperbolic ($0.12 in / $0.30 out vs medians $2.70 / $3.00) is at 0.04 /
# 0.10; both sides below 0.15 x the median is a price no provider can serve the model at.
TOKEN_OUTLIER_FRACTION = 0.15

# --- providers known to have shut down (each with its citation) -----------------------------------
SHUT_DOWN_PROVIDERS: dict[str, str] = {
    "anyscale": (
        "Anyscale Endpoints' multi-tenant API ended on 2024-08-01 (Anyscale's notice, quoted in "
        "github.com/fixie-ai/ai-benchmarks/pull/104 and github.com/mindsdb/mindshub/pull/11356)"
    ),
}


def shut_down_reason(provider: str) -> str | None:
    why = SHUT_DOWN_PROVIDERS.get(provider)
    return None if why is None else f"provider {provider} has shut down: {why}"


def _append(existing: str | None, reasons: Sequence[str]) -> str | None:
    parts = [existing] if existing else []
    parts += [reason for reason in reasons if reason not in parts]
    return "; ".join(parts) or None


def _median_of_provider_medians(values: dict[str, list[float]]) -> float | None:
    if len(values) < MIN_PROVIDERS:
        return None
    return statistics.median(statistics.median(prices) for prices in values.values())


# --- cloud offers ----------------------------------------------------------------------------------

CloudPricePoint = tuple[str, str, float]  # (provider, accelerator id, on-demand USD per accelerator-hour)


def cloud_price_points(records: Iterable[CloudOfferRecord]) -> list[CloudPricePoint]:
    """The rows that shape a distribution: whole-instance on-demand prices of known accelerators
    that pass the one-row rules (GCP's GPU-only prices leave out the VM, so they are left out)."""
    return [
        (r.provider, r.accelerator_id, float(r.on_demand_usd_per_hour / r.accelerator_count))
        for r in records
        if r.accelerator_id
        and r.on_demand_usd_per_hour is not None
        and r.accelerator_count > 0
        and not r.suspect_reason
        and not r.accelerator_only
    ]


def _cloud_medians(points: Iterable[CloudPricePoint]) -> dict[str, float]:
    by_accelerator: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for provider, accelerator_id, price in points:
        by_accelerator[accelerator_id][provider].append(price)
    medians = {a: _median_of_provider_medians(p) for a, p in by_accelerator.items()}
    return {a: m for a, m in medians.items() if m is not None}


def cloud_outlier_reasons(record: CloudOfferRecord, median: float | None) -> list[str]:
    """Why `record` stands out from the cross-provider `median` of its accelerator (USD per
    accelerator-hour); empty when it does not or there is no median."""
    if median is None or record.on_demand_usd_per_hour is None or record.accelerator_count <= 0:
        return []
    per_accelerator = float(record.on_demand_usd_per_hour / record.accelerator_count)
    where = f"the {record.accelerator_id} cross-provider median ${median:.2f}"
    if per_accelerator < CLOUD_OUTLIER_FRACTION * median:
        below = f"below {CLOUD_OUTLIER_FRACTION:.0%} of {where}"
        return [f"on-demand ${per_accelerator:.2f}/accelerator-hour is {below}"]
    same = record.spot_usd_per_hour is not None and record.spot_usd_per_hour == record.on_demand_usd_per_hour
    if same and per_accelerator < SPOT_EQUALS_ON_DEMAND_FRACTION * median:
        return [
            f"spot equals on-demand at ${per_accelerator:.2f}/accelerator-hour, below "
            f"{SPOT_EQUALS_ON_DEMAND_FRACTION:.0%} of {where}: a marketplace bid floor, "
            "not an on-demand price"
        ]
    return []


def flag_cloud_outliers(
    records: Sequence[CloudOfferRecord], others: Iterable[CloudPricePoint] = ()
) -> list[CloudOfferRecord]:
    """`records` with the cross-provider rules added to their `suspect_reason`. The distribution
    is made of `records` and `others` (the current rows of providers `records` do not replace)."""
    medians = _cloud_medians([*cloud_price_points(records), *others])
    flagged = []
    for record in records:
        reasons = cloud_outlier_reasons(record, medians.get(record.accelerator_id or ""))
        shut = shut_down_reason(record.provider)
        reasons += [shut] if shut else []
        flagged.append(
            replace(record, suspect_reason=_append(record.suspect_reason, reasons)) if reasons else record
        )
    return flagged


# --- hosted token prices ---------------------------------------------------------------------------

TokenPricePoint = tuple[str, str, float, float]  # (provider, catalog model id, input, output per million)


def token_price_points(records: Iterable[ApiPriceRecord]) -> list[TokenPricePoint]:
    return [
        (
            r.provider,
            r.catalog_model_id,
            float(r.input_usd_per_million_tokens),
            float(r.output_usd_per_million_tokens),
        )
        for r in records
        if r.catalog_model_id
        and r.input_usd_per_million_tokens is not None
        and r.output_usd_per_million_tokens is not None
        and not r.suspect_reason
    ]


def _token_medians(points: Iterable[TokenPricePoint]) -> dict[str, tuple[float, float]]:
    inputs: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    outputs: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for provider, model_id, input_price, output_price in points:
        inputs[model_id][provider].append(input_price)
        outputs[model_id][provider].append(output_price)
    medians = {}
    for model_id in inputs:
        median_in = _median_of_provider_medians(inputs[model_id])
        median_out = _median_of_provider_medians(outputs[model_id])
        if median_in and median_out:
            medians[model_id] = (median_in, median_out)
    return medians


def token_outlier_reasons(record: ApiPriceRecord, medians: tuple[float, float] | None) -> list[str]:
    if medians is None or record.input_usd_per_million_tokens is None:
        return []
    if record.output_usd_per_million_tokens is None:
        return []
    median_in, median_out = medians
    input_price, output_price = (
        float(record.input_usd_per_million_tokens),
        float(record.output_usd_per_million_tokens),
    )
    if (
        input_price < TOKEN_OUTLIER_FRACTION * median_in
        and output_price < TOKEN_OUTLIER_FRACTION * median_out
    ):
        return [
            f"${input_price:g} in / ${output_price:g} out per million tokens is below "
            f"{TOKEN_OUTLIER_FRACTION:.0%} of the other providers' medians of {record.catalog_model_id} "
            f"(${median_in:.2f} / ${median_out:.2f})"
        ]
    return []


def flag_token_outliers(records: Sequence[ApiPriceRecord]) -> list[ApiPriceRecord]:
    """`records` (a complete hosted price table) with the cross-provider and shut-down rules added
    to their `suspect_reason`."""
    medians = _token_medians(token_price_points(records))
    flagged = []
    for record in records:
        reasons = token_outlier_reasons(record, medians.get(record.catalog_model_id or ""))
        shut = shut_down_reason(record.provider)
        reasons += [shut] if shut else []
        flagged.append(
            replace(record, suspect_reason=_append(record.suspect_reason, reasons)) if reasons else record
        )
    return flagged
