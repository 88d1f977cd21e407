"""The admission proof: every pod a template creates is admitted in its namespace, all of them together.

Each kind of pod of each workload template is sent through the model of the API server's admission
(`policyc.k8s.admission`: LimitRange defaulting and limits, Pod validation, Priority, ResourceQuota) with the
LimitRanges and ResourceQuotas emitted for its namespace and the emitted PriorityClasses. Then all the workload's
pods, as admission mutated them, are added up against every quota that matches them (a gang's pods are created
together, and so are a Deployment's replicas), with the objects the workload itself adds to `count/...` keys.
A refusal is reported with the server's own words, the object that refuses and a hint.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from policyc.artifacts import Artifact
from policyc.backends.kubernetes import CLASS_QUOTA_PREFIX, FORBIDDEN_PRIORITIES_QUOTA_NAME
from policyc.backends.workloads import Kind, kind_of, pod_templates
from policyc.diagnostics import Diagnostic, Path, diag
from policyc.gpu import dra
from policyc.ir import Cluster, Tenant, Workload
from policyc.k8s.admission import Refusal, admit_pod, pod_usage, quota_matches, quota_scopes
from policyc.k8s.quantity import Quantity
from policyc.proof.placement import claim_templates


@dataclass(frozen=True, slots=True, eq=False)
class NamespaceObjects:
    limit_ranges: tuple[dict, ...] = ()
    quotas: tuple[dict, ...] = ()


def namespace_objects(artifacts: Sequence[Artifact]) -> dict[str, NamespaceObjects]:
    """Namespace -> the LimitRanges and ResourceQuotas emitted for it."""
    found: dict[str, tuple[list[dict], list[dict]]] = {}
    for a in artifacts:
        for m in a.manifests:
            kind = m.obj["kind"]
            if kind in ("LimitRange", "ResourceQuota") and not a.template:
                lists = found.setdefault(m.obj["metadata"]["namespace"], ([], []))
                lists[kind == "ResourceQuota"].append(m.obj)
    return {ns: NamespaceObjects(tuple(lrs), tuple(qs)) for ns, (lrs, qs) in found.items()}


def priority_classes(artifacts: Sequence[Artifact]) -> list[dict]:
    return [m.obj for a in artifacts for m in a.manifests if m.obj["kind"] == "PriorityClass"]


def as_pod(template: Mapping[str, Any], name: str, namespace: str) -> dict:
    """The pod a controller creates from a pod template (named after the workload and its role)."""
    meta = template.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**meta, "name": name, "namespace": namespace},
        "spec": template.get("spec") or {},
    }


@dataclass(frozen=True, slots=True, eq=False)
class QuotaUse:
    """What a workload's pods take of one quota key, all together."""

    quota: str
    key: str
    need: Quantity
    hard: Quantity
    admitted: int
    """Pods the quota admits before it refuses one (all of them when the workload fits)."""
    pods: int

    @property
    def fits(self) -> bool:
        return self.need <= self.hard


def quota_use(
    pods: Sequence[tuple[int, Mapping]],
    quotas: Sequence[Mapping],
    objects: Sequence[str] = (),
    claimed: Sequence[Mapping[str, int]] = (),
) -> list[QuotaUse]:
    """Per quota and key, what `pods` ((count, admitted pod) pairs, created in that order), the resource claims made
    for each of them (`claimed`, devices by quota key, in the same order) and the workload's own `objects` (object
    count keys, one object each) take of it; keys none of them takes are left out. Claims count only towards
    quotas without scopes (the claim evaluator matches none)."""
    total = sum(count for count, _ in pods)
    out = []
    for quota in quotas:
        hard = {k: Quantity.from_json(v) for k, v in ((quota.get("spec") or {}).get("hard") or {}).items()}
        usages = _usages(quota, pods, claimed)
        for key, limit in sorted(hard.items()):
            own = Quantity.from_value(objects.count(key))
            taken = [(count, usage[key]) for count, usage in usages if key in usage]
            if not taken and own.is_zero():
                continue
            need = sum((each * count for count, each in taken), own)
            admitted = _admitted(taken, limit - own, total)
            out.append(QuotaUse(quota["metadata"]["name"], key, need, limit, admitted, total))
    return out


def _usages(
    quota: Mapping, pods: Sequence[tuple[int, Mapping]], claimed: Sequence[Mapping[str, int]]
) -> list[tuple[int, dict[str, Quantity]]]:
    """(count, what each takes of the quota) of the `pods` it counts, with their resource `claimed`."""
    usages = []
    for i, (count, pod) in enumerate(pods):
        usage = pod_usage(pod) if quota_matches(quota, pod) else {}
        devices = claimed[i] if i < len(claimed) else {}
        if devices and not quota_scopes(quota):
            usage = {**usage, **claim_usage(devices)}
        if usage:
            usages.append((count, usage))
    return usages


def _admitted(taken: list[tuple[int, Quantity]], room: Quantity, total: int) -> int:
    """How many of the `total` pods a quota key admits, created in order, with `room` left for the (count, each)
    that take of it: all when they fit."""
    if room < Quantity.from_value(0):
        return 0
    admitted = 0
    for count, each in taken:
        fit = count if each * count <= room else math.floor(room.value / each.value)
        admitted, room = admitted + fit, room - each * fit
        if fit < count:
            return admitted
    return total


def claim_usage(devices: Mapping[str, int]) -> dict[str, Quantity]:
    """What one pod's resource claim takes of a quota: the claim, and its devices by DeviceClass."""
    return {dra.CLAIMS_COUNT: Quantity.from_value(1), **{k: Quantity.from_value(n) for k, n in devices.items()}}


def check(
    cluster: Cluster,
    artifacts: Sequence[Artifact],
    templates: Mapping[str, Mapping[str, Any]],
    kinds: Mapping[str, Kind],
) -> Iterator[Diagnostic]:
    """Every pod of every template (of `kinds`, the scheduler backend's) admitted in its namespace, one by one, and
    all of them together within its quotas."""
    namespaces = namespace_objects(artifacts)
    classes = priority_classes(artifacts)
    claims = claim_templates(artifacts)
    tenants = {t.name: t for t in cluster.tenants}
    for w in cluster.workloads:
        objects = namespaces.get(w.namespace, NamespaceObjects())
        template = templates[w.name]
        admitted: list[tuple[int, dict]] = []
        claimed: list[dict[str, int]] = []
        for role, count, pod_template in pod_templates(kinds, template):
            pod = as_pod(pod_template, f"{w.name}-{role.lower()}", w.namespace)
            decision = admit_pod(
                pod,
                limit_ranges=objects.limit_ranges,
                quotas=objects.quotas,
                priority_classes=classes,
            )
            if decision.refusal is not None:
                yield _refused(cluster, w, tenants[w.tenant], role, decision.refusal)
                break
            assert decision.pod is not None
            admitted.append((count, decision.pod))
            claimed.append(dra.pod_claims(decision.pod, claims)[0])
        else:
            counts = kind_of(kinds, template).object_counts
            for use in quota_use(admitted, objects.quotas, counts, claimed):
                if not use.fits:
                    yield _exceeded(cluster, w, tenants[w.tenant], use)


_BY = {
    "LimitRanger": "LimitRange '{}'",
    "ResourceQuota": "ResourceQuota '{}'",
    "Priority": "the Priority admission plugin",
    "Validation": "Pod validation",
}


def _resource(refusal: Refusal) -> str | None:
    """The resource a refusal concerns, without a quota key's requests./limits. prefix."""
    if refusal.resource is None:
        return None
    return refusal.resource.removeprefix("requests.").removeprefix("limits.")


def _refused(cluster: Cluster, w: Workload, tenant: Tenant, role: str, refusal: Refusal) -> Diagnostic:
    reason = refusal.message.split(": ", 1)[-1]  # without 'pods "x" is forbidden' or 'Pod "x" is invalid'
    by = _BY[refusal.plugin].format(refusal.object)
    resource = _resource(refusal)
    at: Path = (*w.path, "name")
    if refusal.object == FORBIDDEN_PRIORITIES_QUOTA_NAME:
        allowed = tenant.allowed_priority_classes or tuple(c.name for c in cluster.priority_classes)
        named = (
            f"priority class '{w.priority_class}'"
            if w.priority_class
            else "no priority class (and no class is globalDefault)"
        )
        return diag(
            "template-refused-by-admission",
            f"template '{w.name}' (templates/{w.name}.yaml): its {role} pods name {named}, which tenant "
            f"'{tenant.name}' may not use: ResourceQuota '{refusal.object}' refuses them in namespace "
            f"'{w.namespace}' ({reason})",
            (*w.path, "priorityClass") if w.priority_class else at,
            hint=f"set priorityClass to one of {', '.join(repr(c) for c in allowed)}",
        )
    if refusal.plugin == "LimitRanger" and resource in ("cpu", "memory"):
        if getattr(w, resource) is not None:
            at = (*w.path, resource)
        elif tenant.limit_range is not None:
            at = (*tenant.path, "limitRange")
        hint = f"keep the workload's {resource} and limits.{resource} within the tenant's limitRange, or widen it"
    elif refusal.plugin == "ResourceQuota":
        field = f"quota for {refusal.resource}"
        if refusal.object and refusal.object.startswith(CLASS_QUOTA_PREFIX):
            field = f"quota.perPriorityClass.{refusal.object.removeprefix(CLASS_QUOTA_PREFIX)}.{resource}"
        hint = f"raise the tenant's {field}, or lower the workload's {resource or 'pods'}"
    else:
        hint = "requests must not exceed limits, and GPU requests must equal GPU limits"
    return diag(
        "template-refused-by-admission",
        f"template '{w.name}' (templates/{w.name}.yaml): its {role} pods are refused in namespace '{w.namespace}' "
        f"by {by}: {reason}",
        at,
        hint=hint,
    )


def _exceeded(cluster: Cluster, w: Workload, tenant: Tenant, use: QuotaUse) -> Diagnostic:
    claim = dra.is_devices_key(use.key) or use.key == dra.CLAIMS_COUNT
    what = "the resource claim of pod" if claim else "pod"
    refused = f"{what} {use.admitted + 1} of {use.pods} is refused" if use.admitted < use.pods else "it is refused"
    resource = use.key.removeprefix("requests.").removeprefix("limits.")
    field = use.key.partition(".")[0] if use.key.startswith(("requests.", "limits.")) else "objects"
    field = "requests" if dra.is_devices_key(use.key) else field
    key = cluster.tenant_key(tenant.name, resource) if field != "objects" else use.key
    return diag(
        "workload-exceeds-quota",
        f"workload '{w.name}' takes {use.need} {use.key} in namespace '{w.namespace}' with its {use.pods} pods, "
        f"but ResourceQuota '{use.quota}' allows {use.hard}: {refused} (exceeded quota)",
        (*w.path, "replicas"),
        hint=f"raise tenant '{tenant.name}' quota.{field}.{key} to at least {use.need}, or lower replicas",
    )
