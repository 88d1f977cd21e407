"""Workload templates: a complete object per workload class, carrying the contract of its pods
(`policyc.pods`: affinity, tolerations, requests and limits). The scheduler backend's `Binding` says how the
object joins its queue.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from policyc.artifacts import Artifact, Manifest
from policyc.backends.binding import Binding
from policyc.gpu import dra
from policyc.ir import Cluster, Workload
from policyc.k8s.objects import metadata
from policyc.pods import NAME_LABEL, affinity, container_resources, nccl_interfaces, pod_resources, tolerations

SHM_VOLUME = "dshm"


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
    if w.host_network:
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"  # cluster DNS from the node's network
    spec["affinity"] = affinity(cluster, w)
    spec["tolerations"] = tolerations(cluster, w)
    main: dict = {"name": container, "image": w.image, "resources": container_resources(resources)}
    if dra.claimed(resources.requests):  # the GPUs of a DRA tier: each pod's claim from the workload's template
        spec["resourceClaims"] = [{"name": dra.CLAIM, "resourceClaimTemplateName": dra.claim_template_name(w.name)}]
        main["resources"]["claims"] = [{"name": dra.CLAIM}]
    if interfaces := nccl_interfaces(cluster, w):
        main["env"] = [{"name": "NCCL_SOCKET_IFNAME", "value": ",".join(interfaces)}]
    if w.rdma:
        main["securityContext"] = {"capabilities": {"add": ["IPC_LOCK"]}}  # RDMA registers (locks) memory
    if w.shm is not None:
        main["volumeMounts"] = [{"name": SHM_VOLUME, "mountPath": "/dev/shm"}]
        spec["volumes"] = [{"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": str(w.shm)}}]
    spec["containers"] = [main]
    meta: dict = {"labels": {NAME_LABEL: w.name}}
    if binding.pod_annotations:
        meta["annotations"] = dict(sorted(binding.pod_annotations.items()))
    return {"metadata": meta, "spec": spec}


def object_meta(cluster: Cluster, w: Workload, binding: Binding) -> dict:
    return metadata(
        w.name,
        cluster.name,
        namespace=w.namespace,
        labels={NAME_LABEL: w.name, **binding.object_labels},
        annotations=binding.object_annotations,
    )


def job(cluster: Cluster, w: Workload, binding: Binding) -> dict:
    """A batch/v1 Job running `replicas` indexed pods at once (one per worker, as distributed training needs)."""
    spec: dict = {"parallelism": w.replicas, "completions": w.replicas, "completionMode": "Indexed"}
    if binding.suspend:
        spec["suspend"] = True
    spec["template"] = pod_template(cluster, w, binding, "worker", restart_policy="OnFailure")
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": object_meta(cluster, w, binding), "spec": spec}


def deployment(cluster: Cluster, w: Workload, binding: Binding) -> dict:
    """An autoscaled one states no replicas, which its autoscaler owns (`policyc.backends.autoscaling`)."""
    spec: dict = {} if w.autoscale else {"replicas": w.replicas}
    spec["selector"] = {"matchLabels": {NAME_LABEL: w.name}}
    spec["template"] = pod_template(cluster, w, binding, w.name)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": object_meta(cluster, w, binding), "spec": spec}


def pytorch_job(cluster: Cluster, w: Workload, binding: Binding) -> dict:
    """A Kubeflow PyTorchJob: one Master and `replicas - 1` Workers (the container must be named pytorch); an elastic
    one: `replicas` Workers between its minimum and maximum, meeting through c10d."""
    policy: dict = {"minAvailable": w.gang, "queue": binding.queue}
    if w.priority_class:
        policy["priorityClass"] = w.priority_class
    run_policy: dict = {"schedulingPolicy": policy}
    if binding.suspend:
        run_policy["suspend"] = True

    def role(count: int) -> dict:
        return {
            "replicas": count,
            "restartPolicy": "OnFailure",
            "template": pod_template(cluster, w, binding, "pytorch"),
        }

    spec: dict = {}
    if w.elastic:
        low, high = w.elastic
        spec["elasticPolicy"] = {"rdzvBackend": "c10d", "minReplicas": low, "maxReplicas": high}
        spec["pytorchReplicaSpecs"] = {"Worker": role(w.replicas)}
    else:
        spec["pytorchReplicaSpecs"] = {
            "Master": role(1),
            **({"Worker": role(w.replicas - 1)} if w.replicas > 1 else {}),
        }
    spec["runPolicy"] = run_policy
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": object_meta(cluster, w, binding),
        "spec": spec,
    }


PodTemplates = list[tuple[str, int, Mapping[str, Any]]]
"""(role, pods of that role running at once, pod template) of each kind of pod an object creates."""


@dataclass(frozen=True, slots=True)
class Kind:
    """A workload kind policyc templates."""

    group: str
    kind: str
    build: Callable[[Cluster, Workload, Binding], dict]
    pods: Callable[[Mapping[str, Any]], PodTemplates]
    """The pod templates of an object's spec, as its controller reads them."""
    cel_templates: str
    """The same in CEL, over `object`: a list of the pod templates (for admission policies)."""
    object_counts: tuple[str, ...]
    """Quota object counts one object adds: itself, and what its controller creates for it before any pod."""
    queue_path: tuple[str, ...] = ()
    """Where in its spec an object names its queue, if it does (besides the binding's labels and annotations)."""

    @property
    def resource(self) -> str:
        """Its resource name in API paths (each kind policyc templates has the plural in -s)."""
        return self.kind.lower() + "s"


PYTORCH_REPLICA_TYPES = ("Master", "Worker")
"""The replica types of a PyTorchJob the training operator accepts."""


def _job_pods(spec: Mapping[str, Any]) -> PodTemplates:
    parallelism = spec.get("parallelism", 1)
    return [("pod", min(parallelism, spec.get("completions", parallelism)), spec["template"])]


KINDS: dict[str, Kind] = {
    "Job": Kind("batch", "Job", job, _job_pods, "[object.spec.template]", ("count/jobs.batch",)),
    "Deployment": Kind(
        "apps",
        "Deployment",
        deployment,
        lambda spec: [("pod", spec.get("replicas", 1), spec["template"])],
        "[object.spec.template]",
        ("count/deployments.apps", "count/replicasets.apps"),
    ),
    "PyTorchJob": Kind(
        "kubeflow.org",
        "PyTorchJob",
        pytorch_job,
        lambda spec: [
            (role, r.get("replicas", 1), r["template"])
            for role, r in spec["pytorchReplicaSpecs"].items()
            if role in PYTORCH_REPLICA_TYPES
        ],
        # CEL's map() does not iterate a map's keys: the replica types are written out.
        " + ".join(
            f"(has(object.spec.pytorchReplicaSpecs.{role}) ? [object.spec.pytorchReplicaSpecs.{role}.template] : [])"
            for role in PYTORCH_REPLICA_TYPES
        ),
        ("count/pytorchjobs.kubeflow.org",),
        queue_path=("runPolicy", "schedulingPolicy", "queue"),
    ),
}
"""The workload kinds every scheduler backend can template, by their name in the policy language (`kind` of a
workload). A backend's `KINDS` are the ones it runs: some of these and its own."""


def kind_of(kinds: Mapping[str, Kind], obj: Mapping[str, Any]) -> Kind:
    """The kind, among `kinds` (the scheduler backend's), of an emitted template object."""
    group = obj["apiVersion"].rpartition("/")[0]
    return next(k for k in kinds.values() if (k.group, k.kind) == (group, obj["kind"]))


def pod_templates(kinds: Mapping[str, Kind], obj: Mapping[str, Any]) -> PodTemplates:
    """(role, pods at once, pod template) of each kind of pod a template object (of one of `kinds`) creates."""
    return kind_of(kinds, obj).pods(obj["spec"])


def emit(
    cluster: Cluster, kinds: Mapping[str, Kind], binding: Callable[[Cluster, Workload], Binding]
) -> list[Artifact]:
    """A template per workload class, of its kind among `kinds`, joining its queue by `binding` (the scheduler
    backend's)."""
    return [
        Artifact(
            f"templates/{w.name}.yaml",
            (Manifest(kinds[w.kind].build(cluster, w, binding(cluster, w)), (w.path,)),),
            template=True,
        )
        for w in cluster.workloads
    ]
