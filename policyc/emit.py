"""The emit step: every artifact of a resolved cluster, from the shared emitters and its scheduler backend. Pure: no
I/O (`policyc.output.write` writes).

The Kubernetes objects (namespaces, quotas, priority classes), the tenants' admission policies, the node plan, the
node agents' tolerations and the workload templates are the same for every scheduler; the backend, which the
pipeline passes in, adds its own objects and says how a template joins its queue.
"""

from __future__ import annotations

from policyc.artifacts import Artifact
from policyc.backends import autoscaling, gpu_operator, kubernetes, monitoring, node_agents, nodes, slurm, workloads
from policyc.backends.interface import SchedulerBackend
from policyc.ir import Cluster
from policyc.output import argocd
from policyc.tenancy import policies


def emit(cluster: Cluster, backend: SchedulerBackend) -> list[Artifact]:
    """Every artifact of the cluster, sorted by path; `backend` is its scheduler backend."""
    artifacts = [
        *kubernetes.emit(cluster),
        *policies.emit(cluster, backend),
        *backend.emit(cluster),
        *nodes.emit(cluster),
        *node_agents.emit(cluster),
        *gpu_operator.emit(cluster),
        *monitoring.emit(cluster),
        *slurm.emit(cluster),
        *autoscaling.attach(cluster, workloads.emit(cluster, backend.KINDS, backend.binding)),
    ]
    return sorted(argocd.finalize(artifacts, backend.REFERENCES), key=lambda a: a.path)
