"""Workload templates: a complete object per workload class, carrying the placement contract.

The contract (DESIGN §3): a training pod requires ``node.usage In [training, hybrid]`` and
``gpu.tier In [<tier>]``, prefers ``node.usage In [training]`` (weight 100), and tolerates exactly the
usage taints of those pools and the product taints of its tier. Inference is the mirror image. The
scheduler backend's `Binding` says how the object joins its queue.
"""

from __future__ import annotations

from collections.abc import Callable

from policyc.artifacts import Artifact, Manifest
from policyc.backends.binding import Binding
from policyc.ir import GFD_PRODUCT, Cluster, Workload
from policyc.k8s.objects import metadata, resource_list

PREFERRED_WEIGHT = 100
NAME_LABEL = "app.kubernetes.io/name"


def usages(workload: Workload) -> tuple[str, str]:
    """Pool usages a workload may run on: its own, then hybrid (the overflow)."""
    return workload.type, "hybrid"


def _expressions(*pairs: tuple[str, list[str]]) -> dict:
    return {"matchExpressions": [{"key": key, "operator": "In", "values": values} for key, values in pairs]}


def affinity(cluster: Cluster, w: Workload) -> dict:
    """Strict placement requires a pool of the workload's usage (or hybrid) and tier, and prefers its own
    usage; preferred placement only prefers its tier's pools, its own usage most."""
    usage, tier = cluster.keys.usage, cluster.keys.tier
    if w.placement == "strict":
        required = {"nodeSelectorTerms": [_expressions((usage, list(usages(w))), (tier, [w.tier.name]))]}
        return {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": required,
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": PREFERRED_WEIGHT, "preference": _expressions((usage, [w.type]))}
                ],
            }
        }
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": PREFERRED_WEIGHT, "preference": _expressions((usage, [w.type]), (tier, [w.tier.name]))},
                {
                    "weight": PREFERRED_WEIGHT // 2,
                    "preference": _expressions((usage, ["hybrid"]), (tier, [w.tier.name])),
                },
            ]
        }
    }


def tolerations(cluster: Cluster, w: Workload) -> list[dict]:
    """The usage taints of the pools the workload may use and the product taints of its tier, then the
    policy's extra tolerations."""
    usage = [{"key": cluster.keys.usage, "operator": "Equal", "value": u, "effect": "NoSchedule"} for u in usages(w)]
    products = [{"key": GFD_PRODUCT, "operator": "Equal", "value": p, "effect": "NoSchedule"} for p in w.tier.products]
    return usage + products + [dict(t) for t in w.tolerations]


def pod_template(
    cluster: Cluster, w: Workload, binding: Binding, container: str, *, restart_policy: str | None = None
) -> dict:
    requests: dict = {cluster.gpu_resource: w.gpus}
    if w.cpu is not None:
        requests["cpu"] = w.cpu
    if w.memory is not None:
        requests["memory"] = w.memory
    spec: dict = {}
    if binding.scheduler_name:
        spec["schedulerName"] = binding.scheduler_name
    if w.priority_class:
        spec["priorityClassName"] = w.priority_class
    if restart_policy:
        spec["restartPolicy"] = restart_policy
    if w.node_selector:
        spec["nodeSelector"] = dict(w.node_selector)
    spec["affinity"] = affinity(cluster, w)
    spec["tolerations"] = tolerations(cluster, w)
    spec["containers"] = [
        {
            "name": container,
            "image": w.image,
            "resources": {"limits": resource_list({cluster.gpu_resource: w.gpus}), "requests": resource_list(requests)},
        }
    ]
    meta: dict = {"labels": {NAME_LABEL: w.name}}
    if binding.pod_annotations:
        meta["annotations"] = dict(sorted(binding.pod_annotations.items()))
    return {"metadata": meta, "spec": spec}


def _object_meta(cluster: Cluster, w: Workload, binding: Binding) -> dict:
    return metadata(w.name, cluster.name, namespace=w.namespace, labels={NAME_LABEL: w.name, **binding.object_labels})


def volcano_job(cluster: Cluster, w: Workload, binding: Binding) -> dict:
    spec: dict = {
        "schedulerName": binding.scheduler_name or "volcano",
        "queue": binding.queue,
        "minAvailable": w.replicas,
    }
    if w.priority_class:
        spec["priorityClassName"] = w.priority_class
    spec["tasks"] = [
        {
            "name": "worker",
            "replicas": w.replicas,
            "template": pod_template(cluster, w, binding, "worker", restart_policy="OnFailure"),
        }
    ]
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": _object_meta(cluster, w, binding),
        "spec": spec,
    }


def job(cluster: Cluster, w: Workload, binding: Binding) -> dict:
    """A batch/v1 Job running `replicas` indexed pods at once (one per worker, as distributed training needs)."""
    spec: dict = {"parallelism": w.replicas, "completions": w.replicas, "completionMode": "Indexed"}
    if binding.suspend:
        spec["suspend"] = True
    spec["template"] = pod_template(cluster, w, binding, "worker", restart_policy="OnFailure")
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": _object_meta(cluster, w, binding), "spec": spec}


def deployment(cluster: Cluster, w: Workload, binding: Binding) -> dict:
    spec: dict = {
        "replicas": w.replicas,
        "selector": {"matchLabels": {NAME_LABEL: w.name}},
        "template": pod_template(cluster, w, binding, w.name),
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _object_meta(cluster, w, binding), "spec": spec}


def pytorch_job(cluster: Cluster, w: Workload, binding: Binding) -> dict:
    """A Kubeflow PyTorchJob: one Master and `replicas - 1` Workers (the container must be named pytorch)."""
    policy: dict = {"minAvailable": w.replicas, "queue": binding.queue}
    if w.priority_class:
        policy["priorityClass"] = w.priority_class
    run_policy: dict = {"schedulingPolicy": policy}
    if binding.suspend:
        run_policy["suspend"] = True
    replicas = {
        "Master": {
            "replicas": 1,
            "restartPolicy": "OnFailure",
            "template": pod_template(cluster, w, binding, "pytorch"),
        }
    }
    if w.replicas > 1:
        replicas["Worker"] = {
            "replicas": w.replicas - 1,
            "restartPolicy": "OnFailure",
            "template": pod_template(cluster, w, binding, "pytorch"),
        }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": _object_meta(cluster, w, binding),
        "spec": {"pytorchReplicaSpecs": replicas, "runPolicy": run_policy},
    }


BUILDERS: dict[str, Callable[[Cluster, Workload, Binding], dict]] = {
    "VolcanoJob": volcano_job,
    "Job": job,
    "Deployment": deployment,
    "PyTorchJob": pytorch_job,
}


def emit(cluster: Cluster, bind: Callable[[Cluster, Workload], Binding]) -> list[Artifact]:
    return [
        Artifact(
            f"templates/{w.name}.yaml",
            (Manifest(BUILDERS[w.kind](cluster, w, bind(cluster, w)), (w.path,)),),
            template=True,
        )
        for w in cluster.workloads
    ]
