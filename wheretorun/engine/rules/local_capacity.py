"""A local GPU asked to serve more than one user (`exceeds_local_capacity`): a local card serves
one request at a time, so the busiest hour must fit in what one stream serves at the target
utilisation.

It applies after latency: only a card that serves one request within the targets is asked how many.
"""

from __future__ import annotations

from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection

__all__ = ["one_stream", "serves_one_stream"]


def serves_one_stream(single_stream_rps: float, peak_rps: float, target_utilisation: float) -> bool:
    """Whether one stream (`single_stream_rps` at the target utilisation) serves the peak hour:
    what `one_stream` checks, without writing why not."""
    planned = single_stream_rps * target_utilisation
    return planned > 0 and peak_rps <= planned


def one_stream(single_stream_rps: float, peak_rps: float, target_utilisation: float) -> Rejection | None:
    """The peak hour needs more than one stream serves (`single_stream_rps` at the target
    utilisation; 0: the card cannot serve at all)."""
    if serves_one_stream(single_stream_rps, peak_rps, target_utilisation):
        return None
    planned = single_stream_rps * target_utilisation
    return Rejection(
        RejectReason.EXCEEDS_LOCAL_CAPACITY,
        f"one request at a time serves "
        f"{planned * 3600:,.0f} requests/h, the peak hour needs {peak_rps * 3600:,.0f}",
    )
