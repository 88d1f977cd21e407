"""The Apache YuniKorn backend's objects and binding; the mapping from the policy is in the package docstring
(`policyc.backends.yunikorn`)."""

from __future__ import annotations

import json
from dataclasses import replace

from policyc.artifacts import Artifact, Manifest
from policyc.backends import workloads
from policyc.backends.binding import Binding
from policyc.backends.yunikorn import settings
from policyc.ir import Cluster, Resources, Tenant, Workload, once_per_build
from policyc.k8s.objects import metadata
from policyc.output import yaml_emitter
from policyc.pods import affinity, container_resources, pod_resources, tolerations

NAME = "yunikorn"
KINDS = {name: workloads.KINDS[name] for name in settings.WORKLOAD_KINDS}
REFERENCES = ()
"""None: the queues are one ConfigMap."""
SCHEDULER_NAME = "yunikorn"
NAMESPACE = settings.NAMESPACES[0]
CONFIGMAP = "yunikorn-configs"
"""The ConfigMap YuniKorn reads its queues from, which its Helm chart leaves to the user."""
CONFIG_KEY = "queues.yaml"
"""Its key for the queues: the default policy group's (`service.policyGroup: queues`)."""
PARTITION = "default"
ROOT = "root"
QUEUE_KEY = "yunikorn.apache.org/queue"
"""A pod's queue: YuniKorn's shim reads it as a label first, then the legacy label `LEGACY_QUEUE_LABEL`, then as an
annotation of this key."""
LEGACY_QUEUE_LABEL = "queue"
"""The label YuniKorn's shim still reads before the annotation: a tenant's contract holds it to the queue too."""
APP_ID = "yunikorn.apache.org/app-id"
TASK_GROUPS = "yunikorn.apache.org/task-groups"
TASK_GROUP_NAME = "yunikorn.apache.org/task-group-name"
POLICY_PARAMETERS = "yunikorn.apache.org/schedulingPolicyParameters"
ALLOW_PREEMPTION = "yunikorn.apache.org/allow-preemption"
TASK_GROUP = "gang"
"""The name of a gang workload's one task group (its pods share one template)."""
RESOURCE_NAMES = {"cpu": "vcore"}
"""Kubernetes' resource name -> YuniKorn's, where they differ (memory and extended resources keep theirs)."""
NOT_REQUESTED = ("storage",)
"""Resources of the policy's language that no container requests: YuniKorn's queues count pods' requests."""
NODE_SORT = {"binpack": "binpacking", "spread": "fair"}
"""The policy's placement -> the partition's node sort policy."""
DEFAULT_SORT = "fifo"
"""YuniKorn's application sort policy of a leaf queue that sets none."""


def emit(cluster: Cluster) -> list[Artifact]:
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(CONFIGMAP, cluster.name, namespace=NAMESPACE),
        "data": {CONFIG_KEY: yaml_emitter.dump(queues_config(cluster))},
    }
    return [Artifact("yunikorn/configmap.yaml", (Manifest(obj, (("spec", "scheduler"), ("spec", "tenants"))),),
                     synced=True)]  # fmt: skip


def queue_binding(cluster: Cluster, tenant: str) -> Binding:
    """Pods name their queue by its full path: the workload carries the queue's labels, its pods the annotation.
    The tenant's contract holds every label and annotation YuniKorn reads a queue from to that path wherever it is
    set, so that none can name another tenant's queue."""
    path = queue_path(cluster, tenant)
    labels = {QUEUE_KEY: path, LEGACY_QUEUE_LABEL: path}
    return Binding(SCHEDULER_NAME, path, object_labels=labels, pod_annotations={QUEUE_KEY: path})


def binding(cluster: Cluster, workload: Workload) -> Binding:
    base = queue_binding(cluster, workload.tenant)
    extra: dict[str, str] = {}
    if workload.kind in settings.GANG_KINDS:
        extra = gang_annotations(cluster, workload)
    if workload.priority_class in cluster.scheduler.non_preemptible_classes:
        extra[ALLOW_PREEMPTION] = "false"
    return replace(base, pod_annotations={**base.pod_annotations, **extra})


def tolerations_added(cluster: Cluster, workload: Workload) -> tuple[tuple[dict, ...], ...]:
    return ()


# --- pods ---------------------------------------------------------------------------------------------------


def gang_annotations(cluster: Cluster, w: Workload) -> dict[str, str]:
    """One task group of `w.gang` members shaped as the workload's pods (their requests and placement, so that the
    placeholders reserve room where the pods can run), under an application of the workload's own."""
    group: dict = {"name": TASK_GROUP, "minMember": w.gang, "minResource": min_resource(cluster, w)}
    if w.node_selector:
        group["nodeSelector"] = dict(w.node_selector)
    group["tolerations"] = tolerations(cluster, w)
    group["affinity"] = affinity(cluster, w)
    return {
        APP_ID: app_id(w),
        TASK_GROUP_NAME: TASK_GROUP,
        TASK_GROUPS: json.dumps([group], separators=(",", ":")),
        POLICY_PARAMETERS: f"gangSchedulingStyle={cluster.scheduler.gang_style}",
    }


def min_resource(cluster: Cluster, w: Workload) -> dict[str, str]:
    """What each placeholder requests: what a pod of the workload requests (its container's requests, by Kubernetes'
    names; the GPUs of a DRA tier are claims, which a placeholder does not make)."""
    return container_resources(pod_resources(cluster, w))["requests"]


def placeholder(cluster: Cluster, w: Workload) -> dict:
    """A placeholder pod of the workload's gang as YuniKorn's shim makes it, for quota arithmetic: the group's
    minResource as its requests and its limits, the priority class of the workload's pods."""
    amounts = min_resource(cluster, w)
    spec: dict = {"containers": [{"name": "pause", "resources": {"limits": amounts, "requests": amounts}}]}
    if w.priority_class:
        spec["priorityClassName"] = w.priority_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": TASK_GROUP, "namespace": w.namespace}, "spec": spec}


def app_id(w: Workload) -> str:
    """The application a gang workload's pods form, unique in the cluster (a workload's name is unique)."""
    return f"{w.namespace}-{w.name}"


# --- queues -------------------------------------------------------------------------------------------------


def queue_path(cluster: Cluster, tenant: str) -> str:
    """The tenant's queue by its full path, `root.<parent>...<tenant>`."""
    return _queue_paths(cluster)[tenant]


@once_per_build
def _queue_paths(cluster: Cluster) -> dict[str, str]:
    """Tenant -> its queue's full path (a parent cycle, which the shared checks report, stops at its first repeat)."""
    parents = {t.name: t.queue.parent for t in cluster.tenants}
    out = {}
    for tenant in parents:
        chain = [tenant]
        while (parent := parents.get(chain[-1])) and parent not in chain:
            chain.append(parent)
        out[tenant] = ".".join([ROOT, *reversed(chain)])
    return out


def yunikorn_resources(amounts: Resources) -> dict[str, str]:
    """Amounts by YuniKorn's resource names (cpu as vcore), as quantities, sorted by name."""
    return dict(sorted((RESOURCE_NAMES.get(r, r), str(a)) for r, a in amounts.items()))


def _queue(cluster: Cluster, t: Tenant, children: dict[str, list[Tenant]]) -> dict:
    q = t.queue
    out: dict = {"name": t.name}
    resources = {}
    if q.guarantee:
        resources["guaranteed"] = yunikorn_resources(q.guarantee)
    if q.capability:
        resources["max"] = yunikorn_resources(q.capability)
    if resources:
        out["resources"] = resources
    properties = {}
    if cluster.scheduler.application_sort != DEFAULT_SORT and t.name not in children:
        properties["application.sort.policy"] = cluster.scheduler.application_sort
    if not q.reclaimable:
        properties["preemption.policy"] = "disabled"  # its tasks are never preemption's victims
    if q.priority is not None:
        properties["priority.offset"] = str(q.priority)
    if properties:
        out["properties"] = dict(sorted(properties.items()))
    if t.name in children:
        out["queues"] = [_queue(cluster, c, children) for c in children[t.name]]
    return out


def queues_config(cluster: Cluster) -> dict:
    """`queues.yaml`: one partition, its root open to all, a queue per tenant nested as the policy's parents, and one
    placement rule: a pod goes to the queue it names, which must exist; a pod naming none is refused."""
    children: dict[str, list[Tenant]] = {}
    for t in cluster.tenants:
        children.setdefault(t.queue.parent or ROOT, []).append(t)
    root: dict = {"name": ROOT, "submitacl": "*"}
    if children.get(ROOT):
        root["queues"] = [_queue(cluster, t, children) for t in children[ROOT]]
    partition = {
        "name": PARTITION,
        "placementrules": [{"name": "provided", "create": False}],
        "nodesortpolicy": {"type": NODE_SORT[cluster.scheduler.placement]},
        "queues": [root],
    }
    return {"partitions": [partition]}
