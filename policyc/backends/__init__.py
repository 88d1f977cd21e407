"""Backends: pure functions from the cluster IR to artifacts (files to write). No I/O here.

The Kubernetes objects (namespaces, quotas, priority classes), the node plan and the workload
templates are the same for every scheduler. A scheduler backend module (``volcano``, ``kueue``) provides
``emit(cluster)`` for its own objects and ``binding(cluster, workload)`` to say how a workload joins
its queue; adding a scheduler is one module and one entry in `SCHEDULERS`.
"""

from __future__ import annotations

from policyc.artifacts import Artifact
from policyc.backends import argocd, kubernetes, kueue, node_agents, nodes, volcano, workloads
from policyc.ir import Cluster

SCHEDULERS = {volcano.NAME: volcano, kueue.NAME: kueue}


def emit(cluster: Cluster) -> list[Artifact]:
    """Every artifact of the cluster, sorted by path."""
    scheduler = SCHEDULERS[cluster.scheduler.backend]
    artifacts = [
        *kubernetes.emit(cluster),
        *scheduler.emit(cluster),
        *nodes.emit(cluster),
        *node_agents.emit(cluster),
        *workloads.emit(cluster, scheduler.binding),
    ]
    return sorted(argocd.finalize(artifacts), key=lambda a: a.path)
