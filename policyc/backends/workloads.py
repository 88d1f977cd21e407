"""Workload templates: a complete object per workload class, carrying the contract of its pods
(`policyc.contract`: affinity, tolerations, requests and limits). The scheduler backend's `Binding` says how the
object joins its queue.
"""

from __future__ import annotations

from collections.abc import Callable

from policyc.artifacts import Artifact, Manifest
from policyc.backends.binding import Binding
from policyc.contract import affinity, pod_resources, tolerations
from policyc.ir import Cluster, Workload
from policyc.k8s.objects import metadata, resource_list

NAME_LABEL = "app.kubernetes.io/name"


def pod_template(
    cluster: Cluster, w: Workload, binding: Binding, container: str, *, restart_policy: str | None = None
) -> dict:
    resources = pod_resources(cluster, w)
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
            "resources": {"limits": resource_list(resources.limits), "requests": resource_list(resources.requests)},
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
