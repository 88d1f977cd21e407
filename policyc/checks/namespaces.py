"""Namespaces tenants may not own: those the cluster's own components run in. A tenant's quota, zero-pods
priority quota and LimitRange would bind their pods (the device plugin and kube-proxy run at system-node-critical,
which a tenant's priority quota refuses), and Argo CD would manage the namespace as the tenant's."""

from __future__ import annotations

from collections.abc import Iterator

from policyc.diagnostics import Diagnostic, diag
from policyc.ir import Cluster
from policyc.registry import every_provisioner_settings, every_settings

SYSTEM_NAMESPACES = {
    "default": "Kubernetes",
    "kube-system": "Kubernetes",
    "kube-public": "Kubernetes",
    "kube-node-lease": "Kubernetes",
    "gpu-operator": "NVIDIA's GPU Operator",
    "nvidia-gpu-operator": "NVIDIA's GPU Operator",
    "nvidia-network-operator": "NVIDIA's Network Operator",
    "node-feature-discovery": "node-feature-discovery",
    "argocd": "Argo CD",
}
"""Namespace -> who runs there; the scheduler backends' and node provisioners' (their `settings.NAMESPACES`) and the
policy's node agents' namespaces count too."""


def check(cluster: Cluster) -> Iterator[Diagnostic]:
    agents = {a.namespace: f"node agent '{a.name}'" for a in cluster.node_agents}
    backends = {ns: m.TITLE for m in (*every_settings(), *every_provisioner_settings()) for ns in m.NAMESPACES}
    for t in cluster.tenants:
        for i, ns in enumerate(t.namespaces):
            owner = SYSTEM_NAMESPACES.get(ns) or backends.get(ns) or agents.get(ns)
            if owner is not None:
                yield diag(
                    "system-namespace",
                    f"tenant '{t.name}' claims namespace '{ns}', where {owner} runs: the tenant's quotas and limit "
                    "range would bind those pods too",
                    (*t.path, "namespaces", i),
                    hint="give the tenant namespaces of its own",
                )
