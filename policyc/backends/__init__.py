"""Backends: pure functions from the cluster IR to artifacts (files to write). No I/O here.

The Kubernetes objects (namespaces, quotas, priority classes), the node plan, the node agents' tolerations and
the workload templates are the same for every scheduler. A scheduler backend is a package registered in
`SCHEDULERS`, with three modules the rest of policyc reads:

- ``settings``: its settings model (one member of the union `spec.scheduler` is), the workload kinds it runs
  (and those whose pods are created only once its queue admits them, `PODS_AFTER_ADMISSION`), and the
  namespaces, label domains and device resources it owns. Light: every process imports it.
- ``codes``: its diagnostic rules (`RULES`), part of the catalogue in `policyc.codes`.
- ``backend``: the contract of `policyc.backends.interface.SchedulerBackend` (its objects, how a workload joins
  its queue, its checks), imported only when a policy selects it.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from policyc.artifacts import Artifact
    from policyc.backends.interface import SchedulerBackend
    from policyc.ir import Cluster

SCHEDULERS = {
    "volcano": "policyc.backends.volcano",
    "kueue": "policyc.backends.kueue",
    "kai": "policyc.backends.kai",
}
"""Scheduler backend name -> its package. The first is the default."""


@cache
def scheduler(name: str) -> SchedulerBackend:
    return importlib.import_module(f"{SCHEDULERS[name]}.backend")  # type: ignore[return-value]  # has the contract


@cache
def settings(name: str) -> ModuleType:
    return importlib.import_module(f"{SCHEDULERS[name]}.settings")


def every_settings() -> list[ModuleType]:
    """Every registered backend's `settings` module, in registry order."""
    return [settings(name) for name in SCHEDULERS]


def emit(cluster: Cluster) -> list[Artifact]:
    """Every artifact of the cluster, sorted by path."""
    from policyc.backends import (
        admission,
        argocd,
        autoscaling,
        gpu_operator,
        kubernetes,
        monitoring,
        node_agents,
        nodes,
        slurm,
        workloads,
    )

    backend = scheduler(cluster.scheduler.backend)
    artifacts = [
        *kubernetes.emit(cluster),
        *admission.emit(cluster),
        *backend.emit(cluster),
        *nodes.emit(cluster),
        *node_agents.emit(cluster),
        *gpu_operator.emit(cluster),
        *monitoring.emit(cluster),
        *slurm.emit(cluster),
        *autoscaling.attach(cluster, workloads.emit(cluster, backend)),
    ]
    return sorted(argocd.finalize(artifacts, backend.REFERENCES), key=lambda a: a.path)
