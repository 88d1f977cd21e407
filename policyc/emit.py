"""The emit step: every artifact of a resolved cluster, from the shared emitters, its scheduler backend and its pools'
node provisioners. Pure: no I/O (`policyc.output.write` writes).

The Kubernetes objects (namespaces, quotas, priority classes), the tenants' admission policies, the node plan, the
node agents' tolerations and the workload templates are the same for every scheduler; the backend, which the
pipeline passes in, adds its own objects and says how a template joins its queue. Each provisioner the pools select,
passed in too, adds the objects that make its pools' nodes and give them their labels and taints.
"""

from __future__ import annotations

from collections.abc import Mapping

from policyc.artifacts import Artifact
from policyc.backends import (
    autoscaling,
    gpu_operator,
    kubernetes,
    monitoring,
    node_agents,
    nodes,
    registration,
    slurm,
    workloads,
)
from policyc.backends.interface import Provisioner, SchedulerBackend
from policyc.ir import Cluster
from policyc.output import argocd
from policyc.provisioners.node_features import taints_by_rules
from policyc.tenancy import policies


def emit(cluster: Cluster, backend: SchedulerBackend, provisioners: Mapping[str, Provisioner]) -> list[Artifact]:
    """Every artifact of the cluster, sorted by path; `backend` is its scheduler backend, `provisioners` the node
    provisioners its pools select, by name."""
    node_side = [
        a
        for name, provisioner in provisioners.items()
        for a in provisioner.emit(cluster, tuple(p for p in cluster.pools if p.provisioning == name))
    ]
    artifacts = [
        *kubernetes.emit(cluster, policies.emit(cluster, backend)),
        *backend.emit(cluster),
        *node_side,
        *nodes.emit(cluster),
        *registration.emit(cluster),
        *node_agents.emit(cluster, nfd_taints=taints_by_rules([m for a in node_side for m in a.manifests])),
        *gpu_operator.emit(cluster),
        *monitoring.emit(cluster),
        *slurm.emit(cluster),
        *autoscaling.attach(cluster, workloads.emit(cluster, backend.KINDS, backend.binding)),
    ]
    references = (*backend.REFERENCES, *(r for p in provisioners.values() for r in p.REFERENCES))
    return sorted(argocd.finalize(artifacts, references), key=lambda a: a.path)
