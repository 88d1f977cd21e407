"""Karpenter's rules on the label keys of a NodePool (its template's labels and its requirements' keys), by its
version (kubernetes-sigs/karpenter `pkg/apis/v1/labels.go`; the NodePool CRD's CEL rules of aws/karpenter-provider-aws
v1.14.1), and the label keys it knows without a NodePool stating them."""

from __future__ import annotations

OPEN_KUBERNETES_DOMAINS_SINCE = (1, 9)
"""From Karpenter 1.9 (kubernetes-sigs/karpenter PR #2586), labels under kubernetes.io and k8s.io are a user's to
set."""
CAPACITY_TYPE = "karpenter.sh/capacity-type"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ZONE = "topology.kubernetes.io/zone"
GPU_NAME = "karpenter.k8s.aws/instance-gpu-name"
GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"
NODEPOOL = "karpenter.sh/nodepool"
"""The label Karpenter gives every node of a NodePool: its name."""
WELL_KNOWN = frozenset(
    {
        ZONE,
        "topology.kubernetes.io/region",
        INSTANCE_TYPE,
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "node.kubernetes.io/windows-build",
        CAPACITY_TYPE,
        NODEPOOL,
    }
)
"""Keys Karpenter sets on every node it makes, whatever the NodePool says (core)."""
AWS_WELL_KNOWN = frozenset(
    f"karpenter.k8s.aws/{name}"
    for name in (
        "instance-tenancy",
        "capacity-reservation-type",
        "capacity-reservation-id",
        "capacity-reservation-interruptible",
        "ec2nodeclass",
        "instance-encryption-in-transit-supported",
        "instance-category",
        "instance-hypervisor",
        "instance-family",
        "instance-generation",
        "instance-local-nvme",
        "instance-size",
        "instance-cpu",
        "instance-cpu-manufacturer",
        "instance-cpu-sustained-clock-speed-mhz",
        "instance-memory",
        "instance-ebs-bandwidth",
        "instance-network-bandwidth",
        "instance-gpu-name",
        "instance-gpu-manufacturer",
        "instance-gpu-count",
        "instance-gpu-memory",
        "instance-accelerator-name",
        "instance-accelerator-manufacturer",
        "instance-accelerator-count",
        "instance-capability-flex",
        "placement-group-id",
        "placement-group-partition",
    )
) | {"topology.k8s.aws/zone-id"}
"""Keys the AWS provider sets on every node it makes (those under karpenter.k8s.aws, the only ones a NodePool may
name there, and the zone's id)."""
KUBERNETES_EXCEPTIONS = ("node.kubernetes.io", "node-restriction.kubernetes.io", "kops.k8s.io")
"""Domains (and their subdomains) under kubernetes.io and k8s.io that Karpenter before 1.9 lets a NodePool set."""
OWN_TAINTS = frozenset({"karpenter.sh/disrupted", "karpenter.sh/unregistered"})
"""Taint keys Karpenter puts on nodes itself and refuses in a NodePool."""


def version_of(text: str) -> tuple[int, int]:
    """'1.14' -> (1, 14)."""
    major, minor = text.split(".")
    return int(major), int(minor)


def refused(key: str, version: tuple[int, int]) -> str | None:
    """Why Karpenter of `version` refuses `key` as a NodePool's label or requirement key, or None."""
    domain = key.partition("/")[0] if "/" in key else ""
    if key == NODEPOOL or key == "kubernetes.io/hostname":
        return f"Karpenter sets '{key}' itself"
    if domain.endswith("karpenter.sh") and key != CAPACITY_TYPE:
        return "the domain karpenter.sh is Karpenter's own"
    if domain.endswith("karpenter.k8s.aws") and key not in AWS_WELL_KNOWN:
        return "the domain karpenter.k8s.aws is Karpenter's own (but for its well-known keys)"
    if version >= OPEN_KUBERNETES_DOMAINS_SINCE or key in WELL_KNOWN:
        return None
    if domain.endswith(KUBERNETES_EXCEPTIONS):
        return None
    if domain.endswith(("kubernetes.io", "k8s.io")):
        return (
            "Karpenter before 1.9 refuses the domains kubernetes.io and k8s.io (but node.kubernetes.io, "
            "node-restriction.kubernetes.io and kops.k8s.io)"
        )
    return None
