"""Backends: pure functions from the cluster IR to artifacts (files to write). No I/O here.

The Kubernetes objects (namespaces, quotas, priority classes), the node plan, the node agents' tolerations and
the workload templates are the same for every scheduler. A scheduler backend is a package (``volcano``,
``kueue``) with the contract of `policyc.backends.interface.SchedulerBackend`: its objects, how a workload joins
its queue, the workload kinds it runs and its checks. Adding one is a package and a line in `SCHEDULERS`.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policyc.artifacts import Artifact
    from policyc.backends.interface import SchedulerBackend
    from policyc.ir import Cluster

SCHEDULERS = {
    "volcano": "policyc.backends.volcano",
    "kueue": "policyc.backends.kueue",
}
"""Scheduler backend name -> its package, imported when a policy selects it."""


@cache
def scheduler(name: str) -> SchedulerBackend:
    return importlib.import_module(SCHEDULERS[name])  # type: ignore[return-value]  # a module with the contract


def emit(cluster: Cluster) -> list[Artifact]:
    """Every artifact of the cluster, sorted by path."""
    from policyc.backends import argocd, kubernetes, node_agents, nodes, workloads

    backend = scheduler(cluster.scheduler.backend)
    artifacts = [
        *kubernetes.emit(cluster),
        *backend.emit(cluster),
        *nodes.emit(cluster),
        *node_agents.emit(cluster),
        *workloads.emit(cluster, backend.binding),
    ]
    return sorted(argocd.finalize(artifacts), key=lambda a: a.path)
