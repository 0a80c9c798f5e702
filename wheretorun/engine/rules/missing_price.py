"""A price the plan needs and the catalog lacks (`unpriced`), or has only in part
(`incomplete_price`: a GPU-only cloud price without its host VM). A missing price is never taken
as $0: the candidate is rejected and says which price is missing.

* hosted APIs: an input or output token price;
* owned and local hardware: a purchase price;
* cloud offers: the price of the pricing mode (on-demand, spot; reserved: reserved_term.py), and
  for GPU-only rows (`accelerator_only`) the host VM, unless
  `assumptions.host_vm_usd_per_accelerator_hour` supplies it.

It applies after sizing, when the price is looked up.
"""

from __future__ import annotations

from wheretorun.engine.catalog import ApiPriceOffer
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection

__all__ = ["HOST_VM", "hosted_tokens", "mode_price", "purchase"]

HOST_VM = Rejection(RejectReason.INCOMPLETE_PRICE, "GPU-only price; no host VM price")


def hosted_tokens(price: ApiPriceOffer) -> Rejection | None:
    """A hosted-API row without an input or output token price."""
    input_usd, output_usd = price.input_usd_per_million_tokens, price.output_usd_per_million_tokens
    if input_usd is not None and output_usd is not None:
        return None  # the usual row: no list of what is missing to build
    missing = [name for name, value in (("input", input_usd), ("output", output_usd)) if value is None]
    return Rejection(RejectReason.UNPRICED, f"no {' or '.join(missing)} token price")


def purchase(accelerator_id: str, priced: bool) -> Rejection | None:
    """Hardware to buy without a purchase price in the catalog."""
    return None if priced else Rejection(RejectReason.UNPRICED, f"no purchase price for {accelerator_id}")


def mode_price(pricing: str) -> Rejection:
    """A cloud offer without a price in `pricing` (on_demand, spot, reserved_1y, reserved_3y)."""
    return Rejection(RejectReason.UNPRICED, f"no {pricing.replace('_', '-')} price")
