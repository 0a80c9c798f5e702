"""Errors the engine raises.

    EngineError
     └── InvalidSpec      an input that cannot describe a real model, accelerator or workload
                          (zero layers, heads not divisible by KV heads, a tensor-parallel degree
                          that does not divide the heads, negative tokens, an unknown precision).

A configuration that is merely too big for the hardware is *not* an error: estimates report
`fits=False` and the shortfall. The API layer renders `InvalidSpec` as a 422 problem+json whose
pointer is `field`.
"""

from __future__ import annotations

__all__ = ["EngineError", "InvalidSpec"]


class EngineError(Exception):
    """Base class of every error the engine raises on purpose."""


class InvalidSpec(EngineError, ValueError):
    """An impossible input. `field` names the offending field (dotted path), `reason` says why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason
