"""Label domains and keys that others own: the policy's domain (under which policyc labels and taints nodes) must be
none of theirs, and a pool's own labels and taints must not take a key that policyc, a GPU vendor's feature discovery
or its device plugin sets."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.checks.written import Written
from policyc.diagnostics import Diagnostic, diag
from policyc.gpu import accelerators
from policyc.gpu.accelerators import VENDORS
from policyc.ir import DEVICE_PLUGIN_CONFIG, MIG_CONFIG, RDMA_LABEL, Cluster, Pool
from policyc.registry import every_provisioner_settings, every_settings

OWNED_DOMAINS = {
    "kubernetes.io": "Kubernetes (node-feature-discovery's feature.node.kubernetes.io among them)",
    "k8s.io": "Kubernetes",
    "x-k8s.io": "Kubernetes SIG projects (Cluster API, JobSet, LeaderWorkerSet ...)",
    "nvidia.com": "NVIDIA's GPU Operator, device plugin and GPU Feature Discovery",
    "amd.com": "AMD's GPU operator and device plugin",
    "intel.com": "Intel's device plugins",
    "habana.ai": "Intel Gaudi's device plugin",
    "huawei.com": "Huawei Ascend's device plugin",
    "kubeflow.org": "Kubeflow",
    "argoproj.io": "Argo CD",
    "karpenter.sh": "Karpenter",
}
"""Label domains other systems own, with who owns them: labels and taints policyc managed under them would be
mistaken for theirs, and theirs for policyc's (subdomains included). The scheduler backends' and node provisioners' own
domains (their `settings.LABEL_DOMAINS`) count too."""
NODE_RESTRICTION = "node-restriction.kubernetes.io"
"""The domain Kubernetes sets aside for node labels a kubelet may not set on its own node (NodeRestriction): a domain
under it (`example.com.node-restriction.kubernetes.io`) is the policy's own, not Kubernetes'."""


def outside_kubernetes(domain: str) -> str:
    """A domain of the user's own for a hint: `domain` without the Kubernetes domain it is under
    (`ai.example.com.node-restriction.kubernetes.io` -> `ai.example.com`), or an example when that leaves no DNS
    name."""
    head = domain.removesuffix("." + NODE_RESTRICTION)
    return head if head != domain and "." in head else "ai.example.com"


def domain(cluster: Cluster) -> Iterator[Diagnostic]:
    """The policy's domain is none that another system owns."""
    mine = cluster.keys.domain
    backends = {d: m.TITLE for m in (*every_settings(), *every_provisioner_settings()) for d in m.LABEL_DOMAINS}
    if mine.endswith("." + NODE_RESTRICTION):  # Kubernetes' own domain for labels a kubelet cannot set itself
        return
    for owned, owner in {**backends, **OWNED_DOMAINS}.items():
        if mine == owned or mine.endswith("." + owned):
            yield diag(
                "reserved-domain",
                f"domain '{mine}' belongs to {owner}: policyc's node labels and taints under it would be mixed up "
                "with theirs",
                ("spec", "domain"),
                hint="use a DNS name your organisation owns, e.g. ai.example.com",
            )
            return


def pool_keys(cluster: Cluster, written: Written) -> Iterator[Diagnostic]:
    """The labels and taints each pool states (`written`: the IR's labels and taints include policyc's own) take no
    key policyc or the pool's vendor's components set."""
    domain = cluster.keys.domain + "/"
    product_keys = sorted({v.product_label for v in VENDORS.values() if v.product_label})
    for pool in cluster.pools:
        owners = label_owners(cluster, pool)
        for key in written.get((*pool.path, "labels")) or {}:
            owner = "set by policyc" if key.startswith(domain) else owners.get(key)
            if owner:
                yield diag(
                    "reserved-key",
                    f"label '{key}' is {owner}",
                    (*pool.path, "labels", key),
                    at_key=True,
                    hint=f"remove it, or use a key outside '{domain}' for a label of your own"
                    if key.startswith(domain)
                    else "remove it",
                )
        for j, taint in enumerate(written.get((*pool.path, "taints")) or ()):
            if taint["key"].startswith(domain) or taint["key"] in product_keys:
                yield diag(
                    "reserved-key",
                    f"taint '{taint['key']}' is set by policyc",
                    (*pool.path, "taints", j, "key"),
                    hint=f"keys under '{domain}' and the product labels ({', '.join(product_keys)}) are policyc's; "
                    "use a key of your own, here and in the tolerations of the workloads that run on the pool",
                )


def label_owners(cluster: Cluster, pool: Pool) -> dict[str, str]:
    """Label key -> who sets it on the pool's nodes, outside the policy's domain."""
    vendor = VENDORS[pool.vendor] if pool.vendor else None
    setting = "gpuFeatureDiscovery is false" if vendor and vendor.discovery else "always"
    owners = {
        key: f"{vendor.discovery or 'policyc'}'s (policyc sets it from {field} when {setting})"
        for key, field in (accelerators.owned_labels(vendor).items() if vendor else ())
    }
    if vendor and not vendor.product_label:
        owners[accelerators.product_key(vendor, cluster.keys.domain)] = "set by policyc from gpu.product"
    return owners | {
        RDMA_LABEL: "set by policyc from 'rdma: true'",
        DEVICE_PLUGIN_CONFIG: "set by policyc from gpu.sharing",
        MIG_CONFIG: "set by policyc from gpu.mig",
    }
