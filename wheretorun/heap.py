"""Settling a long-running process's heap for the cyclic garbage collector.

A full collection scans every tracked object. A server keeps hundreds of thousands for its life
(modules, tables, the app; the catalog snapshot's ~200,000), so each full collection over them
costs the request it lands in: ~100 ms on the batch example once the snapshot was built, ~3% of
an estimate's CPU at startup size (216,000 objects, one full collection per ~3,000 requests;
2026-12-04). `gc.freeze` moves what is alive out of the collector's sight.

What is left is the young generation's collections: one each time 700 more tracked objects
(lists, dicts, instances) are alive than at the last one, by default. The 8B prototype's
recommendation triggers ~1.8 of them per request (547 in 300 requests); each scans the young
objects alive at that moment and finds next to nothing to free (reference counting frees them),
and together they cost ~5% of its CPU (in process: 3.48 ms per request with the default against
3.27-3.31 ms with the collector off, 2026-12-05). A settled process collects the young generation
every `YOUNG_COLLECTION_THRESHOLD` instead: cycles are still found, about 14 times less often.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["YOUNG_COLLECTION_THRESHOLD", "settle_once"]

# Tracked objects made (net of those freed) between two young collections in a settled process.
# At 7,000, 20,000 and 50,000 the
# 8B prototype took 3.12-3.33 ms per request in process against 3.43-3.48 ms at Python's default
# 700, three rounds each (2026-12-05); 10,000 lies in that flat range. The older generations keep
# Python's default ratios (10, 10).
YOUNG_COLLECTION_THRESHOLD = 10_000

_settled: set[str] = set()
_lock = threading.Lock()


def settle_once(moment: str) -> None:
    """Once per process for each `moment` ("startup", "first catalog snapshot"): collect garbage,
    then freeze every object alive. What is frozen is never rescanned and is still freed by
    reference counting when dropped; a cycle frozen would stay, so a collection comes first, and
    it runs once per moment, not per request. The young generation is then collected every
    `YOUNG_COLLECTION_THRESHOLD` allocations, not 700."""
    with _lock:
        if moment in _settled:
            return
        _settled.add(moment)
    gc.collect()
    gc.freeze()
    _, *older = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *older)
