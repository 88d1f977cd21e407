"""Injection: a pod that names a workload class in the label `<domain>/workload-class` gets that class's placement
at admission (MutatingAdmissionPolicy): its node affinity and nodeSelector, its tolerations, its scheduler and its
queue binding. Its priority class is not injected: the Priority plugin has resolved it before any mutating policy
runs, so the validating policy checks it instead.

Every change is a JSON Patch, since a pod's tolerations and nodeSelector are atomic (server-side apply cannot
merge into them). The patches are written twice, as CEL (`mutation_cel`, what the policy carries) and in Python
(`patches`, what the proof and `policyc explain --pod` apply); the tests evaluate the CEL and require the same
patches. What a pod already has is kept: tolerations are appended to, an affinity of its own is left alone, a
nodeSelector or label of its own is overwritten only for the class's keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from policyc.backends.binding import Binding
from policyc.ir import Cluster, Workload
from policyc.k8s import versions
from policyc.k8s.cel import literal as cel
from policyc.pods import affinity, tolerations


def api_version(cluster: Cluster) -> str | None:
    """The MutatingAdmissionPolicy API the cluster serves (`policyc.k8s.versions`), or None: no injection."""
    return versions.mutating_admission_api(cluster.kubernetes_version, cluster.mutating_admission_beta)


@dataclass(frozen=True, slots=True)
class Injection:
    """What a pod of one workload class gets."""

    workload: str
    affinity: Mapping[str, Any]
    node_selector: Mapping[str, str]
    tolerations: Sequence[Mapping[str, str]]
    scheduler_name: str | None
    labels: Mapping[str, str]
    annotations: Mapping[str, str]


def injections(cluster: Cluster, tenant: str, binding: Binding) -> list[Injection]:
    """One per workload class of the tenant, in name order; `binding` is how the tenant's pods join its queue (its
    scheduler backend's `queue_binding`)."""
    return [_injection(cluster, w, binding.scheduler_name, binding.object_labels, binding.pod_annotations)
            for w in cluster.workloads_of(tenant)]  # fmt: skip


def _injection(cluster: Cluster, w: Workload, scheduler_name, labels, annotations) -> Injection:
    return Injection(w.name, affinity(cluster, w), dict(w.node_selector), tolerations(cluster, w), scheduler_name,
                     dict(labels), dict(annotations))  # fmt: skip


def _escape(key: str) -> str:
    """A map key as one JSON Pointer token."""
    return key.replace("~", "~0").replace("/", "~1")


def _merge(parent: str, present: bool, items: Mapping[str, str]) -> list[dict]:
    """Patches setting `items` in the map at `parent`: the whole map when the pod has none, else key by key."""
    if not items:
        return []
    if not present:
        return [{"op": "add", "path": parent, "value": dict(items)}]
    return [{"op": "add", "path": f"{parent}/{_escape(k)}", "value": v} for k, v in items.items()]


def patches(inj: Injection, pod: Mapping[str, Any]) -> list[dict]:
    """The JSON Patch the policy applies to `pod` for its class."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    out: list[dict] = []
    if "tolerations" in spec:
        out += [{"op": "add", "path": "/spec/tolerations/-", "value": dict(t)} for t in inj.tolerations]
    else:
        out.append({"op": "add", "path": "/spec/tolerations", "value": [dict(t) for t in inj.tolerations]})
    if "affinity" not in spec:
        out.append({"op": "add", "path": "/spec/affinity", "value": inj.affinity})
    elif "nodeAffinity" not in spec["affinity"]:
        out.append({"op": "add", "path": "/spec/affinity/nodeAffinity", "value": inj.affinity["nodeAffinity"]})
    out += _merge("/spec/nodeSelector", "nodeSelector" in spec, inj.node_selector)
    if inj.scheduler_name:
        out.append({"op": "add", "path": "/spec/schedulerName", "value": inj.scheduler_name})
    out += _merge("/metadata/labels", "labels" in meta, inj.labels)
    out += _merge("/metadata/annotations", "annotations" in meta, inj.annotations)
    return out


def apply(pod: Mapping[str, Any], ops: list[dict]) -> dict:
    """`pod` patched (a copy)."""
    import jsonpatch

    return jsonpatch.apply_patch(pod, ops)


def namespace_defaults(cluster: Cluster, tenant: str) -> dict[str, str]:
    """Namespace -> the class its pods get when they name none, for the tenant's namespaces that have one."""
    return {w.namespace: w.name for w in cluster.workloads_of(tenant) if w.namespace_default}


# --- the same as CEL ----------------------------------------------------------------------------------------


def _patch(op: str, path: str, value: str) -> str:
    return f"JSONPatch{{op: {cel(op)}, path: {cel(path)}, value: {value}}}"


def _merge_cel(parent: str, field: str, items: Mapping[str, str]) -> str:
    if not items:
        return "[]"
    each = ", ".join(_patch("add", f"{parent}/{_escape(k)}", cel(v)) for k, v in items.items())
    return f"(has({field}) ? [{each}] : [{_patch('add', parent, cel(dict(items)))}])"


def mutation_cel(inj: Injection) -> str:
    """CEL building `patches(inj, object)`."""
    appended = ", ".join(_patch("add", "/spec/tolerations/-", cel(dict(t))) for t in inj.tolerations)
    whole = _patch("add", "/spec/tolerations", cel([dict(t) for t in inj.tolerations]))
    parts = [f"(has(object.spec.tolerations) ? [{appended}] : [{whole}])"]
    parts.append(
        f"(!has(object.spec.affinity) ? [{_patch('add', '/spec/affinity', cel(inj.affinity))}] "
        f": !has(object.spec.affinity.nodeAffinity) "
        f"? [{_patch('add', '/spec/affinity/nodeAffinity', cel(inj.affinity['nodeAffinity']))}] : [])"
    )
    parts.append(_merge_cel("/spec/nodeSelector", "object.spec.nodeSelector", inj.node_selector))
    if inj.scheduler_name:
        parts.append(f"[{_patch('add', '/spec/schedulerName', cel(inj.scheduler_name))}]")
    parts.append(_merge_cel("/metadata/labels", "object.metadata.labels", inj.labels))
    parts.append(_merge_cel("/metadata/annotations", "object.metadata.annotations", inj.annotations))
    return " + ".join(p for p in parts if p != "[]")


def class_of_cel(label: str, defaults: Mapping[str, str]) -> str:
    """CEL for the workload class a pod gets: the one its label names, else its namespace's default ('' for none)."""
    key = cel(label)
    default = f"request.namespace in {cel(defaults)} ? {cel(defaults)}[request.namespace] : ''" if defaults else "''"
    return f"has(object.metadata.labels) && {key} in object.metadata.labels ? object.metadata.labels[{key}] : {default}"
