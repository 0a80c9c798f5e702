"""A replica too slow for the workload's targets (`misses_latency_target`): time to first token
above `ttft_ms` or time per output token above `tpot_ms`, even at the lowest concurrency. An
unknown TTFT never meets a TTFT target. Capacity at higher concurrency is the largest that still
meets both (capacity.py).

It applies after memory fit: only a replica that fits has a latency.
"""

from __future__ import annotations

import numpy as np

from wheretorun.engine.costs.arrays import BoolArray, FloatArray
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection

__all__ = ["meets_targets", "misses_targets"]


def meets_targets(
    ttft_ms: FloatArray, tpot_ms: FloatArray, ttft_target: float | None, tpot_target: float | None
) -> BoolArray:
    """Which estimates meet both targets (NaN, an unknown latency, meets none)."""
    ok = np.ones(ttft_ms.shape, dtype=bool)
    if ttft_target is not None:
        ok &= np.nan_to_num(ttft_ms, nan=np.inf) <= ttft_target
    if tpot_target is not None:
        ok &= np.nan_to_num(tpot_ms, nan=np.inf) <= tpot_target
    return ok


def misses_targets(
    ttft_ms: float, tpot_ms: float, ttft_target: float | None, tpot_target: float | None
) -> Rejection:
    """A replica that fits but meets the targets at no concurrency, with the latencies of one
    request at a time."""
    parts = []
    if ttft_target is not None and ttft_ms > ttft_target:
        parts.append(f"TTFT {ttft_ms:.0f} ms > {ttft_target:g} ms")
    if tpot_target is not None and tpot_ms > tpot_target:
        parts.append(f"TPOT {tpot_ms:.1f} ms > {tpot_target:g} ms")
    detail = (
        "even one request at a time: " + ", ".join(parts) if parts else "no concurrency meets the targets"
    )
    return Rejection(RejectReason.MISSES_LATENCY_TARGET, detail)
