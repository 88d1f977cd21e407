"""The Volcano backend: a Queue per tenant and the scheduler ConfigMap (`conf`: the strict model of
volcano-scheduler.conf; `rules`: Volcano's rules on the policy).

Facts from Volcano (v1.15): Queues are `scheduling.volcano.sh/v1beta1`, guarantees live under
`guarantee.resource`, and the admission webhook demands `deserved >= guarantee` for every guaranteed
resource. The scheduler reads `volcano-scheduler.conf` from the ConfigMap
`volcano-system/volcano-scheduler-configmap`; `actions` there is one comma-separated string.
"""

from __future__ import annotations

import copy

from policyc.artifacts import Artifact, Manifest
from policyc.backends import workloads
from policyc.backends.binding import Binding
from policyc.backends.volcano import settings
from policyc.ir import Cluster, Tenant, Workload
from policyc.k8s.dependencies import Reference
from policyc.k8s.objects import metadata, resource_list
from policyc.output import yaml_emitter

NAME = "volcano"
QUEUE_GROUP = "scheduling.volcano.sh"
REFERENCES = (Reference((QUEUE_GROUP, "Queue"), ("spec", "parent"), (QUEUE_GROUP, "Queue")),)
"""A Queue's parent goes first: the queue webhook refuses a child whose parent it cannot find ("failed to get parent
queue org of queue alpha: ... not found")."""
SCHEDULER_NAME = "volcano"
QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
CONFIGMAP_NAMESPACE = "volcano-system"
CONFIGMAP_NAME = "volcano-scheduler-configmap"
CONFIG_KEY = "volcano-scheduler.conf"

GPU_BINPACK_WEIGHT = 10
"""How much a node's GPU fill counts against its CPU and memory fill (1 each) when packing or spreading."""


def _job(cluster: Cluster, w: Workload, binding: Binding) -> dict:
    """A Volcano Job: one task of `replicas` workers, gang-scheduled (minAvailable) in the tenant's queue."""
    spec: dict = {
        "schedulerName": binding.scheduler_name,
        "queue": binding.queue,
        "minAvailable": w.gang,
    }
    if w.priority_class:
        spec["priorityClassName"] = w.priority_class
    spec["tasks"] = [
        {
            "name": "worker",
            "replicas": w.replicas,
            "template": workloads.pod_template(cluster, w, binding, "worker", restart_policy="OnFailure"),
        }
    ]
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": workloads.object_meta(cluster, w, binding),
        "spec": spec,
    }


KINDS = {
    name: {
        **workloads.KINDS,
        "VolcanoJob": workloads.Kind(
            "batch.volcano.sh",
            "Job",
            _job,
            lambda spec: [(t["name"], t.get("replicas", 1), t["template"]) for t in spec["tasks"]],
            "object.spec.tasks.map(t, t.template)",
            ("count/jobs.batch.volcano.sh", "count/podgroups.scheduling.volcano.sh"),
            queue_path=("queue",),
        ),
    }[name]
    for name in settings.WORKLOAD_KINDS
}


def emit(cluster: Cluster) -> list[Artifact]:
    out = [Artifact("volcano/scheduler-configmap.yaml", (_configmap(cluster),), synced=True)]
    if cluster.tenants:
        out.append(Artifact("volcano/queues.yaml", tuple(_queue(cluster, t) for t in cluster.tenants), synced=True))
    return out


def queue_binding(cluster: Cluster, tenant: str) -> Binding:
    return Binding(
        scheduler_name=SCHEDULER_NAME, queue=tenant, pod_annotations={QUEUE_ANNOTATION: tenant}, spec_queue=True
    )


def binding(cluster: Cluster, workload: Workload) -> Binding:
    return queue_binding(cluster, workload.tenant)


def tolerations_added(cluster: Cluster, workload: Workload) -> tuple[tuple[dict, ...], ...]:
    return ()


def _queue(cluster: Cluster, t: Tenant) -> Manifest:
    q = t.queue
    spec: dict = {"weight": q.weight}
    if q.capability:
        spec["capability"] = resource_list(q.capability)
    if q.guarantee:
        spec["guarantee"] = {"resource": resource_list(q.guarantee)}
    if q.deserved:
        spec["deserved"] = resource_list(q.deserved)
    spec["reclaimable"] = q.reclaimable
    if q.parent:
        spec["parent"] = q.parent
    if q.priority is not None:
        spec["priority"] = q.priority
    obj = {
        "apiVersion": f"{QUEUE_GROUP}/v1beta1",
        "kind": "Queue",
        "metadata": metadata(t.name, cluster.name, labels={cluster.keys.tenant: t.name}),
        "spec": spec,
    }
    return Manifest(obj, ((*t.path, "queue"),))


def scheduler_conf(cluster: Cluster) -> dict:
    """The content of volcano-scheduler.conf (see `scheduler_conf_with_origins`)."""
    return scheduler_conf_with_origins(cluster)[0]


def scheduler_conf_with_origins(cluster: Cluster) -> tuple[dict, dict[tuple[int, int], int]]:
    """volcano-scheduler.conf: Volcano's shipped tiers with the policy's queue plugin and placement, then the
    policy's extra plugin settings merged in (user values win) or appended to the last tier.

    Also returns, for each (tier, plugin) position the policy's settings touched, the index of the entry in
    spec.scheduler.plugins, so that problems found in the file can be located in the policy.
    """
    conf = _generated_conf(cluster)
    origins: dict[tuple[int, int], int] = {}
    tiers = conf["tiers"]
    for index, entry in enumerate(cluster.scheduler.plugins):
        at = next(((t, p) for t, tier in enumerate(tiers) for p, plugin in enumerate(tier["plugins"])
                   if plugin["name"] == entry.get("name")), None)  # fmt: skip
        if at is None:
            tiers[-1]["plugins"].append(copy.deepcopy(entry))
            at = (len(tiers) - 1, len(tiers[-1]["plugins"]) - 1)
        else:
            plugin = tiers[at[0]]["plugins"][at[1]]
            generated = plugin.get("arguments", {})
            plugin.update(copy.deepcopy(entry))
            if generated and isinstance(entry.get("arguments"), dict):
                plugin["arguments"] = {**generated, **plugin["arguments"]}
        origins[at] = index
    return conf, origins


def _generated_conf(cluster: Cluster) -> dict:
    s = cluster.scheduler
    hierarchy = any(t.queue.parent for t in cluster.tenants)
    queue_plugin: dict = {"name": s.queue_plugin}
    if s.queue_plugin == "capacity" and hierarchy:
        queue_plugin["enableHierarchy"] = True
    gpus = cluster.accelerators
    if s.placement == "binpack":
        placement = {
            "name": "binpack",
            "arguments": {
                "binpack.weight": GPU_BINPACK_WEIGHT,
                "binpack.cpu": 1,
                "binpack.memory": 1,
                "binpack.resources": ", ".join(gpus),
                **{f"binpack.resources.{gpu}": GPU_BINPACK_WEIGHT for gpu in gpus},
            },
        }
    else:
        placement = {
            "name": "resource-strategy-fit",
            "arguments": {
                "resourceStrategyFitWeight": GPU_BINPACK_WEIGHT,
                "resources": {
                    **{gpu: {"type": "LeastAllocated", "weight": GPU_BINPACK_WEIGHT} for gpu in gpus},
                    "cpu": {"type": "LeastAllocated", "weight": 1},
                    "memory": {"type": "LeastAllocated", "weight": 1},
                },
            },
        }
    return {
        "actions": ", ".join(s.actions),
        "tiers": [
            {"plugins": [{"name": "priority"}, {"name": "gang", "enablePreemptable": False}, {"name": "conformance"}]},
            {
                "plugins": [
                    {"name": "overcommit"},
                    {"name": "drf", "enablePreemptable": False},
                    {"name": "predicates"},
                    queue_plugin,
                    {"name": "nodeorder"},
                    placement,
                ]
            },
        ],
    }


def _configmap(cluster: Cluster) -> Manifest:
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(CONFIGMAP_NAME, cluster.name, namespace=CONFIGMAP_NAMESPACE),
        "data": {CONFIG_KEY: yaml_emitter.dump(scheduler_conf(cluster))},
    }
    return Manifest(obj, (("spec", "scheduler"),))
