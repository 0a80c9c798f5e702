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
_GCP = "https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth"
_GCP_A3_HIGH = (
    f"{_GCP} (A3 High, H100: 1,000 Gbps in all, GPUDirect-TCPX; 800 Gbps of it on the four GPU NICs, the "
    "other 200 Gbps on the general-purpose gVNIC)"
)
_GCP_A3_MEGA = (
    f"{_GCP} (A3 Mega, H100: 1,800 Gbps in all, GPUDirect-TCPXO; 1,600 Gbps of it on the eight GPU NICs, "
    "the other 200 Gbps on the general-purpose gVNIC)"
)
_GCP_RDMA = (
    f"{_GCP} (A4, B200, and A3 Ultra, H200: eight ConnectX-7 NICs, 3,200 Gbps for GPU-to-GPU traffic, "
    "GPUDirect RDMA)"
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
        # GCP rows are accelerator attachments of the A3/A4 machine types (SkyPilot's GCP catalog).
        ("gcp", "gcp-accel:H100x8"): ClusterNetwork(800, _GCP_A3_HIGH),
        ("gcp", "gcp-accel:H100-MEGAx8"): ClusterNetwork(1600, _GCP_A3_MEGA),
        ("gcp", "gcp-accel:H200x8"): ClusterNetwork(3200, _GCP_RDMA),
        ("gcp", "gcp-accel:B200x8"): ClusterNetwork(3200, _GCP_RDMA),
    }
)


def cluster_network(provider: str, instance_type: str) -> ClusterNetwork | None:
    """The instance's published cluster network, or None when it has none on record."""
    return CLUSTER_NETWORKS.get((provider, instance_type))
