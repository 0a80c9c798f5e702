"""Hardware too small for the model (`does_not_fit_memory`).

Serving: a replica's weights, activations and KV cache at concurrency 1 need more memory than its
accelerators leave (memory.py), or the replica cannot be laid out at all (a tensor-parallel degree
that does not divide the attention heads). Training: no parallelism/memory setting fits even fully
sharded, or holding the job takes more accelerators than a job may use
(`assumptions.max_accelerators_per_job`).

It applies after the hardware is known to run the format (precision_support.py) and before
latency: a replica that does not fit has no speed.
"""

from __future__ import annotations

from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection

__all__ = ["replica_layout", "replica_memory", "training_holds", "training_setting"]


def replica_memory(
    fits: bool, needed_gb: float, available_gb: float, replica_size: int, accelerator: str
) -> Rejection | None:
    """A replica of `replica_size` x `accelerator` that needs more than the memory it leaves
    (`fits` is the memory estimate's verdict on these figures, memory.py)."""
    if fits:
        return None
    return Rejection(
        RejectReason.DOES_NOT_FIT_MEMORY,
        f"needs {needed_gb:.1f} GB, {replica_size} x {accelerator} leave {available_gb:.1f} GB "
        f"(short by {needed_gb - available_gb:.1f} GB)",
    )


def replica_layout(replica_size: int, attention_heads: int) -> Rejection | None:
    """A tensor-parallel degree that does not divide the attention heads: no such replica exists
    (reported with memory: the model cannot be spread over that many accelerators)."""
    if attention_heads % replica_size:
        return Rejection(
            RejectReason.DOES_NOT_FIT_MEMORY,
            f"{replica_size} does not divide the model's {attention_heads} attention heads",
        )
    return None


def training_setting(accelerator: str) -> Rejection:
    """No training setting fits on `accelerator`, however sharded."""
    return Rejection(
        RejectReason.DOES_NOT_FIT_MEMORY,
        f"{accelerator}: no setting fits even fully sharded (ZeRO-1..3, recomputation, "
        "tensor-parallel within a node, micro-batch 1)",
    )


def training_holds(needed: int, allowed: int, accelerator: str) -> Rejection:
    """Holding the job takes `needed` accelerators; at most `allowed` may be used."""
    return Rejection(
        RejectReason.DOES_NOT_FIT_MEMORY,
        f"needs {needed} x {accelerator} to hold the job; at most {allowed} allowed",
    )
