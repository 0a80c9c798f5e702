"""A multi-instance training job on instances without a cluster network (`no_cluster_network`):
when one instance cannot hold or finish the job, several must be joined, and an instance type
that publishes no cluster network (engine/cluster_network.py) cannot join them.

It replaces a memory or deadline rejection of a single instance: more instances would help, the
network is what is missing.
"""

from __future__ import annotations

from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.rules.rejection import Rejection

__all__ = ["single_instance"]


def single_instance(rejection: Rejection) -> Rejection:
    """`rejection` of a one-instance job, told as the missing network when more instances would
    have helped (memory or deadline); any other reason stands."""
    if rejection.reason not in (RejectReason.DOES_NOT_FIT_MEMORY, RejectReason.MISSES_DEADLINE):
        return rejection
    return Rejection(
        RejectReason.NO_CLUSTER_NETWORK,
        f"one instance is not enough ({rejection.detail}) and the instance type publishes no cluster "
        "network to join several into one job",
    )
