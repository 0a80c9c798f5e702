"""Settling a long-running process's heap for the cyclic garbage collector.

A full collection scans every tracked object. A server keeps hundreds of thousands for its life
(modules, tables, the app; the catalog snapshot's ~200,000), so each full collection over them
costs the request it lands in: ~100 ms on the batch example once the snapshot was built, ~3% of
an estimate's CPU at startup size (216,000 objects, one full collection per ~3,000 requests;
2026-12-04). `gc.freeze` moves what is alive out of the collector's sight.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["settle_once"]

_settled: set[str] = set()
_lock = threading.Lock()


def settle_once(moment: str) -> None:
    """Once per process for each `moment` ("startup", "first catalog snapshot"): collect garbage,
    then freeze every object alive. What is frozen is never rescanned and is still freed by
    reference counting when dropped; a cycle frozen would stay, so a collection comes first, and
    it runs once per moment, not per request."""
    with _lock:
        if moment in _settled:
            return
        _settled.add(moment)
    gc.collect()
    gc.freeze()
