"""Scheduler-independent Kubernetes objects: PriorityClasses, the DeviceClasses of DRA tiers, and per tenant its
Namespaces, ResourceQuotas (including the zero-pods quota on forbidden priority classes), LimitRanges and the
ResourceClaimTemplates of its workloads on DRA tiers, in one file with its admission policies: all a tenant is, one
file to review (and one file to create, where a file costs more than its bytes)."""

from __future__ import annotations

from collections.abc import Mapping

from policyc.artifacts import Artifact, Manifest
from policyc.gpu import dra
from policyc.ir import Cluster, Quota, Tenant, Tier
from policyc.k8s.objects import metadata, resource_list

QUOTA_NAME = "tenant-quota"
FORBIDDEN_PRIORITIES_QUOTA_NAME = "tenant-forbidden-priority-classes"
CLASS_QUOTA_PREFIX = "tenant-priority-"
"""A tenant's quota for one priority class is named after the class."""
LIMIT_RANGE_NAME = "tenant-limits"


def emit(cluster: Cluster, admission: Mapping[str, tuple[Manifest, ...]]) -> list[Artifact]:
    """The tenants' files (each with its admission policies, `admission`: tenant -> objects) and the cluster's."""
    out = [
        Artifact(f"tenants/{t.name}.yaml", (*_tenant(cluster, t), *admission.get(t.name, ())), synced=True)
        for t in cluster.tenants
    ]
    if cluster.priority_classes:
        out.append(Artifact("cluster/priorityclasses.yaml", tuple(_priority_classes(cluster)), synced=True))
    if classes := [t for t in cluster.tiers if t.device_class]:
        out.append(Artifact("cluster/device-classes.yaml", tuple(_device_class(cluster, t) for t in classes),
                            synced=True))  # fmt: skip
    return out


def _device_class(cluster: Cluster, tier: Tier) -> Manifest:
    assert tier.device_class is not None
    meta = metadata(tier.device_class, cluster.name, labels={cluster.keys.tier: tier.name})
    sources = ((*tier.path, "dra"), (*tier.path, "products"))
    return Manifest(dra.device_class(tier.products, meta), sources)


def _claim_templates(cluster: Cluster, t: Tenant) -> list[Manifest]:
    """A ResourceClaimTemplate for each of the tenant's workloads on a DRA tier, in its namespace: each pod of the
    workload gets a claim for its GPUs from it."""
    out = []
    for w in cluster.workloads_of(t.name):
        if w.tier.device_class:
            name = dra.claim_template_name(w.name)
            meta = metadata(name, cluster.name, namespace=w.namespace, labels={cluster.keys.tenant: t.name})
            out.append(Manifest(dra.claim_template(w.tier.device_class, w.gpus, meta), (w.path, (*w.path, "gpus"))))
    return out


def _priority_classes(cluster: Cluster) -> list[Manifest]:
    out = []
    for c in cluster.priority_classes:
        obj: dict = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": metadata(c.name, cluster.name),
            "value": c.value,
        }
        # Fields left at the API server's defaults are omitted, so Argo CD sees no drift.
        if c.global_default:
            obj["globalDefault"] = True
        if c.preemption_policy != "PreemptLowerPriority":
            obj["preemptionPolicy"] = c.preemption_policy
        if c.description:
            obj["description"] = c.description
        out.append(Manifest(obj, (c.path,)))
    return out


def quota_object(name: str, quota: Quota) -> dict:
    """A tenant's ResourceQuota (metadata holds only its name)."""
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name},
        "spec": {"hard": resource_list(quota.hard)},
    }


def _forbidden_scope(cluster: Cluster, t: Tenant) -> list[dict]:
    """What the tenant's zero-pods quota refuses: a pod naming any class but the allowed ones (system classes
    included). `NotIn` also matches a pod that names no class and gets no global default, which a restricted
    tenant may not run either; a tenant the policy does not restrict may, so its scope also asks `Exists`."""
    if t.allowed_priority_classes is not None:
        return [{"scopeName": "PriorityClass", "operator": "NotIn", "values": list(t.allowed_priority_classes)}]
    scope = [{"scopeName": "PriorityClass", "operator": "Exists"}]
    if cluster.priority_classes:
        scope.append(
            {"scopeName": "PriorityClass", "operator": "NotIn", "values": [c.name for c in cluster.priority_classes]}
        )
    return scope


def _tenant(cluster: Cluster, t: Tenant) -> list[Manifest]:
    out = []
    tenant_label = {cluster.keys.tenant: t.name}
    for ns in t.namespaces:
        out.append(
            Manifest(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata(ns, cluster.name, labels=tenant_label)},
                (t.path,),
            )
        )
        out += _quotas(cluster, t, ns, tenant_label)
        if t.limit_range is not None:
            out.append(_limit_range(cluster, t, ns, tenant_label))
    return out + _claim_templates(cluster, t)


def _quotas(cluster: Cluster, t: Tenant, ns: str, tenant_label: dict[str, str]) -> list[Manifest]:
    """The tenant's ResourceQuotas in namespace `ns`: its quota, one per priority class it scopes, and the one that
    admits no pod of a class it may not use."""
    out = []
    if t.quota is not None and t.quota.hard:
        quota = quota_object(QUOTA_NAME, t.quota)
        quota["metadata"] = metadata(QUOTA_NAME, cluster.name, namespace=ns, labels=tenant_label)
        out.append(Manifest(quota, ((*t.path, "quota"),)))
    for cls, hard in t.quota.per_class.items() if t.quota is not None else ():
        scoped = {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": metadata(f"{CLASS_QUOTA_PREFIX}{cls}", cluster.name, namespace=ns, labels=tenant_label),
            "spec": {
                "hard": resource_list(hard),
                "scopeSelector": {
                    "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": [cls]}]
                },
            },
        }
        out.append(Manifest(scoped, ((*t.path, "quota", "perPriorityClass", cls),)))
    out.append(
        Manifest(
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": metadata(FORBIDDEN_PRIORITIES_QUOTA_NAME, cluster.name, namespace=ns, labels=tenant_label),
                "spec": {
                    "hard": {"pods": "0"},
                    "scopeSelector": {"matchExpressions": _forbidden_scope(cluster, t)},
                },
            },
            ((*t.path, "priorityClasses") if t.allowed_priority_classes is not None else t.path,),
        )
    )
    return out


def _limit_range(cluster: Cluster, t: Tenant, ns: str, tenant_label: dict[str, str]) -> Manifest:
    """The tenant's LimitRange in namespace `ns`."""
    lr = t.limit_range
    assert lr is not None
    limit: dict = {"type": "Container"}
    for key, resources in (
        ("default", lr.default),
        ("defaultRequest", lr.default_request),
        ("max", lr.max),
        ("min", lr.min),
    ):
        if resources:
            limit[key] = resource_list(resources)
    return Manifest(
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": metadata(LIMIT_RANGE_NAME, cluster.name, namespace=ns, labels=tenant_label),
            "spec": {"limits": [limit]},
        },
        ((*t.path, "limitRange"),),
    )
