"""The KAI Scheduler backend's objects and binding; the mapping from the policy is in the package docstring
(`policyc.backends.kai`)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from policyc.artifacts import Artifact, Manifest
from policyc.backends import workloads
from policyc.backends.binding import Binding
from policyc.backends.kai import settings
from policyc.checks import queue_tree
from policyc.ir import Cluster, Resources, Tenant, Workload
from policyc.k8s.dependencies import Reference
from policyc.k8s.objects import metadata
from policyc.k8s.quantity import Quantity

NAME = "kai"
KINDS = {name: workloads.KINDS[name] for name in settings.WORKLOAD_KINDS}
QUEUE_API_VERSION = "scheduling.run.ai/v2"
QUEUE_GROUP = QUEUE_API_VERSION.rpartition("/")[0]
REFERENCES = (Reference((QUEUE_GROUP, "Queue"), ("spec", "parentQueue"), (QUEUE_GROUP, "Queue")),)
"""A Queue's parent goes first (see the package docstring)."""
SHARD_API_VERSION = "kai.scheduler/v1"
SHARD_NAME = "default"
"""The SchedulingShard KAI's Helm chart creates, whose scheduler serves nodes, queues and pods of no node pool."""
SCHEDULER_NAME = "kai-scheduler"
QUEUE_LABEL = "kai.scheduler/queue"
BATCH_MIN_MEMBER = "kai.scheduler/batch-min-member"
"""Owner annotation: the pods of a batch Job KAI schedules as one gang."""
HELM_QUEUES = ("default-parent-queue", "default-queue")
"""Queues KAI's Helm chart creates on first install (and keeps)."""
NVIDIA_GPU = "nvidia.com/gpu"
"""What KAI counts as `gpu` in its queues."""
UNLIMITED = -1
DEFAULT_PRIORITY = 100
"""KAI's priority of a queue that sets none; also the priority from which KAI runs work as non-preemptible."""

MILLI_PER_CPU = 1000
BYTES_PER_MB = 10**6

_ZERO = Quantity.from_value(0)


def emit(cluster: Cluster) -> list[Artifact]:
    out = [Artifact("kai/schedulingshard.yaml", (_shard(cluster),), synced=True)]
    if cluster.tenants:
        out.append(Artifact("kai/queues.yaml", tuple(queues(cluster)), synced=True))
    return out


def queue_binding(cluster: Cluster, tenant: str) -> Binding:
    return Binding(scheduler_name=SCHEDULER_NAME, queue=tenant, object_labels={QUEUE_LABEL: tenant})


def binding(cluster: Cluster, workload: Workload) -> Binding:
    # A batch Job's gang (minMember) comes from an owner annotation; a PyTorchJob's from its minAvailable.
    gang = {BATCH_MIN_MEMBER: str(workload.gang)} if workload.kind == "Job" else {}
    return replace(queue_binding(cluster, workload.tenant), object_annotations=gang)


def tolerations_added(cluster: Cluster, workload: Workload) -> tuple[tuple[dict, ...], ...]:
    return ()


# --- queues -------------------------------------------------------------------------------------------------


def parent_queue(cluster: Cluster) -> str:
    """The Queue every tenant without a parent sits under, named after the policy."""
    return cluster.name


def kai_resources(cluster: Cluster) -> tuple[tuple[str, str], ...]:
    """(KAI's name, the policy's resource name) of what KAI queues know, in the CRD's order."""
    return (("cpu", "cpu"), ("gpu", cluster.gpu_resource), ("memory", "memory"))


def kai_number(resource: str, amount: Quantity) -> int | float:
    """`amount` of `resource` in KAI's unit: cpu in millicores, memory in megabytes (10^6 bytes), anything else
    (the GPU resource) as it is; an integer when whole, else the nearest float."""
    value: Fraction = amount.value
    if resource == "cpu":
        value *= MILLI_PER_CPU
    elif resource == "memory":
        value /= BYTES_PER_MB
    return int(value) if value.denominator == 1 else float(value)


def _resources(cluster: Cluster, quota: Resources, limit: Resources, weight: int) -> dict:
    out = {}
    for key, resource in kai_resources(cluster):
        cap = limit.get(resource)
        out[key] = {
            "quota": kai_number(resource, quota.get(resource, _ZERO)),
            "limit": UNLIMITED if cap is None else kai_number(resource, cap),
            "overQuotaWeight": weight,
        }
    return out


def top_level(cluster: Cluster) -> list[Tenant]:
    """The tenants whose queues sit right under the policy's parent Queue."""
    return [t for t in cluster.tenants if not t.queue.parent]


def _queue(cluster: Cluster, name: str, spec: dict, **meta) -> dict:
    return {
        "apiVersion": QUEUE_API_VERSION,
        "kind": "Queue",
        "metadata": metadata(name, cluster.name, **meta),
        "spec": spec,
    }


def queues(cluster: Cluster) -> list[Manifest]:
    """The policy's parent Queue, then a Queue per tenant in tenant order."""
    tops = top_level(cluster)
    guaranteed = queue_tree.total(tops, "guarantee")
    parent = _queue(cluster, parent_queue(cluster), {"resources": _resources(cluster, guaranteed, {}, 1)})
    out = [Manifest(parent, (("metadata", "name"), *((*t.path, "queue") for t in tops)))]
    for t in cluster.tenants:
        q = t.queue
        spec: dict = {"parentQueue": q.parent or parent_queue(cluster)}
        if q.priority is not None:
            spec["priority"] = q.priority
        spec["resources"] = _resources(cluster, q.guarantee, q.capability, q.weight)
        obj = _queue(cluster, t.name, spec, labels={cluster.keys.tenant: t.name})
        out.append(Manifest(obj, ((*t.path, "queue"),)))
    return out


# --- scheduling shard ---------------------------------------------------------------------------------------


def _shard(cluster: Cluster) -> Manifest:
    placement = cluster.scheduler.placement
    obj = {
        "apiVersion": SHARD_API_VERSION,
        "kind": "SchedulingShard",
        "metadata": metadata(SHARD_NAME, cluster.name),
        "spec": {"placementStrategy": {"gpu": placement, "cpu": placement}},
    }
    return Manifest(obj, (("spec", "scheduler"),))
