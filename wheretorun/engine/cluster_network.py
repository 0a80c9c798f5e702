"""Multi-node jobs need a cluster network: instance families with a published one, and its speed.

A training job that spans instances sends its data-parallel collectives over the network between
them. The catalog's price files carry no network figures, so this table holds the instance
families whose providers publish a GPU cluster network (EFA, InfiniBand), per instance, with the
page that says so. An instance type not listed has no published cluster network: its boxes are
not joined into one job (`no_cluster_network`); single-instance jobs are unaffected.

Figures are the published line rate in Gbit/s per instance; `training.py` takes GB/s per
accelerator (Gbit/s / 8 / accelerators) and applies the achieved bus fraction to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["CLUSTER_NETWORKS", "ClusterNetwork", "cluster_network"]

_AWS_P4 = "https://aws.amazon.com/ec2/instance-types/p4/ (400 Gbps EFA per instance)"
_AWS_P5 = "https://aws.amazon.com/ec2/instance-types/p5/ (3,200 Gbps EFA per instance)"
_AWS_P6 = "https://aws.amazon.com/ec2/instance-types/p6/ (P6-B200: 3,200 Gbps EFAv4 per instance)"
_AZURE_A100 = (
    "https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndasra100v4-series "
    "(8 x 200 Gb/s HDR InfiniBand per VM)"
)
_AZURE_H100 = (
    "https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series "
    "(8 x 400 Gb/s NDR InfiniBand per VM)"
)
_NEBIUS_B200 = (
    "mlcommons/inference_results_v6.0 closed/Nebius/systems/nebius_b200_n1.json: "
    "'8x ConnectX-7 IB NDR 400Gb/s'"
)


@dataclass(frozen=True, slots=True)
class ClusterNetwork:
    gbit_s_per_instance: float
    source: str

    def gb_s_per_accelerator(self, accelerators_per_instance: int) -> float:
        return self.gbit_s_per_instance / 8 / accelerators_per_instance


CLUSTER_NETWORKS: Mapping[tuple[str, str], ClusterNetwork] = MappingProxyType(
    {
        ("aws", "p4d.24xlarge"): ClusterNetwork(400, _AWS_P4),
        ("aws", "p4de.24xlarge"): ClusterNetwork(400, _AWS_P4),
        ("aws", "p5.48xlarge"): ClusterNetwork(3200, _AWS_P5),
        ("aws", "p5e.48xlarge"): ClusterNetwork(3200, _AWS_P5),
        ("aws", "p5en.48xlarge"): ClusterNetwork(3200, _AWS_P5),
        ("aws", "p6-b200.48xlarge"): ClusterNetwork(3200, _AWS_P6),
        ("azure", "Standard_ND96asr_v4"): ClusterNetwork(1600, _AZURE_A100),
        ("azure", "Standard_ND96amsr_A100_v4"): ClusterNetwork(1600, _AZURE_A100),
        ("azure", "Standard_ND96isr_H100_v5"): ClusterNetwork(3200, _AZURE_H100),
        ("nebius", "gpu-b200-sxm_8gpu-160vcpu-1792gb"): ClusterNetwork(3200, _NEBIUS_B200),
    }
)


def cluster_network(provider: str, instance_type: str) -> ClusterNetwork | None:
    """The instance's published cluster network, or None when it has none on record."""
    return CLUSTER_NETWORKS.get((provider, instance_type))
